/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The string helpers that are more than one line: digits, path prefixes, comma lists, printf to malloc,
 * words joined. */

#include "macro.h"
#include "string-util.h"

bool isdigit_str(const char *s) {
        if (!s || !*s)
                return false;
        for (; *s; s++)
                if (*s < '0' || *s > '9')
                        return false;
        return true;
}

bool path_startswith_dir(const char *path, const char *prefix) {
        size_t l = strlen(prefix);

        if (l == 1 && prefix[0] == '/')
                return path[0] == '/';
        return strncmp(path, prefix, l) == 0 && (path[l] == '/' || path[l] == '\0');
}

bool comma_list_contains(const char *list, const char *name) {
        size_t l = strlen(name);

        for (const char *p = list; p && *p;) {
                size_t n = strcspn(p, ",");

                if (n == l && strncmp(p, name, l) == 0)
                        return true;
                p += n;
                p += strspn(p, ",");
        }
        return false;
}

char *vstrprintf(const char *fmt, va_list ap) {
        char *s;

        return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

char *strprintf(const char *fmt, ...) {
        va_list ap;
        char *s;

        va_start(ap, fmt);
        s = vstrprintf(fmt, ap);
        va_end(ap);
        return s;
}

char *strjoin_nth(const char *(*nth)(size_t i), const char *sep, const char *last_sep) {
        char *buf = NULL;
        size_t size = 0;
        const char *w;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        for (size_t i = 0; (w = nth(i)); i++)
                fprintf(f, "%s%s", i == 0 ? "" : nth(i + 1) ? sep : last_sep, w);
        if (fclose(f) != 0)
                return mfree(buf);
        return buf;
}
