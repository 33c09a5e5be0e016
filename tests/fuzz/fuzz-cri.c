/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for what a CRI runtime sends back: every response decoder, the gRPC frame parser
 * fed in two pieces, and the header/trailer parser, on any bytes. Never a crash, never a leak, never
 * an allocation past the bounds. */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "grpc/grpc.h"
#include "cri/messages.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decode_all(const uint8_t *data, size_t size) {
        CriVersion v = {};
        CriSandboxStatus st = {};
        CriSandbox *s = NULL;
        CriContainer *c = NULL;
        size_t n = 0;

        if (cri_decode_version_response(data, size, &v) >= 0)
                cri_version_done(&v);
        if (cri_decode_list_sandboxes_response(data, size, &s, &n) >= 0)
                cri_sandboxes_free(s, n);
        if (cri_decode_sandbox_status_response(data, size, &st) >= 0)
                cri_sandbox_status_done(&st);
        if (cri_decode_list_containers_response(data, size, &c, &n) >= 0)
                cri_containers_free(c, n);
        (void) cri_decode_empty_response(data, size);
}

/* The body as libcurl would hand it over, split where the first byte says; the bound is small so
 * that the length check is reached often. */
static void parse_frames(const uint8_t *data, size_t size) {
        size_t split = size > 0 ? data[0] % (size + 1) : 0;
        GrpcFrameParser p;
        uint8_t *m = NULL;
        size_t n = 0;

        grpc_frame_parser_init(&p, 4096);
        if (grpc_frame_parser_feed(&p, data, split) >= 0 && grpc_frame_parser_feed(&p, data + split, size - split) >= 0 &&
            grpc_frame_parser_finish(&p, &m, &n) >= 0) {
                decode_all(m, n);
                free(m);
        }
        grpc_frame_parser_done(&p);
}

/* Header lines, split at newlines. */
static void parse_head(const uint8_t *data, size_t size) {
        GrpcResponseHead h = { .grpc_status = -1 };
        size_t start = 0;

        for (size_t i = 0; i <= size; i++)
                if (i == size || data[i] == '\n') {
                        (void) grpc_response_head_parse(&h, (const char *) data + start, i - start);
                        start = i + 1;
                }
        if (h.content_type)
                (void) grpc_content_type_ok(h.content_type);
        grpc_response_head_done(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        decode_all(data, size);
        parse_frames(data, size);
        parse_head(data, size);
        return 0;
}
