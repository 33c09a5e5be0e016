/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gRPC's length-prefixed messages: the parser fed a response body in pieces, and the encoder. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grpc/grpc.h"
#include "macro.h"

void grpc_frame_parser_init(GrpcFrameParser *p, size_t max) {
        *p = (GrpcFrameParser) { .max = max };
}

void grpc_frame_parser_set_stream(GrpcFrameParser *p, int (*on_message)(const uint8_t *msg, size_t n, void *userdata),
                                  void *userdata, uint64_t max_total) {
        p->on_message = on_message;
        p->userdata = userdata;
        p->max_total = max_total;
}

/* A stream's whole message goes to its reader, and the parser waits for the next prefix. */
static int frame_hand_over(GrpcFrameParser *p) {
        int r;

        p->messages++;
        r = p->on_message(p->message, p->message_len, p->userdata);
        p->message = mfree(p->message);
        p->header_len = p->have = p->message_len = 0;
        p->done = false;
        return r;
}

void grpc_frame_parser_done(GrpcFrameParser *p) {
        free(p->message);
        grpc_frame_parser_init(p, p->max);
}

static uint32_t be32(const uint8_t *b) {
        return (uint32_t) b[0] << 24 | (uint32_t) b[1] << 16 | (uint32_t) b[2] << 8 | b[3];
}

/* The 5-byte prefix is complete: judge it before a single byte of the message is allocated. */
static int frame_header_complete(GrpcFrameParser *p) {
        if (p->header[0] == 1)
                return -EPROTONOSUPPORT; /* compressed: never asked for */
        if (p->header[0] != 0)
                return -EBADMSG;
        p->declared = be32(p->header + 1);
        if (p->declared > p->max)
                return -EMSGSIZE;
        if (p->on_message) {
                p->total += p->declared;
                if (p->total > p->max_total)
                        return -EFBIG;
        }
        p->message_len = p->declared;
        p->message = malloc(p->message_len ? p->message_len : 1);
        if (!p->message)
                return -ENOMEM;
        p->done = p->message_len == 0;
        return 0;
}

int grpc_frame_parser_feed(GrpcFrameParser *p, const void *data, size_t n) {
        const uint8_t *d = data;

        while (n > 0) {
                size_t k;

                if (p->done)
                        return -EBADMSG; /* a unary response carries one message */
                if (p->header_len < GRPC_FRAME_HEADER_SIZE) {
                        k = size_min(GRPC_FRAME_HEADER_SIZE - p->header_len, n);
                        memcpy(p->header + p->header_len, d, k);
                        p->header_len += k;
                        d += k;
                        n -= k;
                        if (p->header_len == GRPC_FRAME_HEADER_SIZE) {
                                int r = frame_header_complete(p);
                                if (r < 0)
                                        return r;
                        }
                } else {
                        k = size_min(p->message_len - p->have, n);
                        memcpy(p->message + p->have, d, k);
                        p->have += k;
                        d += k;
                        n -= k;
                        p->done = p->have == p->message_len;
                }
                if (p->done && p->on_message) {
                        int r = frame_hand_over(p);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int grpc_frame_parser_finish(GrpcFrameParser *p, uint8_t **ret, size_t *ret_len) {
        if (p->on_message) {
                *ret = NULL;
                *ret_len = 0;
                return p->header_len == 0 ? 0 : -EBADMSG;
        }
        if (!p->done)
                return p->header_len == 0 ? -ENODATA : -EBADMSG;
        *ret = TAKE_PTR(p->message);
        *ret_len = p->message_len;
        return 0;
}

int grpc_frame_encode(const void *msg, size_t n, uint8_t **ret, size_t *ret_len) {
        uint8_t *b;

        if (n > UINT32_MAX)
                return -EMSGSIZE;
        b = malloc(GRPC_FRAME_HEADER_SIZE + n);
        if (!b)
                return -ENOMEM;
        b[0] = 0;
        b[1] = (uint8_t) (n >> 24);
        b[2] = (uint8_t) (n >> 16);
        b[3] = (uint8_t) (n >> 8);
        b[4] = (uint8_t) n;
        if (n > 0)
                memcpy(b + GRPC_FRAME_HEADER_SIZE, msg, n);
        *ret = b;
        *ret_len = GRPC_FRAME_HEADER_SIZE + n;
        return 0;
}
