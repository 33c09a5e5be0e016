/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the removal walk, path_expand() and open_nofollow_beneath(), in a temp dir under /tmp. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/os/node-path.h"
#include "agent/os/path-expand.h"
#include "agent/os/remove.h"
#include "macro.h"
#include "string-util.h"
#include "tests/support/child.h"

typedef struct Fixture {
        char dir[64];
        int fd;
} Fixture;

/* Test-only cleanup, independent of the code under test. No mount is ever made in this
 * namespace, so it stays on the temp dir's file system; fds, so no PATH_MAX limit. */
static void rm_rf_at(int dfd, const char *name) {
        struct dirent *de;
        struct stat st;
        DIR *d;
        int fd;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return;
        if (!S_ISDIR(st.st_mode)) {
                (void) unlinkat(dfd, name, 0);
                return;
        }
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
                d = fdopendir(fd);
                if (!d) {
                        close(fd);
                        return;
                }
                while ((de = readdir(d)))
                        if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                                rm_rf_at(dirfd(d), de->d_name);
                closedir(d);
        }
        (void) unlinkat(dfd, name, AT_REMOVEDIR);
}

static int setup(void **state) {
        Fixture *f = calloc(1, sizeof(Fixture));

        if (!f)
                return -1;
        strcpy(f->dir, "/tmp/test-remove-XXXXXX");
        if (!mkdtemp(f->dir))
                return -1;
        f->fd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (f->fd < 0)
                return -1;
        *state = f;
        return 0;
}

/* The fd limit at start: a test that lowers it and fails half way must not starve the next ones. */
static struct rlimit nofile_at_start;

static int teardown(void **state) {
        Fixture *f = *state;
        int r;

        (void) setrlimit(RLIMIT_NOFILE, &nofile_at_start);
        close(f->fd);
        rm_rf_at(AT_FDCWD, f->dir);
        r = access(f->dir, F_OK) < 0 ? 0 : -1;
        free(f);
        return r;
}

/* Create the parent directories of a relative path. */
static int mkparents(int fd, const char *path) {
        cleanup_free char *p = strdup(path);

        if (!p)
                return -1;
        for (char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
                *s = 0;
                if (mkdirat(fd, p, 0755) < 0 && errno != EEXIST)
                        return -1;
                *s = '/';
        }
        return 0;
}

static int mkdirp(int fd, const char *path) {
        if (mkparents(fd, path) < 0)
                return -1;
        return mkdirat(fd, path, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

static int mkfile(int fd, const char *path, const char *content) {
        int ffd;
        ssize_t n;

        if (mkparents(fd, path) < 0)
                return -1;
        ffd = openat(fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (ffd < 0)
                return -1;
        n = write(ffd, content, strlen(content));
        close(ffd);
        return n == (ssize_t) strlen(content) ? 0 : -1;
}

static int mklink(int fd, const char *target, const char *path) {
        if (mkparents(fd, path) < 0)
                return -1;
        return symlinkat(target, fd, path);
}

static bool exists(int fd, const char *path) {
        struct stat st;

        return fstatat(fd, path, &st, AT_SYMLINK_NOFOLLOW) >= 0;
}

static bool is_link(int fd, const char *path) {
        struct stat st;

        return fstatat(fd, path, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISLNK(st.st_mode);
}

static bool has_content(int fd, const char *path, const char *content) {
        char buf[256];
        ssize_t n;
        int ffd;

        ffd = openat(fd, path, O_RDONLY | O_CLOEXEC);
        if (ffd < 0)
                return false;
        n = read(ffd, buf, sizeof(buf) - 1);
        close(ffd);
        if (n < 0)
                return false;
        buf[n] = 0;
        return streq(buf, content);
}

static bool dir_is_empty(int fd, const char *path) {
        struct dirent *de;
        bool empty = true;
        DIR *d;
        int dfd;

        dfd = openat(fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return false;
        d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return false;
        }
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        empty = false;
        closedir(d);
        return empty;
}

static size_t strv_length(char *const *l) {
        size_t n = 0;

        while (l && l[n])
                n++;
        return n;
}

static int strv_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Does the vector hold exactly these strings, in any order? */
static bool strv_equal_set(char **l, const char *const *expected, size_t n) {
        if (strv_length(l) != n)
                return false;
        if (n > 0)
                qsort(l, n, sizeof(char *), strv_cmp);
        for (size_t i = 0; i < n; i++)
                if (!streq(l[i], expected[i]))
                        return false;
        return true;
}

#define assert_strv_set(l, ...)                                       \
        do {                                                          \
                static const char *const _e[] = { __VA_ARGS__ };      \
                assert_true(strv_equal_set((l), _e, ELEMENTSOF(_e))); \
        } while (0)

static unsigned path_depth_of(const char *path) {
        unsigned n = 0;

        for (; *path; path++)
                n += *path == '/';
        return n;
}

/* Protect the node paths in a NULL-terminated list, and say CONTAINS for their ancestors. */
static ProtectState protect_list(const char *path, void *userdata) {
        const char *const *l = userdata;
        ProtectState s = PROTECT_NONE;
        size_t m = strlen(path);

        for (; *l; l++) {
                size_t n = strlen(*l);

                if (strncmp(path, *l, n) == 0 && (path[n] == 0 || path[n] == '/'))
                        return PROTECT_SELF;
                if (strncmp(*l, path, m) == 0 && (*l)[m] == '/')
                        s = PROTECT_CONTAINS;
        }
        return s;
}

static void test_remove_tree_basic(void **state) {
        Fixture *f = *state;
        RemoveStats s;

        assert_int_equal(mkfile(f->fd, "t/a", "a"), 0);
        assert_int_equal(mkfile(f->fd, "t/b/c", "c"), 0);
        assert_int_equal(mkfile(f->fd, "t/b/d/e", "e"), 0);
        assert_int_equal(mkdirp(f->fd, "t/empty"), 0);
        assert_int_equal(mkfile(f->fd, "tt/sibling", "s"), 0);
        assert_int_equal(mkfile(f->fd, "u", "u"), 0);

        assert_int_equal(remove_tree(f->fd, "/t", NULL, &s), 1);
        assert_int_equal(s.files, 3);
        assert_int_equal(s.dirs, 4);
        assert_int_equal(s.failed, 0);
        assert_int_equal(s.first_error, 0);
        assert_false(s.top_missing);
        assert_false(exists(f->fd, "t"));
        assert_true(has_content(f->fd, "tt/sibling", "s"));
        assert_true(has_content(f->fd, "u", "u"));
        remove_stats_done(&s);

        /* Idempotent: the second run finds nothing. */
        assert_int_equal(remove_tree(f->fd, "/t", NULL, &s), 0);
        assert_true(s.top_missing);
        remove_stats_done(&s);

        /* A plain file as the target; a path with doubled and trailing slashes. */
        assert_int_equal(remove_tree(f->fd, "//u/", NULL, NULL), 1);
        assert_false(exists(f->fd, "u"));
        assert_true(has_content(f->fd, "tt/sibling", "s"));
}

static void test_missing(void **state) {
        Fixture *f = *state;
        RemoveStats s;

        assert_int_equal(remove_tree(f->fd, "/nope", NULL, &s), 0);
        assert_true(s.top_missing);
        assert_int_equal(s.files + s.dirs + s.failed, 0);
        remove_stats_done(&s);
        assert_int_equal(remove_tree(f->fd, "/nope/deeper/still", NULL, &s), 0);
        assert_true(s.top_missing);
        remove_stats_done(&s);
}

static void test_invalid_paths(void **state) {
        Fixture *f = *state;
        char **l = NULL;

        assert_int_equal(mkfile(f->fd, "a/b", "b"), 0);
        assert_int_equal(remove_tree(f->fd, "a/b", NULL, NULL), -EINVAL);
        assert_int_equal(remove_tree(f->fd, "/", NULL, NULL), -EINVAL);
        assert_int_equal(remove_tree(f->fd, "//", NULL, NULL), -EINVAL);
        assert_int_equal(remove_tree(f->fd, "/a/../a/b", NULL, NULL), -EINVAL);
        assert_int_equal(remove_tree(f->fd, "/a/./b", NULL, NULL), -EINVAL);
        assert_int_equal(remove_tree(f->fd, "/a/b/..", NULL, NULL), -EINVAL);
        assert_int_equal(remove_tree(f->fd, "", NULL, NULL), -EINVAL);
        assert_int_equal(path_expand(f->fd, "a/*", &l), -EINVAL);
        assert_int_equal(path_expand(f->fd, "/a/../*", &l), -EINVAL);
        assert_int_equal(open_nofollow_beneath(f->fd, "/a/..", O_RDONLY), -EINVAL);
        assert_true(has_content(f->fd, "a/b", "b"));
        /* Names that only start with dots are fine. */
        assert_int_equal(mkfile(f->fd, "a/...", "x"), 0);
        assert_int_equal(mkfile(f->fd, "a/..x", "x"), 0);
        assert_int_equal(remove_tree(f->fd, "/a/...", NULL, NULL), 1);
        assert_int_equal(remove_tree(f->fd, "/a/..x", NULL, NULL), 1);
        assert_false(exists(f->fd, "a/..."));
        assert_false(exists(f->fd, "a/..x"));
        assert_true(has_content(f->fd, "a/b", "b"));
}

static void test_symlinks_not_followed(void **state) {
        Fixture *f = *state;
        cleanup_free char *abs = NULL;
        RemoveStats s;

        assert_int_equal(mkfile(f->fd, "outside/precious", "p"), 0);
        assert_int_equal(mkfile(f->fd, "outside/dir/f", "f"), 0);
        assert_true(asprintf(&abs, "%s/outside/dir", f->dir) > 0);
        assert_int_equal(mklink(f->fd, "../outside/precious", "t/link-file"), 0);
        assert_int_equal(mklink(f->fd, "../outside/dir", "t/link-dir"), 0);
        assert_int_equal(mklink(f->fd, abs, "t/sub/link-abs"), 0);
        assert_int_equal(mklink(f->fd, "/nonexistent", "t/dangling"), 0);
        assert_int_equal(mklink(f->fd, "outside/dir", "top-link"), 0);

        assert_int_equal(remove_tree(f->fd, "/t", NULL, &s), 1);
        assert_int_equal(s.files, 4);
        assert_int_equal(s.dirs, 2);
        assert_false(exists(f->fd, "t"));
        remove_stats_done(&s);

        /* The target itself a symlink to a directory: the link goes, not what it points at. */
        assert_int_equal(remove_tree(f->fd, "/top-link", NULL, &s), 1);
        assert_int_equal(s.files, 1);
        assert_int_equal(s.dirs, 0);
        assert_false(exists(f->fd, "top-link"));
        remove_stats_done(&s);

        assert_true(has_content(f->fd, "outside/precious", "p"));
        assert_true(has_content(f->fd, "outside/dir/f", "f"));
}

static void test_symlink_component(void **state) {
        Fixture *f = *state;
        RemoveStats s;

        assert_int_equal(mkfile(f->fd, "real/x/y", "y"), 0);
        assert_int_equal(mkfile(f->fd, "real/x/z/w", "w"), 0);
        assert_int_equal(mklink(f->fd, "real", "var"), 0);
        assert_int_equal(mklink(f->fd, "../real/x", "a/b"), 0);

        assert_int_equal(remove_tree(f->fd, "/var/x", NULL, &s), -ELOOP);
        assert_string_equal(s.symlink_component, "/var");
        assert_int_equal(s.first_error, -ELOOP);
        assert_string_equal(s.first_error_path, "/var");
        assert_int_equal(s.files + s.dirs, 0);
        remove_stats_done(&s);

        assert_int_equal(remove_tree(f->fd, "/a/b/z/w", NULL, &s), -ELOOP);
        assert_string_equal(s.symlink_component, "/a/b");
        remove_stats_done(&s);

        /* Dry runs say the same. */
        assert_int_equal(remove_tree(f->fd, "/var/x", &(RemoveOptions) { .dry_run = true }, &s), -ELOOP);
        assert_string_equal(s.symlink_component, "/var");
        remove_stats_done(&s);

        assert_true(is_link(f->fd, "var"));
        assert_true(is_link(f->fd, "a/b"));
        assert_true(has_content(f->fd, "real/x/y", "y"));
        assert_true(has_content(f->fd, "real/x/z/w", "w"));
}

static void test_file_above_target(void **state) {
        Fixture *f = *state;
        RemoveStats s;

        assert_int_equal(mkfile(f->fd, "f", "f"), 0);
        assert_int_equal(remove_tree(f->fd, "/f/x", NULL, &s), -ENOTDIR);
        assert_null(s.symlink_component);
        assert_int_equal(s.failed, 1);
        remove_stats_done(&s);
        assert_true(has_content(f->fd, "f", "f"));
}

static void test_protect(void **state) {
        static const char *const protected[] = { "/t/keep", "/t/sub/keep2", "/t/file/inside", NULL };
        RemoveOptions o = { .protect = protect_list, .userdata = (void *) protected };
        Fixture *f = *state;
        RemoveStats s;

        assert_int_equal(mkfile(f->fd, "t/keep/k1", "k1"), 0);
        assert_int_equal(mkfile(f->fd, "t/sub/keep2", "k2"), 0);
        assert_int_equal(mkfile(f->fd, "t/sub/gone", "g"), 0);
        assert_int_equal(mkfile(f->fd, "t/x", "x"), 0);
        assert_int_equal(mkfile(f->fd, "t/file", "file"), 0);
        assert_int_equal(mkfile(f->fd, "t/other/y", "y"), 0);

        assert_int_equal(remove_tree(f->fd, "/t", &o, &s), 1);
        assert_strv_set(s.kept_protected, "/t/file", "/t/keep", "/t/sub/keep2");
        assert_int_equal(s.failed, 0);
        assert_int_equal(s.first_error, 0);
        assert_int_equal(s.files, 3);
        assert_int_equal(s.dirs, 1);
        remove_stats_done(&s);
        assert_true(has_content(f->fd, "t/keep/k1", "k1"));
        assert_true(has_content(f->fd, "t/sub/keep2", "k2"));
        assert_true(has_content(f->fd, "t/file", "file"));
        assert_false(exists(f->fd, "t/sub/gone"));
        assert_false(exists(f->fd, "t/x"));
        assert_false(exists(f->fd, "t/other"));

        /* A protected target is left whole and reported, not a failure. */
        assert_int_equal(remove_tree(f->fd, "/t/keep", &o, &s), 0);
        assert_strv_set(s.kept_protected, "/t/keep");
        remove_stats_done(&s);
        assert_int_equal(remove_tree(f->fd, "/t/keep/k1", &o, &s), 0);
        assert_strv_set(s.kept_protected, "/t/keep/k1");
        remove_stats_done(&s);
        /* A target that contains a protected path: already clean now. */
        assert_int_equal(remove_tree(f->fd, "/t/sub", &o, &s), 0);
        assert_strv_set(s.kept_protected, "/t/sub/keep2");
        remove_stats_done(&s);
        assert_true(has_content(f->fd, "t/keep/k1", "k1"));
        assert_true(has_content(f->fd, "t/sub/keep2", "k2"));
}

/* CONTAINS only says something protected could be beneath: a directory where nothing protected
 * exists goes like any other (the default manifest protects a glob under every pod directory). */
static void test_protect_absent(void **state) {
        static const char *const protected[] = { "/t/pods/p1/volumes/local", NULL };
        RemoveOptions o = { .protect = protect_list, .userdata = (void *) protected };
        Fixture *f = *state;
        RemoveStats s;

        assert_int_equal(mkfile(f->fd, "t/pods/p1/volumes/csi/x", "x"), 0);
        assert_int_equal(mkfile(f->fd, "t/pods/p2/y", "y"), 0);
        assert_int_equal(remove_tree(f->fd, "/t", &o, &s), 1);
        assert_null(s.kept_protected);
        assert_int_equal(s.failed, 0);
        assert_false(exists(f->fd, "t"));
        remove_stats_done(&s);

        /* With the protected path present, only its ancestors stay. */
        assert_int_equal(mkfile(f->fd, "t/pods/p1/volumes/local/data", "d"), 0);
        assert_int_equal(mkfile(f->fd, "t/pods/p1/volumes/csi/x", "x"), 0);
        assert_int_equal(remove_tree(f->fd, "/t", &o, &s), 1);
        assert_strv_set(s.kept_protected, "/t/pods/p1/volumes/local");
        assert_true(has_content(f->fd, "t/pods/p1/volumes/local/data", "d"));
        assert_false(exists(f->fd, "t/pods/p1/volumes/csi"));
        remove_stats_done(&s);
}

static void test_empty_keeps_dir(void **state) {
        RemoveOptions o = { .keep_top = true };
        Fixture *f = *state;
        RemoveStats s;

        assert_int_equal(mkfile(f->fd, "t/a", "a"), 0);
        assert_int_equal(mkfile(f->fd, "t/.hidden/b", "b"), 0);
        assert_int_equal(mkfile(f->fd, "file", "file"), 0);
        assert_int_equal(mkfile(f->fd, "dir/inside", "i"), 0);
        assert_int_equal(mklink(f->fd, "dir", "link"), 0);

        assert_int_equal(remove_tree(f->fd, "/t", &o, &s), 1);
        assert_int_equal(s.files, 2);
        assert_int_equal(s.dirs, 1);
        assert_false(s.top_is_mount);
        remove_stats_done(&s);
        assert_true(exists(f->fd, "t"));
        assert_true(dir_is_empty(f->fd, "t"));

        assert_int_equal(remove_tree(f->fd, "/t", &o, &s), 0);
        assert_int_equal(s.files + s.dirs, 0);
        remove_stats_done(&s);
        assert_true(exists(f->fd, "t"));

        /* "empty" needs a directory: a file or a symlink to one is an error, and stays. */
        assert_int_equal(remove_tree(f->fd, "/file", &o, &s), -ENOTDIR);
        remove_stats_done(&s);
        assert_int_equal(remove_tree(f->fd, "/link", &o, &s), -ENOTDIR);
        remove_stats_done(&s);
        assert_true(has_content(f->fd, "file", "file"));
        assert_true(is_link(f->fd, "link"));
        assert_true(has_content(f->fd, "dir/inside", "i"));
}

static void test_dry_run(void **state) {
        RemoveOptions o = { .dry_run = true };
        Fixture *f = *state;
        RemoveStats s;

        assert_int_equal(mkfile(f->fd, "t/a", "a"), 0);
        assert_int_equal(mkfile(f->fd, "t/b/c", "c"), 0);
        assert_int_equal(mkdirp(f->fd, "t/b/d/e"), 0);
        assert_int_equal(mklink(f->fd, "/etc", "t/b/l"), 0);

        assert_int_equal(remove_tree(f->fd, "/t", &o, &s), 1);
        assert_int_equal(s.files, 3);
        assert_int_equal(s.dirs, 4);
        assert_int_equal(s.failed, 0);
        remove_stats_done(&s);
        o.keep_top = true;
        assert_int_equal(remove_tree(f->fd, "/t", &o, &s), 1);
        assert_int_equal(s.files, 3);
        assert_int_equal(s.dirs, 3);
        remove_stats_done(&s);
        assert_int_equal(remove_tree(f->fd, "/nope", &o, &s), 0);
        assert_true(s.top_missing);
        remove_stats_done(&s);

        assert_true(has_content(f->fd, "t/a", "a"));
        assert_true(has_content(f->fd, "t/b/c", "c"));
        assert_true(exists(f->fd, "t/b/d/e"));
        assert_true(is_link(f->fd, "t/b/l"));
}

static void test_odd_names(void **state) {
        static const char *const protected[] = { "/t/keep\nme", NULL };
        RemoveOptions o = { .protect = protect_list, .userdata = (void *) protected };
        Fixture *f = *state;
        RemoveStats s;

        assert_int_equal(mkfile(f->fd, "t/a b/c d", "1"), 0);
        assert_int_equal(mkfile(f->fd, "t/new\nline/x", "2"), 0);
        assert_int_equal(mkfile(f->fd, "t/back\\slash", "3"), 0);
        assert_int_equal(mkfile(f->fd, "t/keep\nme", "4"), 0);
        assert_int_equal(mkfile(f->fd, "t/\t\001\377", "5"), 0);
        assert_int_equal(mkfile(f->fd, "sp ace/x\ny/z", "6"), 0);
        assert_int_equal(mkfile(f->fd, "sp ace/other", "7"), 0);

        assert_int_equal(remove_tree(f->fd, "/t", &o, &s), 1);
        assert_int_equal(s.files, 4);
        assert_int_equal(s.dirs, 2);
        assert_strv_set(s.kept_protected, "/t/keep\nme");
        remove_stats_done(&s);
        assert_true(has_content(f->fd, "t/keep\nme", "4"));
        assert_false(exists(f->fd, "t/a b"));
        assert_false(exists(f->fd, "t/new\nline"));
        assert_false(exists(f->fd, "t/back\\slash"));

        assert_int_equal(remove_tree(f->fd, "/sp ace/x\ny", NULL, &s), 1);
        remove_stats_done(&s);
        assert_false(exists(f->fd, "sp ace/x\ny"));
        assert_true(has_content(f->fd, "sp ace/other", "7"));
}

static void test_deadline_past(void **state) {
        RemoveOptions o = { .deadline_usec = 1 };
        Fixture *f = *state;
        RemoveStats s;

        assert_int_equal(mkfile(f->fd, "t/a", "a"), 0);
        assert_int_equal(mkfile(f->fd, "file", "f"), 0);
        assert_int_equal(remove_tree(f->fd, "/t", &o, &s), -ETIME);
        assert_int_equal(s.first_error, -ETIME);
        assert_int_equal(s.files + s.dirs, 0);
        remove_stats_done(&s);
        assert_int_equal(remove_tree(f->fd, "/file", &o, &s), -ETIME);
        remove_stats_done(&s);
        assert_true(has_content(f->fd, "t/a", "a"));
        assert_true(has_content(f->fd, "file", "f"));
}

typedef struct DeadlineAfter {
        RemoveOptions *o;
        unsigned calls, after;
} DeadlineAfter;

/* Moves the deadline into the past after a number of calls: the walk must stop between entries. */
static ProtectState protect_deadline(const char *path, void *userdata) {
        DeadlineAfter *d = userdata;

        if (++d->calls == d->after)
                d->o->deadline_usec = 1;
        return PROTECT_NONE;
}

static void test_deadline_mid_walk(void **state) {
        RemoveOptions o = { .protect = protect_deadline };
        DeadlineAfter d = { .o = &o, .after = 4 };
        Fixture *f = *state;
        unsigned left = 0;
        RemoveStats s;

        o.userdata = &d;
        for (unsigned i = 0; i < 10; i++) {
                char name[16];

                snprintf(name, sizeof(name), "t/f%u", i);
                assert_int_equal(mkfile(f->fd, name, "x"), 0);
        }
        /* Call 1 is the target, 2..4 three entries; the fourth entry meets the deadline. */
        assert_int_equal(remove_tree(f->fd, "/t", &o, &s), -ETIME);
        assert_int_equal(s.files, 3);
        assert_int_equal(s.dirs, 0);
        assert_int_equal(s.first_error, -ETIME);
        assert_string_equal(s.first_error_path, "/t");
        remove_stats_done(&s);
        for (unsigned i = 0; i < 10; i++) {
                char name[16];

                snprintf(name, sizeof(name), "t/f%u", i);
                left += exists(f->fd, name);
        }
        assert_int_equal(left, 7);
}

/* A chain of nested directories called "name" below "base", with a file "leaf" at the bottom.
 * Built fd by fd: the whole path may be far longer than PATH_MAX. */
static void make_chain_named(int fd, const char *base, unsigned depth, const char *name) {
        int dfd;

        assert_int_equal(mkdirp(fd, base), 0);
        dfd = openat(fd, base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        for (unsigned i = 0; i < depth; i++) {
                int nfd;

                assert_int_equal(mkdirat(dfd, name, 0755), 0);
                nfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                assert_true(nfd >= 0);
                close(dfd);
                dfd = nfd;
        }
        assert_int_equal(mkfile(dfd, "leaf", "leaf"), 0);
        close(dfd);
}

static void make_chain(int fd, const char *base, unsigned depth) {
        make_chain_named(fd, base, depth, "d");
}

/* Lower the fd limit of this process; teardown() puts it back. */
static void nofile_set(rlim_t n) {
        struct rlimit rl = nofile_at_start;

        rl.rlim_cur = n;
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

/* Any depth goes, with a handful of fds: 10,000 levels under a limit of 64 open files. */
static void test_deep_tree(void **state) {
        Fixture *f = *state;
        RemoveStats s;

        make_chain(f->fd, "deep", 10000);
        make_chain(f->fd, "deep500", 500);
        nofile_set(64);

        assert_int_equal(remove_tree(f->fd, "/deep", &(RemoveOptions) { .dry_run = true }, &s), 1);
        assert_int_equal(s.dirs, 10001);
        assert_int_equal(s.files, 1);
        assert_int_equal(s.failed, 0);
        remove_stats_done(&s);
        assert_true(exists(f->fd, "deep/d/d/d"));

        assert_int_equal(remove_tree(f->fd, "/deep", NULL, &s), 1);
        assert_int_equal(s.dirs, 10001);
        assert_int_equal(s.files, 1);
        assert_int_equal(s.failed, 0);
        remove_stats_done(&s);
        assert_false(exists(f->fd, "deep"));

        assert_int_equal(remove_tree(f->fd, "/deep500", &(RemoveOptions) { .keep_top = true }, &s), 1);
        assert_int_equal(s.dirs, 500);
        remove_stats_done(&s);
        assert_true(dir_is_empty(f->fd, "deep500"));
}

/* 120 levels of 200-byte names: a node path of 24 KB, six times PATH_MAX. */
static void test_long_path(void **state) {
        Fixture *f = *state;
        char name[201];
        RemoveStats s;

        memset(name, 'n', sizeof(name) - 1);
        name[sizeof(name) - 1] = 0;
        make_chain_named(f->fd, "long", 120, name);
        assert_int_equal(mkfile(f->fd, "sibling", "s"), 0);
        assert_int_equal(remove_tree(f->fd, "/long", NULL, &s), 1);
        assert_int_equal(s.dirs, 121);
        assert_int_equal(s.files, 1);
        remove_stats_done(&s);
        assert_false(exists(f->fd, "long"));
        assert_true(has_content(f->fd, "sibling", "s"));
}

/* A directory closed on the way down and read again from the start on the way back passes by what
 * it kept (here a protected entry), instead of meeting it, and counting it, twice. Deep chains on
 * both sides of it make sure the directory is closed and opened again in between. */
static void test_deep_reopen_keeps(void **state) {
        static const char *const protected[] = { "/t/a/keep", NULL };
        RemoveOptions o = { .protect = protect_list, .userdata = (void *) protected };
        Fixture *f = *state;
        RemoveStats s;

        assert_int_equal(mkfile(f->fd, "t/a/keep/k", "k"), 0);
        for (unsigned i = 0; i < 6; i++) {
                char base[32];

                snprintf(base, sizeof(base), "t/a/c%u", i);
                make_chain(f->fd, base, 100);
                snprintf(base, sizeof(base), "t/a/f%u", i);
                assert_int_equal(mkfile(f->fd, base, "f"), 0);
        }

        o.dry_run = true;
        assert_int_equal(remove_tree(f->fd, "/t", &o, &s), 1);
        assert_strv_set(s.kept_protected, "/t/a/keep");
        assert_int_equal(s.dirs, 6 * 101);
        assert_int_equal(s.files, 6 * 2);
        remove_stats_done(&s);

        o.dry_run = false;
        assert_int_equal(remove_tree(f->fd, "/t", &o, &s), 1);
        assert_strv_set(s.kept_protected, "/t/a/keep");
        assert_int_equal(s.dirs, 6 * 101);
        assert_int_equal(s.files, 6 * 2);
        assert_int_equal(s.failed, 0);
        remove_stats_done(&s);
        assert_true(has_content(f->fd, "t/a/keep/k", "k"));
        assert_false(exists(f->fd, "t/a/c0"));
        assert_false(exists(f->fd, "t/a/f5"));
}

typedef struct MoveAt {
        int fd;
        unsigned depth;
        bool done;
} MoveAt;

/* Deep in the walk, moves a directory near the top out of the tree, as a pod could. */
static ProtectState protect_move(const char *path, void *userdata) {
        MoveAt *m = userdata;

        if (!m->done && path_depth_of(path) == m->depth) {
                m->done = true;
                assert_int_equal(renameat(m->fd, "t/d/d/d/d/d", m->fd, "moved"), 0);
        }
        return PROTECT_NONE;
}

/* A directory opened again through ".." must be the one entered: when the tree was moved away
 * meanwhile the walk stops, as a failure, rather than go on in whatever ".." now is. */
static void test_deep_moved(void **state) {
        Fixture *f = *state;
        MoveAt m = { .fd = f->fd, .depth = 80 };
        RemoveOptions o = { .protect = protect_move, .userdata = &m };
        RemoveStats s;

        make_chain(f->fd, "t", 100);
        assert_int_equal(mkfile(f->fd, "other", "o"), 0);
        assert_int_equal(remove_tree(f->fd, "/t", &o, &s), -ESTALE);
        assert_true(m.done);
        assert_int_equal(s.first_error, -ESTALE);
        assert_non_null(s.first_error_reason);
        assert_string_equal(s.first_error_path, "/t/d/d/d/d/d");
        remove_stats_done(&s);
        /* What was beneath went with the directory; it stays where it was moved, and nothing above
         * its old place was touched after that. */
        assert_true(exists(f->fd, "moved") && dir_is_empty(f->fd, "moved"));
        assert_true(has_content(f->fd, "other", "o"));
        assert_true(exists(f->fd, "t/d/d/d/d"));
}

static void test_path_expand(void **state) {
        static const struct {
                const char *pattern;
                const char *matches[5];
        } cases[] = {
                { "/*/x", { "/a/x", "/b/x" } },
                { "/a/*", { "/a/.hidden", "/a/sub", "/a/x" } },
                { "/*", { "/a", "/b", "/c", "/link" } },
                { "/?", { "/a", "/b", "/c" } },
                { "/a/.*", { "/a/.hidden" } },
                { "/a/[sx]*", { "/a/sub", "/a/x" } },
                { "/b/*", { "/b/x", "/b/y" } },
                { "/b/*/x", {} },
                { "/link/*", {} },
                { "/*/sub/*", { "/a/sub/deep" } },
                { "/a/x", { "/a/x" } },
                { "//a//x/", { "/a/x" } },
                { "/a/nope", {} },
                { "/nope/*", {} },
                { "/c/*", {} },
                { "/c/x", {} },
                { "/link", { "/link" } },
                { "/link/x", { "/link/x" } },
                { "/", { "/" } },
        };
        Fixture *f = *state;

        assert_int_equal(mkfile(f->fd, "a/x", "x"), 0);
        assert_int_equal(mkfile(f->fd, "a/.hidden", "h"), 0);
        assert_int_equal(mkfile(f->fd, "a/sub/deep", "d"), 0);
        assert_int_equal(mkfile(f->fd, "b/x", "x"), 0);
        assert_int_equal(mkfile(f->fd, "c", "c"), 0);
        assert_int_equal(mklink(f->fd, "a", "link"), 0);
        assert_int_equal(mklink(f->fd, "../a", "b/y"), 0);

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                cleanup_strv char **l = NULL;
                size_t n = 0;

                assert_int_equal(path_expand(f->fd, cases[i].pattern, &l), 0);
                assert_non_null(l);
                while (n < ELEMENTSOF(cases[i].matches) && cases[i].matches[n])
                        n++;
                if (strv_length(l) != n)
                        fail_msg("%s: %zu matches, expected %zu", cases[i].pattern, strv_length(l), n);
                for (size_t j = 0; j < n; j++)
                        assert_string_equal(l[j], cases[i].matches[j]);
        }
}

static void test_open_nofollow_beneath(void **state) {
        Fixture *f = *state;
        struct stat a, b;
        int fd;

        assert_int_equal(mkfile(f->fd, "a/sub/x", "x"), 0);
        assert_int_equal(mklink(f->fd, "a", "link"), 0);

        fd = open_nofollow_beneath(f->fd, "/a/sub", O_RDONLY);
        assert_true(fd >= 0);
        assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        assert_int_equal(fstat(fd, &a), 0);
        assert_int_equal(fstatat(f->fd, "a/sub", &b, 0), 0);
        assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
        close(fd);
        fd = open_nofollow_beneath(f->fd, "/", O_RDONLY);
        assert_true(fd >= 0);
        close(fd);

        assert_int_equal(open_nofollow_beneath(f->fd, "/link", O_RDONLY), -ELOOP);
        assert_int_equal(open_nofollow_beneath(f->fd, "/link/sub", O_RDONLY), -ELOOP);
        assert_int_equal(open_nofollow_beneath(f->fd, "/a/sub/x", O_RDONLY), -ENOTDIR);
        assert_int_equal(open_nofollow_beneath(f->fd, "/a/sub/x/y", O_RDONLY), -ENOTDIR);
        assert_int_equal(open_nofollow_beneath(f->fd, "/nope", O_RDONLY), -ENOENT);
        assert_int_equal(open_nofollow_beneath(f->fd, "relative", O_RDONLY), -EINVAL);
}

/* Tests that need mounts run in a forked child, in a private mount namespace of its own: nothing
 * is ever mounted in the host's. The child reports through its exit status. */
/* In the child: a private mount namespace, and the temp dir opened again inside it (an fd opened
 * before unshare() refers to the host namespace's mounts and would not see the child's). */
static int child_enter(const char *dir, int *ret_fd) {
        if (unshare(CLONE_NEWNS) < 0) {
                fprintf(stderr, "unshare(CLONE_NEWNS): %m\n");
                return errno == EPERM ? 77 : 1;
        }
        /* "none", not NULL: the kernel ignores them here, and valgrind then has nothing to say. */
        if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
                return 1;
        *ret_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return *ret_fd < 0 ? 1 : 0;
}

static int mount_at(const char *dir, const char *source, const char *rel, const char *fstype, unsigned long flags) {
        char target[256];

        snprintf(target, sizeof(target), "%s/%s", dir, rel);
        return mount(source, target, fstype ?: "none", flags, fstype ? "mode=0755,size=8m" : NULL);
}

static int bind_at(const char *dir, const char *from, const char *to) {
        char source[256];

        snprintf(source, sizeof(source), "%s/%s", dir, from);
        return mount_at(dir, source, to, NULL, MS_BIND);
}

static uint64_t mount_id_of(int fd, const char *path) {
        struct statx sx;

        if (statx(fd, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
                return 0;
        return sx.stx_mnt_id;
}

typedef struct DirCall {
        int (*fn)(const char *dir);
        const char *dir;
} DirCall;

static int call_with_dir(void *userdata) {
        const DirCall *c = userdata;

        return c->fn(c->dir);
}

static void run_in_child(void **state, int (*fn)(const char *dir)) {
        Fixture *f = *state;
        DirCall c = { fn, f->dir };
        char line[4096];
        FILE *mi;

        test_run_in_child(call_with_dir, &c);
        /* The host namespace never saw any of it. */
        mi = fopen("/proc/self/mountinfo", "re");
        assert_non_null(mi);
        while (fgets(line, sizeof(line), mi))
                assert_null(strstr(line, f->dir));
        fclose(mi);
}

/* A tmpfs, a bind mount of the same file system (same st_dev, another mount id) and a bind-mounted
 * file below the target: none is entered or removed, and everything else goes. */
static int child_mounts_kept(const char *dir) {
        static const char *const kept[] = { "/pods/file-mnt", "/pods/vol1", "/pods/vol2" };
        RemoveStats s;
        struct stat a, b;
        int fd, r;

        r = child_enter(dir, &fd);
        if (r != 0)
                return r;
        CHECK(mkfile(fd, "data/pv/precious", "pv") == 0);
        CHECK(mkfile(fd, "data/single", "one") == 0);
        CHECK(mkdirp(fd, "pods/vol1") == 0 && mkdirp(fd, "pods/vol2") == 0);
        CHECK(mkfile(fd, "pods/file-mnt", "") == 0);
        CHECK(mkfile(fd, "pods/junk/x", "x") == 0);
        CHECK(mount_at(dir, "tmpfs", "pods/vol1", "tmpfs", 0) == 0);
        CHECK(mkfile(fd, "pods/vol1/inside", "tmp") == 0);
        CHECK(bind_at(dir, "data/pv", "pods/vol2") == 0);
        CHECK(bind_at(dir, "data/single", "pods/file-mnt") == 0);
        /* The case that matters: a bind mount of the same file system has the same st_dev. */
        CHECK(fstatat(fd, "pods/vol2", &a, 0) == 0 && fstatat(fd, "pods", &b, 0) == 0);
        CHECK(a.st_dev == b.st_dev);

        r = remove_tree(fd, "/pods", &(RemoveOptions) { .dry_run = true }, &s);
        CHECK(r == -EBUSY);
        CHECK(strv_equal_set(s.kept_mounts, kept, ELEMENTSOF(kept)));
        CHECK(s.files == 1 && s.dirs == 1);
        remove_stats_done(&s);
        CHECK(has_content(fd, "pods/junk/x", "x"));

        r = remove_tree(fd, "/pods", NULL, &s);
        CHECK(r == -EBUSY);
        CHECK(strv_equal_set(s.kept_mounts, kept, ELEMENTSOF(kept)));
        CHECK(s.files == 1 && s.dirs == 1 && s.failed == 3 && s.first_error == -EBUSY);
        CHECK(!s.top_is_mount);
        remove_stats_done(&s);
        CHECK(!exists(fd, "pods/junk"));
        CHECK(has_content(fd, "pods/vol1/inside", "tmp"));
        CHECK(has_content(fd, "pods/vol2/precious", "pv"));
        CHECK(has_content(fd, "data/pv/precious", "pv"));
        CHECK(has_content(fd, "data/single", "one"));
        CHECK(has_content(fd, "pods/file-mnt", "one"));

        /* A bind-mounted file as the target itself: left, and residue. */
        r = remove_tree(fd, "/pods/file-mnt", NULL, &s);
        CHECK(r == -EBUSY && !s.top_is_mount && s.files == 0);
        CHECK(strv_equal_set(s.kept_mounts, (const char *const[]) { "/pods/file-mnt" }, 1));
        remove_stats_done(&s);
        CHECK(has_content(fd, "pods/file-mnt", "one"));
        CHECK(has_content(fd, "data/single", "one"));
        return 0;
}

static void test_mounts_kept(void **state) {
        run_in_child(state, child_mounts_kept);
}

/* A target that is a mount point itself is emptied and kept; a mount inside it is still left. */
static int child_top_is_mount(const char *dir) {
        RemoveStats s;
        int fd, r;

        r = child_enter(dir, &fd);
        if (r != 0)
                return r;
        CHECK(mkdirp(fd, "mnt") == 0 && mkdirp(fd, "mnt2") == 0);
        CHECK(mount_at(dir, "tmpfs", "mnt", "tmpfs", 0) == 0);
        CHECK(mount_at(dir, "tmpfs", "mnt2", "tmpfs", 0) == 0);
        CHECK(mkfile(fd, "mnt/a", "a") == 0 && mkfile(fd, "mnt/d/b", "b") == 0);
        CHECK(mkfile(fd, "mnt2/c", "c") == 0 && mkfile(fd, "mnt2/inner/keep", "k") == 0);
        CHECK(mount_at(dir, "tmpfs", "mnt2/inner", "tmpfs", 0) == 0);
        CHECK(mkfile(fd, "mnt2/inner/keep", "k2") == 0);

        r = remove_tree(fd, "/mnt", NULL, &s);
        CHECK(r == 1);
        CHECK(s.top_is_mount && s.files == 2 && s.dirs == 1 && s.failed == 0);
        remove_stats_done(&s);
        CHECK(exists(fd, "mnt") && dir_is_empty(fd, "mnt"));
        CHECK(mount_id_of(fd, "mnt") != mount_id_of(fd, "."));
        CHECK(remove_tree(fd, "/mnt", NULL, &s) == 0 && s.top_is_mount);
        remove_stats_done(&s);

        r = remove_tree(fd, "/mnt2", NULL, &s);
        CHECK(r == -EBUSY);
        CHECK(s.top_is_mount && s.files == 1);
        CHECK(strv_equal_set(s.kept_mounts, (const char *const[]) { "/mnt2/inner" }, 1));
        remove_stats_done(&s);
        CHECK(has_content(fd, "mnt2/inner/keep", "k2"));
        CHECK(!exists(fd, "mnt2/c"));
        return 0;
}

static void test_top_is_mount(void **state) {
        run_in_child(state, child_top_is_mount);
}

/* Mounts above the target are crossed: /var on its own file system is the common case. */
static int child_mount_above(const char *dir) {
        RemoveStats s;
        int fd, r;

        r = child_enter(dir, &fd);
        if (r != 0)
                return r;
        CHECK(mkdirp(fd, "var") == 0);
        CHECK(mount_at(dir, "tmpfs", "var", "tmpfs", 0) == 0);
        CHECK(mkfile(fd, "var/lib/x/f", "f") == 0 && mkfile(fd, "var/lib/y", "y") == 0);
        r = remove_tree(fd, "/var/lib/x", NULL, &s);
        CHECK(r == 1 && s.files == 1 && s.dirs == 1 && !s.top_is_mount);
        remove_stats_done(&s);
        CHECK(!exists(fd, "var/lib/x"));
        CHECK(has_content(fd, "var/lib/y", "y"));
        return 0;
}

static void test_mount_above(void **state) {
        run_in_child(state, child_mount_above);
}

static int set_flags(int fd, const char *path, int flags) {
        int ffd, r, attr;

        ffd = openat(fd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (ffd < 0)
                return -1;
        r = ioctl(ffd, FS_IOC_GETFLAGS, &attr);
        if (r >= 0) {
                attr = (attr & ~(FS_IMMUTABLE_FL | FS_APPEND_FL)) | flags;
                r = ioctl(ffd, FS_IOC_SETFLAGS, &attr);
        }
        close(ffd);
        return r;
}

static int get_flags(int fd, const char *path) {
        int ffd, r, attr = -1;

        ffd = openat(fd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (ffd < 0)
                return -1;
        r = ioctl(ffd, FS_IOC_GETFLAGS, &attr);
        close(ffd);
        return r < 0 ? -1 : attr & (FS_IMMUTABLE_FL | FS_APPEND_FL);
}

/* The tree for the flag tests, on a tmpfs in the child's namespace: it goes with the namespace. */
static int child_flags_setup(const char *dir, int *ret_fd) {
        int fd, r;

        r = child_enter(dir, &fd);
        if (r != 0)
                return r;
        CHECK(mkdirp(fd, "imm") == 0);
        CHECK(mount_at(dir, "tmpfs", "imm", "tmpfs", 0) == 0);
        CHECK(mkfile(fd, "imm/t/f", "f") == 0 && mkfile(fd, "imm/t/d/g", "g") == 0);
        CHECK(mkfile(fd, "imm/t/h", "h") == 0 && mkfile(fd, "imm/q", "q") == 0);
        CHECK(mkfile(fd, "imm/p/x", "x") == 0 && mkfile(fd, "imm/k/c", "c") == 0);
        if (set_flags(fd, "imm/t/f", FS_IMMUTABLE_FL) < 0) {
                fprintf(stderr, "FS_IOC_SETFLAGS on tmpfs: %m\n");
                return errno == ENOTTY || errno == EOPNOTSUPP ? 77 : 1;
        }
        CHECK(set_flags(fd, "imm/t/d", FS_APPEND_FL) == 0);
        CHECK(set_flags(fd, "imm/t/h", FS_APPEND_FL) == 0);
        CHECK(set_flags(fd, "imm/q", FS_IMMUTABLE_FL) == 0);
        CHECK(set_flags(fd, "imm/p", FS_IMMUTABLE_FL) == 0);
        CHECK(set_flags(fd, "imm/k", FS_IMMUTABLE_FL) == 0);
        CHECK(unlinkat(fd, "imm/t/f", 0) < 0 && errno == EPERM);
        *ret_fd = fd;
        return 0;
}

/* Immutable and append-only flags in the tree are cleared to remove it, never in a dry run, and
 * never on the directory above the target. */
static int child_flags(const char *dir) {
        RemoveStats s;
        int fd, r;

        r = child_flags_setup(dir, &fd);
        if (r != 0)
                return r;
        r = remove_tree(fd, "/imm/t", &(RemoveOptions) { .dry_run = true }, &s);
        CHECK(r == 1 && s.files == 3 && s.dirs == 2 && s.flags_cleared == 0);
        remove_stats_done(&s);
        CHECK(get_flags(fd, "imm/t/f") == FS_IMMUTABLE_FL && get_flags(fd, "imm/t/d") == FS_APPEND_FL);

        r = remove_tree(fd, "/imm/t", NULL, &s);
        CHECK(r == 1 && s.files == 3 && s.dirs == 2 && s.flags_cleared == 3 && s.failed == 0);
        remove_stats_done(&s);
        CHECK(!exists(fd, "imm/t"));

        CHECK(remove_tree(fd, "/imm/q", NULL, &s) == 1 && s.flags_cleared == 1);
        remove_stats_done(&s);
        CHECK(!exists(fd, "imm/q"));

        CHECK(remove_tree(fd, "/imm/k", &(RemoveOptions) { .keep_top = true }, &s) == 1);
        CHECK(s.flags_cleared == 1 && s.files == 1);
        remove_stats_done(&s);
        CHECK(exists(fd, "imm/k") && dir_is_empty(fd, "imm/k"));

        r = remove_tree(fd, "/imm/p/x", NULL, &s);
        CHECK(r == -EPERM && s.flags_cleared == 0 && s.failed == 1);
        CHECK(streq_ptr(s.first_error_path, "/imm/p/x"));
        remove_stats_done(&s);
        CHECK(has_content(fd, "imm/p/x", "x"));
        CHECK(get_flags(fd, "imm/p") == FS_IMMUTABLE_FL);
        return 0;
}

static void test_flags(void **state) {
        run_in_child(state, child_flags);
}

/* The flags belong to the inode: an immutable file in the tree that is also a protected file
 * elsewhere (a hard link) keeps its flag and stays, a failure named in kept_linked; the rest of
 * the tree goes. */
static int child_flags_linked(const char *dir) {
        RemoveStats s;
        struct stat st;
        int fd, r;

        r = child_flags_setup(dir, &fd);
        if (r != 0)
                return r;
        CHECK(mkfile(fd, "imm/prot/twin", "precious") == 0);
        CHECK(mkfile(fd, "imm/t2/a/other", "o") == 0 && mkfile(fd, "imm/t2/z/imm1", "i") == 0);
        CHECK(mkdirp(fd, "imm/t2/m") == 0);
        CHECK(linkat(fd, "imm/prot/twin", fd, "imm/t2/m/link", 0) == 0);
        CHECK(set_flags(fd, "imm/prot/twin", FS_IMMUTABLE_FL) == 0);
        CHECK(set_flags(fd, "imm/t2/z/imm1", FS_IMMUTABLE_FL) == 0);
        CHECK(get_flags(fd, "imm/t2/m/link") == FS_IMMUTABLE_FL);

        r = remove_tree(fd, "/imm/t2", NULL, &s);
        CHECK(r == -EMLINK && s.failed == 1 && s.first_error == -EMLINK);
        CHECK(strv_equal_set(s.kept_linked, (const char *const[]) { "/imm/t2/m/link" }, 1));
        CHECK(s.flags_cleared == 1 && s.files == 2);
        remove_stats_done(&s);
        CHECK(get_flags(fd, "imm/prot/twin") == FS_IMMUTABLE_FL);
        CHECK(has_content(fd, "imm/prot/twin", "precious"));
        CHECK(fstatat(fd, "imm/t2/m/link", &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_nlink == 2);
        CHECK(!exists(fd, "imm/t2/a") && !exists(fd, "imm/t2/z"));

        /* Once the other name is gone, the inode is the tree's alone. */
        CHECK(set_flags(fd, "imm/prot/twin", 0) == 0 && unlinkat(fd, "imm/prot/twin", 0) == 0);
        CHECK(set_flags(fd, "imm/t2/m/link", FS_APPEND_FL) == 0);
        CHECK(remove_tree(fd, "/imm/t2", NULL, &s) == 1 && s.flags_cleared == 1 && s.failed == 0);
        remove_stats_done(&s);
        CHECK(!exists(fd, "imm/t2"));
        return 0;
}

static void test_flags_linked(void **state) {
        run_in_child(state, child_flags_linked);
}

/* A mount 300 levels down, beyond what a fixed-size path buffer or fd stack would reach: kept,
 * residue, and everything around it removed. */
static int child_deep_mount(const char *dir) {
        RemoveStats s;
        int fd, dfd, r;

        r = child_enter(dir, &fd);
        if (r != 0)
                return r;
        make_chain(fd, "t/a", 400);
        make_chain(fd, "t/b", 100);
        dfd = openat(fd, "t/a", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (unsigned i = 0; dfd >= 0 && i < 300; i++) {
                int nfd = openat(dfd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                close(dfd);
                dfd = nfd;
        }
        CHECK(dfd >= 0 && fchdir(dfd) == 0 && mkdir("m", 0755) == 0);
        CHECK(mount("tmpfs", "m", "tmpfs", 0, "size=1m") == 0);
        CHECK(mkfile(dfd, "m/data", "deep") == 0);

        r = remove_tree(fd, "/t", &(RemoveOptions) { .dry_run = true }, &s);
        CHECK(r == -EBUSY && strv_length(s.kept_mounts) == 1 && s.files == 2);
        remove_stats_done(&s);
        r = remove_tree(fd, "/t", NULL, &s);
        CHECK(r == -EBUSY && strv_length(s.kept_mounts) == 1 && s.failed == 1);
        CHECK(strlen(s.kept_mounts[0]) == strlen("/t/a") + 2 * 301 && s.files == 2 && s.dirs == 101 + 100);
        remove_stats_done(&s);
        CHECK(has_content(dfd, "m/data", "deep"));
        CHECK(!exists(fd, "t/b"));
        close(dfd);
        return 0;
}

static void test_deep_mount(void **state) {
        run_in_child(state, child_deep_mount);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_remove_tree_basic, setup, teardown),
                cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_invalid_paths, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlinks_not_followed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlink_component, setup, teardown),
                cmocka_unit_test_setup_teardown(test_file_above_target, setup, teardown),
                cmocka_unit_test_setup_teardown(test_protect, setup, teardown),
                cmocka_unit_test_setup_teardown(test_protect_absent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_empty_keeps_dir, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dry_run, setup, teardown),
                cmocka_unit_test_setup_teardown(test_odd_names, setup, teardown),
                cmocka_unit_test_setup_teardown(test_deadline_past, setup, teardown),
                cmocka_unit_test_setup_teardown(test_deadline_mid_walk, setup, teardown),
                cmocka_unit_test_setup_teardown(test_deep_tree, setup, teardown),
                cmocka_unit_test_setup_teardown(test_long_path, setup, teardown),
                cmocka_unit_test_setup_teardown(test_deep_reopen_keeps, setup, teardown),
                cmocka_unit_test_setup_teardown(test_deep_moved, setup, teardown),
                cmocka_unit_test_setup_teardown(test_path_expand, setup, teardown),
                cmocka_unit_test_setup_teardown(test_open_nofollow_beneath, setup, teardown),
                cmocka_unit_test_setup_teardown(test_mounts_kept, setup, teardown),
                cmocka_unit_test_setup_teardown(test_top_is_mount, setup, teardown),
                cmocka_unit_test_setup_teardown(test_mount_above, setup, teardown),
                cmocka_unit_test_setup_teardown(test_flags, setup, teardown),
                cmocka_unit_test_setup_teardown(test_flags_linked, setup, teardown),
                cmocka_unit_test_setup_teardown(test_deep_mount, setup, teardown),
        };

        if (getrlimit(RLIMIT_NOFILE, &nofile_at_start) < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
