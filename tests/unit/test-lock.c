/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The single-instance lock: taken beneath a root, refused while held, with the holder's PID, and never
 * written into a file at its name that node-reset cannot account for. */

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <cmocka.h>

#include "agent/engine/lock.h"
#include "macro.h"
#include "string-util.h"

static void test_lock(void **state) {
        char dir[] = "/tmp/test-lock.XXXXXX", path[64], buf[32] = "";
        int root_fd, fd, fd2, status;
        pid_t holder, child;

        assert_non_null(mkdtemp(dir));
        root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);

        /* The root has no run/ yet: it is made. */
        fd = lock_acquire(root_fd, &holder, NULL);
        assert_true(fd >= 0);
        snprintf(path, sizeof path, "%s/run/node-reset.lock", dir);
        fd2 = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd2 >= 0);
        assert_true(read(fd2, buf, sizeof buf - 1) > 0);
        assert_int_equal(atoi(buf), getpid());
        assert_int_equal(lock_holder(fd2), getpid());
        close(fd2);

        /* Another process is refused and told who holds it; flock is per open file, so a child
         * that opens the file itself competes like a second node-reset would. */
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                pid_t h = 0;
                int r = lock_acquire(root_fd, &h, NULL);

                _exit(r == -EWOULDBLOCK && h == getppid() ? 0 : 1);
        }
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        /* Released with the fd: the next one gets it. */
        close(fd);
        fd = lock_acquire(root_fd, &holder, NULL);
        assert_true(fd >= 0);
        close(fd);

        assert_int_equal(unlink(path), 0);
        snprintf(path, sizeof path, "%s/run", dir);
        assert_int_equal(rmdir(path), 0);
        assert_int_equal(rmdir(dir), 0);
        close(root_fd);
}

static char tdir[] = "/tmp/test-lock.XXXXXX";

static void tpath(char *buf, size_t size, const char *name) {
        snprintf(buf, size, "%s/%s", tdir, name);
}

static void put(const char *name, const char *content) {
        char p[256];
        FILE *f;

        tpath(p, sizeof p, name);
        f = fopen(p, "we");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

static void assert_content(const char *name, const char *content) {
        char p[256], buf[256] = "";
        FILE *f;

        tpath(p, sizeof p, name);
        f = fopen(p, "re");
        assert_non_null(f);
        (void) !fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        assert_string_equal(buf, content);
}

static int lock_setup(void **state) {
        char p[256];

        if (!mkdtemp(tdir))
                return -1;
        tpath(p, sizeof p, "run");
        return mkdir(p, 0755);
}

static int lock_teardown(void **state) {
        char cmd[300];

        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tdir);
        return system(cmd) == 0 ? 0 : -1;
}

static void clear_lock_name(void) {
        char p[256];

        tpath(p, sizeof p, "run/node-reset.lock");
        (void) unlink(p);
        (void) rmdir(p);
}

/* lock_acquire() refuses: -EPERM, a reason containing why, nothing written, quickly (a FIFO or a
 * device must never be waited on). */
static void assert_refused(const char *why) {
        cleanup_free char *err = NULL;
        struct timespec a, b;
        pid_t holder;
        int root_fd, fd;

        root_fd = open(tdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);
        (void) clock_gettime(CLOCK_MONOTONIC, &a);
        fd = lock_acquire(root_fd, &holder, &err);
        (void) clock_gettime(CLOCK_MONOTONIC, &b);
        close(root_fd);
        if (fd >= 0)
                close(fd);
        assert_int_equal(fd, -EPERM);
        assert_non_null(err);
        if (!strstr(err, why))
                fail_msg("\"%s\" does not say \"%s\"", err, why);
        assert_true(b.tv_sec - a.tv_sec < 2);
}

/* The case: the lock's name is a hard link to a PV's file; its data must stay. */
static void test_lock_refuses_hard_link(void **state) {
        char a[256], b[256];

        put("pv-data", "the volume's data\n");
        tpath(a, sizeof a, "pv-data");
        tpath(b, sizeof b, "run/node-reset.lock");
        assert_int_equal(link(a, b), 0);
        assert_refused("is a hard link (2 names)");
        assert_content("pv-data", "the volume's data\n");
        clear_lock_name();
}

static void test_lock_refuses_special_files(void **state) {
        char p[256], t[256];

        tpath(p, sizeof p, "run/node-reset.lock");
        assert_int_equal(mkfifo(p, 0600), 0);
        assert_refused("is a FIFO");
        clear_lock_name();

        put("target", "kept\n");
        tpath(t, sizeof t, "target");
        assert_int_equal(symlink(t, p), 0);
        assert_refused("is a symbolic link");
        assert_content("target", "kept\n");
        clear_lock_name();

        assert_int_equal(mkdir(p, 0755), 0);
        assert_refused("is a directory");
        clear_lock_name();

        if (geteuid() != 0)
                return;
        /* /dev/null's numbers: a device, whatever it is, is never opened. */
        assert_int_equal(mknod(p, S_IFCHR | 0600, makedev(1, 3)), 0);
        assert_refused("is a character device");
        clear_lock_name();
}

/* A regular file with one name is still not ours when it holds data, or belongs to another user. */
static void test_lock_refuses_foreign_file(void **state) {
        char p[256];

        put("run/node-reset.lock", "somebody's data, not a PID\n");
        assert_refused("holds data that is not a PID");
        assert_content("run/node-reset.lock", "somebody's data, not a PID\n");
        clear_lock_name();

        if (geteuid() != 0)
                return;
        put("run/node-reset.lock", "");
        tpath(p, sizeof p, "run/node-reset.lock");
        assert_int_equal(chown(p, 1234, 1234), 0);
        assert_refused("belongs to UID 1234");
        clear_lock_name();
}

/* What node-reset itself (or flock(1)) leaves there is reused: a stale PID, an empty file. */
static void test_lock_reuses_own_file(void **state) {
        char pid[32];
        pid_t holder;
        int root_fd, fd;

        snprintf(pid, sizeof pid, "%d\n", (int) getpid());
        root_fd = open(tdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);
        put("run/node-reset.lock", "99999999\n");
        fd = lock_acquire(root_fd, &holder, NULL);
        assert_true(fd >= 0);
        close(fd);
        assert_content("run/node-reset.lock", pid);
        put("run/node-reset.lock", "");
        fd = lock_acquire(root_fd, &holder, NULL);
        assert_true(fd >= 0);
        close(fd);
        assert_content("run/node-reset.lock", pid);
        close(root_fd);
        clear_lock_name();
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lock),
                cmocka_unit_test(test_lock_refuses_hard_link),
                cmocka_unit_test(test_lock_refuses_special_files),
                cmocka_unit_test(test_lock_refuses_foreign_file),
                cmocka_unit_test(test_lock_reuses_own_file),
        };
        return cmocka_run_group_tests(tests, lock_setup, lock_teardown);
}
