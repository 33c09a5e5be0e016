/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small files beneath a root directory: read them with symlinks resolved inside the root, write them
 * atomically; reach a unix socket there through the inode resolved. */

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>

#include "agent/os/fileio.h"
#include "agent/os/remote-fs.h"
#include "chase.h"
#include "strv.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"
#include "alloc-util.h"

static int read_fd(int fd, size_t max, char **ret, size_t *ret_size) {
        cleanup_free char *buf = NULL;
        size_t size = 0, allocated = 0;

        for (;;) {
                ssize_t n;

                /* One byte more than the data, for the terminating NUL. */
                if (GREEDY_REALLOC(buf, allocated, size + 4096 + 1) < 0)
                        return -ENOMEM;
                n = read(fd, buf + size, allocated - size - 1);
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

int fileio_read_regular(int fd, size_t max, char **ret, size_t *ret_size, struct stat *ret_st) {
        struct stat st;
        int flags;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if ((uintmax_t) st.st_size > max)
                return -EFBIG;
        /* Opened O_NONBLOCK so that a FIFO could not hang the open; a regular file reads the same
         * either way, but a network file system may say EAGAIN without it cleared. */
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
                return negative_errno();
        if (ret_st)
                *ret_st = st;
        return read_fd(fd, max, ret, ret_size);
}

bool fileio_exists_beneath(int root_fd, const char *path) {
        int fd;

        if (remote_fs_check(root_fd, path, NULL) < 0)
                return false;
        fd = chaseat(root_fd, path, 0, O_PATH, NULL, NULL);
        if (fd < 0)
                return false;
        (void) close_nointr(fd);
        return true;
}

int fileio_read_beneath(int root_fd, const char *path, size_t max, char **ret, size_t *ret_size) {
        cleanup_close int fd = -EBADF;
        int r;

        r = remote_fs_check(root_fd, path, NULL);
        if (r < 0)
                return r;
        fd = chaseat(root_fd, path, 0, O_RDONLY | O_NOCTTY | O_NONBLOCK, NULL, NULL);
        if (fd < 0)
                return fd;
        return fileio_read_regular(fd, max, ret, ret_size, NULL);
}

int fileio_read_file(const char *path, size_t max, char **ret, size_t *ret_size) {
        cleanup_close int fd = -EBADF;

        fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        return fileio_read_regular(fd, max, ret, ret_size, NULL);
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
                /* The resolver's rule for the step: no symlink, no "..". */
                next = chaseat(fd, c, CHASE_NO_SYMLINKS | CHASE_MUST_BE_DIRECTORY, O_RDONLY, NULL, NULL);
                if (next < 0)
                        return next;
                (void) close(fd);
                fd = next;
        }
        return TAKE_FD(fd);
}

static const char *type_name(mode_t mode) {
        switch (mode & S_IFMT) {
        case S_IFDIR:
                return "a directory";
        case S_IFCHR:
                return "a character device";
        case S_IFBLK:
                return "a block device";
        case S_IFIFO:
                return "a FIFO";
        case S_IFSOCK:
                return "a socket";
        case S_IFLNK:
                return "a symbolic link";
        default:
                return "not a regular file";
        }
}

static int check_own_by(const struct stat *st, uid_t owner, char **reterr_msg) {
        if (!S_ISREG(st->st_mode))
                return set_errmsg(reterr_msg, -EPERM, "it is %s", type_name(st->st_mode));
        /* Another name means data someone else keeps there (a PV's file linked into --root). */
        if (st->st_nlink != 1)
                return set_errmsg(reterr_msg, -EPERM, "it is a hard link (%ju names)", (uintmax_t) st->st_nlink);
        if (st->st_uid != 0 && st->st_uid != geteuid() && st->st_uid != owner)
                return set_errmsg(reterr_msg, -EPERM, "it belongs to UID %u, not to root%s", (unsigned) st->st_uid,
                                  owner != 0 ? " nor to its directory's owner" : "");
        return 0;
}

int fileio_check_own(const struct stat *st, char **reterr_msg) {
        return check_own_by(st, 0, reterr_msg);
}

static bool same_stat(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Open the very inode path_fd (O_PATH) refers to; without /proc, open the name again and insist it is still that
 * inode. O_NONBLOCK: should it be a FIFO after all, the open must not wait. */
static int reopen(int path_fd, int dir_fd, const char *name, const struct stat *st, int flags) {
        cleanup_close int fd = -EBADF;
        char p[64];
        struct stat now;

        flags = (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
        snprintf(p, sizeof p, "/proc/self/fd/%d", path_fd);
        fd = open(p, flags);
        if (fd < 0 && errno == ENOENT)
                fd = openat(dir_fd, name, flags | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &now) < 0)
                return negative_errno();
        if (!same_stat(&now, st))
                return -ESTALE;
        return TAKE_FD(fd);
}

int fileio_open_regular(int dir_fd, const char *name, int flags, struct stat *ret_st, char **reterr_msg) {
        return fileio_open_regular_by(dir_fd, name, flags, 0, ret_st, reterr_msg);
}

int fileio_open_regular_by(int dir_fd, const char *name, int flags, uid_t owner, struct stat *ret_st,
                           char **reterr_msg) {
        cleanup_close int path_fd = -EBADF;
        struct stat st;
        int r;

        /* O_PATH opens nothing for I/O: a device is never opened, a FIFO never waited on, a symlink never followed. */
        path_fd = openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (path_fd < 0)
                return negative_errno();
        if (fstat(path_fd, &st) < 0)
                return negative_errno();
        r = check_own_by(&st, owner, reterr_msg);
        if (r < 0)
                return r;
        r = reopen(path_fd, dir_fd, name, &st, flags);
        if (r == -ESTALE)
                return set_errmsg(reterr_msg, r, "it was replaced while being opened");
        if (r >= 0 && ret_st)
                *ret_st = st;
        return r;
}

int fileio_open_own(int dir_fd, const char *name, int flags, mode_t mode, bool *ret_created, char **reterr_msg) {
        /* A few rounds: the name may come and go between the O_EXCL create and the open of what is there. */
        for (unsigned i = 0; i < 8; i++) {
                int fd;

                fd = openat(dir_fd, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, mode);
                if (fd >= 0) {
                        *ret_created = true;
                        return fd;
                }
                if (errno != EEXIST)
                        return negative_errno();
                fd = fileio_open_regular(dir_fd, name, flags, NULL, reterr_msg);
                if (fd != -ENOENT) {
                        *ret_created = false;
                        return fd;
                }
        }
        return set_errmsg(reterr_msg, -EAGAIN, "it keeps appearing and disappearing");
}

int fileio_unlink_if_same(int dir_fd, const char *name, const struct stat *st) {
        struct stat now;

        /* Only async-signal-safe calls: the rescue conflist's signal handler uses this. */
        if (fstatat(dir_fd, name, &now, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!same_stat(&now, st))
                return -ESTALE;
        if (unlinkat(dir_fd, name, 0) < 0)
                return errno == ENOENT ? 0 : -errno;
        return 1;
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

/* One extended attribute of from_fd, set on to_fd as it is. */
static int copy_xattr(int from_fd, int to_fd, const char *name) {
        cleanup_free char *value = NULL;
        ssize_t n;

        n = fgetxattr(from_fd, name, NULL, 0);
        if (n < 0)
                return negative_errno();
        value = malloc((size_t) n + 1);
        if (!value)
                return -ENOMEM;
        n = fgetxattr(from_fd, name, value, (size_t) n);
        if (n < 0)
                return negative_errno();
        return RET_NERRNO(fsetxattr(to_fd, name, value, (size_t) n, 0));
}

/* Every extended attribute goes with the content: the SELinux label (net_conf_t for resolv.conf: a new
 * file would get its directory's), IMA's hash, POSIX ACLs (system.posix_acl_*), trusted.* and user.*.
 * One that cannot be set on the new file fails the write: an edit that drops an ACL is refused. */
static int copy_xattrs(int from_fd, int to_fd) {
        cleanup_free char *names = NULL;
        ssize_t n;
        int r;

        n = flistxattr(from_fd, NULL, 0);
        if (n < 0)
                return errno == EOPNOTSUPP ? 0 : negative_errno();
        if (n == 0)
                return 0;
        names = malloc((size_t) n);
        if (!names)
                return -ENOMEM;
        n = flistxattr(from_fd, names, (size_t) n);
        if (n < 0)
                return negative_errno();
        for (const char *p = names; p < names + n; p += strlen(p) + 1) {
                r = copy_xattr(from_fd, to_fd, p);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The inode flags a user may set (FS_IOC_SETFLAGS), copied; immutable or append-only is refused (the
 * file could not be replaced anyway). A file system without flags has none to keep. */
static int copy_inode_flags(int from_fd, int to_fd) {
        int old = 0, now = 0, want;

        if (ioctl(from_fd, FS_IOC_GETFLAGS, &old) < 0)
                return errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL ? 0 : negative_errno();
        if (old & (FS_IMMUTABLE_FL | FS_APPEND_FL))
                return -EPERM;
        if (ioctl(to_fd, FS_IOC_GETFLAGS, &now) < 0)
                return negative_errno();
        want = (now & ~FS_FL_USER_MODIFIABLE) | (old & FS_FL_USER_MODIFIABLE);
        if (want == now)
                return 0;
        if (ioctl(to_fd, FS_IOC_SETFLAGS, &want) < 0 || ioctl(to_fd, FS_IOC_GETFLAGS, &now) < 0)
                return negative_errno();
        return (now & FS_FL_USER_MODIFIABLE) == (old & FS_FL_USER_MODIFIABLE) ? 0 : -EOPNOTSUPP;
}

/* Owner, then mode (fchown() clears the set-id bits), then every xattr and the inode flags of like_fd's
 * file. */
static int copy_attributes(int like_fd, int fd) {
        struct stat st;
        int r;

        if (fstat(like_fd, &st) < 0)
                return negative_errno();
        r = RET_NERRNO(fchown(fd, st.st_uid, st.st_gid));
        if (r >= 0)
                r = RET_NERRNO(fchmod(fd, st.st_mode & 07777));
        if (r >= 0)
                r = copy_xattrs(like_fd, fd);
        if (r >= 0)
                r = copy_inode_flags(like_fd, fd);
        return r;
}

int fileio_write_tmp(int dir_fd, const char *name, const void *data, size_t size, mode_t mode, int like_fd, char *tmp,
                     size_t tmp_size, struct stat *ret_st) {
        cleanup_close int fd = -EBADF;
        int r;

        for (unsigned i = 0; fd < 0; i++) {
                struct timespec ts;

                (void) clock_gettime(CLOCK_MONOTONIC, &ts);
                if ((size_t) snprintf(tmp, tmp_size, ".#%s.%d.%lx", name, (int) getpid(),
                                      (unsigned long) ts.tv_nsec ^ ((unsigned long) i << 24)) >= tmp_size)
                        return -ENAMETOOLONG;
                fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, mode);
                if (fd < 0 && (errno != EEXIST || i >= 16))
                        return negative_errno();
        }
        if (fstat(fd, ret_st) < 0) {
                r = negative_errno();
                (void) unlinkat(dir_fd, tmp, 0);
                return r;
        }
        r = write_all(fd, data, size);
        if (r >= 0 && like_fd >= 0)
                r = copy_attributes(like_fd, fd);
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r < 0)
                (void) fileio_unlink_if_same(dir_fd, tmp, ret_st);
        return r;
}

int fileio_write_atomic(int dir_fd, const char *name, const void *data, size_t size, mode_t mode) {
        char tmp[NAME_MAX + 1];
        struct stat st;
        int r;

        r = fileio_write_tmp(dir_fd, name, data, size, mode, -EBADF, tmp, sizeof tmp, &st);
        if (r < 0)
                return r;
        /* rename(2) replaces the name only: an inode that was there keeps its data under its other names. */
        if (renameat(dir_fd, tmp, dir_fd, name) < 0) {
                r = negative_errno();
                (void) fileio_unlink_if_same(dir_fd, tmp, &st);
                return r;
        }
        /* The rename itself is durable only once the directory is. */
        if (fsync(dir_fd) < 0)
                return negative_errno();
        return 0;
}

int fileio_write_new(int dir_fd, const char *name, const void *data, size_t size, mode_t mode, struct stat *ret_st) {
        char tmp[NAME_MAX + 1];
        struct stat st;
        int r;

        r = fileio_write_tmp(dir_fd, name, data, size, mode, -EBADF, tmp, sizeof tmp, &st);
        if (r < 0)
                return r;
        /* link(2), unlike rename(2), fails with EEXIST rather than replace what is there. */
        r = RET_NERRNO(linkat(dir_fd, tmp, dir_fd, name, 0));
        (void) fileio_unlink_if_same(dir_fd, tmp, &st);
        if (r < 0)
                return r;
        st.st_nlink = 1;
        *ret_st = st;
        return 0;
}

int fileio_list_beneath(int root_fd, const char *dir, const char *glob, char ***ret) {
        cleanup_strv char **l = NULL;
        struct dirent *de;
        DIR *dp;
        int fd, r = 0;

        *ret = NULL;
        r = remote_fs_check(root_fd, dir, NULL);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        fd = chaseat(root_fd, dir, 0, O_RDONLY | O_DIRECTORY, NULL, NULL);
        if (fd < 0)
                return 0;
        dp = fdopendir(fd);
        if (!dp) {
                (void) close_nointr(fd);
                return 0;
        }
        while (r >= 0 && (de = readdir(dp)))
                if (glob ? de->d_name[0] != '.' && fnmatch(glob, de->d_name, FNM_PERIOD) == 0
                         : !streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        r = strv_extend(&l, de->d_name);
        closedir(dp);
        if (r < 0)
                return r;
        if (l)
                qsort(l, strv_length(l), sizeof(char *), strcmp_ptr);
        *ret = TAKE_PTR(l);
        return 0;
}

int fileio_socket_beneath(int root_fd, const char *path, char ret_proc[static FILEIO_PROC_FD_MAX]) {
        cleanup_close int fd = -EBADF;
        struct stat st;

        /* No CHASE_NO_XDEV: a mount beneath the root is the operator's (a container's /run bound
         * into the tree), a symlink is the tree's own and may point at the running system. */
        fd = chaseat(root_fd, path, CHASE_NO_SYMLINKS, O_PATH, NULL, NULL);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISSOCK(st.st_mode))
                return -ENOTSOCK;
        (void) snprintf(ret_proc, FILEIO_PROC_FD_MAX, "/proc/self/fd/%d", fd);
        return TAKE_FD(fd);
}

const char *fileio_socket_strerror(int r) {
        switch (r) {
        case -ELOOP:
                return "a symlink on the way, refused (a tree reaches only what is its own)";
        case -EXDEV:
                return "a \"..\" on the way, refused";
        case -ENOTSOCK:
                return "not a socket";
        default:
                return strerror(-r);
        }
}

int fileio_resolve_beneath(int root_fd, const char *path, char **ret) {
        char self[64], host[PATH_MAX], root[PATH_MAX];
        const char *rest;
        ssize_t n;
        int fd;

        *ret = NULL;
        fd = remote_fs_check(root_fd, path, NULL);
        if (fd < 0)
                return fd == -ENOMEM ? fd : 0;
        fd = chaseat(root_fd, path, 0, O_PATH | O_DIRECTORY, NULL, NULL);
        if (fd < 0)
                return 0;
        snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
        n = readlink(self, host, sizeof host - 1);
        (void) close_nointr(fd);
        snprintf(self, sizeof self, "/proc/self/fd/%d", root_fd);
        if (n <= 0)
                return 0;
        host[n] = 0;
        n = readlink(self, root, sizeof root - 1);
        if (n <= 0)
                return 0;
        root[n] = 0;
        rest = streq(root, "/") ? host : startswith(host, root);
        if (!rest || rest[0] != '/')
                return 0;
        *ret = strdup(rest);
        return *ret ? 1 : -ENOMEM;
}
