/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for what an etcd member sends back: the MemberList/MemberRemove decoder, the
 * Status decoder, the snapshot chunk decoder, and a snapshot stream through the gRPC frame parser in streaming mode,
 * fed in two pieces, on any bytes. Never a crash, never a leak, never an allocation past the bounds. */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "etcd/etcd.h"
#include "grpc/grpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decode_list(const uint8_t *data, size_t size) {
        EtcdMemberList l = {};

        if (etcd_decode_member_list(data, size, &l) < 0)
                return;
        for (size_t i = 0; i < l.n_members; i++)
                (void) etcd_member_list_find(&l, l.members[i].id);
        etcd_member_list_done(&l);
}

static int on_chunk(const uint8_t *msg, size_t n, void *userdata) {
        EtcdSnapshotChunk c;
        uint64_t *total = userdata;
        int r;

        decode_list(msg, n);
        r = etcd_decode_snapshot_chunk(msg, n, &c);
        if (r < 0)
                return r;
        *total += c.blob_len;
        return 0;
}

/* A stream as libcurl would hand it over, split where the first byte says; small bounds so that the
 * message and stream limits are reached often. */
static void parse_stream(const uint8_t *data, size_t size) {
        size_t split = size > 0 ? data[0] % (size + 1) : 0;
        uint64_t total = 0;
        GrpcFrameParser p;
        uint8_t *m = NULL;
        size_t n = 0;

        grpc_frame_parser_init(&p, 4096);
        grpc_frame_parser_set_stream(&p, on_chunk, &total, 16384);
        if (grpc_frame_parser_feed(&p, data, split) >= 0 && grpc_frame_parser_feed(&p, data + split, size - split) >= 0)
                (void) grpc_frame_parser_finish(&p, &m, &n);
        free(m);
        grpc_frame_parser_done(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        EtcdSnapshotChunk c;
        EtcdStatus st;

        decode_list(data, size);
        (void) etcd_decode_status(data, size, &st);
        (void) etcd_decode_snapshot_chunk(data, size, &c);
        parse_stream(data, size);
        return 0;
}
