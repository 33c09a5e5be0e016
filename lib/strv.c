/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NULL-terminated vectors of malloc'd strings: length, lookup, appenders and sorting. */

#include "strv.h"

size_t strv_length(char *const *l) {
        size_t n = 0;

        while (l && l[n])
                n++;
        return n;
}

bool strv_contains(char *const *l, const char *s) {
        for (size_t i = 0; l && l[i]; i++)
                if (strcmp(l[i], s) == 0)
                        return true;
        return false;
}

int strv_consume(char ***l, char *s) {
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

int strv_extend(char ***l, const char *s) {
        return strv_consume(l, strdup(s));
}

int strv_extend_unique(char ***l, const char *s) {
        int r;

        if (strv_contains(*l, s))
                return 0;
        r = strv_extend(l, s);
        return r < 0 ? r : 1;
}

int strv_consume_unique(char ***l, char *s) {
        if (!s)
                return -ENOMEM;
        if (strv_contains(*l, s)) {
                free(s);
                return 0;
        }
        return strv_consume(l, s) < 0 ? -ENOMEM : 1;
}

char *strv_join(char *const *l, const char *sep) {
        size_t n = 0, k = strlen(sep), i;
        char *s, *p;

        for (i = 0; l && l[i]; i++)
                n += strlen(l[i]) + (i > 0 ? k : 0);
        s = p = malloc(n + 1);
        if (!s)
                return NULL;
        for (i = 0; l && l[i]; i++)
                p = stpcpy(i > 0 ? stpcpy(p, sep) : p, l[i]);
        *p = '\0';
        return s;
}

char **strv_sort(char **l) {
        size_t n = strv_length(l);

        if (n > 1)
                qsort(l, n, sizeof(char *), strcmp_ptr);
        return l;
}
