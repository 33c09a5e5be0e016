/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The services and processes phases without a systemd: the unit and process directives, glob
 * normalisation, protected units, /proc parsing, exe matching, the never-signal guard, the no-systemd
 * plan, and one real kill of a child this test started. */

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "agent/engine/engine.h"
#include "agent/config/manifest.h"
#include "agent/engine/phase.h"
#include "agent/phases/phases.h"
#include "agent/engine/plan.h"
#include "agent/os/proc.h"
#include "agent/os/services.h"
#include "macro.h"
#include "string-util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(Manifest *, manifest_free);
#define cleanup_manifest CLEANUP(manifest_freep)
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);
#define cleanup_plan CLEANUP(plan_freep)

static Manifest *parse_ok(const char *text) {
        Manifest *m = manifest_new();
        cleanup_free char *err = NULL;

        assert_non_null(m);
        if (manifest_parse_string(m, "t.conf", text, NULL, &err) < 0)
                fail_msg("%s: %s", text, err);
        return m;
}

static void check_error(const char *text, const char *want) {
        cleanup_manifest Manifest *m = manifest_new();
        cleanup_free char *err = NULL;

        assert_int_equal(manifest_parse_string(m, "t.conf", text, NULL, &err), -EINVAL);
        assert_non_null(err);
        assert_string_equal(err, want);
}

/* ---- the unit directive ---- */

static void test_unit_pattern_matches(void **state) {
        assert_true(services_unit_pattern_matches("kubelet.service", "kubelet.service"));
        assert_true(services_unit_pattern_matches("kubelet", "kubelet.service"));
        assert_true(services_unit_pattern_matches("k3s*", "k3s-agent.service"));
        assert_true(services_unit_pattern_matches("k3s*.service", "k3s-agent.service"));
        assert_false(services_unit_pattern_matches("kubelet", "kubelet.socket"));
        assert_false(services_unit_pattern_matches("kubelet.socket", "kubelet.service"));
        assert_false(services_unit_pattern_matches("containerd", "containerd-shim.service"));
        assert_false(services_unit_pattern_matches("crio", ".service"));
}

static void test_unit_directive(void **state) {
        cleanup_manifest Manifest *m = parse_ok("unit kubelet stop,disable early\n"
                                                "unit k3s* stop late\n"
                                                "unit cri-docker.socket mask,stop,disable late\n"
                                                "unit a:b\\x2dc stop early\n"
                                                "unit getty@tty1 stop late\n"
                                                "unit rke2-[as]*.service disable early\n");

        assert_int_equal(m->n_entries, 6);
        assert_int_equal(m->entries[0].type, DIRECTIVE_UNIT);
        /* Like systemctl: no type means a service, for names and globs alike. */
        assert_string_equal(m->entries[0].args[0], "kubelet.service");
        assert_string_equal(m->entries[0].args[1], "stop,disable");
        assert_string_equal(m->entries[0].args[2], "early");
        assert_string_equal(m->entries[1].args[0], "k3s*.service");
        assert_string_equal(m->entries[2].args[0], "cri-docker.socket");
        assert_string_equal(m->entries[3].args[0], "a:b\\x2dc.service");
        assert_string_equal(m->entries[4].args[0], "getty@tty1.service");
        assert_string_equal(m->entries[5].args[0], "rke2-[as]*.service");
}

static void test_unit_directive_errors(void **state) {
        check_error("unit kubelet stop\n", "t.conf:1: 'unit' takes exactly 3 arguments, got 2");
        check_error("unit kubelet start early\n",
                    "t.conf:1: 'unit' needs ACTIONS as a comma list of stop, disable, mask (each once), got 'start'");
        check_error("unit kubelet stop,stop early\n",
                    "t.conf:1: 'unit' needs ACTIONS as a comma list of stop, disable, mask (each once), got 'stop,stop'");
        check_error("unit kubelet stop, early\n",
                    "t.conf:1: 'unit' needs ACTIONS as a comma list of stop, disable, mask (each once), got 'stop,'");
        check_error("unit kubelet ,stop early\n",
                    "t.conf:1: 'unit' needs ACTIONS as a comma list of stop, disable, mask (each once), got ',stop'");
        check_error("unit kubelet stop now\n", "t.conf:1: 'unit' needs WHEN 'early' (before pods) or 'late', got 'now'");
        /* A glob must start literally: these would reach every unit. */
        check_error("unit * stop late\n",
                    "t.conf:1: 'unit' needs a unit name or a glob that starts with a letter or digit, got '*'");
        check_error("unit *.service stop late\n",
                    "t.conf:1: 'unit' needs a unit name or a glob that starts with a letter or digit, got '*.service'");
        check_error("unit .service stop late\n",
                    "t.conf:1: 'unit' needs a unit name or a glob that starts with a letter or digit, got '.service'");
        check_error("unit /etc/x stop late\n",
                    "t.conf:1: 'unit' needs a unit name or a glob that starts with a letter or digit, got '/etc/x'");
        check_error("unit \"a b\" stop late\n",
                    "t.conf:1: 'unit' needs a unit name or a glob that starts with a letter or digit, got 'a b'");
}

static void test_unit_name_length(void **state) {
        char line[600], name[300];
        cleanup_manifest Manifest *m = NULL;

        /* 247 + ".service" is 255 bytes: the longest unit name there is. */
        memset(name, 'a', 247);
        name[247] = 0;
        snprintf(line, sizeof line, "unit %s stop late\n", name);
        m = parse_ok(line);
        assert_int_equal(strlen(m->entries[0].args[0]), 255);
        name[247] = 'a';
        name[248] = 0;
        snprintf(line, sizeof line, "unit %s stop late\n", name);
        {
                cleanup_manifest Manifest *m2 = manifest_new();
                cleanup_free char *err = NULL;

                assert_int_equal(manifest_parse_string(m2, "t.conf", line, NULL, &err), -EINVAL);
                assert_non_null(strstr(err, "needs a unit name of at most 255 bytes"));
        }
}

/* The printed manifest parses back to the same (normalised) entries. */
static void test_unit_round_trip(void **state) {
        cleanup_manifest Manifest *m = parse_ok("unit k3s* stop,disable early\nprocess /usr/bin/containerd-shim*\n");
        cleanup_manifest Manifest *m2 = NULL;
        cleanup_free char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        assert_non_null(f);
        assert_int_equal(manifest_print(m, f), 0);
        fclose(f);
        assert_non_null(strstr(buf, "unit k3s*.service stop,disable early\n"));
        m2 = parse_ok(buf);
        assert_int_equal(m2->n_entries, 2);
        assert_string_equal(m2->entries[0].args[0], "k3s*.service");
        assert_string_equal(m2->entries[1].args[0], "/usr/bin/containerd-shim*");
}

static void test_protected_units(void **state) {
        static const char *const yes[] = {
                "dbus.service", "dbus.socket", "dbus-broker.service", "systemd-journald.service",
                "systemd-logind.service", "ssh.service", "sshd.service", "ssh.socket", "init.scope",
                "-.mount", "-.slice", "multi-user.target", "dev-sda.device",
        };
        static const char *const no[] = {
                "kubelet.service", "containerd.service", "k3s-agent.service", "docker.socket",
                "backup-etcd.timer", "etcd.service", "var-lib-kubelet.mount",
        };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (!services_unit_is_protected(yes[i]))
                        fail_msg("%s should be protected", yes[i]);
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (services_unit_is_protected(no[i]))
                        fail_msg("%s should not be protected", no[i]);
}

/* ---- the process directive and exe matching ---- */

static void test_process_directive(void **state) {
        cleanup_manifest Manifest *m = parse_ok("process /usr/bin/containerd-shim*\n"
                                                "process /var/lib/rancher/k3s/data/*/bin/containerd\n"
                                                "process /usr/local//bin/kubelet/\n");

        assert_int_equal(m->entries[0].type, DIRECTIVE_PROCESS);
        assert_string_equal(m->entries[2].args[0], "/usr/local/bin/kubelet");
        check_error("process kubelet\n", "t.conf:1: 'process' needs an absolute path, got 'kubelet'");
        check_error("process /usr/bin/*\n",
                    "t.conf:1: 'process' needs an executable name that starts with a literal character, got '/usr/bin/*'");
        check_error("process /usr/bin/*shim\n",
                    "t.conf:1: 'process' needs an executable name that starts with a literal character, got '/usr/bin/*shim'");
        check_error("process /usr/bin/[ck]ubelet\n",
                    "t.conf:1: 'process' needs an executable name that starts with a literal character, got '/usr/bin/[ck]ubelet'");
        check_error("process /*/bin/kubelet\n",
                    "t.conf:1: 'process' refuses a glob in the first component, got '/*/bin/kubelet'");
        check_error("process /usr/../bin/kubelet\n",
                    "t.conf:1: 'process' refuses '.' and '..' components, got '/usr/../bin/kubelet'");
        check_error("process /usr/bin/kubelet x\n", "t.conf:1: 'process' takes exactly 1 argument, got 2");
}

static void test_exe_matches(void **state) {
        assert_true(proc_exe_matches("/usr/bin/containerd-shim*", "/usr/bin/containerd-shim"));
        assert_true(proc_exe_matches("/usr/bin/containerd-shim*", "/usr/bin/containerd-shim-runc-v2"));
        assert_true(proc_exe_matches("/var/lib/rancher/k3s/data/*/bin/containerd",
                                     "/var/lib/rancher/k3s/data/3f5a/bin/containerd"));
        assert_true(proc_exe_matches("/usr/local/bin/kubelet", "/usr/local/bin/kubelet"));
        /* The name alone is never enough: the path must match too. */
        assert_false(proc_exe_matches("/usr/local/bin/kubelet", "/opt/decoy/kubelet"));
        assert_false(proc_exe_matches("/usr/local/bin/kubelet", "/usr/local/bin/kubelet-exporter"));
        assert_false(proc_exe_matches("/usr/local/bin/kubelet", "/usr/local/bin/my-kubelet"));
        assert_false(proc_exe_matches("/usr/bin/containerd-shim*", "/usr/bin/x/containerd-shim"));
        assert_false(proc_exe_matches("/usr/bin/containerd-shim*", "/usr/local/bin/containerd-shim-runc-v2"));
        /* '*' never crosses a '/'. */
        assert_false(proc_exe_matches("/var/lib/rancher/k3s/data/*/bin/containerd",
                                      "/var/lib/rancher/k3s/data/a/b/bin/containerd"));
        assert_false(proc_exe_matches("/usr/bin/kubelet", NULL));
        assert_false(proc_exe_matches("/usr/bin/kubelet", "kubelet"));
}

static void test_exe_normalise(void **state) {
        char a[] = "/usr/local/bin/etcd (deleted)", b[] = "/usr/local/bin/etcd", c[] = " (deleted)";
        bool deleted;

        proc_exe_normalise(a, &deleted);
        assert_true(deleted);
        assert_string_equal(a, "/usr/local/bin/etcd");
        proc_exe_normalise(b, &deleted);
        assert_false(deleted);
        assert_string_equal(b, "/usr/local/bin/etcd");
        proc_exe_normalise(c, &deleted);
        assert_false(deleted);
}

static void test_parse_stat(void **state) {
        /* A command name with spaces and parentheses: the fields start after the last ')'. */
        const char *s = "4242 (kube (let) x) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 123456 "
                        "1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
        uint64_t start;
        pid_t ppid;
        char st;

        assert_int_equal(proc_parse_stat(s, &ppid, &st, &start), 0);
        assert_int_equal(ppid, 17);
        assert_int_equal(st, 'S');
        assert_int_equal(start, 123456);
        assert_int_equal(proc_parse_stat("1 (init) S", &ppid, &st, &start), -EINVAL);
        assert_int_equal(proc_parse_stat("garbage", &ppid, &st, &start), -EINVAL);
        assert_int_equal(proc_parse_stat("1 (x)", &ppid, &st, &start), -EINVAL);
}

/* ---- the guard: PID 1, self, ancestors; trees ---- */

static ProcTable fake_table(void) {
        /* 1 ── 10 (shell) ── 20 (node-reset = self) ── 21 (its child)
         *   └─ 30 (shim) ── 31 (pause) ── 32 ── 33
         *                └─ 34                                          */
        static const pid_t pairs[][2] = {
                { 1, 0 }, { 10, 1 }, { 20, 10 }, { 21, 20 }, { 30, 1 }, { 31, 30 }, { 32, 31 }, { 33, 32 }, { 34, 30 },
        };
        ProcTable t = { .procs = calloc(ELEMENTSOF(pairs), sizeof(ProcInfo)), .n = ELEMENTSOF(pairs) };

        assert_non_null(t.procs);
        for (size_t i = 0; i < t.n; i++)
                t.procs[i] = (ProcInfo) { .pid = pairs[i][0], .ppid = pairs[i][1] };
        return t;
}

static void test_untouchable(void **state) {
        ProcTable t = fake_table();
        cleanup_free pid_t *u = NULL;

        assert_int_equal(proc_untouchable(&t, 20, &u), 0);
        assert_true(proc_pid_in(u, 1));
        assert_true(proc_pid_in(u, 20));
        assert_true(proc_pid_in(u, 10));
        assert_false(proc_pid_in(u, 21));
        assert_false(proc_pid_in(u, 30));
        assert_false(proc_pid_in(u, 0));
        proc_table_done(&t);
}

static void test_descendants(void **state) {
        ProcTable t = fake_table();
        cleanup_free pid_t *d = NULL, *d2 = NULL, *u = NULL;
        size_t n;

        assert_int_equal(proc_descendants(&t, 30, NULL, &d, &n), 0);
        assert_int_equal(n, 4);
        /* Breadth first: children before grandchildren. */
        assert_int_equal(d[0], 31);
        assert_int_equal(d[1], 34);
        assert_int_equal(d[2], 32);
        assert_int_equal(d[3], 33);
        /* Never below an untouchable process: the tree of PID 1 stops at node-reset's ancestors. */
        assert_int_equal(proc_untouchable(&t, 20, &u), 0);
        assert_int_equal(proc_descendants(&t, 1, u, &d2, &n), 0);
        assert_false(proc_pid_in(d2, 10));
        assert_false(proc_pid_in(d2, 20));
        assert_false(proc_pid_in(d2, 21));
        assert_true(proc_pid_in(d2, 33));
        assert_int_equal(n, 5);
        proc_table_done(&t);
}

static void test_real_proc(void **state) {
        cleanup_free pid_t *u = NULL;
        const ProcInfo *me;
        ProcTable t;

        assert_true(proc_view_is_ours());
        assert_int_equal(proc_table_read(&t), 0);
        me = proc_table_find(&t, getpid());
        assert_non_null(me);
        assert_int_equal(me->ppid, getppid());
        assert_non_null(me->exe);
        assert_int_equal(proc_untouchable(&t, getpid(), &u), 0);
        assert_true(proc_pid_in(u, getpid()));
        assert_true(proc_pid_in(u, getppid()));
        assert_true(proc_pid_in(u, 1));
        proc_table_done(&t);
}

/* ---- planning without systemd, and one real kill ---- */

static Action *find(const Plan *p, const char *kind, const char *target) {
        PLAN_FOREACH(a, p)
                if (streq(a->ops->kind, kind) && (!target || streq(a->target, target)))
                        return a;
        return NULL;
}

static void test_no_systemd_plan(void **state) {
        cleanup_manifest Manifest *m = parse_ok("unit kubelet stop,disable early\nunit etcd stop late\n");
        cleanup_plan Plan *p = plan_new();
        cleanup_free char *err = NULL;
        Context ctx = { .root = "/", .manifest = m };
        Action *a;

        /* A bus that is not there (never the machine's own). */
        assert_int_equal(setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/node-reset-test", 1), 0);
        assert_int_equal(phase_services_early_plan(&ctx, p, &err), 0);
        assert_int_equal(phase_services_late_plan(&ctx, p, &err), 0);
        assert_int_equal(phase_reload_plan(&ctx, p, &err), 0);
        assert_non_null(ctx.facts.systemd);
        assert_non_null(services_manager_why_absent(ctx.facts.systemd));
        assert_int_equal(p->n_actions, 3);
        a = find(p, "unit", "kubelet.service");
        assert_non_null(a);
        assert_string_equal(a->phase, "services-early");
        assert_string_equal(a->detail, "stop,disable");
        assert_false(a->present);
        assert_non_null(a->skip_reason);
        assert_non_null(strstr(a->skip_reason, "systemd not running: cannot connect to the system bus at "
                                               "unix:path=/nonexistent/node-reset-test"));
        assert_non_null(find(p, "daemon-reload", "systemd")->skip_reason);
        phase_table_done(&ctx); /* the systemd connection and the planning pass's /proc */
        assert_int_equal(unsetenv("DBUS_SYSTEM_BUS_ADDRESS"), 0);
}

/* The one way a phase reaches systemd: -EHOSTDOWN and the manager's words when it is out of reach,
 * asked once per run and then the same answer; another errno, said by strerror(), when no manager
 * could be set up at all. */
static void test_systemd_running(void **state) {
        char dir[] = "/tmp/test-services-root.XXXXXX", want[128];
        ServiceManager *m = (ServiceManager *) 1, *first;
        const char *why = NULL;
        Context ctx = {};

        assert_non_null(mkdtemp(dir));
        ctx = (Context) { .root = dir, .root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC) };
        assert_true(ctx.root_fd >= 0);
        assert_int_equal(unsetenv("DBUS_SYSTEM_BUS_ADDRESS"), 0);
        /* No run/systemd/system in the tree: not booted with systemd, whoever runs on this machine. */
        assert_int_equal(phase_systemd_running(&ctx, &m, &why), -EHOSTDOWN);
        assert_null(m);
        snprintf(want, sizeof want, "not booted with systemd (no %s/run/systemd/system)", dir);
        assert_string_equal(why, want);
        first = ctx.facts.systemd;
        assert_non_null(first);
        assert_int_equal(phase_systemd_running(&ctx, &m, NULL), -EHOSTDOWN);
        assert_ptr_equal(ctx.facts.systemd, first);
        phase_facts_done(&ctx);
        assert_null(ctx.facts.systemd);

        /* A bus address that leads nowhere (never the machine's own bus). */
        assert_int_equal(setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/node-reset-test", 1), 0);
        assert_int_equal(phase_systemd_running(&ctx, &m, &why), -EHOSTDOWN);
        assert_non_null(strstr(why, "cannot connect to the system bus at unix:path=/nonexistent/node-reset-test"));
        phase_facts_done(&ctx);
        assert_int_equal(unsetenv("DBUS_SYSTEM_BUS_ADDRESS"), 0);
        close(ctx.root_fd);

        /* No tree to look in: no manager at all, and why in strerror()'s words. */
        ctx = (Context) { .root = dir, .root_fd = -EBADF };
        assert_int_equal(phase_systemd_running(&ctx, &m, &why), -EBADF);
        assert_null(m);
        assert_string_equal(why, strerror(EBADF));
        assert_null(ctx.facts.systemd);
        assert_int_equal(rmdir(dir), 0);
}

/* This test's own executable as a "process" line: planning never offers to signal node-reset itself.
 * Nothing is executed here, so no other process running that binary is ever touched. */
static void test_self_is_guarded(void **state) {
        char exe[4096], *line = NULL;
        cleanup_manifest Manifest *m = NULL;
        cleanup_plan Plan *p = plan_new();
        cleanup_free char *err = NULL, *me = NULL;
        Context ctx = { .root = "/", .root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) };
        ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
        Action *a;

        assert_true(l > 0);
        exe[l] = 0;
        assert_true(asprintf(&line, "process %s\n", exe) > 0);
        m = parse_ok(line);
        free(line);
        ctx.manifest = m;
        assert_int_equal(setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/node-reset-test", 1), 0);
        assert_int_equal(phase_processes_plan(&ctx, p, &err), 0);
        assert_true(asprintf(&me, "%s[%d]", exe, (int) getpid()) > 0);
        a = find(p, "kill", me);
        assert_non_null(a);
        assert_false(a->present);
        assert_string_equal(a->skip_reason, "node-reset itself");
        phase_table_done(&ctx); /* the systemd connection and the planning pass's /proc */
        close(ctx.root_fd);
        assert_int_equal(unsetenv("DBUS_SYSTEM_BUS_ADDRESS"), 0);
}

static int copy_file(const char *from, const char *to) {
        char buf[65536];
        int in, out;
        ssize_t n;

        in = open(from, O_RDONLY | O_CLOEXEC);
        out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
        if (in < 0 || out < 0)
                return -1;
        while ((n = read(in, buf, sizeof buf)) > 0)
                if (write(out, buf, n) != n)
                        return -1;
        close(in);
        close(out);
        return n < 0 ? -1 : 0;
}

/* With --root DIR, a process belongs to the node only when DIR is its root directory: the child
 * runs DIR/kubelet, but from the real root, so "process /kubelet" does not name it. */
static void other_root(const char *dir, pid_t child) {
        cleanup_manifest Manifest *m = parse_ok("process /kubelet\n");
        cleanup_plan Plan *p = plan_new();
        cleanup_free char *err = NULL;
        Context ctx = { .root = dir, .root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), .manifest = m };

        assert_true(ctx.root_fd >= 0);
        assert_int_equal(phase_processes_plan(&ctx, p, &err), 0);
        assert_int_equal(p->n_actions, 1);
        assert_false(p->actions[0]->present);
        assert_string_equal(p->actions[0]->target, "/kubelet");
        assert_string_equal(p->actions[0]->detail, "nothing runs it");
        phase_table_done(&ctx); /* the systemd connection and the planning pass's /proc */
        close(ctx.root_fd);
}

/* A child started from a copy of sleep at a path only this test uses: planned, killed, reported. */
static void test_kill_child(void **state) {
        char dir[] = "/tmp/test-services-XXXXXX", exe[64], *line = NULL, *target = NULL;
        cleanup_manifest Manifest *m = NULL;
        cleanup_plan Plan *p = plan_new();
        cleanup_free char *err = NULL;
        /* The processes phase's default grace (--kill-grace=5): the child exits on SIGTERM well within it. */
        Context ctx = { .root = "/", .root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) };
        pid_t child;
        Action *a;
        int status;

        assert_non_null(mkdtemp(dir));
        snprintf(exe, sizeof exe, "%s/kubelet", dir);
        assert_int_equal(copy_file("/bin/sleep", exe), 0);
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                execl(exe, exe, "60", (char *) NULL);
                _exit(127);
        }
        /* Wait until the child runs the copy (not the test binary it was forked from). */
        for (int i = 0; i < 200; i++) {
                char link[64], buf[128] = "";

                snprintf(link, sizeof link, "/proc/%d/exe", (int) child);
                if (readlink(link, buf, sizeof buf - 1) > 0 && streq(buf, exe))
                        break;
                (void) usleep(10000);
        }
        assert_int_equal(setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/node-reset-test", 1), 0);
        other_root(dir, child);
        assert_true(asprintf(&line, "process %s\n", exe) > 0);
        m = parse_ok(line);
        free(line);
        ctx.manifest = m;
        assert_int_equal(phase_processes_plan(&ctx, p, &err), 0);
        assert_true(asprintf(&target, "%s[%d]", exe, (int) child) > 0);
        a = find(p, "kill", target);
        free(target);
        assert_non_null(a);
        assert_true(a->present);
        assert_non_null(strstr(a->detail, "no systemd"));
        assert_int_equal(p->n_actions, 1);
        assert_int_equal(engine_execute(&ctx, p, NULL), 0);
        assert_int_equal(a->result, ACTION_CHANGED);
        assert_string_equal(a->message, "exited on SIGTERM");
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
        phase_table_done(&ctx); /* the systemd connection and the planning pass's /proc */
        close(ctx.root_fd);
        assert_int_equal(unsetenv("DBUS_SYSTEM_BUS_ADDRESS"), 0);
        assert_int_equal(unlink(exe), 0);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unit_pattern_matches),
                cmocka_unit_test(test_unit_directive),
                cmocka_unit_test(test_unit_directive_errors),
                cmocka_unit_test(test_unit_name_length),
                cmocka_unit_test(test_unit_round_trip),
                cmocka_unit_test(test_protected_units),
                cmocka_unit_test(test_process_directive),
                cmocka_unit_test(test_exe_matches),
                cmocka_unit_test(test_exe_normalise),
                cmocka_unit_test(test_parse_stat),
                cmocka_unit_test(test_untouchable),
                cmocka_unit_test(test_descendants),
                cmocka_unit_test(test_real_proc),
                cmocka_unit_test(test_no_systemd_plan),
                cmocka_unit_test(test_systemd_running),
                cmocka_unit_test(test_self_is_guarded),
                cmocka_unit_test(test_kill_child),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
