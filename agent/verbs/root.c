/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --root, resolved once and held by a file descriptor: every path a verb then reads or changes is
 * taken beneath that descriptor, never beneath the name again. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "agent/base/log.h"
#include "agent/verbs/root.h"
#include "errno-util.h"

int root_open(const char *root_arg, char **ret_path, int *ret_fd) {
        *ret_path = realpath(root_arg ?: "/", NULL);
        if (!*ret_path)
                return log_error_errno(negative_errno(), "Cannot resolve --root %s: %m", root_arg);
        *ret_fd = open(*ret_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (*ret_fd < 0)
                return log_error_errno(negative_errno(), "Cannot open %s: %m", *ret_path);
        return 0;
}
