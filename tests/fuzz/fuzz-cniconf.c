/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the CNI configuration reader: any bytes in, read both as a list (.conflist)
 * and as one plugin (.conf); plugin types or -EINVAL with a reason out, never a crash. */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/cni-conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const names[] = { "10-x.conflist", "10-x.conf" };

        for (size_t i = 0; i < 2; i++) {
                const char *why = NULL;
                char *types = NULL;
                int r = cni_conf_types(names[i], (const char *) data, size, &types, &why);

                assert(r == 0 || r == -EINVAL || r == -ENOMEM);
                assert(r != -EINVAL || (why && !types));
                /* Types come from the input: never longer than it, never empty. */
                assert(r != 0 || (types && *types && strlen(types) <= size));
                free(types);
        }
        return 0;
}
