/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The protobuf wire format, by hand: a growable writer and a bounds-checked reader that never trusts
 * a length and skips unknown fields of every wire type. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
        PROTO_WIRE_VARINT = 0,
        PROTO_WIRE_I64 = 1,
        PROTO_WIRE_LEN = 2,
        PROTO_WIRE_SGROUP = 3, /* deprecated groups: skipped, never produced */
        PROTO_WIRE_EGROUP = 4,
        PROTO_WIRE_I32 = 5,
};

#define PROTO_FIELD_MAX ((1U << 29) - 1)
#define PROTO_VARINT_MAX_LEN 10
/* Groups nest through tags alone; deeper than this is an attack, not a message. */
#define PROTO_GROUP_DEPTH_MAX 32

/* The writer keeps the first error (-ENOMEM, -E2BIG) and ignores every later put: callers check once
 * at the end with proto_writer_error(). */
typedef struct ProtoWriter {
        uint8_t *buf;
        size_t len;
        size_t allocated;
        int error;
} ProtoWriter;

void proto_writer_init(ProtoWriter *w);
void proto_writer_done(ProtoWriter *w);
int proto_writer_error(const ProtoWriter *w);
/* Hand the bytes over (the writer is reset); on a writer error returns it and frees the bytes. */
int proto_writer_steal(ProtoWriter *w, uint8_t **ret, size_t *ret_len);

size_t proto_varint_encode(uint64_t v, uint8_t out[static PROTO_VARINT_MAX_LEN]);
/* proto3 leaves defaults out: a 0 varint and an empty or NULL string are not written. */
void proto_put_varint(ProtoWriter *w, uint32_t field, uint64_t v);
void proto_put_bool(ProtoWriter *w, uint32_t field, bool v);
void proto_put_bytes(ProtoWriter *w, uint32_t field, const void *p, size_t n);
void proto_put_string(ProtoWriter *w, uint32_t field, const char *s);
/* A nested message, written even when empty (its presence can matter). */
void proto_put_message(ProtoWriter *w, uint32_t field, const ProtoWriter *sub);
/* One entry of a map<string, string>. */
void proto_put_map_entry(ProtoWriter *w, uint32_t field, const char *key, const char *value);

typedef struct ProtoReader {
        const uint8_t *p;
        const uint8_t *end;
} ProtoReader;

typedef struct ProtoField {
        uint32_t number;
        unsigned wire_type;
        uint64_t value;      /* VARINT, I64, I32 */
        const uint8_t *data; /* LEN: points into the reader's buffer */
        size_t len;
} ProtoField;

static inline ProtoReader proto_reader(const void *p, size_t n) {
        return (ProtoReader) { .p = p, .end = (const uint8_t *) p + n };
}

/* 0 and the value, -EBADMSG when truncated or longer than 10 bytes (or a 10th byte over 1). */
int proto_read_varint(ProtoReader *r, uint64_t *ret);
/* The next field: 1 read (groups are skipped whole and reported with their wire type), 0 at the end,
 * -EBADMSG for anything malformed: field 0, wire types 6 and 7, a length past the end, an end-group
 * without its start. */
int proto_next(ProtoReader *r, ProtoField *ret);
/* A field as a sub-reader; -EBADMSG when it is not length-delimited. */
int proto_field_reader(const ProtoField *f, ProtoReader *ret);
/* A string field as a malloc'd C string; -EBADMSG for an embedded NUL. */
int proto_field_string(const ProtoField *f, char **ret);
/* Fail the whole message: walk every field, nothing kept. */
int proto_validate(const void *p, size_t n);
