/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one path resolver: beneath a root directory, with or without symlinks, never across a mount
 * when asked. Every module that opens a path it did not create goes through chaseat(). */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>

/* Compiled in lib/chase.c, the base every module links: netreset/ needs it as much as agent/ does. */

typedef enum ChaseFlags {
        /* Refuse any symlink on the way or at the end (-ELOOP) and any ".." (-EXDEV). Without it a
         * symlink is followed as if root_fd were "/" (RESOLVE_IN_ROOT): an absolute target restarts
         * at root_fd, ".." stops there. Either way the walk never leaves root_fd. */
        CHASE_NO_SYMLINKS = 1U << 0,
        /* Open the directory holding the last component instead; *ret_last points at that
         * component in path ("." and ".." are no last component: -EINVAL). */
        CHASE_PARENT = 1U << 1,
        /* -ENOTDIR unless what is opened is a directory. */
        CHASE_MUST_BE_DIRECTORY = 1U << 2,
        /* -EXDEV when the walk would step onto another mount than root_fd's. */
        CHASE_NO_XDEV = 1U << 3,
} ChaseFlags;

/* Symlinks followed by hand before -ELOOP, as the kernel's limit. */
#define CHASE_LINKS_MAX 40U

/* Set to "1" (the tests do) to take the component-by-component walk even where openat2 exists. */
#define CHASE_NO_OPENAT2_ENV "NODE_RESET_CHASE_NO_OPENAT2"

/* Open path beneath root_fd (leading slashes ignored; root_fd itself for "" or "/") as flags say,
 * with open_flags (O_RDONLY, O_PATH, O_DIRECTORY, O_NONBLOCK, ...; O_CLOEXEC is added). Returns the
 * fd or a negative errno: -ELOOP a symlink refused (or too many), -EXDEV a ".." refused or a mount
 * crossed, -ENOTDIR, -ENOENT, -ESTALE the last component swapped while it was opened. With
 * CHASE_PARENT the directory holding the last component is opened (O_DIRECTORY added) and *ret_last
 * points at that component in path. ret_stop (optional): on failure, the length of the prefix of
 * path the walk had reached, so that the caller can name the component that stopped it. */
int chaseat(int root_fd, const char *path, unsigned flags, int open_flags, const char **ret_last, size_t *ret_stop);
