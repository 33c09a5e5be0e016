/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fixture files for cmocka tests. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/files.h"

void test_write_at(int dir_fd, const char *name, const char *text) {
        int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        assert_int_equal(close(fd), 0);
}
