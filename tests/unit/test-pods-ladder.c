/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/phases/pods/pods-rescue.c and pods-ladder.c, what the pods phase writes below the CRI: the
 * rescue conflist's name, content and removal (also by SIGTERM), stale ones, and that none of that writes into or
 * removes a file node-reset did not create; rung 3 without systemd. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/phases/pods/pods-ladder.h"
#include "agent/phases/pods/pods-rescue.h"
#include "agent/os/runtime-info.h"
#include "agent/os/services.h"
#include "macro.h"

typedef struct Dir {
        char path[64];
} Dir;

static void dir_new(Dir *d) {
        snprintf(d->path, sizeof d->path, "/tmp/test-pods-ladder.XXXXXX");
        assert_non_null(mkdtemp(d->path));
}

static void dir_touch(const Dir *d, const char *name) {
        char p[256];
        int fd;

        snprintf(p, sizeof p, "%s/%s", d->path, name);
        fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        close(fd);
}

static void dir_remove(const Dir *d) {
        char cmd[128];

        snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->path);
        assert_int_equal(system(cmd), 0);
}

static void test_rescue_sorts_first(void **state) {
        char *path = NULL, *err = NULL, buf[256];
        struct stat st;
        Dir d;
        int fd;
        ssize_t n;

        dir_new(&d);
        dir_touch(&d, "10-calico.conflist");
        dir_touch(&d, "README");
        assert_int_equal(cni_rescue_install(d.path, &path, &err), 0);
        assert_non_null(strstr(path, "/00-" CNI_RESCUE_SUFFIX));
        assert_int_equal(cni_rescue_remove(), 1);
        free(path);
        /* "00-multus.conf" sorts before "00-node-reset-...": "0-" does not. */
        dir_touch(&d, "00-multus.conf");
        assert_int_equal(cni_rescue_install(d.path, &path, &err), 0);
        assert_non_null(strstr(path, "/0-" CNI_RESCUE_SUFFIX));
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        n = read(fd, buf, sizeof buf - 1);
        close(fd);
        assert_true(n > 0);
        buf[n] = '\0';
        assert_non_null(strstr(buf, "\"type\":\"loopback\""));
        assert_int_equal(stat(path, &st), 0);
        /* One at a time; removal says whether it removed something. */
        assert_int_equal(cni_rescue_install(d.path, &(char *) { NULL }, &err), -EBUSY);
        free(err);
        err = NULL;
        assert_int_equal(cni_rescue_remove(), 1);
        assert_int_equal(stat(path, &st), -1);
        assert_int_equal(cni_rescue_remove(), 0);
        free(path);
        /* Past every prefix: refused, never a name that would not be loaded first. */
        dir_touch(&d, "!.conf");
        assert_int_equal(cni_rescue_install(d.path, &path, &err), -EEXIST);
        free(err);
        dir_remove(&d);
}

static void test_rescue_missing_dir(void **state) {
        char *path = NULL, *err = NULL;

        assert_int_equal(cni_rescue_install("/nonexistent/net.d", &path, &err), -ENOENT);
        assert_non_null(strstr(err, "/nonexistent/net.d"));
        free(err);
        assert_null(path);
}

static void test_rescue_removed_on_sigterm(void **state) {
        char rescue[256];
        struct stat st;
        int status, p[2];
        char c;
        pid_t pid;
        Dir d;

        dir_new(&d);
        snprintf(rescue, sizeof rescue, "%s/00-%s", d.path, CNI_RESCUE_SUFFIX);
        assert_int_equal(pipe(p), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                char *path = NULL, *err = NULL;

                (void) signal(SIGTERM, SIG_DFL);
                if (cni_rescue_install(d.path, &path, &err) < 0 || write(p[1], "x", 1) != 1)
                        _exit(1);
                for (;;)
                        pause();
        }
        close(p[1]);
        assert_int_equal(read(p[0], &c, 1), 1);
        close(p[0]);
        assert_int_equal(stat(rescue, &st), 0);
        assert_int_equal(kill(pid, SIGTERM), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        /* It died of the signal, as it would have without the handler, and took the file along. */
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
        assert_int_equal(stat(rescue, &st), -1);
        dir_remove(&d);
}

static void test_rescue_stale(void **state) {
        char **l = NULL;
        Dir d;

        dir_new(&d);
        dir_touch(&d, "10-calico.conflist");
        dir_touch(&d, "00-" CNI_RESCUE_SUFFIX);
        dir_touch(&d, "0-" CNI_RESCUE_SUFFIX);
        assert_int_equal(cni_rescue_find_stale(d.path, &l), 0);
        assert_non_null(l[0]);
        assert_non_null(l[1]);
        assert_null(l[2]);
        assert_non_null(strstr(l[0], CNI_RESCUE_SUFFIX));
        strv_free(l);
        assert_int_equal(cni_rescue_find_stale("/nonexistent", &l), 0);
        assert_null(l[0]);
        strv_free(l);
        dir_remove(&d);
}

static void dir_put(const Dir *d, const char *name, const char *content) {
        char p[256];
        FILE *f;

        snprintf(p, sizeof p, "%s/%s", d->path, name);
        f = fopen(p, "we");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

static void dir_link(const Dir *d, const char *target, const char *name) {
        char a[256], b[256];

        snprintf(a, sizeof a, "%s/%s", d->path, target);
        snprintf(b, sizeof b, "%s/%s", d->path, name);
        assert_int_equal(link(a, b), 0);
}

static void assert_file(const Dir *d, const char *name, const char *content) {
        char p[256], buf[256] = "";
        FILE *f;

        snprintf(p, sizeof p, "%s/%s", d->path, name);
        f = fopen(p, "re");
        assert_non_null(f);
        (void) !fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        assert_string_equal(buf, content);
}

/* A PV's file hard-linked at the temporary name an earlier version wrote through, or at the rescue
 * conflist's own name, keeps its data; a conflist replaced meanwhile is not removed. */
static void test_rescue_never_writes_foreign(void **state) {
        char *path = NULL, *err = NULL, p[256], other[256];
        Dir d;

        dir_new(&d);
        snprintf(other, sizeof other, "%s/other", d.path);
        dir_put(&d, "pv-data", "the volume's data\n");
        dir_link(&d, "pv-data", ".node-reset-rescue.tmp");
        assert_int_equal(cni_rescue_install(d.path, &path, &err), 0);
        assert_file(&d, "pv-data", "the volume's data\n");
        assert_int_equal(cni_rescue_remove(), 1);
        free(path);

        dir_link(&d, "pv-data", "00-" CNI_RESCUE_SUFFIX);
        assert_int_equal(cni_rescue_install(d.path, &path, &err), -EEXIST);
        assert_non_null(strstr(err, "exists"));
        free(err);
        err = NULL;
        assert_file(&d, "00-" CNI_RESCUE_SUFFIX, "the volume's data\n");
        snprintf(p, sizeof p, "%s/00-" CNI_RESCUE_SUFFIX, d.path);
        assert_int_equal(unlink(p), 0);

        assert_int_equal(cni_rescue_install(d.path, &path, &err), 0);
        dir_put(&d, "other", "somebody else's\n");
        assert_int_equal(rename(other, path), 0);
        assert_int_equal(cni_rescue_remove(), 0);
        assert_file(&d, "00-" CNI_RESCUE_SUFFIX, "somebody else's\n");
        assert_file(&d, "pv-data", "the volume's data\n");
        free(path);
        dir_remove(&d);
}

/* One left by a killed run (exit without the atexit handler). */
static void leave_stale(const Dir *d) {
        int status;
        pid_t pid;

        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                char *path = NULL, *err = NULL;

                _exit(cni_rescue_install(d->path, &path, &err) < 0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Only what node-reset wrote is removed as stale: one name, exactly the loopback conflist. */
static void test_rescue_stale_checked(void **state) {
        char *err = NULL, p[256];
        Dir d;

        dir_new(&d);
        leave_stale(&d);
        snprintf(p, sizeof p, "%s/00-" CNI_RESCUE_SUFFIX, d.path);
        assert_int_equal(cni_rescue_remove_stale(p, &err), 1);
        assert_int_equal(access(p, F_OK), -1);
        assert_int_equal(cni_rescue_remove_stale(p, &err), 0);
        assert_null(err);

        leave_stale(&d);
        dir_link(&d, "00-" CNI_RESCUE_SUFFIX, "kept");
        assert_int_equal(cni_rescue_remove_stale(p, &err), -EPERM);
        assert_non_null(strstr(err, "hard link"));
        free(err);
        err = NULL;
        assert_int_equal(access(p, F_OK), 0);
        assert_int_equal(unlink(p), 0);

        dir_put(&d, "00-" CNI_RESCUE_SUFFIX, "{\"someone\":\"else\"}\n");
        assert_int_equal(cni_rescue_remove_stale(p, &err), -EPERM);
        assert_non_null(strstr(err, "holds something else"));
        free(err);
        err = NULL;
        assert_file(&d, "00-" CNI_RESCUE_SUFFIX, "{\"someone\":\"else\"}\n");
        assert_int_equal(unlink(p), 0);

        assert_int_equal(mkfifo(p, 0644), 0);
        assert_int_equal(cni_rescue_remove_stale(p, &err), -EPERM);
        assert_non_null(strstr(err, "FIFO"));
        free(err);
        assert_int_equal(access(p, F_OK), 0);
        dir_remove(&d);
}

/* Rung 3 stops the runtime through the systemd the run reaches (phase_systemd()): without one it
 * says what the operator must do, and kills nothing (not containerd: no shims to look for). */
static void test_rung3_without_systemd(void **state) {
        RuntimeInfo info = { .kind = RUNTIME_CRIO, .unit = (char *) "crio.service" };
        Context ctx = { .root = "/" };
        cleanup_free char *msg = NULL;

        assert_int_equal(setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/node-reset-test", 1), 0);
        assert_int_equal(ladder_rung3(&ctx, "/nonexistent/crio.sock", &info, true, "test", &msg), -EHOSTDOWN);
        assert_non_null(msg);
        assert_true(strstr(msg, "rung 3 (test): systemd is not running: stop crio.service (PID 0) by hand"));
        assert_non_null(ctx.facts.systemd);
        services_manager_free(ctx.facts.systemd);
        assert_int_equal(unsetenv("DBUS_SYSTEM_BUS_ADDRESS"), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rescue_sorts_first),          cmocka_unit_test(test_rescue_missing_dir),
                cmocka_unit_test(test_rescue_removed_on_sigterm),   cmocka_unit_test(test_rescue_stale),
                cmocka_unit_test(test_rescue_never_writes_foreign), cmocka_unit_test(test_rescue_stale_checked),
                cmocka_unit_test(test_rung3_without_systemd),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
