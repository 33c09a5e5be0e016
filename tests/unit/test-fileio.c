/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/fileio.c: symlinks resolved beneath a root (openat2 and by hand alike), atomic writes. */

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "agent/fileio.h"
#include "macro.h"
#include "string-util.h"

static char dir[] = "/tmp/test-fileio.XXXXXX";
static int root_fd = -EBADF;

static void put(const char *name, const char *content) {
        char p[512];
        FILE *f;

        snprintf(p, sizeof p, "%s/%s", dir, name);
        f = fopen(p, "we");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

static void link_(const char *target, const char *name) {
        char p[512];

        snprintf(p, sizeof p, "%s/%s", dir, name);
        assert_int_equal(symlink(target, p), 0);
}

static int setup(void **state) {
        char p[600];

        if (!mkdtemp(dir))
                return -1;
        snprintf(p, sizeof p, "mkdir -p %s/etc/k %s/var/lib/pki %s/d", dir, dir, dir);
        if (system(p) != 0)
                return -1;
        put("etc/k/conf", "conf");
        put("var/lib/pki/real.pem", "pem");
        put("d/file", "file");
        link_("/var/lib/pki/real.pem", "var/lib/pki/current.pem"); /* absolute: beneath the root */
        link_("../../etc/k/conf", "var/lib/rel");                  /* relative */
        link_("../../../../../../etc/k/conf", "d/escape");         /* ".." stops at the root */
        link_("/var/lib", "d/libdir");                             /* a symlinked directory */
        link_("loop2", "d/loop1");
        link_("loop1", "d/loop2");
        link_("/nonexistent", "d/dangling");
        root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return root_fd >= 0 ? 0 : -1;
}

static int teardown(void **state) {
        char p[600];

        close(root_fd);
        snprintf(p, sizeof p, "rm -rf %s", dir);
        return system(p) == 0 ? 0 : -1;
}

typedef int (*OpenFn)(int root_fd, const char *path, int flags);

/* Opening path beneath the root yields content, or fails with r. */
static void check(OpenFn fn, const char *path, int r, const char *content) {
        char buf[64] = "";
        int fd = fn(root_fd, path, O_RDONLY);

        if (r < 0) {
                if (fd >= 0)
                        close(fd);
                assert_int_equal(fd, r);
                return;
        }
        assert_true(fd >= 0);
        assert_true(read(fd, buf, sizeof buf - 1) >= 0);
        close(fd);
        assert_string_equal(buf, content);
}

static void check_all(OpenFn fn) {
        check(fn, "/etc/k/conf", 0, "conf");
        check(fn, "etc//k/./conf", 0, "conf");
        check(fn, "/var/lib/pki/current.pem", 0, "pem");
        check(fn, "/var/lib/rel", 0, "conf");
        check(fn, "/d/escape", 0, "conf");
        check(fn, "/../../etc/k/conf", 0, "conf");
        check(fn, "/d/libdir/pki/current.pem", 0, "pem");
        check(fn, "/d/libdir/../lib/pki/real.pem", 0, "pem");
        check(fn, "/d/loop1", -ELOOP, NULL);
        check(fn, "/d/dangling", -ENOENT, NULL);
        check(fn, "/etc/k/missing", -ENOENT, NULL);
        check(fn, "/d/file/x", -ENOTDIR, NULL);
}

static void test_open_beneath(void **state) {
        check_all(fileio_open_beneath);
}

static void test_open_beneath_by_hand(void **state) {
        int fd;

        check_all(fileio_open_beneath_by_hand);
        /* A directory through a symlink, and the root itself. */
        fd = fileio_open_beneath_by_hand(root_fd, "/d/libdir", O_RDONLY | O_DIRECTORY);
        assert_true(fd >= 0);
        close(fd);
        fd = fileio_open_beneath_by_hand(root_fd, "/", O_RDONLY | O_DIRECTORY);
        assert_true(fd >= 0);
        close(fd);
}

static void test_read_and_write(void **state) {
        cleanup_free char *text = NULL;
        char p[512];
        size_t n;
        int dfd;

        assert_int_equal(fileio_read_beneath(root_fd, "/var/lib/pki/current.pem", 1024, &text, &n), 0);
        assert_string_equal(text, "pem");
        assert_int_equal(n, 3);
        text = mfree(text);
        assert_int_equal(fileio_read_beneath(root_fd, "/etc/k/conf", 4, &text, &n), 0);
        text = mfree(text);
        assert_int_equal(fileio_read_beneath(root_fd, "/etc/k/conf", 3, &text, &n), -EFBIG);

        dfd = fileio_mkdir_beneath(root_fd, "/var/lib/node-reset", 0755);
        assert_true(dfd >= 0);
        assert_int_equal(fileio_write_atomic(dfd, "state", "one\n", 4, 0644), 0);
        assert_int_equal(fileio_write_atomic(dfd, "state", "two\n", 4, 0644), 0);
        close(dfd);
        assert_int_equal(fileio_read_beneath(root_fd, "/var/lib/node-reset/state", 64, &text, &n), 0);
        assert_string_equal(text, "two\n");
        snprintf(p, sizeof p, "%s/var/lib/node-reset/.#state.%d", dir, (int) getpid());
        assert_int_equal(access(p, F_OK), -1);

        /* mkdir never goes through a symlink. */
        dfd = fileio_mkdir_beneath(root_fd, "/d/libdir/x", 0755);
        assert_true(dfd == -ENOTDIR || dfd == -ELOOP);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_open_beneath),
                cmocka_unit_test(test_open_beneath_by_hand),
                cmocka_unit_test(test_read_and_write),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
