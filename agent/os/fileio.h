/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small files beneath a root directory: read them with symlinks resolved inside the root, write them
 * atomically; reach a unix socket there through the inode resolved. The readers beneath a root ask
 * remote_fs_check() first: beneath a network or FUSE mount that does not answer they read nothing
 * (-EHOSTDOWN, absent, no names). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Does path name something beneath root_fd (symlinks resolved inside the root)? */
bool fileio_exists_beneath(int root_fd, const char *path);

/* Read a whole file of at most max bytes (-EFBIG beyond) into a NUL-terminated buffer. */
int fileio_read_beneath(int root_fd, const char *path, size_t max, char **ret, size_t *ret_size);

/* Read the whole of what fd refers to, NUL-terminated, when it is a regular file of at most max
 * bytes: -EISDIR for a directory, -EBADFD for anything else that is no regular file (a FIFO, a
 * device, a socket: never read, so never waited on), -EFBIG past max. Open the fd O_NONBLOCK so that
 * the open itself cannot hang on a FIFO; ret_st (optional) gets what fstat said. The read helpers
 * here all go through this. */
int fileio_read_regular(int fd, size_t max, char **ret, size_t *ret_size, struct stat *ret_st);

/* The names in the directory dir beneath root_fd (resolved as chaseat() does) matching glob, sorted
 * by byte order (NULL when there are none); an unreadable directory has none. A NULL glob: every name,
 * dot files included. 0 or -ENOMEM. */
int fileio_list_beneath(int root_fd, const char *dir, const char *glob, char ***ret);

/* The node path the directory at node path "path" resolves to beneath root_fd (symlinks followed
 * inside the root, as chase does): 1 with it in *ret, 0 when it is no directory there, -ENOMEM. */
int fileio_resolve_beneath(int root_fd, const char *path, char **ret);

/* Read a whole file by its own path (a host path: --report-header-file, --report-cacert). */
int fileio_read_file(const char *path, size_t max, char **ret, size_t *ret_size);

/* Make the directory "path" (and its parents) beneath root_fd without following symlinks; returns
 * an O_DIRECTORY fd. */
int fileio_mkdir_beneath(int root_fd, const char *path, mode_t mode);

/* The rule for every file node-reset writes: it never writes into an inode it did not create or
 * cannot account for. A file it writes in place must be a regular file with one name (another name is
 * someone else's data: a PV's file hard-linked into --root), owned by root (or by us). 0 when st is
 * such a file, else -EPERM with the reason ("it is a hard link (2 names)") in *reterr_msg. */
int fileio_check_own(const struct stat *st, char **reterr_msg);

/* Open the existing dir_fd/name (flags: O_RDONLY, O_RDWR) only if fileio_check_own() accepts it. It is
 * examined through O_PATH first, so a device is never opened, a FIFO never waited on, a symlink never
 * followed; the fd returned is that very inode, whatever the name refers to by then. */
int fileio_open_regular(int dir_fd, const char *name, int flags, struct stat *ret_st, char **reterr_msg);
/* The same for a file that may also belong to owner (a user's file in the user's own directory). */
int fileio_open_regular_by(int dir_fd, const char *name, int flags, uid_t owner, struct stat *ret_st,
                           char **reterr_msg);

/* Create dir_fd/name (O_EXCL, *ret_created = true) or open the existing one as fileio_open_regular()
 * does (*ret_created = false). For a file that must keep its inode (a lock). */
int fileio_open_own(int dir_fd, const char *name, int flags, mode_t mode, bool *ret_created, char **reterr_msg);

/* Unlink dir_fd/name if it still is the inode st describes: 1 removed, 0 already gone, -ESTALE when the
 * name now refers to something else (left in place), or -errno. Async-signal-safe. */
int fileio_unlink_if_same(int dir_fd, const char *name, const struct stat *st);

/* A fresh inode beneath dir_fd, under a name nobody could have prepared (O_EXCL: an existing file,
 * whatever it is, is never opened), holding data on disk; with like_fd >= 0, with that file's owner,
 * mode, every extended attribute (SELinux label, IMA, POSIX ACLs, trusted.*, user.*) and inode flags
 * instead of mode: one that cannot be carried over fails it (-EPERM for an immutable or append-only
 * file, -EOPNOTSUPP or the xattr call's error otherwise). Its name is written to tmp (tmp_size >= NAME_MAX + 1), its
 * identity to *ret_st; on failure nothing is left. */
int fileio_write_tmp(int dir_fd, const char *name, const void *data, size_t size, mode_t mode, int like_fd, char *tmp,
                     size_t tmp_size, struct stat *ret_st);

/* Replace dir_fd/name with data: a new file under a fresh temporary name (O_EXCL), fsync, rename over
 * the old name, fsync of the directory. A crash leaves the old content or the new one, never a mix;
 * nothing that was there is written into (a hard link there keeps its data under its other names). */
int fileio_write_atomic(int dir_fd, const char *name, const void *data, size_t size, mode_t mode);

/* Create dir_fd/name with data, complete or not at all, and fail with -EEXIST when the name exists,
 * whatever it is. *ret_st identifies the new file for fileio_unlink_if_same(). */
int fileio_write_new(int dir_fd, const char *name, const void *data, size_t size, mode_t mode, struct stat *ret_st);

/* "/proc/self/fd/N" for any descriptor N, with its NUL. */
#define FILEIO_PROC_FD_MAX sizeof("/proc/self/fd/-2147483648")

/* A unix socket beneath root_fd (the tree's systemd and bus, docker.sock), for connect(2): path is
 * resolved with no symlink anywhere on the way (-ELOOP; a ".." is -EXDEV) and must be a socket
 * (-ENOTSOCK); a mount beneath the root is crossed, as only the operator can make one (docs/rescue.md).
 * Returns the O_PATH descriptor and writes "/proc/self/fd/N" to ret_proc: connect(2) follows that
 * name to the inode resolved here, so no path is looked up again and nothing outside the root is
 * reached. The descriptor must stay open until the connection is made. */
int fileio_socket_beneath(int root_fd, const char *path, char ret_proc[static FILEIO_PROC_FD_MAX]);

/* Why fileio_socket_beneath() refused, in words for a message ("a symlink on the way, refused ..."). */
const char *fileio_socket_strerror(int r);
