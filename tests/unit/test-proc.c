/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/os/proc.c: stat and command-line parsing, the one /proc walk and what is built
 * on it run on this very process (its own fds, its own listening socket, its own executable), and a
 * child pinned by pidfd and signalled. */

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/os/proc.h"
#include "macro.h"
#include "string-util.h"

static void test_parse_stat(void **state) {
        const char *stat = "42 (a) b) (c) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 12345 0 0";
        uint64_t start;
        pid_t ppid;
        char st;

        assert_int_equal(proc_parse_stat(stat, &ppid, &st, &start), 0);
        assert_int_equal(ppid, 7);
        assert_int_equal(st, 'S');
        assert_int_equal(start, 12345);
        assert_int_equal(proc_parse_stat("42 noparen", &ppid, &st, &start), -EINVAL);
}

static void test_cmdline_option(void **state) {
        /* containerd-shim's Go flags and containerd's GNU-style ones. */
        static const char shim[] = "/usr/bin/containerd-shim-runc-v2\0-namespace\0k8s.io\0-address\0/run/c.sock";
        static const char ctrd[] = "containerd\0--config=/etc/c.toml\0--state\0/run/x\0-c";
        size_t ls = sizeof shim, lc = sizeof ctrd;

        assert_string_equal(proc_cmdline_option(shim, ls, "-namespace", NULL), "k8s.io");
        assert_string_equal(proc_cmdline_option(shim, ls, "-address", NULL), "/run/c.sock");
        assert_null(proc_cmdline_option(shim, ls, "-id", NULL));
        assert_string_equal(proc_cmdline_option(ctrd, lc, "--config", "-c"), "/etc/c.toml");
        assert_string_equal(proc_cmdline_option(ctrd, lc, "--state", NULL), "/run/x");
        /* A flag as the last word has no value. */
        assert_null(proc_cmdline_option(ctrd, lc, "-c", NULL));
}

static bool target_is_self_test(const char *target, const void *want) {
        return streq(target, want);
}

static void test_walks_find_self(void **state) {
        char dir[] = "/tmp/test-proc.XXXXXX", path[64], sock[96];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        cleanup_free char *exe = NULL, *cmdline = NULL;
        pid_t pids[4], pid = 0;
        ProcInfo self;
        size_t len = 0;
        int fd, sfd, n;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/held", dir);
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        n = proc_fd_holders(target_is_self_test, path, pids, ELEMENTSOF(pids));
        assert_int_equal(n, 1);
        assert_int_equal(pids[0], getpid());

        snprintf(sock, sizeof sock, "%s/s.sock", dir);
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
        sfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(sfd >= 0);
        assert_int_equal(proc_socket_listener(sock, &pid), 0);
        assert_int_equal(bind(sfd, (struct sockaddr *) &sa, sizeof sa), 0);
        assert_int_equal(listen(sfd, 1), 0);
        assert_int_equal(proc_socket_listener(sock, &pid), 1);
        assert_int_equal(pid, getpid());

        exe = proc_exe_name(getpid());
        assert_string_equal(exe, "test-proc");
        assert_int_equal(proc_read(getpid(), &self), 0);
        assert_true(proc_is(getpid(), self.starttime));
        assert_false(proc_is(getpid(), self.starttime + 1));
        proc_info_done(&self);
        assert_int_equal(proc_cmdline_read(getpid(), &cmdline, &len), 0);
        assert_true(len > 0);
        assert_non_null(strstr(cmdline, "test-proc"));

        close(sfd);
        close(fd);
        assert_int_equal(unlink(sock), 0);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(rmdir(dir), 0);
}

static int count_and_stop(pid_t pid, void *userdata) {
        pid_t *seen = userdata;

        seen[0]++;
        if (pid == getpid())
                seen[1] = pid;
        return seen[2] > 0 && seen[0] >= seen[2] ? -E2BIG : 0;
}

/* The one walk: every process once, this one among them, until fn says stop; the table and the
 * name lookup are built on it. */
static void test_each(void **state) {
        pid_t seen[3] = {};
        const ProcInfo *me;
        ProcTable t = {};
        pid_t found = 0;

        assert_int_equal(proc_each(count_and_stop, seen), 0);
        assert_true(seen[0] >= 1);
        assert_int_equal(seen[1], getpid());
        /* A non-zero result ends the walk and is its answer. */
        seen[0] = 0;
        seen[2] = 1;
        assert_int_equal(proc_each(count_and_stop, seen), -E2BIG);
        assert_int_equal(seen[0], 1);

        assert_int_equal(proc_table_read(&t), 0);
        me = proc_table_find(&t, getpid());
        assert_non_null(me);
        assert_int_equal(me->ppid, getppid());
        for (size_t i = 1; i < t.n; i++)
                assert_true(t.procs[i - 1].pid < t.procs[i].pid);
        assert_non_null(proc_table_find_exe_name(&t, "test-proc"));
        proc_table_done(&t);
        assert_int_equal(proc_find_exe_name("test-proc", &found), 1);
        assert_true(found > 0);
        assert_int_equal(proc_find_exe_name("no-such-program-here", &found), 0);
}

/* A process is pinned before it is signalled: by pidfd, and only while its PID still names the
 * process that was seen (its start time); a gone or reused PID pins nothing. */
static void test_pin_signal(void **state) {
        ProcInfo p;
        pid_t child;
        int pidfd, status;

        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                pause();
                _exit(0);
        }
        assert_int_equal(proc_read(child, &p), 0);
        /* Another start time is another process, whatever the PID. */
        assert_int_equal(proc_pin(child, p.starttime + 1, &pidfd), 0);
        assert_int_equal(pidfd, -EBADF);
        assert_int_equal(proc_pin(child, p.starttime, &pidfd), 1);
        assert_true(pidfd >= 0); /* every kernel this runs on has pidfds (5.3) */
        assert_int_equal(proc_signal(pidfd, child, SIGKILL), 0);
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        /* Reaped: the pidfd says so, and neither the PID nor the start time names a process now. */
        assert_int_equal(proc_signal(pidfd, child, 0), -ESRCH);
        assert_false(proc_is(child, p.starttime));
        close(pidfd);
        assert_int_equal(proc_pin(child, p.starttime, &pidfd), 0);
        assert_int_equal(pidfd, -EBADF);
        /* Without a pidfd the PID is the way. */
        assert_int_equal(proc_signal(-EBADF, getpid(), 0), 0);
        proc_info_done(&p);
}

/* A child whose working directory is the tree is listed with "cwd"; this process, holding an open
 * file there too, never is (a mount the agent itself holds is not someone else's). */
static void test_path_holders(void **state) {
        char dir[] = "/tmp/test-proc-holders.XXXXXX", want[64], *l;
        int fd, p[2];
        pid_t child;
        char c;

        assert_non_null(mkdtemp(dir));
        assert_null(proc_path_holders(dir, 8));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_null(proc_path_holders(dir, 8));
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                /* Only the working directory: the fd the parent holds is not inherited as a holder. */
                close(fd);
                if (chdir(dir) < 0 || write(p[1], "x", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        assert_int_equal(read(p[0], &c, 1), 1);
        l = proc_path_holders(dir, 8);
        snprintf(want, sizeof want, "%d (cwd)", (int) child);
        /* Reap the child before any assertion can end the test. */
        assert_int_equal(kill(child, SIGKILL), 0);
        assert_int_equal(waitpid(child, NULL, 0), child);
        assert_non_null(l);
        assert_string_equal(l, want);
        free(l);
        close(p[0]);
        close(p[1]);
        close(fd);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_stat),
                cmocka_unit_test(test_cmdline_option),
                cmocka_unit_test(test_walks_find_self),
                cmocka_unit_test(test_each),
                cmocka_unit_test(test_pin_signal),
                cmocka_unit_test(test_path_holders),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
