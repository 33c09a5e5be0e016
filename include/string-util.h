/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* String helpers: the one-line ones inline, the others compiled in lib/string-util.c. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return streq(a, b);
}

static inline const char *startswith(const char *s, const char *prefix) {
        size_t l = strlen(prefix);
        return strncmp(s, prefix, l) == 0 ? s + l : NULL;
}

static inline bool isempty(const char *s) {
        return !s || !*s;
}

static inline const char *strempty(const char *s) {
        return s ?: "";
}

static inline const char *strna(const char *s) {
        return s ?: "n/a";
}

/* isdigit(3) without the locale, and safe for a negative char. */
static inline bool ascii_isdigit(char c) {
        return c >= '0' && c <= '9';
}

bool isdigit_str(const char *s);

/* Is path equal to prefix or beneath it, component-wise ("/a/b" is beneath "/a", "/ab" is not)? */
bool path_startswith_dir(const char *path, const char *prefix);

/* Is name one of the items of a comma-separated list ("mounts,files")? Empty items are skipped; a
 * NULL list holds nothing. */
bool comma_list_contains(const char *list, const char *name);

/* A formatted, malloc'd string, or NULL when out of memory (vasprintf() leaves its pointer
 * undefined on failure, so it is never used directly). */
char *vstrprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

char *strprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The words nth(0), nth(1), ... (up to the first NULL) joined, last_sep before the last one: "a, b or
 * c" with ", " and " or ". A table's names said from the table, never typed again. NULL when out of
 * memory. */
char *strjoin_nth(const char *(*nth)(size_t i), const char *sep, const char *last_sep);
