/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A manifest pattern expanded beneath the root: globs matched one component at a time, never through a
 * symlink but the last component, never into a mount that does not answer. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/base/path.h"
#include "agent/os/node-path.h"
#include "agent/os/path-expand.h"
#include "agent/os/remote-fs.h"
#include "chase.h"
#include "dirent-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

/* The characters path_name_match() treats specially: a component without them is a literal name. */
static bool component_is_glob(const char *c) {
        return strpbrk(c, "*?[") != NULL;
}

typedef struct Expand {
        int root_fd;
        NodePathBuf path;
        char **matches;
} Expand;

static int expand_at(Expand *e, int dfd, char *const *comps);

/* name, an entry of dfd, matched the first of comps: on to the next one, or record a match. */
static int expand_entry(Expand *e, int dfd, const char *name, char *const *comps) {
        struct stat st;
        size_t saved;
        int r, fd;

        r = node_path_push(&e->path, name, &saved);
        if (r < 0)
                return r;
        r = remote_fs_check(e->root_fd, e->path.p, NULL);
        if (r < 0) {
                /* A mount that does not answer is not looked into: named as a match when it is one, for
                 * its row to say so; beneath it nothing is matched. */
                r = r == -ENOMEM ? r : comps[1] ? 0 : strv_extend(&e->matches, e->path.p);
                node_path_pop(&e->path, saved);
                return r;
        }
        if (!comps[1]) {
                r = RET_NERRNO(fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW));
                if (r >= 0 || r == -ENOTCONN)
                        r = strv_extend(&e->matches, e->path.p);
                else if (r == -ENOENT)
                        r = 0;
        } else {
                /* A symlink (or a file) as an intermediate component simply does not match; nor does
                 * anything beneath a FUSE mount whose daemon is gone (ENOTCONN). */
                fd = chaseat(dfd, name, CHASE_NO_SYMLINKS | CHASE_MUST_BE_DIRECTORY, O_RDONLY, NULL, NULL);
                if (fd >= 0) {
                        r = expand_at(e, fd, comps + 1);
                        (void) close_nointr(fd);
                } else
                        r = fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP || fd == -ENOTCONN ? 0 : fd;
        }
        node_path_pop(&e->path, saved);
        return r;
}

static int expand_at(Expand *e, int dfd, char *const *comps) {
        cleanup_closedir DIR *d = NULL;
        int fd;

        if (!component_is_glob(comps[0]))
                return expand_entry(e, dfd, comps[0], comps);
        fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                int r = negative_errno();

                (void) close_nointr(fd);
                return r;
        }
        for (;;) {
                struct dirent *de;
                int r;

                errno = 0;
                de = readdir(d);
                if (!de)
                        return errno != 0 ? negative_errno() : 0;
                if (dot_or_dot_dot(de->d_name) || !path_name_match(comps[0], de->d_name))
                        continue;
                r = expand_entry(e, dirfd(d), de->d_name, comps);
                if (r < 0)
                        return r;
        }
}

/* A pattern without globs is returned when it exists, and also when a component above it is a
 * symlink, so that remove_tree() reports that symlink instead of the line silently matching
 * nothing. */
static int expand_literal(Expand *e, int root_fd) {
        cleanup_free char *symlink = NULL;
        cleanup_close int pfd = -EBADF;
        const char *name = NULL;
        struct stat st;
        int r;

        r = remote_fs_check(root_fd, e->path.p, NULL);
        if (r == -ENOMEM)
                return r;
        if (streq(e->path.p, "/") || r < 0)
                return strv_extend(&e->matches, e->path.p);
        pfd = node_path_open_parent(root_fd, e->path.p, &symlink, &name);
        if (symlink)
                return strv_extend(&e->matches, e->path.p);
        if (pfd == -ENOENT || pfd == -ENOTDIR)
                return 0;
        if (pfd < 0)
                return pfd;
        /* A FUSE mount whose daemon is gone (ENOTCONN) is there: its row says what it cannot do. */
        if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno != ENOTCONN)
                return errno == ENOENT ? 0 : negative_errno();
        return strv_extend(&e->matches, e->path.p);
}

static int split_components(const char *path, char ***ret) {
        cleanup_strv char **l = NULL;

        for (const char *p = path + 1; *p;) {
                size_t n = strcspn(p, "/");
                cleanup_free char *c = strndup(p, n);

                if (!c || strv_extend(&l, c) < 0)
                        return -ENOMEM;
                p += n;
                p += strspn(p, "/");
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static int expand_glob(Expand *e, int root_fd) {
        cleanup_strv char **comps = NULL;
        cleanup_close int fd = -EBADF;
        int r;

        r = split_components(e->path.p, &comps);
        if (r < 0)
                return r;
        fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        node_path_pop(&e->path, 1); /* start from "/" */
        return expand_at(e, fd, comps);
}

int path_expand(int root_fd, const char *pattern, char ***ret) {
        Expand e = { .root_fd = root_fd };
        size_t n = 0;
        int r;

        if (!ret)
                return -EINVAL;
        r = node_path_normalize(pattern, &e.path.p);
        if (r < 0)
                return r;
        e.path.len = strlen(e.path.p);
        e.path.alloc = e.path.len + 1;
        r = component_is_glob(e.path.p) ? expand_glob(&e, root_fd) : expand_literal(&e, root_fd);
        free(e.path.p);
        if (r >= 0 && !e.matches) {
                e.matches = calloc(1, sizeof(char *));
                if (!e.matches)
                        r = -ENOMEM;
        }
        if (r < 0) {
                strv_free(e.matches);
                return r;
        }
        while (e.matches[n])
                n++;
        qsort(e.matches, n, sizeof(char *), strcmp_ptr);
        *ret = e.matches;
        return 0;
}
