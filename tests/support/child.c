/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Run a piece of a cmocka test as root in a forked child. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/child.h"

void test_run_in_child(int (*fn)(void *userdata), void *userdata) {
        int status;
        pid_t pid;

        if (geteuid() != 0)
                skip();
        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(fn(userdata));
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77)
                skip();
        assert_int_equal(WEXITSTATUS(status), 0);
}

void test_sh(const char *fmt, ...) {
        char cmd[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(cmd, sizeof cmd, fmt, ap);
        va_end(ap);
        assert_int_equal(system(cmd), 0);
}
