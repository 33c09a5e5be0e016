/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NULL-terminated vectors of malloc'd strings: the one set of appenders every module uses. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

static inline size_t strv_length(char *const *l) {
        size_t n = 0;

        while (l && l[n])
                n++;
        return n;
}

static inline bool strv_contains(char *const *l, const char *s) {
        for (size_t i = 0; l && l[i]; i++)
                if (strcmp(l[i], s) == 0)
                        return true;
        return false;
}

/* Append s and take ownership of it, also on failure (then s is freed): a caller can hand over a
 * fresh strdup()/asprintf() result without a cleanup path of its own. */
static inline int strv_consume(char ***l, char *s) {
        size_t n;
        char **nl;

        if (!s)
                return -ENOMEM;
        n = strv_length(*l);
        nl = reallocarray(*l, n + 2, sizeof(char *));
        if (!nl) {
                free(s);
                return -ENOMEM;
        }
        nl[n] = s;
        nl[n + 1] = NULL;
        *l = nl;
        return 0;
}

/* Append a copy of s. */
static inline int strv_extend(char ***l, const char *s) {
        return strv_consume(l, strdup(s));
}

/* Append a copy of s unless an equal string is there already: 0 when it was, 1 when appended. */
static inline int strv_extend_unique(char ***l, const char *s) {
        int r;

        if (strv_contains(*l, s))
                return 0;
        r = strv_extend(l, s);
        return r < 0 ? r : 1;
}

/* strv_extend_unique() that takes ownership of s, also when it is not appended or on failure. */
static inline int strv_consume_unique(char ***l, char *s) {
        if (!s)
                return -ENOMEM;
        if (strv_contains(*l, s)) {
                free(s);
                return 0;
        }
        return strv_consume(l, s) < 0 ? -ENOMEM : 1;
}

/* qsort(3) comparator for an array of char *. */
static inline int strcmp_ptr(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static inline char **strv_sort(char **l) {
        size_t n = strv_length(l);

        if (n > 1)
                qsort(l, n, sizeof(char *), strcmp_ptr);
        return l;
}
