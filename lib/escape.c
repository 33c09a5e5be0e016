/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Escaping untrusted names for a terminal (the rules are in include/escape.h). */

#include "escape.h"

size_t utf8_valid_len(const unsigned char *s) {
        uint32_t cp;
        size_t n;

        if (s[0] < 0x80)
                return 1;
        if ((s[0] & 0xE0) == 0xC0)
                n = 2, cp = s[0] & 0x1F;
        else if ((s[0] & 0xF0) == 0xE0)
                n = 3, cp = s[0] & 0x0F;
        else if ((s[0] & 0xF8) == 0xF0)
                n = 4, cp = s[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3F);
        }
        /* Reject overlong forms, surrogates and code points past U+10FFFF. */
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
            (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                return 0;
        return n;
}

/* The escape of one byte that never passes raw, or NULL for a printable ASCII byte. */
static const char *escape_byte(unsigned char c, char buf[static ESCAPE_UNIT_MAX]) {
        static const char names[] = {
                ['\a'] = 'a', ['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\v'] = 'v', ['\f'] = 'f', ['\r'] = 'r'
        };
        static const char hex[] = "0123456789abcdef";

        if (c == '\\')
                return "\\\\";
        if (c >= 0x20 && c < 0x7f)
                return NULL;
        if (c < sizeof names && names[c]) {
                buf[0] = '\\', buf[1] = names[c], buf[2] = '\0';
                return buf;
        }
        buf[0] = '\\', buf[1] = 'x', buf[2] = hex[c >> 4], buf[3] = hex[c & 0xf], buf[4] = '\0';
        return buf;
}

/* How many bytes at s pass through unescaped: 0 when s[0] needs escaping (one byte at a time). */
static size_t escape_raw_len(const unsigned char *s) {
        size_t n = utf8_valid_len(s);

        if (n == 1)
                return s[0] >= 0x20 && s[0] < 0x7f && s[0] != '\\';
        if (n == 2 && s[0] == 0xC2 && s[1] < 0xA0)
                return 0; /* U+0080..U+009F: the C1 controls */
        return n;
}

size_t text_escape_buf(const char *s, char *buf, size_t size) {
        const unsigned char *p = (const unsigned char *) (s ?: "");
        bool full = size == 0;
        size_t w = 0;

        for (; *p;) {
                char unit[ESCAPE_UNIT_MAX];
                size_t n = escape_raw_len(p);
                const char *e = n > 0 ? (const char *) p : escape_byte(*p, unit);
                size_t k = n > 0 ? n : strlen(e);

                if (!full && w + k < size)
                        memcpy(buf + w, e, k);
                else if (!full) {
                        buf[w] = '\0';
                        full = true;
                }
                w += k;
                p += n ?: 1;
        }
        if (!full)
                buf[w] = '\0';
        return w;
}

char *text_escape(const char *s) {
        size_t need = text_escape_buf(s, NULL, 0);
        char *r = malloc(need + 1);

        if (r)
                (void) text_escape_buf(s, r, need + 1);
        return r;
}

void fputs_escaped(const char *s, FILE *f) {
        const unsigned char *p = (const unsigned char *) (s ?: "");

        while (*p) {
                char unit[ESCAPE_UNIT_MAX];
                size_t n = escape_raw_len(p);

                if (n > 0)
                        fwrite(p, 1, n, f);
                else
                        fputs(escape_byte(*p, unit), f);
                p += n ?: 1;
        }
}
