/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NULL-terminated vectors of malloc'd strings: the one set of appenders every module uses. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

size_t strv_length(char *const *l);

bool strv_contains(char *const *l, const char *s);

/* Append s and take ownership of it, also on failure (then s is freed): a caller can hand over a
 * fresh strdup()/asprintf() result without a cleanup path of its own. */
int strv_consume(char ***l, char *s);

/* Append a copy of s. */
int strv_extend(char ***l, const char *s);

/* Append a copy of s unless an equal string is there already: 0 when it was, 1 when appended. */
int strv_extend_unique(char ***l, const char *s);

/* strv_extend_unique() that takes ownership of s, also when it is not appended or on failure. */
int strv_consume_unique(char ***l, char *s);

/* qsort(3) comparator for an array of char *. */
static inline int strcmp_ptr(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

char **strv_sort(char **l);

/* The strings of l with sep between them, malloc'd ("" for none); NULL only when out of memory. */
char *strv_join(char *const *l, const char *sep);
