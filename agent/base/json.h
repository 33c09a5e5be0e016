/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Minimal JSON: writing (string escaping that always yields valid JSON, whatever the bytes) and reading
 * (RFC 8259 parsed strictly into a small tree, as Go's encoding/json accepts it). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "macro.h"

/* Write s as a JSON string literal, quotes included. Control characters become \uXXXX; each byte
 * that is not part of valid UTF-8 (file names may hold any byte) becomes U+FFFD, so the output stays
 * valid and a real "\u00ff" is never confused with the byte 0xff. */
void json_write_string(FILE *f, const char *s);

/* Whether s is valid UTF-8 throughout: when not, the emitter adds KEY_b64 beside KEY. */
bool json_utf8_valid(const char *s);

/* The bytes of s, base64-encoded (RFC 4648, with padding; libcrypto's EVP_EncodeBlock), malloc'd;
 * NULL when libcrypto does not load (or out of memory). */
char *json_base64(const char *s);

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
        bool boolean;      /* JSON_BOOL: true or false */
        JsonValue **items; /* JSON_ARRAY: elements; JSON_OBJECT: members, in order, duplicates kept */
        size_t n;
};

/* Parse one JSON text (nothing but whitespace around it) into a tree: 0, -EINVAL for a text that is
 * not JSON (or nests deeper than 256), -ENOMEM. Object members keep their order and duplicates. */
int json_parse(const char *text, size_t size, JsonValue **ret);
JsonValue *json_free(JsonValue *v);
DEFINE_TRIVIAL_CLEANUP_FUNC(JsonValue *, json_free);

/* A member of an object as Go fills a struct field: the last member whose name equals key, ignoring
 * ASCII case (fold true); or as Go reads a map: the last whose name is exactly key. NULL when obj is
 * no object or has no such member. */
const JsonValue *json_get(const JsonValue *obj, const char *key, bool fold);

/* A non-empty string without a NUL byte, or NULL. */
const char *json_string_of(const JsonValue *v);

/* The literal true (NULL, false and anything else are not). */
bool json_is_true(const JsonValue *v);
