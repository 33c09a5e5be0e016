/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CNI configuration files read as libcni reads them: RFC 8259 JSON parsed strictly into a small tree
 * (as Go's encoding/json accepts it), then libcni's rules for a list and for one plugin, so that a
 * file the runtime refuses is never taken as the node's CNI. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/config/cni-conf.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

/* Deeper nesting than any configuration has; bounds the recursion. */
#define JSON_DEPTH_MAX 256U

typedef enum JsonType {
        JSON_NULL,
        JSON_BOOL,
        JSON_NUMBER,
        JSON_STRING,
        JSON_ARRAY,
        JSON_OBJECT,
} JsonType;

typedef struct JsonValue JsonValue;
struct JsonValue {
        JsonType type;
        char *key; /* as a member of an object: its name, decoded */
        size_t key_len;
        char *str; /* JSON_STRING: the decoded bytes, NUL-terminated (may hold a NUL of its own) */
        size_t len;
        JsonValue **items; /* JSON_ARRAY: elements; JSON_OBJECT: members, in order, duplicates kept */
        size_t n;
};

typedef struct JsonParser {
        const char *p, *end;
        unsigned depth;
} JsonParser;

static JsonValue *json_free(JsonValue *v) {
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
DEFINE_TRIVIAL_CLEANUP_FUNC(JsonValue *, json_free);

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

/* One JSON text, nothing but whitespace around it. */
static int json_parse(const char *text, size_t size, JsonValue **ret) {
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

/* A member of an object as Go fills a struct field: the last member whose name equals key, ignoring
 * ASCII case (fold true); or as Go reads a map: the last whose name is exactly key. */
static const JsonValue *json_get(const JsonValue *obj, const char *key, bool fold) {
        const JsonValue *found = NULL;
        size_t n = strlen(key);

        for (size_t i = 0; obj && obj->type == JSON_OBJECT && i < obj->n; i++) {
                const JsonValue *m = obj->items[i];

                if (m->key_len == n && (fold ? strncasecmp(m->key, key, n) : memcmp(m->key, key, n)) == 0)
                        found = m;
        }
        return found;
}

/* A struct field of Go type string: absent, null or a string. */
static bool field_string_ok(const JsonValue *v) {
        return !v || v->type == JSON_NULL || v->type == JSON_STRING;
}

/* A non-empty string without a NUL byte, or NULL. */
static const char *string_of(const JsonValue *v) {
        return v && v->type == JSON_STRING && v->len > 0 && strlen(v->str) == v->len ? v->str : NULL;
}

/* One plugin's configuration, as libcni's PluginConf: its type (and its IPAM's) appended to types. */
static int plugin_types(const JsonValue *plugin, char ***types, const char **why) {
        const JsonValue *type = json_get(plugin, "type", true), *ipam = json_get(plugin, "ipam", true);
        const JsonValue *ipam_type = NULL;
        int r;

        if (plugin->type != JSON_OBJECT)
                return *why = "a plugin's configuration is not a JSON object", -EINVAL;
        if (!field_string_ok(json_get(plugin, "name", true)) || !field_string_ok(json_get(plugin, "cniVersion", true)))
                return *why = "a plugin's name or cniVersion is not a string", -EINVAL;
        if (ipam && ipam->type != JSON_NULL && ipam->type != JSON_OBJECT)
                return *why = "a plugin's ipam is not an object", -EINVAL;
        ipam_type = json_get(ipam, "type", true);
        if (!field_string_ok(type) || !field_string_ok(ipam_type))
                return *why = "a plugin's type is not a string", -EINVAL;
        if (!string_of(type))
                return *why = type && type->len > 0 ? "a plugin's type holds a NUL byte" : "a plugin has no type",
                       -EINVAL;
        r = strv_extend_unique(types, type->str);
        if (r >= 0 && string_of(ipam_type))
                r = strv_extend_unique(types, ipam_type->str);
        return r < 0 ? r : 0;
}

/* A .conflist, as libcni's NetworkConfFromBytes: a name, and a non-empty list of plugins. */
static int list_types(const JsonValue *list, char ***types, const char **why) {
        const JsonValue *name = json_get(list, "name", false), *version = json_get(list, "cniVersion", false);
        const JsonValue *plugins = json_get(list, "plugins", false);
        int r = 0;

        if (list->type != JSON_OBJECT)
                return *why = "not a JSON object", -EINVAL;
        if (!name || name->type != JSON_STRING)
                return *why = "the list has no name (a string)", -EINVAL;
        if (version && version->type != JSON_STRING)
                return *why = "the list's cniVersion is not a string", -EINVAL;
        if (!plugins || plugins->type != JSON_ARRAY || plugins->n == 0)
                return *why = "the list has no plugins", -EINVAL;
        for (size_t i = 0; r >= 0 && i < plugins->n; i++)
                r = plugin_types(plugins->items[i], types, why);
        return r;
}

bool cni_conf_name_loaded(const char *name) {
        const char *ext = strrchr(name, '.');

        return ext && (streq(ext, ".conf") || streq(ext, ".conflist") || streq(ext, ".json"));
}

static char *types_join(char **types) {
        char *joined = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&joined, &size);

        if (!f)
                return NULL;
        STRV_FOREACH(t, types)
                fprintf(f, "%s%s", t == types ? "" : ",", *t);
        if (fclose(f) != 0)
                return mfree(joined);
        return joined;
}

int cni_conf_types(const char *name, const char *text, size_t size, char **ret_types, const char **ret_why) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        cleanup_strv char **types = NULL;
        const char *ext = strrchr(name, '.');
        int r;

        *ret_types = NULL;
        *ret_why = NULL;
        r = json_parse(text, size, &v);
        if (r == -EINVAL)
                *ret_why = "not valid JSON";
        if (r < 0)
                return r;
        if (ext && streq(ext, ".conflist"))
                r = list_types(v, &types, ret_why);
        else
                r = plugin_types(v, &types, ret_why);
        if (r < 0)
                return r;
        *ret_types = types_join(types);
        return *ret_types ? 0 : -ENOMEM;
}
