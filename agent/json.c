/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Minimal JSON writing: string escaping that always yields valid JSON, whatever the bytes. */

#include "agent/json.h"
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
                        fprintf(f, "\\u%04x", *p);
                else
                        fwrite(p, 1, n, f);
                p += n ? n : 1;
        }
        fputc('"', f);
}
