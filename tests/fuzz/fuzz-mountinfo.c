/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the mountinfo parser: any bytes in, a table or -EBADMSG out, never a crash. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/os/mountinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const MountEntry **l = NULL;
        MountTable *t = NULL;
        FILE *f;
        size_t n;

        if (size == 0) /* fmemopen() refuses an empty buffer */
                return 0;
        f = fmemopen((void *) data, size, "r");
        if (!f)
                return 0;
        if (mount_table_parse(f, &t) >= 0) {
                if (mount_table_beneath(t, "/", &l, &n) >= 0) {
                        for (size_t i = 0; i < n; i++)
                                (void) mount_table_is_mount_point(t, l[i]->mount_point);
                        free(l);
                }
                mount_table_free(t);
        }
        fclose(f);
        return 0;
}
