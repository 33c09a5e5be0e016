/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Growing arrays: one overflow-checked, amortised realloc instead of a loop in every module. */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Make *p hold at least need elements of size bytes, doubling (from 8) so that appending one by one
 * costs amortised O(1). *allocated counts elements. Returns 0, or -ENOMEM with *p untouched. */
int greedy_realloc(void **p, size_t *allocated, size_t need, size_t size);

#define GREEDY_REALLOC(array, allocated, need) \
        greedy_realloc((void **) &(array), &(allocated), (need), sizeof((array)[0]))
