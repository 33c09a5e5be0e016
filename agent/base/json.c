/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Minimal JSON writing: string escaping that always yields valid JSON, whatever the bytes. */

#include <limits.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/base/json.h"
#include "alloc-util.h"
#include "macro.h"
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
                size_t n = 0;

                /* A run of printable ASCII that needs no escape, in one write. */
                while (p[n] >= 0x20 && p[n] < 0x7f && p[n] != '"' && p[n] != '\\')
                        n++;
                if (n > 0) {
                        fwrite(p, 1, n, f);
                        p += n;
                        continue;
                }
                n = utf8_valid_len(p);

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

char *json_base64(const char *s) {
        size_t len = strlen(s ? s : "");
        cleanup_free unsigned char *out = NULL;

        if (len > INT_MAX / 4 * 3 - 3)
                return NULL;
        out = malloc(len / 3 * 4 + 5);
        if (!out || EVP_EncodeBlock(out, (const unsigned char *) (s ? s : ""), (int) len) < 0)
                return NULL;
        return (char *) TAKE_PTR(out);
}
