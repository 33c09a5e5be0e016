/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Escaping untrusted names for a terminal: systemd cescape()'s style, reversible byte for byte. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A name on the node is chosen by whoever created it (a pod can name a mount point
 * "x\nresidue: none, the node is clean\n\e]0;owned\a"). Text meant for a person shows it as:
 *   - \\ for a backslash, so that the escaping is reversible and a name spelled "a\n" with a real
 *     backslash prints differently from one with a newline;
 *   - \a \b \t \n \v \f \r for those controls, \xHH for every other byte below 0x20 and for 0x7f;
 *   - \xHH for each byte that is not part of valid UTF-8 (stray continuation bytes, truncated and
 *     overlong sequences, surrogates, code points past U+10FFFF);
 *   - \xHH for each byte of the C1 controls U+0080..U+009F ("\xc2\x9b" is a CSI to many terminals);
 *   - everything else, valid printable UTF-8 included, as it is.
 * Each \xHH stands for exactly one byte, whatever the bytes around it, so unescaping gives the
 * original name back. JSON output has its own escaping and never goes through this. */

#define ESCAPE_UNIT_MAX 5 /* the longest escape of one byte, "\xHH", plus its NUL */

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when s does not start one. */
static inline size_t utf8_valid_len(const unsigned char *s) {
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
static inline const char *escape_byte(unsigned char c, char buf[static ESCAPE_UNIT_MAX]) {
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
static inline size_t escape_raw_len(const unsigned char *s) {
        size_t n = utf8_valid_len(s);

        if (n == 1)
                return s[0] >= 0x20 && s[0] < 0x7f && s[0] != '\\';
        if (n == 2 && s[0] == 0xC2 && s[1] < 0xA0)
                return 0; /* U+0080..U+009F: the C1 controls */
        return n;
}

/* Escapes s into buf (always NUL-terminated when size > 0), never cutting an escape or a UTF-8
 * sequence in two. Returns the length the whole escape needs, as snprintf() does: the result was
 * truncated when that is >= size. NULL is "". */
static inline size_t text_escape_buf(const char *s, char *buf, size_t size) {
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

/* The escaped copy of s, malloc'd, or NULL when out of memory. NULL is "". */
static inline char *text_escape(const char *s) {
        size_t need = text_escape_buf(s, NULL, 0);
        char *r = malloc(need + 1);

        if (r)
                (void) text_escape_buf(s, r, need + 1);
        return r;
}

/* Writes s escaped to f without allocating: for sinks that must work out of memory too. */
static inline void fputs_escaped(const char *s, FILE *f) {
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
