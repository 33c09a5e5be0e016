/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one path resolver (include/chase.h): openat2 where the kernel has it, a walk by hand where not. */

#include <limits.h>
#include <stdbool.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "chase.h"
#include "errno-util.h"
#include "macro.h"
#include "mountid-util.h"
#include "string-util.h"

static bool chase_openat2_disabled(void) {
        const char *e = getenv(CHASE_NO_OPENAT2_ENV);

        return e && e[0] == '1' && e[1] == '\0';
}

/* A symlink's target followed by the rest of the path still to walk, replacing *todo. */
static int chase_splice_link(int link_fd, const char *rest, char **todo) {
        char target[PATH_MAX];
        ssize_t n;
        char *t;

        n = readlinkat(link_fd, "", target, sizeof target - 1);
        if (n < 0)
                return negative_errno();
        target[n] = '\0';
        if (asprintf(&t, "%s/%s", target, rest) < 0)
                return -ENOMEM;
        free(*todo);
        *todo = t;
        return 0;
}

/* The last component reached: open it with the caller's flags, through the name the O_PATH handle
 * was taken by, and make sure both are the same inode (a swap in between is -ESTALE). */
static int chase_open_last(int dir_fd, const char *name, int path_fd, const MountIdentity *id, int open_flags) {
        cleanup_close int fd = -EBADF;
        MountIdentity now;
        int r;

        if ((open_flags & O_DIRECTORY) && !S_ISDIR(id->mode))
                return -ENOTDIR;
        if (open_flags & O_PATH)
                return RET_NERRNO(fcntl(path_fd, F_DUPFD_CLOEXEC, 3));
        fd = openat(dir_fd, name, open_flags | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = mount_identity_at(fd, "", 0, &now);
        if (r < 0)
                return r;
        if (!mount_identity_same(&now, id))
                return -ESTALE;
        return TAKE_FD(fd);
}

/* One step of the walk by hand: dir_fd/name opened O_PATH without following it. -ELOOP for a
 * symlink when they are refused; 0 with *ret_link set when it is one to follow. */
static int chase_step(int dir_fd, const char *name, unsigned flags, const MountIdentity *dir_id, bool last,
                      MountIdentity *ret_id, bool *ret_link) {
        cleanup_close int fd = -EBADF;
        int r;

        fd = openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = mount_identity_at(fd, "", 0, ret_id);
        if (r < 0)
                return r;
        *ret_link = S_ISLNK(ret_id->mode);
        if (*ret_link)
                return (flags & CHASE_NO_SYMLINKS) ? -ELOOP : TAKE_FD(fd);
        if ((flags & CHASE_NO_XDEV) && mount_identity_other_mount(dir_id, ret_id))
                return -EXDEV;
        if (!S_ISDIR(ret_id->mode) && (!last || (flags & CHASE_MUST_BE_DIRECTORY)))
                return -ENOTDIR;
        return TAKE_FD(fd);
}

/* ".." by hand: nothing above root_fd (and none at all without symlinks). */
static int chase_dotdot(int root_fd, int *fd, unsigned flags, MountIdentity *id) {
        MountIdentity root_id, up_id;
        int up, r;

        if (flags & CHASE_NO_SYMLINKS)
                return -EXDEV;
        r = mount_identity_at(root_fd, "", 0, &root_id);
        if (r < 0)
                return r;
        if (mount_identity_same(&root_id, id))
                return 0;
        up = openat(*fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (up < 0)
                return negative_errno();
        r = mount_identity_at(up, "", 0, &up_id);
        if (r >= 0 && (flags & CHASE_NO_XDEV) && mount_identity_other_mount(id, &up_id))
                r = -EXDEV;
        if (r < 0) {
                (void) close(up);
                return r;
        }
        (void) close(*fd);
        *fd = up;
        *id = up_id;
        return 0;
}

/* *fd becomes root_fd's directory again (the start, or an absolute symlink's target), *id its identity. */
static int chase_at_root(int root_fd, int *fd, MountIdentity *id) {
        int nfd = openat(root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (nfd < 0)
                return negative_errno();
        if (*fd >= 0)
                (void) close(*fd);
        *fd = nfd;
        return mount_identity_at(nfd, "", 0, id);
}

/* The next component of *p into name (advancing *p past it): its length, 0 at the end of the path. */
static int chase_component(char **p, char name[static NAME_MAX + 1], bool *ret_last) {
        size_t n;

        *p += strspn(*p, "/");
        n = strcspn(*p, "/");
        if (n > NAME_MAX)
                return -ENAMETOOLONG;
        memcpy(name, *p, n);
        name[n] = '\0';
        *p += n;
        *ret_last = (*p)[strspn(*p, "/")] == '\0';
        return (int) n;
}

/* The walk by hand, one component at a time with O_PATH|O_NOFOLLOW, for kernels without openat2
 * (before 5.6, a seccomp filter, valgrind). *ret_stop: the length of path reached when it stopped. */
static int chase_by_hand(int root_fd, const char *path, unsigned flags, int open_flags, size_t *ret_stop) {
        cleanup_free char *todo = strdup(path);
        cleanup_close int fd = -EBADF;
        unsigned links = 0;
        MountIdentity id;
        int r;

        if (!todo)
                return -ENOMEM;
        r = chase_at_root(root_fd, &fd, &id);
        for (char *p = todo; r >= 0;) {
                char name[NAME_MAX + 1];
                MountIdentity next_id;
                bool last, link = false;
                int next;

                r = chase_component(&p, name, &last);
                if (ret_stop && links == 0 && r != 0)
                        *ret_stop = (size_t) (p - todo);
                if (r <= 0)
                        return r < 0 ? r : RET_NERRNO(openat(fd, ".", open_flags | O_CLOEXEC));
                if (streq(name, "."))
                        continue;
                if (streq(name, "..")) {
                        r = chase_dotdot(root_fd, &fd, flags, &id);
                        continue;
                }
                next = chase_step(fd, name, flags, &id, last, &next_id, &link);
                if (next < 0)
                        return next;
                if (link) {
                        r = ++links > CHASE_LINKS_MAX ? -ELOOP : chase_splice_link(next, p, &todo);
                        (void) close(next);
                        p = todo;
                        if (r >= 0 && *p == '/')
                                r = chase_at_root(root_fd, &fd, &id);
                        continue;
                }
                if (last) {
                        r = chase_open_last(fd, name, next, &next_id, open_flags);
                        (void) close(next);
                        return r;
                }
                (void) close(fd);
                fd = next;
                id = next_id;
        }
        return r;
}

/* ".." anywhere in path. */
static bool chase_has_dotdot(const char *path) {
        for (const char *p = path;;) {
                size_t n;

                p += strspn(p, "/");
                n = strcspn(p, "/");
                if (n == 0)
                        return false;
                if (n == 2 && p[0] == '.' && p[1] == '.')
                        return true;
                p += n;
        }
}

/* openat2(2) where the kernel has it; the walk by hand where it says ENOSYS (or a seccomp filter
 * EPERM), and where the caller wants to know which component stopped it. */
static int chase_open(int root_fd, const char *path, unsigned flags, int open_flags, size_t *ret_stop) {
        struct open_how how = {
                .flags = (uint64_t) (open_flags | O_CLOEXEC | ((flags & CHASE_MUST_BE_DIRECTORY) ? O_DIRECTORY : 0)),
                .resolve = RESOLVE_NO_MAGICLINKS | ((flags & CHASE_NO_XDEV) ? RESOLVE_NO_XDEV : 0) |
                           ((flags & CHASE_NO_SYMLINKS) ? RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH : RESOLVE_IN_ROOT),
        };
        const char *rel = path + strspn(path, "/");
        long fd = -1;

        /* RESOLVE_BENEATH lets ".." through while it stays beneath: without symlinks, none at all. */
        if ((flags & CHASE_NO_SYMLINKS) && chase_has_dotdot(rel))
                return -EXDEV;
        if (chase_openat2_disabled())
                return chase_by_hand(root_fd, path, flags, open_flags, ret_stop);
        /* EAGAIN: a rename or mount raced a ".."; the kernel asks to try again. */
        for (unsigned i = 0; i < 8; i++) {
                fd = syscall(SYS_openat2, root_fd, rel[0] ? rel : ".", &how, sizeof how);
                if (fd >= 0 || errno != EAGAIN)
                        break;
        }
        if (fd < 0 && (errno == ENOSYS || errno == EPERM || ret_stop))
                return chase_by_hand(root_fd, path, flags, open_flags, ret_stop);
        return fd < 0 ? negative_errno() : (int) fd;
}

int chaseat(int root_fd, const char *path, unsigned flags, int open_flags, const char **ret_last, size_t *ret_stop) {
        cleanup_free char *dir = NULL;
        const char *last, *end;

        if (!(flags & CHASE_PARENT))
                return chase_open(root_fd, path, flags, open_flags, ret_stop);
        end = path + strlen(path);
        last = memrchr(path, '/', (size_t) (end - path));
        last = last ? last + 1 : path;
        if (last == end || streq(last, ".") || streq(last, ".."))
                return -EINVAL;
        dir = strndup(path, (size_t) (last - path));
        if (!dir)
                return -ENOMEM;
        if (ret_last)
                *ret_last = last;
        return chase_open(root_fd, dir, flags | CHASE_MUST_BE_DIRECTORY, open_flags | O_DIRECTORY, ret_stop);
}
