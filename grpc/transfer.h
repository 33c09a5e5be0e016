/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One gRPC call's transfer (transfer.c), for the run loop (run.c). */
#pragma once

#include <curl/curl.h>
#include <stdint.h>

#include "grpc/grpc.h"
#include "grpc/relay.h"

/* One call in flight: the libcurl handle and what its callbacks collect. */
typedef struct Transfer {
        const GrpcChannel *ch;
        GrpcCall *call;
        uint64_t timeout_usec; /* the channel's, or less when its deadline is nearer */
        uint64_t deadline;     /* CLOCK_MONOTONIC: start + timeout_usec; the channel enforces it */
        Relay relay;           /* the call's own connection, metered */
        int relay_error;       /* a bound the peer broke */
        int connect_error;     /* why the runtime's socket could not be reached */
        uint64_t head_bytes;   /* header and trailer lines, counted where no relay meters */
        CURL *easy;
        struct curl_slist *headers;
        uint8_t *body;
        size_t body_len;
        GrpcFrameParser parser;
        GrpcResponseHead head;
        int callback_error; /* set when a callback aborted the transfer */
        char errbuf[CURL_ERROR_SIZE];
} Transfer;

/* The call's transfer, ready for the multi handle: its relay opened to the peer (t->connect_error
 * when the peer cannot be reached), the message framed, the easy handle set up. -errno. */
int transfer_setup(Transfer *t, const GrpcChannel *ch, GrpcCall *call, uint64_t start, uint64_t deadline);
void transfer_done(Transfer *t);
/* The verdict on a finished transfer (cc: libcurl's result), written into its call. */
void transfer_finish(Transfer *t, CURLcode cc);

/* The call fails with r and the words fmt says. */
void grpc_call_fail(GrpcCall *c, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The call's peer could not be reached: a missing socket (no runtime) told from one that refuses
 * (runtime dead). */
void transfer_fail_connect(Transfer *t);
/* The call ran into its deadline. */
void transfer_fail_timeout(Transfer *t);
/* The peer broke a bound of the relay: the call is refused however the rest of it would have gone. */
void transfer_fail_relay(Transfer *t);
