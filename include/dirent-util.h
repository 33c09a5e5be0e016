/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Directory streams: a cleanup for DIR* and a loop that skips "." and "..". */
#pragma once

#include <dirent.h>
#include <stdbool.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);
#define cleanup_closedir CLEANUP(closedirp)

static inline bool dot_or_dot_dot(const char *name) {
        return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* Iterate over the entries of d except "." and ".."; readdir() errors end the loop like the end of
 * the directory does, so a caller that must tell them apart sets errno = 0 first and checks it. */
#define FOREACH_DIRENT(de, d)                          \
        for (struct dirent * de; ((de) = readdir(d));) \
                if (dot_or_dot_dot((de)->d_name))      \
                        continue;                      \
                else
