/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What /proc/self/fdinfo says of an fd: the mount id, for kernels before 5.8 (no STATX_MNT_ID). */
#pragma once

#include <errno.h>
#include <stdio.h>

#include "errno-util.h"
#include "macro.h"

static inline int fdinfo_mount_id(int fd, int *ret) {
        cleanup_fclose FILE *f = NULL;
        char p[64], line[256];

        snprintf(p, sizeof p, "/proc/self/fdinfo/%d", fd);
        f = fopen(p, "re");
        if (!f)
                return negative_errno();
        while (fgets(line, sizeof line, f))
                if (sscanf(line, "mnt_id: %d", ret) == 1)
                        return 0;
        return -EOPNOTSUPP;
}
