/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tree a verb acts on: --root resolved and opened, or the running node's "/". */
#pragma once

/* root_arg: --root, NULL for "/". The canonical path in *ret_path and an O_PATH directory fd in
 * *ret_fd; -errno, said, when it cannot be resolved or opened (*ret_path may then be set). */
int root_open(const char *root_arg, char **ret_path, int *ret_fd);
