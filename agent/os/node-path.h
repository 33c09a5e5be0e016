/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node paths ("/var/lib/kubelet", beneath --root) held and opened safely (node-path.c). */
#pragma once

#include <stddef.h>

/* A node path grown and cut back in place as the walk descends and returns. */
typedef struct NodePathBuf {
        char *p;
        size_t len, alloc;
} NodePathBuf;

/* An absolute node path with no empty, "." or ".." components ("/a//b/" becomes "/a/b"): -EINVAL for
 * a relative path or one with "." or "..", -ENOMEM. */
int node_path_normalize(const char *path, char **ret);

/* Append "/name" ("name" to the root "/"); *ret_saved is the length to cut back to. -ENOMEM. */
int node_path_push(NodePathBuf *b, const char *name, size_t *ret_saved);
void node_path_pop(NodePathBuf *b, size_t saved);

/* The directory holding path, by chaseat() without symlinks: its fd, *ret_last the last component
 * (in path); -ELOOP when a component is a symlink, *ret_symlink (optional) then naming it. */
int node_path_open_parent(int root_fd, const char *path, char **ret_symlink, const char **ret_last);

/* Open the directory at node path (normalized first: "." and ".." are -EINVAL) beneath root_fd by
 * chaseat(CHASE_NO_SYMLINKS | CHASE_MUST_BE_DIRECTORY): -ELOOP on a symlink component, -ENOTDIR. */
int open_nofollow_beneath(int root_fd, const char *node_path, int flags);
