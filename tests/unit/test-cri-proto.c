/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the protobuf wire codec and the CRI messages: golden bytes both ways, varint edge
 * cases, unknown fields of every wire type, and malformed input that must fail cleanly. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "cri/messages.h"
#include "grpc/proto.h"
#include "tests/support/cri-testcalls.h"
#include "macro.h"

#define BYTES(...) ((const uint8_t[]) { __VA_ARGS__ }), sizeof((const uint8_t[]) { __VA_ARGS__ })

static void assert_writer(ProtoWriter *w, const uint8_t *want, size_t n) {
        assert_int_equal(proto_writer_error(w), 0);
        assert_int_equal(w->len, n);
        if (n > 0)
                assert_memory_equal(w->buf, want, n);
        proto_writer_done(w);
}

static void test_varint_encode(void **state) {
        static const struct {
                uint64_t v;
                uint8_t bytes[10];
                size_t n;
        } cases[] = {
                { 0, { 0x00 }, 1 },
                { 1, { 0x01 }, 1 },
                { 127, { 0x7f }, 1 },
                { 128, { 0x80, 0x01 }, 2 },
                { 300, { 0xac, 0x02 }, 2 },
                { 16383, { 0xff, 0x7f }, 2 },
                { 16384, { 0x80, 0x80, 0x01 }, 3 },
                { UINT32_MAX, { 0xff, 0xff, 0xff, 0xff, 0x0f }, 5 },
                { 1ULL << 63, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 }, 10 },
                { UINT64_MAX, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 }, 10 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint8_t b[PROTO_VARINT_MAX_LEN];
                ProtoReader r = proto_reader(cases[i].bytes, cases[i].n);
                uint64_t v = 0;

                assert_int_equal(proto_varint_encode(cases[i].v, b), cases[i].n);
                assert_memory_equal(b, cases[i].bytes, cases[i].n);
                assert_int_equal(proto_read_varint(&r, &v), 0);
                assert_true(v == cases[i].v);
                assert_ptr_equal(r.p, r.end);
        }
}

static int read_varint(const uint8_t *p, size_t n, uint64_t *ret) {
        ProtoReader r = proto_reader(p, n);

        return proto_read_varint(&r, ret);
}

static void test_varint_malformed(void **state) {
        uint64_t v;

        /* Truncated: the continuation bit promises more. */
        assert_int_equal(read_varint(BYTES(0x80), &v), -EBADMSG);
        assert_int_equal(read_varint(BYTES(0xff, 0xff, 0xff), &v), -EBADMSG);
        assert_int_equal(read_varint(NULL, 0, &v), -EBADMSG);
        /* Eleven bytes, and a 10th byte carrying more than bit 63. */
        assert_int_equal(read_varint(BYTES(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), &v),
                         -EBADMSG);
        assert_int_equal(read_varint(BYTES(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02), &v), -EBADMSG);
        /* Over-long but valid encodings of small numbers are accepted, as protobuf does. */
        assert_int_equal(read_varint(BYTES(0x80, 0x00), &v), 0);
        assert_true(v == 0);
        assert_int_equal(read_varint(BYTES(0x81, 0x80, 0x00), &v), 0);
        assert_true(v == 1);
}

static int next(const uint8_t *p, size_t n, ProtoField *f) {
        ProtoReader r = proto_reader(p, n);

        return proto_next(&r, f);
}

static void test_tags(void **state) {
        ProtoField f;

        assert_int_equal(next(BYTES(0x08, 0x96, 0x01), &f), 1);
        assert_int_equal(f.number, 1);
        assert_int_equal(f.wire_type, PROTO_WIRE_VARINT);
        assert_true(f.value == 150);
        /* The largest field number, 2^29 - 1, as a fixed32. */
        assert_int_equal(next(BYTES(0xfd, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3, 4), &f), 1);
        assert_int_equal(f.number, PROTO_FIELD_MAX);
        assert_true(f.value == 0x04030201);
        /* Field 0, a field number past 2^29 - 1, wire types 6 and 7. */
        assert_int_equal(next(BYTES(0x00, 0x01), &f), -EBADMSG);
        assert_int_equal(next(BYTES(0x80, 0x80, 0x80, 0x80, 0x10, 0x00), &f), -EBADMSG);
        assert_int_equal(next(BYTES(0x0e, 0x00), &f), -EBADMSG);
        assert_int_equal(next(BYTES(0x0f, 0x00), &f), -EBADMSG);
        /* An end-group without its start. */
        assert_int_equal(next(BYTES(0x0c), &f), -EBADMSG);
        /* End of input is 0, not an error. */
        assert_int_equal(next(NULL, 0, &f), 0);
}

static void test_lengths_never_trusted(void **state) {
        ProtoField f;

        /* LEN past the end, LEN of 2^63, fixed64 and fixed32 cut short. */
        assert_int_equal(next(BYTES(0x0a, 0x05, 'a', 'b'), &f), -EBADMSG);
        assert_int_equal(next(BYTES(0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), &f), -EBADMSG);
        assert_int_equal(next(BYTES(0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f), &f), -EBADMSG);
        assert_int_equal(next(BYTES(0x09, 1, 2, 3, 4, 5, 6, 7), &f), -EBADMSG);
        assert_int_equal(next(BYTES(0x0d, 1, 2, 3), &f), -EBADMSG);
        /* A zero-length LEN is fine. */
        assert_int_equal(next(BYTES(0x0a, 0x00), &f), 1);
        assert_int_equal(f.len, 0);
}

static void test_groups(void **state) {
        ProtoField f;
        ProtoReader r;

        /* Group 1 holding a varint, a nested group 2 with a string, then field 3 after it. */
        r = proto_reader(BYTES(0x0b, 0x08, 0x01, 0x13, 0x0a, 0x01, 'x', 0x14, 0x0c, 0x18, 0x07));
        assert_int_equal(proto_next(&r, &f), 1);
        assert_int_equal(f.wire_type, PROTO_WIRE_SGROUP);
        assert_int_equal(proto_next(&r, &f), 1);
        assert_int_equal(f.number, 3);
        assert_true(f.value == 7);
        assert_int_equal(proto_next(&r, &f), 0);
        /* Unterminated, wrongly terminated, a malformed field inside. */
        assert_int_equal(next(BYTES(0x0b, 0x08, 0x01), &f), -EBADMSG);
        assert_int_equal(next(BYTES(0x0b, 0x14), &f), -EBADMSG);
        assert_int_equal(next(BYTES(0x0b, 0x0a, 0x09, 0x0c), &f), -EBADMSG);
}

static void test_group_depth(void **state) {
        uint8_t b[2 * (PROTO_GROUP_DEPTH_MAX + 1)];
        ProtoField f;

        /* PROTO_GROUP_DEPTH_MAX nested start-groups, then as many ends: fine. */
        for (size_t i = 0; i < PROTO_GROUP_DEPTH_MAX; i++) {
                b[i] = 0x0b;
                b[PROTO_GROUP_DEPTH_MAX + i] = 0x0c;
        }
        assert_int_equal(next(b, 2 * PROTO_GROUP_DEPTH_MAX, &f), 1);
        /* One deeper is refused, whatever follows. */
        for (size_t i = 0; i < PROTO_GROUP_DEPTH_MAX + 1; i++) {
                b[i] = 0x0b;
                b[PROTO_GROUP_DEPTH_MAX + 1 + i] = 0x0c;
        }
        assert_int_equal(next(b, sizeof b, &f), -EBADMSG);
}

static void test_strings(void **state) {
        char *s = NULL;
        ProtoField f;

        assert_int_equal(next(BYTES(0x0a, 0x03, 'a', 'b', 'c'), &f), 1);
        assert_int_equal(proto_field_string(&f, &s), 0);
        assert_string_equal(s, "abc");
        /* A repeated scalar: the last one wins, the first is freed. */
        assert_int_equal(next(BYTES(0x0a, 0x01, 'z'), &f), 1);
        assert_int_equal(proto_field_string(&f, &s), 0);
        assert_string_equal(s, "z");
        free(s);
        s = NULL;
        assert_int_equal(next(BYTES(0x0a, 0x03, 'a', 0x00, 'c'), &f), 1);
        assert_int_equal(proto_field_string(&f, &s), -EBADMSG);
        assert_null(s);
        assert_int_equal(next(BYTES(0x08, 0x01), &f), 1);
        assert_int_equal(proto_field_string(&f, &s), -EBADMSG);
}

static void test_encode_requests(void **state) {
        ProtoWriter w;

        proto_writer_init(&w);
        cri_encode_version_request(&w, "v1");
        assert_writer(&w, BYTES(0x0a, 0x02, 'v', '1'));

        cri_encode_id_request(&w, "abc");
        assert_writer(&w, BYTES(0x0a, 0x03, 'a', 'b', 'c'));

        /* StopContainer: timeout 0 is proto3's default and is left out. */
        cri_encode_stop_container_request(&w, "c1", 0);
        assert_writer(&w, BYTES(0x0a, 0x02, 'c', '1'));
        cri_encode_stop_container_request(&w, "c1", 10);
        assert_writer(&w, BYTES(0x0a, 0x02, 'c', '1', 0x10, 0x0a));
        /* A negative int64 takes all ten bytes. */
        cri_encode_stop_container_request(&w, "c1", -1);
        assert_writer(&w, BYTES(0x0a, 0x02, 'c', '1', 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01));

        cri_encode_list_request(&w);
        assert_writer(&w, NULL, 0);
}

static void test_encode_pod_config(void **state) {
        const CriPodSpec spec = { .name = "p", .namespace = "n", .uid = "u", .cgroup_parent = "/c", .host_network = true };
        ProtoWriter w, lx, sc, ns;

        proto_writer_init(&w);
        proto_writer_init(&lx);
        proto_writer_init(&sc);
        proto_writer_init(&ns);
        /* linux = 8 {cgroup_parent = 1 "/c", security_context = 2 {namespace_options = 1 {network = 1 NODE}}} */
        proto_put_varint(&ns, 1, CRI_NAMESPACE_NODE);
        proto_put_message(&sc, 1, &ns);
        proto_put_string(&lx, 1, "/c");
        proto_put_message(&lx, 2, &sc);
        assert_int_equal(lx.len, 10);
        assert_memory_equal(lx.buf, ((const uint8_t[]) { 0x0a, 0x02, '/', 'c', 0x12, 0x04, 0x0a, 0x02, 0x08, 0x02 }), 10);

        cri_encode_pod_config(&w, &spec);
        assert_int_equal(proto_writer_error(&w), 0);
        /* metadata first, then (no hostname on the host network) the two labels, then linux. */
        assert_memory_equal(w.buf, ((const uint8_t[]) { 0x0a, 0x09, 0x0a, 0x01, 'p', 0x12, 0x01, 'u', 0x1a, 0x01, 'n', 0x32 }),
                            12);
        assert_int_equal(w.buf[w.len - 12], 0x42);
        assert_int_equal(w.buf[w.len - 11], 0x0a);
        assert_memory_equal(w.buf + w.len - 10, lx.buf, 10);
        assert_int_equal(proto_validate(w.buf, w.len), 0);
        proto_writer_done(&w);
        proto_writer_done(&lx);
        proto_writer_done(&sc);
        proto_writer_done(&ns);
}

static void test_writer_rejects_bad_field(void **state) {
        ProtoWriter w;
        uint8_t *p = NULL;
        size_t n;

        proto_writer_init(&w);
        proto_put_string(&w, 0, "x");
        assert_int_equal(proto_writer_error(&w), -EINVAL);
        /* Later puts are ignored; stealing hands the error back and frees. */
        proto_put_string(&w, 1, "x");
        assert_int_equal(proto_writer_steal(&w, &p, &n), -EINVAL);
        assert_null(p);
        proto_writer_init(&w);
        assert_int_equal(proto_writer_steal(&w, &p, &n), 0);
        assert_non_null(p);
        assert_int_equal(n, 0);
        free(p);
}

static void test_decode_version(void **state) {
        CriVersion v = {};

        assert_int_equal(cri_decode_version_response(BYTES(0x0a, 0x05, '0', '.', '1', '.', '0', 0x12, 0x0a, 'c', 'o', 'n',
                                                           't', 'a', 'i', 'n', 'e', 'r', 'd', 0x1a, 0x06, '1', '.', '6',
                                                           '.', '2', '0', 0x22, 0x02, 'v', '1'),
                                                     &v),
                         0);
        assert_string_equal(v.version, "0.1.0");
        assert_string_equal(v.runtime_name, "containerd");
        assert_string_equal(v.runtime_version, "1.6.20");
        assert_string_equal(v.runtime_api_version, "v1");
        cri_version_done(&v);
        assert_null(v.runtime_name);
        /* Empty is a valid message with every field unset. */
        assert_int_equal(cri_decode_version_response(NULL, 0, &v), 0);
        assert_null(v.version);
        assert_int_equal(cri_decode_version_response(BYTES(0x12, 0x05, 'a'), &v), -EBADMSG);
}

/* StatusResponse{status{RuntimeReady true, NetworkReady false with its reason}, an unknown field, info}. */
static const uint8_t status_golden[] = { 0x0a, 'Y',  0x0a, 0x10, 0x0a, 0x0c, 'R',  'u',  'n', 't',  'i',  'm',  'e',
                                         'R',  'e',  'a',  'd',  'y',  0x10, 0x01, 0x0a, 'C', 0x0a, 0x0c, 'N',  'e',
                                         't',  'w',  'o',  'r',  'k',  'R',  'e',  'a',  'd', 'y',  0x10, 0x00, 0x1a,
                                         0x15, 'N',  'e',  't',  'w',  'o',  'r',  'k',  'P', 'l',  'u',  'g',  'i',
                                         'n',  'N',  'o',  't',  'R',  'e',  'a',  'd',  'y', 0x22, 0x1a, 'c',  'n',
                                         'i',  ' ',  'p',  'l',  'u',  'g',  'i',  'n',  ' ', 'n',  'o',  't',  ' ',
                                         'i',  'n',  'i',  't',  'i',  'a',  'l',  'i',  'z', 'e',  'd',  '8',  0x05,
                                         0x12, 0x06, 0x0a, 0x01, 'k',  0x12, 0x01, 'v' };

static void test_decode_status(void **state) {
        CriRuntimeStatus s = {};

        assert_int_equal(cri_decode_status_response(status_golden, sizeof status_golden, &s), 0);
        assert_true(s.runtime_ready);
        assert_false(s.network_ready);
        assert_string_equal(s.network_reason, "NetworkPluginNotReady");
        assert_string_equal(s.network_message, "cni plugin not initialized");
        assert_null(s.runtime_reason);
        cri_runtime_status_done(&s);
        assert_null(s.network_reason);
        /* No condition at all: neither is ready. */
        assert_int_equal(cri_decode_status_response(NULL, 0, &s), 0);
        assert_false(s.runtime_ready);
        /* A condition cut short. */
        assert_int_equal(cri_decode_status_response(status_golden, 10, &s), -EBADMSG);
}

/* One PodSandbox with every known field, and an unknown field of each wire type around them. */
static const uint8_t list_sandboxes_golden[] = {
        0x0a, 0x48,                                             /* items = 1, 72 bytes */
        0x0a, 0x02, 's', '1',                                   /*   id */
        0x12, 0x0e,                                             /*   metadata */
        0x0a, 0x01, 'a', 0x12, 0x01, 'u', 0x1a, 0x02, 'n', 's', 0x20, 0x02,
        0x38, 0x01,                                             /*   unknown 7 = 1 (varint) */
        0x18, 0x01,                                             /*   state NOTREADY */
        0x20, 0x05,                                             /*   created_at 5 */
        0x2a, 0x06, 0x0a, 0x01, 'k', 0x12, 0x01, 'v',           /*   labels {k: v} */
        0x3a, 0x04, 'r', 'u', 'n', 'c',                         /*   runtime_handler */
        0xc1, 0x06, 1, 2, 3, 4, 5, 6, 7, 8,                     /*   unknown 104 (fixed64) */
        0xc5, 0x06, 1, 2, 3, 4,                                 /*   unknown 104 (fixed32) */
        0xca, 0x06, 0x03, 'x', 'y', 'z',                        /*   unknown 105 (LEN) */
        0xcb, 0x06, 0x08, 0x01, 0x13, 0x14, 0xcc, 0x06,         /*   unknown 105 (group, nested) */
        0x10, 0x01,                                             /*   known number 2, wrong wire type */
        0x18, 0x00,                                             /*   state READY (the last one wins) */
        0xd0, 0x3e, 0x2a,                                       /* unknown 1000 at the top level */
};

static void test_decode_list_sandboxes(void **state) {
        CriSandbox *s = NULL;
        size_t n = 0;

        assert_int_equal(cri_decode_list_sandboxes_response(list_sandboxes_golden, sizeof list_sandboxes_golden, &s, &n),
                         0);
        assert_int_equal(n, 1);
        assert_string_equal(s[0].id, "s1");
        assert_string_equal(s[0].name, "a");
        assert_string_equal(s[0].uid, "u");
        assert_string_equal(s[0].namespace, "ns");
        assert_int_equal(s[0].attempt, 2);
        assert_true(s[0].state == CRI_SANDBOX_READY);
        assert_true(s[0].created_at == 5);
        assert_string_equal(s[0].runtime_handler, "runc");
        cri_sandboxes_free(s, n);
}

static void test_decode_list_sandboxes_golden_encoded(void **state) {
        /* The same message, written with the encoder, field by field: the golden bytes both ways. */
        static const uint8_t unknown_tail[] = { 0xc1, 0x06, 1, 2, 3, 4, 5, 6, 7, 8, 0xc5, 0x06, 1, 2, 3, 4 };
        ProtoWriter w, item, md;

        proto_writer_init(&w);
        proto_writer_init(&item);
        proto_writer_init(&md);
        proto_put_string(&md, 1, "a");
        proto_put_string(&md, 2, "u");
        proto_put_string(&md, 3, "ns");
        proto_put_varint(&md, 4, 2);
        proto_put_varint(&md, 7, 1);
        proto_put_string(&item, 1, "s1");
        proto_put_message(&item, 2, &md);
        proto_put_varint(&item, 3, CRI_SANDBOX_NOTREADY);
        proto_put_varint(&item, 4, 5);
        proto_put_map_entry(&item, 5, "k", "v");
        proto_put_string(&item, 7, "runc");
        assert_int_equal(item.len, 38);
        assert_memory_equal(item.buf, list_sandboxes_golden + 2, 38);
        assert_memory_equal(list_sandboxes_golden + 2 + 38, unknown_tail, sizeof unknown_tail);
        proto_put_message(&w, 1, &item);
        assert_int_equal(w.buf[0], 0x0a);
        proto_writer_done(&w);
        proto_writer_done(&item);
        proto_writer_done(&md);
}

static void test_decode_list_sandboxes_malformed(void **state) {
        uint8_t b[sizeof list_sandboxes_golden];
        CriSandbox *s = NULL;
        size_t n = 0;

        /* Every truncation fails cleanly (or, at a field boundary of the outer message, succeeds). */
        for (size_t len = 0; len < sizeof list_sandboxes_golden; len++) {
                int r = cri_decode_list_sandboxes_response(list_sandboxes_golden, len, &s, &n);

                assert_true(r == 0 || r == -EBADMSG);
                if (r == 0)
                        cri_sandboxes_free(s, n);
        }
        /* A nested length that runs past its parent. */
        memcpy(b, list_sandboxes_golden, sizeof b);
        b[7] = 0x60;
        assert_int_equal(cri_decode_list_sandboxes_response(b, sizeof b, &s, &n), -EBADMSG);
}

static void test_decode_list_too_many(void **state) {
        size_t count = 65536 + 1, size = 2 * count;
        uint8_t *b = malloc(size);
        CriSandbox *s = NULL;
        size_t n = 0;

        assert_non_null(b);
        for (size_t i = 0; i < count; i++) {
                b[2 * i] = 0x0a;
                b[2 * i + 1] = 0x00;
        }
        assert_int_equal(cri_decode_list_sandboxes_response(b, size, &s, &n), -E2BIG);
        assert_int_equal(cri_decode_list_sandboxes_response(b, size - 2, &s, &n), 0);
        assert_int_equal(n, 65536);
        cri_sandboxes_free(s, n);
        free(b);
}

/* Verbose Status: info[key] from the map entries, the last of a key winning; the request is {1: true}. */
static void test_status_info(void **state) {
        ProtoWriter w, resp;
        char *v = NULL;

        proto_writer_init(&w);
        cri_encode_status_request(&w, true);
        assert_int_equal(w.len, 2);
        assert_memory_equal(w.buf, ((const uint8_t[]) { 0x08, 0x01 }), 2);
        proto_writer_done(&w);
        proto_writer_init(&w);
        cri_encode_status_request(&w, false);
        assert_int_equal(w.len, 0);
        proto_writer_done(&w);

        proto_writer_init(&resp);
        proto_put_map_entry(&resp, 2, "cniconfig", "{\"Networks\":[]}");
        proto_put_map_entry(&resp, 2, "other", "x");
        proto_put_map_entry(&resp, 2, "cniconfig", "{\"Networks\":[1]}");
        assert_int_equal(cri_decode_status_info(resp.buf, resp.len, "cniconfig", &v), 0);
        assert_string_equal(v, "{\"Networks\":[1]}");
        free(v);
        assert_int_equal(cri_decode_status_info(resp.buf, resp.len, "missing", &v), 0);
        assert_null(v);
        assert_int_equal(cri_decode_status_info(resp.buf, resp.len - 3, "cniconfig", &v), -EBADMSG);
        proto_writer_done(&resp);
}

static void test_decode_sandbox_status(void **state) {
        CriSandboxStatus st = {};

        /* status {id "s1", state 0, network {ip "10.0.0.2"}, linux {namespaces {options {network NODE}}}},
         * info {"info": "{}"} */
        assert_int_equal(cri_decode_sandbox_status_response(
                                 BYTES(0x0a, 0x1c, 0x0a, 0x02, 's', '1', 0x2a, 0x0a, 0x0a, 0x08, '1', '0', '.', '0', '.',
                                       '0', '.', '2', 0x32, 0x0a, 0x0a, 0x08, 0x12, 0x06, 0x08, 0x02, 0x10, 0x01, 0x18,
                                       0x02, 0x12, 0x0c, 0x0a, 0x04, 'i', 'n', 'f', 'o', 0x12, 0x04, '{', '}', ' ', ' '),
                                 &st),
                         0);
        assert_string_equal(st.id, "s1");
        assert_string_equal(st.ip, "10.0.0.2");
        assert_true(st.network_mode == CRI_NAMESPACE_NODE);
        cri_sandbox_status_done(&st);
        /* No linux status: a pod network (POD is 0, proto3's default). */
        assert_int_equal(cri_decode_sandbox_status_response(BYTES(0x0a, 0x04, 0x0a, 0x02, 's', '2'), &st), 0);
        assert_true(st.network_mode == CRI_NAMESPACE_POD);
        assert_null(st.ip);
        cri_sandbox_status_done(&st);
        assert_int_equal(cri_decode_sandbox_status_response(BYTES(0x0a, 0x06, 0x32, 0x04, 0x0a, 0x02, 0x12, 0x05), &st),
                         -EBADMSG);
}

static void test_decode_list_containers(void **state) {
        CriContainer *c = NULL;
        size_t n = 0;

        /* {id "c1", pod_sandbox_id "s1", metadata {name "app", attempt 1}, image {image "img"},
         *  image_ref "r", state RUNNING, created_at 9}, {id "c2", state EXITED} */
        assert_int_equal(cri_decode_list_containers_response(
                                 BYTES(0x0a, 0x1f, 0x0a, 0x02, 'c', '1', 0x12, 0x02, 's', '1', 0x1a, 0x07, 0x0a, 0x03, 'a',
                                       'p', 'p', 0x10, 0x01, 0x22, 0x05, 0x0a, 0x03, 'i', 'm', 'g', 0x2a, 0x01, 'r', 0x30,
                                       0x01, 0x38, 0x09, 0x0a, 0x06, 0x0a, 0x02, 'c', '2', 0x30, 0x02),
                                 &c, &n),
                         0);
        assert_int_equal(n, 2);
        assert_string_equal(c[0].id, "c1");
        assert_string_equal(c[0].pod_sandbox_id, "s1");
        assert_string_equal(c[0].name, "app");
        assert_int_equal(c[0].attempt, 1);
        assert_string_equal(c[0].image, "img");
        assert_true(c[0].state == CRI_CONTAINER_RUNNING);
        assert_true(c[0].created_at == 9);
        assert_string_equal(c[1].id, "c2");
        assert_null(c[1].pod_sandbox_id);
        assert_true(c[1].state == CRI_CONTAINER_EXITED);
        assert_string_equal(cri_container_state_to_string(c[1].state), "EXITED");
        assert_string_equal(cri_container_state_to_string(77), "UNKNOWN");
        cri_containers_free(c, n);
}

static void test_decode_empty_and_ids(void **state) {
        char *id = NULL;

        assert_int_equal(cri_decode_empty_response(NULL, 0), 0);
        assert_int_equal(cri_decode_empty_response(BYTES(0xd0, 0x3e, 0x01)), 0);
        assert_int_equal(cri_decode_empty_response(BYTES(0x08)), -EBADMSG);
        assert_int_equal(cri_decode_id_response(BYTES(0x0a, 0x03, 'a', 'b', 'c'), &id), 0);
        assert_string_equal(id, "abc");
        free(id);
        id = NULL;
        assert_int_equal(cri_decode_id_response(NULL, 0, &id), -EBADMSG);
        assert_int_equal(cri_decode_id_response(BYTES(0x08, 0x01), &id), -EBADMSG);
        assert_null(id);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_varint_encode),
                cmocka_unit_test(test_status_info),
                cmocka_unit_test(test_varint_malformed),
                cmocka_unit_test(test_tags),
                cmocka_unit_test(test_lengths_never_trusted),
                cmocka_unit_test(test_groups),
                cmocka_unit_test(test_group_depth),
                cmocka_unit_test(test_strings),
                cmocka_unit_test(test_encode_requests),
                cmocka_unit_test(test_encode_pod_config),
                cmocka_unit_test(test_writer_rejects_bad_field),
                cmocka_unit_test(test_decode_version),
                cmocka_unit_test(test_decode_status),
                cmocka_unit_test(test_decode_list_sandboxes),
                cmocka_unit_test(test_decode_list_sandboxes_golden_encoded),
                cmocka_unit_test(test_decode_list_sandboxes_malformed),
                cmocka_unit_test(test_decode_list_too_many),
                cmocka_unit_test(test_decode_sandbox_status),
                cmocka_unit_test(test_decode_list_containers),
                cmocka_unit_test(test_decode_empty_and_ids),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
