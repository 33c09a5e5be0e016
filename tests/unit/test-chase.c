/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for include/chase.h, the one resolver, alone: hostile trees (symlink loops, absolute and
 * relative symlinks that escape, "..", a file on the way, a bind mount crossed), each case through
 * openat2 and through the walk by hand (NODE_RESET_CHASE_NO_OPENAT2=1), which must agree. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chase.h"
#include "macro.h"
#include "string-util.h"
#include "tests/support/child.h"

static char dir[] = "/tmp/test-chase.XXXXXX";
static int root_fd = -EBADF;

static int setup(void **state) {
        if (!mkdtemp(dir))
                return -1;
        test_sh("cd %s && mkdir -p etc/k var/lib/pki d a/b/c real/x && echo -n conf > etc/k/conf && "
                "echo -n pem > var/lib/pki/real.pem && echo -n file > d/file && touch a/file && "
                "ln -s /var/lib/pki/real.pem var/lib/pki/current.pem && " /* absolute: beneath the root */
                "ln -s ../../etc/k/conf var/lib/rel && "                  /* relative */
                "ln -s ../../../../../../etc/k/conf d/escape && "         /* ".." stops at the root */
                "ln -s /var/lib d/libdir && ln -s loop2 d/loop1 && ln -s loop1 d/loop2 && "
                "ln -s /nonexistent d/dangling && ln -s real link && ln -s b a/lb && ln -s /etc/passwd d/abs",
                dir);
        root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return root_fd >= 0 ? 0 : -1;
}

static int teardown(void **state) {
        close(root_fd);
        test_sh("rm -rf %s", dir);
        return 0;
}

static const char *const modes[] = { "openat2", "by hand" };

static void set_mode(size_t m) {
        if (m == 0)
                assert_int_equal(unsetenv(CHASE_NO_OPENAT2_ENV), 0);
        else
                assert_int_equal(setenv(CHASE_NO_OPENAT2_ENV, "1", 1), 0);
}

/* What chaseat() gave: the file's content (up to 63 bytes), "<dir>", or the error. */
static int result(int rfd, const char *path, unsigned flags, int open_flags, char *buf, size_t size) {
        struct stat st;
        ssize_t n;
        int fd;

        fd = chaseat(rfd, path, flags, open_flags, NULL, NULL);
        if (fd < 0)
                return fd;
        assert_int_equal(fstat(fd, &st), 0);
        if (S_ISDIR(st.st_mode) || (open_flags & O_PATH))
                snprintf(buf, size, "%s", S_ISDIR(st.st_mode) ? "<dir>" : "<path>");
        else {
                n = read(fd, buf, size - 1);
                assert_true(n >= 0);
                buf[n] = '\0';
        }
        close(fd);
        return 0;
}

typedef struct Case {
        const char *path;
        unsigned flags;
        int open_flags, want;
        const char *content;
} Case;

static void check_cases(const Case *cases, size_t n) {
        for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
                set_mode(m);
                for (size_t i = 0; i < n; i++) {
                        char buf[64] = "";
                        int r = result(root_fd, cases[i].path, cases[i].flags, cases[i].open_flags, buf, sizeof buf);

                        if (r != cases[i].want || (r == 0 && !streq(buf, cases[i].content)))
                                fail_msg("%s %s (flags %u): got %d '%s', want %d '%s'", modes[m], cases[i].path,
                                         cases[i].flags, r, buf, cases[i].want, strna(cases[i].content));
                }
        }
        set_mode(0);
}

/* Symlinks followed as if the root were "/": nothing leads out of it. */
static void test_in_root(void **state) {
        static const Case cases[] = {
                { "/etc/k/conf", 0, O_RDONLY, 0, "conf" },
                { "etc//k/./conf", 0, O_RDONLY, 0, "conf" },
                { "/var/lib/pki/current.pem", 0, O_RDONLY, 0, "pem" },
                { "/var/lib/rel", 0, O_RDONLY, 0, "conf" },
                { "/d/escape", 0, O_RDONLY, 0, "conf" },
                { "/../../etc/k/conf", 0, O_RDONLY, 0, "conf" },
                { "/d/libdir/pki/current.pem", 0, O_RDONLY, 0, "pem" },
                { "/d/libdir/../lib/pki/real.pem", 0, O_RDONLY, 0, "pem" },
                { "/d/libdir", 0, O_RDONLY | O_DIRECTORY, 0, "<dir>" },
                { "/d/libdir", CHASE_MUST_BE_DIRECTORY, O_PATH, 0, "<dir>" },
                { "/", 0, O_RDONLY | O_DIRECTORY, 0, "<dir>" },
                { "", 0, O_RDONLY, 0, "<dir>" },
                { "/d/abs", 0, O_RDONLY, -ENOENT, NULL }, /* the host's /etc/passwd is not beneath */
                { "/d/loop1", 0, O_RDONLY, -ELOOP, NULL },
                { "/d/dangling", 0, O_RDONLY, -ENOENT, NULL },
                { "/etc/k/missing", 0, O_RDONLY, -ENOENT, NULL },
                { "/d/file/x", 0, O_RDONLY, -ENOTDIR, NULL },
                { "/d/file", CHASE_MUST_BE_DIRECTORY, O_RDONLY, -ENOTDIR, NULL },
                { "/d/file", 0, O_PATH | O_DIRECTORY, -ENOTDIR, NULL },
        };

        check_cases(cases, ELEMENTSOF(cases));
}

/* No symlink anywhere, no "..", not even one that stays beneath. */
static void test_no_symlinks(void **state) {
        static const Case cases[] = {
                { "/", CHASE_NO_SYMLINKS, O_DIRECTORY, 0, "<dir>" },
                { "/a/b/c", CHASE_NO_SYMLINKS, O_PATH | O_DIRECTORY, 0, "<dir>" },
                { "a//b/", CHASE_NO_SYMLINKS, O_RDONLY, 0, "<dir>" },
                { "/etc/k/conf", CHASE_NO_SYMLINKS, O_RDONLY, 0, "conf" },
                { "/a/file", CHASE_NO_SYMLINKS, O_PATH, 0, "<path>" },
                { "/a/file", CHASE_NO_SYMLINKS, O_PATH | O_DIRECTORY, -ENOTDIR, NULL },
                { "/a/file/x", CHASE_NO_SYMLINKS, O_PATH, -ENOTDIR, NULL },
                { "/link", CHASE_NO_SYMLINKS, O_PATH, -ELOOP, NULL },
                { "/link/x", CHASE_NO_SYMLINKS, O_RDONLY, -ELOOP, NULL },
                { "/a/lb/c", CHASE_NO_SYMLINKS, O_DIRECTORY, -ELOOP, NULL },
                { "/var/lib/pki/current.pem", CHASE_NO_SYMLINKS, O_RDONLY, -ELOOP, NULL },
                { "/var/lib/rel", CHASE_NO_SYMLINKS, O_RDONLY, -ELOOP, NULL },
                { "/d/escape", CHASE_NO_SYMLINKS, O_RDONLY, -ELOOP, NULL },
                { "/d/abs", CHASE_NO_SYMLINKS, O_PATH, -ELOOP, NULL },
                { "/d/loop1", CHASE_NO_SYMLINKS, O_RDONLY, -ELOOP, NULL },
                { "/a/missing/c", CHASE_NO_SYMLINKS, O_RDONLY, -ENOENT, NULL },
                { "/a/../a", CHASE_NO_SYMLINKS, O_RDONLY, -EXDEV, NULL },
                { "/../etc/k/conf", CHASE_NO_SYMLINKS, O_RDONLY, -EXDEV, NULL },
                { "/etc/k/conf", CHASE_NO_SYMLINKS | CHASE_NO_XDEV, O_RDONLY, 0, "conf" },
        };

        check_cases(cases, ELEMENTSOF(cases));
}

/* The parent and the last component; the component that stopped the walk. */
static void test_parent_and_stop(void **state) {
        for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
                const char *last = NULL;
                size_t stop = 0;
                struct stat st;
                int fd;

                set_mode(m);
                fd = chaseat(root_fd, "/etc/k/conf", CHASE_NO_SYMLINKS | CHASE_PARENT, O_RDONLY, &last, NULL);
                assert_true(fd >= 0);
                assert_string_equal(last, "conf");
                assert_int_equal(fstatat(fd, last, &st, AT_SYMLINK_NOFOLLOW), 0);
                assert_true(S_ISREG(st.st_mode));
                close(fd);
                /* The last component is not followed: a symlink there is the caller's to see. */
                fd = chaseat(root_fd, "/link", CHASE_NO_SYMLINKS | CHASE_PARENT, O_PATH, &last, NULL);
                assert_true(fd >= 0);
                assert_string_equal(last, "link");
                close(fd);
                assert_int_equal(chaseat(root_fd, "/", CHASE_PARENT, O_RDONLY, &last, NULL), -EINVAL);
                assert_int_equal(chaseat(root_fd, "/a/..", CHASE_PARENT, O_RDONLY, &last, NULL), -EINVAL);
                assert_int_equal(chaseat(root_fd, "/a/file/x", CHASE_NO_SYMLINKS | CHASE_PARENT, O_RDONLY, &last, NULL),
                                 -ENOTDIR);
                assert_int_equal(
                        chaseat(root_fd, "/a/lb/c/x", CHASE_NO_SYMLINKS | CHASE_PARENT, O_RDONLY, &last, &stop),
                        -ELOOP);
                assert_int_equal(stop, strlen("/a/lb"));
                assert_int_equal(chaseat(root_fd, "/link/x", CHASE_NO_SYMLINKS, O_PATH, NULL, &stop), -ELOOP);
                assert_int_equal(stop, strlen("/link"));
        }
        set_mode(0);
}

static int chase_result(const char *path, unsigned flags, int open_flags) {
        int fd = chaseat(root_fd, path, flags, open_flags, NULL, NULL);

        if (fd >= 0)
                close(fd);
        return fd < 0 ? fd : 0;
}

/* In a private mount namespace: an outside directory bind-mounted into the tree, a tmpfs on the way,
 * and a symlink leading onto a mount. CHASE_NO_XDEV refuses each crossing, both ways alike. */
static int child_xdev(void *userdata) {
        char p[512];

        if (unshare(CLONE_NEWNS) < 0)
                return errno == EPERM ? 77 : 1;
        CHECK(mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0);
        test_sh("mkdir -p %s/m/bind %s/m/tmp %s-outside/sub && echo -n out > %s-outside/sub/f && ln -s /m/bind "
                "%s/m/lnk",
                dir, dir, dir, dir, dir);
        snprintf(p, sizeof p, "%s/m/bind", dir);
        test_sh("mount --bind %s-outside %s", dir, p);
        snprintf(p, sizeof p, "%s/m/tmp", dir);
        CHECK(mount("tmpfs", p, "tmpfs", 0, NULL) == 0);
        test_sh("mkdir %s/m/tmp/d", dir);
        /* The fd opened before unshare() walks the old namespace's mounts: take the root again. */
        close(root_fd);
        root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHECK(root_fd >= 0);
        for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
                set_mode(m);
                CHECK(chase_result("/m/bind/sub/f", CHASE_NO_SYMLINKS, O_RDONLY) == 0);
                CHECK(chase_result("/m/bind/sub/f", CHASE_NO_SYMLINKS | CHASE_NO_XDEV, O_RDONLY) == -EXDEV);
                CHECK(chase_result("/m/bind", CHASE_NO_XDEV, O_PATH) == -EXDEV);
                CHECK(chase_result("/m/tmp/d", CHASE_NO_XDEV | CHASE_NO_SYMLINKS, O_RDONLY) == -EXDEV);
                CHECK(chase_result("/m/lnk/sub/f", 0, O_RDONLY) == 0);
                CHECK(chase_result("/m/lnk/sub/f", CHASE_NO_XDEV, O_RDONLY) == -EXDEV);
                CHECK(chase_result("/m/tmp/d/../../m", CHASE_NO_XDEV, O_RDONLY) == -EXDEV);
                CHECK(chase_result("/m", CHASE_NO_XDEV | CHASE_NO_SYMLINKS, O_RDONLY) == 0);
        }
        test_sh("umount -l %s/m/bind; rm -rf %s-outside", dir, dir);
        return 0;
}

static void test_no_xdev(void **state) {
        test_run_in_child(child_xdev, NULL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_in_root),
                cmocka_unit_test(test_no_symlinks),
                cmocka_unit_test(test_parent_and_stop),
                cmocka_unit_test(test_no_xdev),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
