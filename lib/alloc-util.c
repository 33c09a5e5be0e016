/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Growing arrays: one overflow-checked, amortised realloc instead of a loop in every module. */

#include "alloc-util.h"

int greedy_realloc(void **p, size_t *allocated, size_t need, size_t size) {
        size_t a;
        void *q;

        if (need <= *allocated)
                return 0;
        a = *allocated ? *allocated : 8;
        while (a < need) {
                if (a > SIZE_MAX / 2)
                        return -ENOMEM;
                a *= 2;
        }
        q = reallocarray(*p, a, size);
        if (!q)
                return -ENOMEM;
        *p = q;
        *allocated = a;
        return 0;
}
