/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A TOML reader just large enough for container runtime configs: table headers, key = "basic" or
 * 'literal' strings, decimal integers, comments. */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "agent/base/toml.h"
#include "string-util.h"

static void toml_normalise_table(const char *s, size_t n, char *out, size_t size) {
        size_t o = 0;

        for (size_t i = 0; i < n && o + 1 < size; i++)
                if (!strchr("[]\"' \t", s[i]))
                        out[o++] = s[i];
        out[o] = '\0';
}

static bool table_in(const char *table, const char *const *tables) {
        for (; *tables; tables++)
                if (streq(table, *tables))
                        return true;
        return false;
}

/* Where the value of "key =" starts on one line, or n when the line is not that. */
static size_t toml_line_rhs(const char *line, size_t n, const char *key) {
        size_t kl = strlen(key), i = 0;

        while (i < n && isspace((unsigned char) line[i]))
                i++;
        if (n - i < kl || strncmp(line + i, key, kl) != 0)
                return n;
        i += kl;
        while (i < n && (line[i] == ' ' || line[i] == '\t'))
                i++;
        if (i >= n || line[i++] != '=')
                return n;
        while (i < n && (line[i] == ' ' || line[i] == '\t'))
                i++;
        return i;
}

/* The string value after "key =" on one line; NULL when the line is not that. */
static char *toml_line_string(const char *line, size_t n, const char *key) {
        size_t i = toml_line_rhs(line, n, key), start;
        char quote;

        if (i >= n || (line[i] != '"' && line[i] != '\''))
                return NULL;
        quote = line[i++];
        start = i;
        while (i < n && line[i] != quote)
                i += quote == '"' && line[i] == '\\' && i + 1 < n ? 2 : 1;
        if (i >= n)
                return NULL;
        /* Paths need no escapes; a value with one is taken as written. */
        return strndup(line + start, i - start);
}

/* The decimal digits of an integer after "key =" (then a blank, a comment or the end of the line). */
static char *toml_line_digits(const char *line, size_t n, const char *key) {
        size_t i = toml_line_rhs(line, n, key), start = i;

        while (i < n && isdigit((unsigned char) line[i]))
                i++;
        if (i == start || (i < n && !isspace((unsigned char) line[i]) && line[i] != '#'))
                return NULL;
        return strndup(line + start, i - start);
}

static int toml_find(const char *text, const char *const *tables, const char *key,
                     char *(*value)(const char *line, size_t n, const char *key), char **ret) {
        char table[256] = "";
        char *found = NULL;

        for (const char *line = text; *line;) {
                size_t n = strcspn(line, "\n");
                const char *l = line;

                while (l < line + n && isspace((unsigned char) *l))
                        l++;
                if (*l == '[')
                        toml_normalise_table(l, (size_t) (line + n - l), table, sizeof table);
                else if (*l != '#' && table_in(table, tables)) {
                        char *v = value(line, n, key);

                        if (v) {
                                free(found);
                                found = v;
                        }
                }
                line += n;
                if (*line)
                        line++;
        }
        if (!found)
                return 0;
        *ret = found;
        return 1;
}

int toml_find_string(const char *text, const char *const *tables, const char *key, char **ret) {
        return toml_find(text, tables, key, toml_line_string, ret);
}

int toml_find_uint(const char *text, const char *const *tables, const char *key, unsigned *ret) {
        char *digits = NULL;
        unsigned long v;
        int r;

        r = toml_find(text, tables, key, toml_line_digits, &digits);
        if (r <= 0)
                return r;
        errno = 0;
        v = strtoul(digits, NULL, 10);
        free(digits);
        if (errno != 0 || v > UINT_MAX)
                return 0;
        *ret = (unsigned) v;
        return 1;
}
