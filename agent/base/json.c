/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Minimal JSON writing: string escaping that always yields valid JSON, whatever the bytes. */

#include <stdint.h>
#include <string.h>

#include "agent/base/json.h"
#include "escape.h"

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
                        fputs("\\ufffd", f);
                else
                        fwrite(p, 1, n, f);
                p += n ? n : 1;
        }
        fputc('"', f);
}

bool json_utf8_valid(const char *s) {
        for (const unsigned char *p = (const unsigned char *) (s ? s : ""); *p;) {
                size_t n = utf8_valid_len(p);

                if (n == 0)
                        return false;
                p += n;
        }
        return true;
}

void json_write_base64(FILE *f, const char *s) {
        static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const unsigned char *p = (const unsigned char *) (s ? s : "");
        size_t len = strlen((const char *) p);

        fputc('"', f);
        for (size_t i = 0; i < len; i += 3) {
                uint32_t v = (uint32_t) p[i] << 16;

                if (i + 1 < len)
                        v |= (uint32_t) p[i + 1] << 8;
                if (i + 2 < len)
                        v |= p[i + 2];
                fputc(table[(v >> 18) & 63], f);
                fputc(table[(v >> 12) & 63], f);
                fputc(i + 1 < len ? table[(v >> 6) & 63] : '=', f);
                fputc(i + 2 < len ? table[v & 63] : '=', f);
        }
        fputc('"', f);
}
