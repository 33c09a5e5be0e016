/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small files beneath a root directory: read them with symlinks resolved inside the root, write them atomically. */

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "agent/fileio.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

static bool same_inode(int a, int b) {
        struct stat sa, sb;

        return fstat(a, &sa) >= 0 && fstat(b, &sb) >= 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Replace the path still to walk by a symlink's target followed by the rest. */
static int follow_link(int dir_fd, const char *name, const char *rest, char **todo) {
        char target[PATH_MAX];
        ssize_t n;
        char *t;

        n = readlinkat(dir_fd, name, target, sizeof target - 1);
        if (n < 0)
                return negative_errno();
        target[n] = '\0';
        if (asprintf(&t, "%s/%s", target, rest) < 0)
                return -ENOMEM;
        free(*todo);
        *todo = t;
        return 0;
}

/* RESOLVE_IN_ROOT by hand, for kernels before 5.6 (and valgrind): one component at a time, never
 * following a symlink with the kernel, ".." stopping at the root, an absolute target restarting there. */
int fileio_open_beneath_by_hand(int root_fd, const char *path, int flags) {
        cleanup_free char *todo = strdup(path);
        cleanup_close int fd = -EBADF;
        unsigned links = 0;
        int r;

        if (!todo)
                return -ENOMEM;
        fd = openat(root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        for (char *p = todo; fd >= 0;) {
                cleanup_free char *name = NULL;
                bool last;
                int next;

                p += strspn(p, "/");
                if (!*p)
                        return RET_NERRNO(openat(fd, ".", flags | O_CLOEXEC));
                name = strndup(p, strcspn(p, "/"));
                if (!name)
                        return -ENOMEM;
                p += strlen(name);
                last = p[strspn(p, "/")] == '\0';
                if (streq(name, ".") || (streq(name, "..") && same_inode(fd, root_fd)))
                        continue;
                next = openat(fd, name, (last ? flags : O_PATH | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0 && (errno == ELOOP || errno == ENOTDIR)) {
                        /* A symlink (or, when ENOTDIR, maybe one to a directory). */
                        if (++links > 40)
                                return -ELOOP;
                        r = follow_link(fd, name, p, &todo);
                        if (r == -EINVAL) /* not a symlink after all */
                                return -ENOTDIR;
                        if (r < 0)
                                return r;
                        p = todo;
                        if (*p == '/') {
                                (void) close(fd);
                                fd = openat(root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
                        }
                        continue;
                }
                if (next < 0)
                        return negative_errno();
                if (last)
                        return next;
                (void) close(fd);
                fd = next;
        }
        return negative_errno();
}

int fileio_open_beneath(int root_fd, const char *path, int flags) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC),
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        long fd;

        fd = syscall(SYS_openat2, root_fd, path, &how, sizeof how);
        if (fd < 0 && errno == ENOSYS)
                return fileio_open_beneath_by_hand(root_fd, path, flags);
        return fd < 0 ? negative_errno() : (int) fd;
}

static int read_fd(int fd, size_t max, char **ret, size_t *ret_size) {
        cleanup_free char *buf = NULL;
        size_t size = 0, allocated = 0;

        for (;;) {
                ssize_t n;

                if (allocated - size < 4096) {
                        char *b;

                        allocated = allocated ? allocated * 2 : 8192;
                        b = realloc(buf, allocated + 1);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                }
                n = read(fd, buf + size, allocated - size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                size += (size_t) n;
                if (size > max)
                        return -EFBIG;
        }
        buf[size] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int fileio_read_beneath(int root_fd, const char *path, size_t max, char **ret, size_t *ret_size) {
        cleanup_close int fd = -EBADF;

        fd = fileio_open_beneath(root_fd, path, O_RDONLY | O_NOCTTY);
        if (fd < 0)
                return fd;
        return read_fd(fd, max, ret, ret_size);
}

int fileio_read_file(const char *path, size_t max, char **ret, size_t *ret_size) {
        cleanup_close int fd = -EBADF;

        fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return read_fd(fd, max, ret, ret_size);
}

int fileio_mkdir_beneath(int root_fd, const char *path, mode_t mode) {
        cleanup_free char *copy = strdup(path);
        cleanup_close int fd = -EBADF;
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                /* cppcheck-suppress memleak ; copy is cleanup_free (cppcheck does not know the attribute) */
                return negative_errno();
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                int next;

                if (mkdirat(fd, c, mode) < 0 && errno != EEXIST)
                        return negative_errno();
                next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return negative_errno();
                (void) close(fd);
                fd = next;
        }
        return TAKE_FD(fd);
}

static int write_all(int fd, const void *data, size_t size) {
        const char *p = data;

        while (size > 0) {
                ssize_t n = write(fd, p, size);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                p += n;
                size -= (size_t) n;
        }
        return 0;
}

int fileio_write_atomic(int dir_fd, const char *name, const void *data, size_t size, mode_t mode) {
        cleanup_close int fd = -EBADF;
        char tmp[256];
        int r;

        if ((size_t) snprintf(tmp, sizeof tmp, ".#%s.%d", name, (int) getpid()) >= sizeof tmp)
                return -ENAMETOOLONG;
        /* A leftover of a crashed process that had our PID is ours to replace. */
        (void) unlinkat(dir_fd, tmp, 0);
        fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
                return negative_errno();
        r = write_all(fd, data, size);
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r >= 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                r = negative_errno();
        if (r < 0) {
                (void) unlinkat(dir_fd, tmp, 0);
                return r;
        }
        /* The rename itself is durable only once the directory is. */
        if (fsync(dir_fd) < 0)
                return negative_errno();
        return 0;
}
