/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Independent reads on two cores: a plan's observations that wait on the kernel or parse large
 * dumps (the legacy tables of two families, the nf_tables rulesets of several), each on its own
 * socket or library state. */
#pragma once

#include <stddef.h>

/* fn(item) for each of the n items of size bytes at items: the odd ones on a second thread, the
 * even ones on the caller's, in order on each; returns when all are done. When no thread can be
 * started, all run on the caller's thread. fn must touch nothing but its item and what is only
 * read meanwhile. */
void parallel_each(void (*fn)(void *item), void *items, size_t n, size_t size);
