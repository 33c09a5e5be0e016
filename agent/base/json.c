/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Minimal JSON: writing (string escaping that always yields valid JSON, whatever the bytes) and reading
 * (RFC 8259 parsed strictly into a small tree, as Go's encoding/json accepts it). */

#include <errno.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/base/json.h"
#include "alloc-util.h"
#include "macro.h"
#include "escape.h"
#include "string-util.h"

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

/* --- Reading ------------------------------------------------------------------------------ */

/* Deeper nesting than any configuration has; bounds the recursion. */
#define JSON_DEPTH_MAX 256U

typedef struct JsonParser {
        const char *p, *end;
        unsigned depth;
} JsonParser;

JsonValue *json_free(JsonValue *v) {
        if (!v)
                return NULL;
        for (size_t i = 0; i < v->n; i++)
                json_free(v->items[i]);
        free(v->items);
        free(v->key);
        free(v->str);
        free(v);
        return NULL;
}

static void json_skip_ws(JsonParser *j) {
        while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
                j->p++;
}

static int hex4(const char *p, const char *end, uint32_t *ret) {
        uint32_t v = 0;

        if (end - p < 4)
                return -EINVAL;
        for (int i = 0; i < 4; i++) {
                char c = p[i];

                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (uint32_t) (c - '0');
                else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
                        v |= (uint32_t) ((c | 0x20) - 'a' + 10);
                else
                        return -EINVAL;
        }
        *ret = v;
        return 0;
}

static size_t utf8_put(char *out, uint32_t c) {
        if (c < 0x80)
                return out[0] = (char) c, 1;
        if (c < 0x800)
                return out[0] = (char) (0xc0 | c >> 6), out[1] = (char) (0x80 | (c & 0x3f)), 2;
        if (c < 0x10000)
                return out[0] = (char) (0xe0 | c >> 12), out[1] = (char) (0x80 | ((c >> 6) & 0x3f)),
                       out[2] = (char) (0x80 | (c & 0x3f)), 3;
        out[0] = (char) (0xf0 | c >> 18);
        out[1] = (char) (0x80 | ((c >> 12) & 0x3f));
        out[2] = (char) (0x80 | ((c >> 6) & 0x3f));
        out[3] = (char) (0x80 | (c & 0x3f));
        return 4;
}

/* "\uXXXX", with a surrogate pair when one follows; a lone surrogate is U+FFFD, as Go decodes it. */
static int json_unicode_escape(JsonParser *j, uint32_t *ret) {
        uint32_t c, lo;

        if (hex4(j->p, j->end, &c) < 0)
                return -EINVAL;
        j->p += 4;
        if (c >= 0xd800 && c < 0xdc00 && j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u' &&
            hex4(j->p + 2, j->end, &lo) >= 0 && lo >= 0xdc00 && lo < 0xe000) {
                j->p += 6;
                c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
        } else if (c >= 0xd800 && c < 0xe000)
                c = 0xfffd;
        *ret = c;
        return 0;
}

static int json_escape(JsonParser *j, char *out, size_t *n) {
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *e;
        uint32_t c;

        if (j->p >= j->end)
                return -EINVAL;
        if (*j->p == 'u') {
                j->p++;
                if (json_unicode_escape(j, &c) < 0)
                        return -EINVAL;
                *n += utf8_put(out + *n, c);
                return 0;
        }
        e = memchr(from, *j->p, sizeof from - 1);
        if (!e)
                return -EINVAL;
        out[(*n)++] = to[e - from];
        j->p++;
        return 0;
}

/* A string literal at j->p (its opening quote), decoded; the output is never longer than the input. */
static int json_string(JsonParser *j, char **ret, size_t *ret_len) {
        cleanup_free char *out = NULL;
        size_t n = 0;

        if (j->p >= j->end || *j->p != '"')
                return -EINVAL;
        j->p++;
        out = malloc((size_t) (j->end - j->p) + 1);
        if (!out)
                return -ENOMEM;
        for (;;) {
                if (j->p >= j->end || (unsigned char) *j->p < 0x20)
                        return -EINVAL;
                if (*j->p == '"')
                        break;
                if (*j->p != '\\') {
                        out[n++] = *j->p++;
                        continue;
                }
                j->p++;
                if (json_escape(j, out, &n) < 0)
                        return -EINVAL;
        }
        j->p++;
        out[n] = 0;
        *ret = TAKE_PTR(out);
        *ret_len = n;
        return 0;
}

static void json_digits(JsonParser *j) {
        while (j->p < j->end && ascii_isdigit(*j->p))
                j->p++;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int json_number(JsonParser *j) {
        const char *s;

        if (j->p < j->end && *j->p == '-')
                j->p++;
        if (j->p >= j->end || !ascii_isdigit(*j->p))
                return -EINVAL;
        if (*j->p == '0')
                j->p++;
        else
                json_digits(j);
        if (j->p < j->end && *j->p == '.') {
                s = ++j->p;
                json_digits(j);
                if (j->p == s)
                        return -EINVAL;
        }
        if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
                j->p++;
                if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
                        j->p++;
                s = j->p;
                json_digits(j);
                if (j->p == s)
                        return -EINVAL;
        }
        return 0;
}

static int json_value(JsonParser *j, JsonValue **ret);

static int json_append(JsonValue *v, JsonValue *item) {
        JsonValue **l = reallocarray(v->items, v->n + 1, sizeof(JsonValue *));

        if (!l) {
                json_free(item);
                return -ENOMEM;
        }
        v->items = l;
        v->items[v->n++] = item;
        return 0;
}

/* The members or elements after '{' or '['; close is '}' or ']'. */
static int json_container(JsonParser *j, JsonValue *v, char close) {
        int r;

        json_skip_ws(j);
        if (j->p < j->end && *j->p == close)
                return j->p++, 0;
        for (;;) {
                cleanup_free char *key = NULL;
                size_t key_len = 0;
                JsonValue *item = NULL;

                json_skip_ws(j);
                if (close == '}') {
                        if ((r = json_string(j, &key, &key_len)) < 0)
                                return r;
                        json_skip_ws(j);
                        if (j->p >= j->end || *j->p++ != ':')
                                return -EINVAL;
                }
                if ((r = json_value(j, &item)) < 0)
                        return r;
                item->key = TAKE_PTR(key);
                item->key_len = key_len;
                if ((r = json_append(v, item)) < 0)
                        return r;
                json_skip_ws(j);
                if (j->p >= j->end)
                        return -EINVAL;
                if (*j->p == close)
                        return j->p++, 0;
                if (*j->p++ != ',')
                        return -EINVAL;
        }
}

static int json_literal(JsonParser *j, const char *word) {
        size_t n = strlen(word);

        if ((size_t) (j->end - j->p) < n || memcmp(j->p, word, n) != 0)
                return -EINVAL;
        j->p += n;
        return 0;
}

static int json_scalar(JsonParser *j, JsonValue *v) {
        switch (*j->p) {
        case '"':
                v->type = JSON_STRING;
                return json_string(j, &v->str, &v->len);
        case 't':
                v->type = JSON_BOOL;
                v->boolean = true;
                return json_literal(j, "true");
        case 'f':
                v->type = JSON_BOOL;
                return json_literal(j, "false");
        case 'n':
                v->type = JSON_NULL;
                return json_literal(j, "null");
        default:
                v->type = JSON_NUMBER;
                return json_number(j);
        }
}

static int json_value(JsonParser *j, JsonValue **ret) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        int r;

        json_skip_ws(j);
        if (j->p >= j->end)
                return -EINVAL;
        v = calloc(1, sizeof *v);
        if (!v)
                return -ENOMEM;
        if (*j->p == '{' || *j->p == '[') {
                if (++j->depth > JSON_DEPTH_MAX)
                        return -EINVAL;
                v->type = *j->p == '{' ? JSON_OBJECT : JSON_ARRAY;
                j->p++;
                r = json_container(j, v, v->type == JSON_OBJECT ? '}' : ']');
                j->depth--;
        } else
                r = json_scalar(j, v);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(v);
        return 0;
}

int json_parse(const char *text, size_t size, JsonValue **ret) {
        JsonParser j = { .p = text, .end = text + size };
        CLEANUP(json_freep) JsonValue *v = NULL;
        int r;

        r = json_value(&j, &v);
        if (r < 0)
                return r;
        json_skip_ws(&j);
        if (j.p != j.end)
                return -EINVAL;
        *ret = TAKE_PTR(v);
        return 0;
}

const JsonValue *json_get(const JsonValue *obj, const char *key, bool fold) {
        const JsonValue *found = NULL;
        size_t n = strlen(key);

        for (size_t i = 0; obj && obj->type == JSON_OBJECT && i < obj->n; i++) {
                const JsonValue *m = obj->items[i];

                if (m->key_len == n && (fold ? strncasecmp(m->key, key, n) : memcmp(m->key, key, n)) == 0)
                        found = m;
        }
        return found;
}

const char *json_string_of(const JsonValue *v) {
        return v && v->type == JSON_STRING && v->len > 0 && strlen(v->str) == v->len ? v->str : NULL;
}

bool json_is_true(const JsonValue *v) {
        return v && v->type == JSON_BOOL && v->boolean;
}
