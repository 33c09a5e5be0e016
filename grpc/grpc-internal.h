/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The channel's inside, shared by grpc.c (the channel), transfer.c (one call's transfer) and run.c (the
 * run loop). */
#pragma once

#include <curl/curl.h>
#include <stddef.h>
#include <stdint.h>

#include "grpc/grpc.h"

#define GRPC_TIMEOUT_DEFAULT_USEC (10ULL * 1000000ULL)

struct GrpcChannel {
        char *socket_path; /* a unix socket channel, or */
        char *url;         /* a TCP one: "https://host:port", "http://host:port" */
        char *host, *port; /* of url: what the call's relay connects to */
        char *ca_file, *cert_file, *key_file;
        uint64_t timeout_usec;
        uint64_t deadline_usec; /* CLOCK_MONOTONIC; 0 = none */
        size_t max_response;
        CURLM *multi;
};
