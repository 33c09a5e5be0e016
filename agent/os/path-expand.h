/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A manifest pattern expanded beneath the root (path-expand.c). */
#pragma once

/* Expand a manifest pattern (globs in any component after the first) beneath root_fd without
 * following symlinks in any component but the last. Returns the matching node paths, sorted,
 * as a NULL-terminated vector (empty when nothing matches); -errno on failure. A literal path
 * is returned as is if it exists (lstat). */
int path_expand(int root_fd, const char *pattern, char ***ret);
