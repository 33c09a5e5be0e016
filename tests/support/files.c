/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fixture files for cmocka tests. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/files.h"

void test_write_at(int dir_fd, const char *name, const char *text) {
        int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        assert_int_equal(close(fd), 0);
}

static void mkdir_p(char *path) {
        for (char *p = path + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        (void) mkdir(path, 0755);
                        *p = '/';
                }
        (void) mkdir(path, 0755);
}

void test_write_tree(const char *dir, const char *path, const char *text) {
        char full[4096], *slash;
        FILE *f;

        assert_true((size_t) snprintf(full, sizeof full, "%s%s", dir, path) < sizeof full);
        slash = strrchr(full, '/');
        *slash = '\0';
        mkdir_p(full);
        *slash = '/';
        f = fopen(full, "we");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

void test_rm_rf(const char *dir) {
        char cmd[4200];

        assert_true((size_t) snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir) < sizeof cmd);
        assert_int_equal(system(cmd), 0);
}
