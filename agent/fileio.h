/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small files beneath a root directory: read them with symlinks resolved inside the root, write them atomically. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Open node path "path" beneath root_fd, resolving every symlink (absolute ones too) as if root_fd
 * were "/": kubeadm's kubelet-client-current.pem is an absolute symlink, and beneath --root it
 * must not lead to the host's file. flags are O_RDONLY, O_DIRECTORY, ... (O_CLOEXEC is added). */
int fileio_open_beneath(int root_fd, const char *path, int flags);

/* The same without openat2(2) (Linux < 5.6, valgrind): what fileio_open_beneath() falls back to. */
int fileio_open_beneath_by_hand(int root_fd, const char *path, int flags);

/* Read a whole file of at most max bytes (-EFBIG beyond) into a NUL-terminated buffer. */
int fileio_read_beneath(int root_fd, const char *path, size_t max, char **ret, size_t *ret_size);

/* Read a whole file by its own path (a host path: --report-header-file, --report-cacert). */
int fileio_read_file(const char *path, size_t max, char **ret, size_t *ret_size);

/* Make the directory "path" (and its parents) beneath root_fd without following symlinks; returns
 * an O_DIRECTORY fd. */
int fileio_mkdir_beneath(int root_fd, const char *path, mode_t mode);

/* Replace dir_fd/name with data: a temporary file, fsync, rename over the old one, fsync of the
 * directory. A crash leaves the old content or the new one, never a mix. */
int fileio_write_atomic(int dir_fd, const char *name, const void *data, size_t size, mode_t mode);
