/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Minimal JSON writing: string escaping that always yields valid JSON, whatever the bytes. */

#include <stdint.h>

#include "agent/json.h"

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when s does not start one. */
static size_t utf8_valid_len(const unsigned char *s) {
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

static void write_escaped_char(FILE *f, unsigned char c) {
        switch (c) {
        case '"':
                fputs("\\\"", f);
                break;
        case '\\':
                fputs("\\\\", f);
                break;
        case '\n':
                fputs("\\n", f);
                break;
        case '\r':
                fputs("\\r", f);
                break;
        case '\t':
                fputs("\\t", f);
                break;
        default:
                if (c < 0x20 || c == 0x7F)
                        fprintf(f, "\\u%04x", c);
                else
                        fputc(c, f);
        }
}

void json_write_string(FILE *f, const char *s) {
        const unsigned char *p = (const unsigned char *) (s ? s : "");

        fputc('"', f);
        while (*p) {
                size_t n = utf8_valid_len(p);

                if (n == 1)
                        write_escaped_char(f, *p);
                else if (n == 0)
                        fprintf(f, "\\u%04x", *p);
                else
                        fwrite(p, 1, n, f);
                p += n ? n : 1;
        }
        fputc('"', f);
}
