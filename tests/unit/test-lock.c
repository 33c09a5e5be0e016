/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The single-instance lock: taken beneath a root, refused while held, with the holder's PID. */

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "agent/lock.h"
#include "macro.h"

static void test_lock(void **state) {
        char dir[] = "/tmp/test-lock.XXXXXX", path[64], buf[32] = "";
        int root_fd, fd, fd2, status;
        pid_t holder, child;

        assert_non_null(mkdtemp(dir));
        root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);

        /* The root has no run/ yet: it is made. */
        fd = lock_acquire(root_fd, &holder);
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
                int r = lock_acquire(root_fd, &h);

                _exit(r == -EWOULDBLOCK && h == getppid() ? 0 : 1);
        }
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        /* Released with the fd: the next one gets it. */
        close(fd);
        fd = lock_acquire(root_fd, &holder);
        assert_true(fd >= 0);
        close(fd);

        assert_int_equal(unlink(path), 0);
        snprintf(path, sizeof path, "%s/run", dir);
        assert_int_equal(rmdir(path), 0);
        assert_int_equal(rmdir(dir), 0);
        close(root_fd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lock),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
