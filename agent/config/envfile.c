/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Environment files and command lines read as what they are (see envfile.h): systemd's
 * EnvironmentFile= grammar for the one, POSIX shell words and Go's flag syntax for the other. */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/envfile.h"
#include "alloc-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define BLANKS " \t\r"

typedef struct Scanner {
        const char *p, *end;
        unsigned line;
} Scanner;

typedef struct Word {
        char *s;
        size_t n, allocated;
} Word;

static int word_put(Word *w, char c) {
        if (GREEDY_REALLOC(w->s, w->allocated, w->n + 2) < 0)
                return -ENOMEM;
        w->s[w->n++] = c;
        w->s[w->n] = '\0';
        return 0;
}

static char *word_take(Word *w) {
        char *s = w->s ? w->s : strdup("");

        *w = (Word) {};
        return s;
}

static bool at(const Scanner *sc, char c) {
        return sc->p < sc->end && *sc->p == c;
}

/* strspn() within the scanned bytes, which need not end in a NUL. */
static void skip(Scanner *sc, const char *set) {
        while (sc->p < sc->end && *sc->p && strchr(set, *sc->p))
                sc->p++;
}

/* One character after a backslash; a backslash before a newline continues the line. */
static int scan_escaped(Scanner *sc, Word *w) {
        char c;

        if (sc->p + 1 >= sc->end)
                return -EBADMSG;
        c = sc->p[1];
        sc->p += 2;
        if (c == '\n') {
                sc->line++;
                return 0;
        }
        return word_put(w, c);
}

/* A quoted part, sc->p at the opening quote. In double quotes only \" \\ \` \$ and a continuation
 * are escapes; a backslash before anything else is kept, as the shell and systemd keep it. */
static int scan_quoted(Scanner *sc, Word *w) {
        char q = *sc->p++;

        while (sc->p < sc->end && *sc->p != q) {
                int r;

                if (q == '"' && *sc->p == '\\' && sc->p + 1 < sc->end && strchr("\"\\`$\n", sc->p[1])) {
                        r = scan_escaped(sc, w);
                } else {
                        if (*sc->p == '\n')
                                sc->line++;
                        r = word_put(w, *sc->p++);
                }
                if (r < 0)
                        return r;
        }
        if (sc->p >= sc->end)
                return -EBADMSG;
        sc->p++;
        return 0;
}

/* A value up to the end of its line; unquoted trailing blanks are not part of it. */
static int scan_value(Scanner *sc, char **ret) {
        cleanup_free char *s = NULL;
        Word w = {};
        size_t keep = 0;
        int r = 0;

        skip(sc, " \t");
        while (r >= 0 && sc->p < sc->end && *sc->p != '\n') {
                char c = *sc->p;

                if (c == '\\')
                        r = scan_escaped(sc, &w);
                else if (c == '\'' || c == '"')
                        r = scan_quoted(sc, &w);
                else
                        r = word_put(&w, *sc->p++);
                if (r >= 0 && (c != ' ' && c != '\t' && c != '\r'))
                        keep = w.n;
        }
        s = word_take(&w);
        if (r < 0)
                return r;
        if (!s)
                return -ENOMEM;
        s[keep] = '\0';
        *ret = TAKE_PTR(s);
        return 0;
}

static bool env_name_is_valid(const char *s, size_t n) {
        if (n == 0 || ascii_isdigit(s[0]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!(s[i] == '_' || ascii_isdigit(s[i]) || (s[i] >= 'A' && s[i] <= 'Z') ||
                      (s[i] >= 'a' && s[i] <= 'z')))
                        return false;
        return true;
}

/* Replace an earlier assignment of the same key: the last one wins. */
static int env_set(char ***pairs, char *pair) {
        size_t klen = strcspn(pair, "=") + 1;

        for (size_t i = 0; *pairs && (*pairs)[i]; i++)
                if (strncmp((*pairs)[i], pair, klen) == 0) {
                        free((*pairs)[i]);
                        (*pairs)[i] = pair;
                        return 0;
                }
        return strv_consume(pairs, pair);
}

static int scan_assignment(Scanner *sc, char ***pairs) {
        cleanup_free char *value = NULL;
        const char *key = sc->p, *eq;
        size_t n;
        int r;

        eq = memchr(key, '=', (size_t) (sc->end - key));
        if (!eq || memchr(key, '\n', (size_t) (eq - key)))
                return -EBADMSG;
        n = (size_t) (eq - key);
        while (n > 0 && strchr(BLANKS, key[n - 1]))
                n--;
        if (!env_name_is_valid(key, n))
                return -EBADMSG;
        sc->p = eq + 1;
        r = scan_value(sc, &value);
        if (r < 0)
                return r;
        return env_set(pairs, strprintf("%.*s=%s", (int) n, key, value));
}

int env_file_parse(const char *text, size_t size, char ***ret_pairs, unsigned *ret_line) {
        cleanup_strv char **pairs = NULL;
        Scanner sc = { .p = text, .end = text + size, .line = 1 };
        const char *nul = memchr(text, '\0', size);

        /* A NUL byte ends a C string early: such a file is not a text file, not a shorter one. */
        if (nul)
                sc.end = nul;
        while (sc.p < sc.end) {
                int r = 0;

                skip(&sc, BLANKS);
                if (at(&sc, '#') || at(&sc, ';')) {
                        const char *nl = memchr(sc.p, '\n', (size_t) (sc.end - sc.p));

                        sc.p = nl ? nl : sc.end;
                } else if (sc.p < sc.end && *sc.p != '\n')
                        r = scan_assignment(&sc, &pairs);
                if (r < 0) {
                        if (ret_line)
                                *ret_line = sc.line;
                        return r;
                }
                if (at(&sc, '\n')) {
                        sc.p++;
                        sc.line++;
                }
        }
        if (nul) {
                if (ret_line)
                        *ret_line = sc.line;
                return -EBADMSG;
        }
        if (!pairs && !(pairs = calloc(1, sizeof(char *))))
                return -ENOMEM;
        *ret_pairs = TAKE_PTR(pairs);
        return 0;
}

const char *env_get(char *const *pairs, const char *key) {
        for (size_t i = 0; pairs && pairs[i]; i++) {
                const char *v = startswith(pairs[i], key);

                if (v && *v == '=')
                        return v + 1;
        }
        return NULL;
}

static int split(const char *s, bool quotes, char ***ret) {
        cleanup_strv char **words = NULL;
        Scanner sc = { .p = s, .end = s + strlen(s), .line = 1 };

        for (;;) {
                Word w = {};
                int r = 0;

                skip(&sc, " \t\r\n");
                if (sc.p >= sc.end)
                        break;
                while (r >= 0 && sc.p < sc.end && !strchr(" \t\r\n", *sc.p)) {
                        if (quotes && *sc.p == '\\')
                                r = scan_escaped(&sc, &w);
                        else if (quotes && (*sc.p == '\'' || *sc.p == '"'))
                                r = scan_quoted(&sc, &w);
                        else
                                r = word_put(&w, *sc.p++);
                }
                if (r < 0) {
                        free(w.s);
                        return r;
                }
                if (strv_consume(&words, word_take(&w)) < 0)
                        return -ENOMEM;
        }
        if (!words && !(words = calloc(1, sizeof(char *))))
                return -ENOMEM;
        *ret = TAKE_PTR(words);
        return 0;
}

int argv_split(const char *s, char ***ret) {
        return split(s, true, ret);
}

int argv_split_blanks(const char *s, char ***ret) {
        return split(s, false, ret);
}

const char *argv_flag(char *const *argv, const char *name) {
        const char *value = NULL;
        size_t n = strlen(name);

        for (size_t i = 1; argv && argv[0] && argv[i]; i++) {
                const char *a = argv[i];

                if (streq(a, "--"))
                        break;
                if (a[0] != '-' || a[1] == '\0')
                        continue;
                a += a[1] == '-' ? 2 : 1;
                if (strncmp(a, name, n) != 0)
                        continue;
                if (a[n] == '=')
                        value = a + n + 1;
                else if (a[n] == '\0' && argv[i + 1])
                        value = argv[++i];
        }
        return value;
}
