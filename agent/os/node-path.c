/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node paths as the removal walk and the pattern expansion hold them: normalized, grown and cut back in
 * place, their parent (or the directory itself) opened beneath the root without a symlink. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "agent/os/node-path.h"
#include "alloc-util.h"
#include "chase.h"
#include "macro.h"

/* An absolute node path with no empty, "." or ".." components ("/a//b/" becomes "/a/b"). */
int node_path_normalize(const char *path, char **ret) {
        cleanup_free char *buf = NULL;
        char *d;

        if (!path || path[0] != '/')
                return -EINVAL;
        buf = malloc(strlen(path) + 1);
        if (!buf)
                return -ENOMEM;
        d = buf;
        for (const char *p = path;;) {
                size_t l;

                p += strspn(p, "/");
                if (!*p)
                        break;
                l = strcspn(p, "/");
                if (l <= 2 && strncmp(p, "..", l) == 0) /* "." or ".." */
                        return -EINVAL;
                *d++ = '/';
                memcpy(d, p, l);
                d += l;
                p += l;
        }
        if (d == buf)
                *d++ = '/';
        *d = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

int node_path_push(NodePathBuf *b, const char *name, size_t *ret_saved) {
        size_t l = strlen(name), need = b->len + 1 + l + 1;

        if (GREEDY_REALLOC(b->p, b->alloc, need) < 0)
                return -ENOMEM;
        *ret_saved = b->len;
        /* The root is "/" and its children "/x", not "//x". */
        if (b->len != 1)
                b->p[b->len++] = '/';
        memcpy(b->p + b->len, name, l + 1);
        b->len += l;
        return 0;
}

void node_path_pop(NodePathBuf *b, size_t saved) {
        b->len = saved;
        b->p[saved] = 0;
}

/* The directory holding path, by chaseat() without symlinks; *ret_symlink (optional) names the
 * component that was one. */
int node_path_open_parent(int root_fd, const char *path, char **ret_symlink, const char **ret_last) {
        size_t stop = 0;
        int fd;

        fd = chaseat(root_fd, path, CHASE_NO_SYMLINKS | CHASE_PARENT, O_RDONLY, ret_last, ret_symlink ? &stop : NULL);
        if (fd == -ELOOP && ret_symlink) {
                *ret_symlink = strndup(path, stop);
                if (!*ret_symlink)
                        return -ENOMEM;
        }
        return fd;
}

int open_nofollow_beneath(int root_fd, const char *node_path, int flags) {
        cleanup_free char *path = NULL;
        int r;

        r = node_path_normalize(node_path, &path);
        if (r < 0)
                return r;
        return chaseat(root_fd, path, CHASE_NO_SYMLINKS | CHASE_MUST_BE_DIRECTORY, flags, NULL, NULL);
}
