/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The protobuf wire format, by hand: a growable writer and a bounds-checked reader. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grpc/proto.h"
#include "macro.h"
#include "alloc-util.h"

/* No message this client sends comes near this; a bug that loops must not eat the memory. */
#define PROTO_WRITER_MAX (64U << 20)

void proto_writer_init(ProtoWriter *w) {
        *w = (ProtoWriter) {};
}

void proto_writer_done(ProtoWriter *w) {
        free(w->buf);
        *w = (ProtoWriter) {};
}

int proto_writer_error(const ProtoWriter *w) {
        return w->error;
}

int proto_writer_steal(ProtoWriter *w, uint8_t **ret, size_t *ret_len) {
        int r = w->error;

        if (r < 0) {
                proto_writer_done(w);
                return r;
        }
        /* An empty message is valid: hand out a 1-byte allocation so that NULL always means "none". */
        if (!w->buf) {
                w->buf = malloc(1);
                if (!w->buf)
                        return -ENOMEM;
        }
        *ret = w->buf;
        *ret_len = w->len;
        *w = (ProtoWriter) {};
        return 0;
}

static void put_raw(ProtoWriter *w, const void *p, size_t n) {
        if (w->error < 0 || n == 0)
                return;
        if (n > PROTO_WRITER_MAX - w->len) {
                w->error = -E2BIG;
                return;
        }
        if (GREEDY_REALLOC(w->buf, w->allocated, w->len + n) < 0) {
                w->error = -ENOMEM;
                return;
        }
        memcpy(w->buf + w->len, p, n);
        w->len += n;
}

size_t proto_varint_encode(uint64_t v, uint8_t out[static PROTO_VARINT_MAX_LEN]) {
        size_t n = 0;

        do {
                out[n] = (uint8_t) (v & 0x7f);
                v >>= 7;
                if (v)
                        out[n] |= 0x80;
                n++;
        } while (v);
        return n;
}

static void put_varint_raw(ProtoWriter *w, uint64_t v) {
        uint8_t b[PROTO_VARINT_MAX_LEN];

        put_raw(w, b, proto_varint_encode(v, b));
}

static void put_tag(ProtoWriter *w, uint32_t field, unsigned wire_type) {
        if (field == 0 || field > PROTO_FIELD_MAX) {
                if (w->error == 0)
                        w->error = -EINVAL;
                return;
        }
        put_varint_raw(w, ((uint64_t) field << 3) | wire_type);
}

void proto_put_varint(ProtoWriter *w, uint32_t field, uint64_t v) {
        if (v == 0)
                return;
        put_tag(w, field, PROTO_WIRE_VARINT);
        put_varint_raw(w, v);
}

void proto_put_bool(ProtoWriter *w, uint32_t field, bool v) {
        proto_put_varint(w, field, v ? 1 : 0);
}

void proto_put_bytes(ProtoWriter *w, uint32_t field, const void *p, size_t n) {
        put_tag(w, field, PROTO_WIRE_LEN);
        put_varint_raw(w, n);
        put_raw(w, p, n);
}

void proto_put_string(ProtoWriter *w, uint32_t field, const char *s) {
        if (s && *s)
                proto_put_bytes(w, field, s, strlen(s));
}

void proto_put_message(ProtoWriter *w, uint32_t field, const ProtoWriter *sub) {
        if (sub->error < 0) {
                if (w->error == 0)
                        w->error = sub->error;
                return;
        }
        proto_put_bytes(w, field, sub->buf, sub->len);
}

void proto_put_map_entry(ProtoWriter *w, uint32_t field, const char *key, const char *value) {
        ProtoWriter e;

        proto_writer_init(&e);
        proto_put_string(&e, 1, key);
        proto_put_string(&e, 2, value);
        proto_put_message(w, field, &e);
        proto_writer_done(&e);
}

int proto_read_varint(ProtoReader *r, uint64_t *ret) {
        uint64_t v = 0;

        for (unsigned i = 0; i < PROTO_VARINT_MAX_LEN; i++) {
                uint8_t b;

                if (r->p >= r->end)
                        return -EBADMSG;
                b = *r->p++;
                /* The 10th byte holds bit 63 only. */
                if (i == PROTO_VARINT_MAX_LEN - 1 && b > 1)
                        return -EBADMSG;
                v |= (uint64_t) (b & 0x7f) << (7 * i);
                if (!(b & 0x80)) {
                        *ret = v;
                        return 0;
                }
        }
        return -EBADMSG;
}

static int read_fixed(ProtoReader *r, size_t n, uint64_t *ret) {
        uint64_t v = 0;

        if ((size_t) (r->end - r->p) < n)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++)
                v |= (uint64_t) r->p[i] << (8 * i);
        r->p += n;
        *ret = v;
        return 0;
}

static int read_tag(ProtoReader *r, uint32_t *ret_number, unsigned *ret_wire_type) {
        uint64_t tag;
        int k;

        k = proto_read_varint(r, &tag);
        if (k < 0)
                return k;
        if ((tag >> 3) == 0 || (tag >> 3) > PROTO_FIELD_MAX || (tag & 7) > PROTO_WIRE_I32)
                return -EBADMSG;
        *ret_number = (uint32_t) (tag >> 3);
        *ret_wire_type = (unsigned) (tag & 7);
        return 0;
}

/* The value of one field whose tag was just read; groups are handled by the caller. */
static int read_value(ProtoReader *r, ProtoField *f) {
        uint64_t len;
        int k;

        switch (f->wire_type) {
        case PROTO_WIRE_VARINT:
                return proto_read_varint(r, &f->value);
        case PROTO_WIRE_I64:
                return read_fixed(r, 8, &f->value);
        case PROTO_WIRE_I32:
                return read_fixed(r, 4, &f->value);
        case PROTO_WIRE_LEN:
                k = proto_read_varint(r, &len);
                if (k < 0)
                        return k;
                if (len > (uint64_t) (r->end - r->p))
                        return -EBADMSG;
                f->data = r->p;
                f->len = (size_t) len;
                r->p += len;
                return 0;
        }
        return -EBADMSG;
}

/* Skip a group whose start tag (number) was read: every field up to the matching end tag, nested
 * groups included, their numbers kept on a bounded stack. */
static int skip_group(ProtoReader *r, uint32_t number) {
        uint32_t stack[PROTO_GROUP_DEPTH_MAX];
        unsigned depth = 0;

        stack[depth++] = number;
        while (depth > 0) {
                ProtoField f = {};
                int k;

                k = read_tag(r, &f.number, &f.wire_type);
                if (k < 0)
                        return k;
                if (f.wire_type == PROTO_WIRE_EGROUP) {
                        if (stack[--depth] != f.number)
                                return -EBADMSG;
                        continue;
                }
                if (f.wire_type == PROTO_WIRE_SGROUP) {
                        if (depth >= PROTO_GROUP_DEPTH_MAX)
                                return -EBADMSG;
                        stack[depth++] = f.number;
                        continue;
                }
                k = read_value(r, &f);
                if (k < 0)
                        return k;
        }
        return 0;
}

int proto_next(ProtoReader *r, ProtoField *ret) {
        ProtoField f = {};
        const uint8_t *start;
        int k;

        if (r->p >= r->end)
                return 0;
        k = read_tag(r, &f.number, &f.wire_type);
        if (k < 0)
                return k;
        if (f.wire_type == PROTO_WIRE_EGROUP)
                return -EBADMSG;
        start = r->p;
        if (f.wire_type == PROTO_WIRE_SGROUP) {
                k = skip_group(r, f.number);
                f.data = start;
                f.len = (size_t) (r->p - start);
        } else
                k = read_value(r, &f);
        if (k < 0)
                return k;
        *ret = f;
        return 1;
}

int proto_field_reader(const ProtoField *f, ProtoReader *ret) {
        if (f->wire_type != PROTO_WIRE_LEN)
                return -EBADMSG;
        *ret = proto_reader(f->data, f->len);
        return 0;
}

int proto_field_string(const ProtoField *f, char **ret) {
        char *s;

        if (f->wire_type != PROTO_WIRE_LEN || memchr(f->data, '\0', f->len))
                return -EBADMSG;
        s = strndup((const char *) f->data, f->len);
        if (!s)
                return -ENOMEM;
        free(*ret);
        *ret = s;
        return 0;
}

int proto_validate(const void *p, size_t n) {
        ProtoReader r = proto_reader(p, n);
        ProtoField f;
        int k;

        while ((k = proto_next(&r, &f)) > 0)
                ;
        return k;
}
