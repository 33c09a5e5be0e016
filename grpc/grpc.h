/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gRPC unary calls over HTTP/2 on a unix socket, with libcurl: the 5-byte message framing, the
 * response headers and trailers, deadlines it enforces itself, bounds on what a peer may send, and
 * many calls at once. Shared by the CRI client (cri/) and the etcd client (etcd/). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* kubelet's own bound on a CRI message (16 MiB). */
#define GRPC_RESPONSE_MAX_DEFAULT (16U << 20)
#define GRPC_FRAME_HEADER_SIZE 5
/* Bounds on what a runtime may send for one call, whatever it sends: the message's bound plus this
 * for headers, trailers, frame headers and control frames; and HTTP/2 frames of any kind, empty
 * ones included. A real runtime sends a handful of frames and its message in frames of up to 16 KiB:
 * about 1024 of them for a 16 MiB message. */
#define GRPC_RESPONSE_OVERHEAD_MAX (1U << 20)
#define GRPC_RESPONSE_FRAMES_MAX (64U << 10)
#define GRPC_MESSAGE_TEXT_MAX 4096

/* gRPC status codes (grpc/doc/statuscodes.md). */
enum {
        GRPC_OK = 0,
        GRPC_CANCELLED = 1,
        GRPC_UNKNOWN = 2,
        GRPC_INVALID_ARGUMENT = 3,
        GRPC_DEADLINE_EXCEEDED = 4,
        GRPC_NOT_FOUND = 5,
        GRPC_ALREADY_EXISTS = 6,
        GRPC_PERMISSION_DENIED = 7,
        GRPC_RESOURCE_EXHAUSTED = 8,
        GRPC_FAILED_PRECONDITION = 9,
        GRPC_ABORTED = 10,
        GRPC_OUT_OF_RANGE = 11,
        GRPC_UNIMPLEMENTED = 12,
        GRPC_INTERNAL = 13,
        GRPC_UNAVAILABLE = 14,
        GRPC_DATA_LOSS = 15,
        GRPC_UNAUTHENTICATED = 16,
        _GRPC_STATUS_MAX,
};

/* A unary response body: exactly one length-prefixed message, fed in pieces as they arrive. */
typedef struct GrpcFrameParser {
        size_t max; /* largest message accepted */
        /* A streaming response: each whole message goes to on_message (which returns 0 or -errno) and
         * is freed; any number of them, max_total bytes of messages in all. */
        int (*on_message)(const uint8_t *msg, size_t n, void *userdata);
        void *userdata;
        uint64_t total, max_total;
        uint64_t messages;
        uint8_t header[GRPC_FRAME_HEADER_SIZE];
        size_t header_len;
        uint8_t *message;
        size_t message_len; /* from the length prefix */
        size_t have;
        uint32_t declared; /* the length prefix as sent, for messages */
        bool done;         /* one whole message read */
} GrpcFrameParser;

void grpc_frame_parser_init(GrpcFrameParser *p, size_t max);
void grpc_frame_parser_set_stream(GrpcFrameParser *p, int (*on_message)(const uint8_t *msg, size_t n, void *userdata),
                                  void *userdata, uint64_t max_total);
void grpc_frame_parser_done(GrpcFrameParser *p);
/* -EMSGSIZE when the length prefix is over max (checked before any allocation), -EPROTONOSUPPORT for
 * a compressed message, -EBADMSG for bytes after the message or a bad flag. */
int grpc_frame_parser_feed(GrpcFrameParser *p, const void *data, size_t n);
/* The message (owned by the caller), -EBADMSG when the body ended inside a frame, -ENODATA when no
 * message came. A stream: 0 and no message when it ended between messages (none at all is fine). */
int grpc_frame_parser_finish(GrpcFrameParser *p, uint8_t **ret, size_t *ret_len);

/* Frame a message for a request body: flag 0 and the big-endian length. */
int grpc_frame_encode(const void *msg, size_t n, uint8_t **ret, size_t *ret_len);

/* What the response headers and trailers said. */
typedef struct GrpcResponseHead {
        int http_status;    /* 0 until the status line */
        int grpc_status;    /* -1 until grpc-status */
        char *grpc_message; /* percent-decoded */
        char *content_type;
        bool bad_status; /* a grpc-status that is not a number 0-99 */
} GrpcResponseHead;

void grpc_response_head_done(GrpcResponseHead *h);
/* One header or trailer line as libcurl hands it ("HTTP/2 200\r\n", "grpc-status: 0\r\n", "\r\n").
 * Returns 0, or -ENOMEM. Lines it does not know are ignored. */
int grpc_response_head_parse(GrpcResponseHead *h, const char *line, size_t n);
bool grpc_content_type_ok(const char *content_type);

/* grpc-message is percent-encoded (RFC 3986 style, any byte); invalid escapes are kept as is. */
int grpc_percent_decode(const char *s, size_t n, char **ret);
/* "1234m": the grpc-timeout header value, at most 8 digits with the finest unit that fits. */
void grpc_timeout_format(uint64_t usec, char buf[static 16]);
const char *grpc_status_to_string(int status);
int grpc_status_to_errno(int status);

typedef struct GrpcChannel GrpcChannel;

/* One unary call. The caller fills the request side; grpc_channel_run() fills the rest. */
typedef struct GrpcCall {
        const char *path;       /* "/runtime.v1.RuntimeService/Version" */
        const uint8_t *request; /* the protobuf message, unframed */
        size_t request_len;
        /* A server-streaming call when set: every response message is handed over as it comes (none
         * is kept in response), at most max_stream bytes of messages in all (0: the channel's bound on
         * one message); on_message's error fails the call. */
        int (*on_message)(const uint8_t *msg, size_t n, void *userdata);
        void *userdata;
        uint64_t max_stream;
        /* This call's own deadline (CLOCK_MONOTONIC microseconds; 0 = none): the nearer of it and the
         * channel's bounds the call, as the channel's alone does (grpc_channel_set_deadline()). */
        uint64_t deadline_usec;

        int result;        /* 0, or -errno */
        int grpc_status;   /* -1 when the server never said */
        char *message;     /* grpc-message, or what went wrong on the way */
        uint8_t *response; /* the protobuf message, unframed, on success */
        size_t response_len;
} GrpcCall;

void grpc_call_done(GrpcCall *c);

/* socket_path: an absolute path. -EPROTONOSUPPORT when libcurl lacks HTTP/2 or unix sockets. */
int grpc_channel_new(const char *socket_path, GrpcChannel **ret);

/* Client TLS: files read by libcurl (PEM), under the one TLS policy (grpc/curl.h). A ca_file is the
 * only trust anchor; NULL: the system's trust store. */
typedef struct GrpcTls {
        const char *ca_file;
        const char *cert_file;
        const char *key_file;
} GrpcTls;

/* A channel to "https://host:port" (TLS with ALPN h2; tls may be NULL for a server the system's CAs
 * vouch for) or "http://host:port" (HTTP/2 prior knowledge), over TCP to a numeric address (or
 * "localhost": no name is looked up, that would block past any deadline). Each call's TCP connection
 * goes through its own relay as a unix socket's does, and libcurl runs TLS over it. Inside TLS the
 * relay cannot count HTTP/2 frames; what bounds such a peer: the relay hands libcurl one chunk per
 * turn (a flood of empty or unknown frames cannot keep libcurl inside one call, which libcurl 7.88
 * does on a direct connection: measured 28 s past a 3 s deadline), the call's deadline checked after
 * every turn and in the progress callback, the relay's byte meter, the header bytes counted in the
 * header callback (GRPC_RESPONSE_OVERHEAD_MAX) and the parser's message and stream bounds.
 * -EINVAL for another scheme or a path in url. */
int grpc_channel_new_url(const char *url, const GrpcTls *tls, GrpcChannel **ret);
/* The url of a URL channel, NULL for a unix socket one. */
const char *grpc_channel_url(const GrpcChannel *ch);
GrpcChannel *grpc_channel_free(GrpcChannel *ch);
const char *grpc_channel_socket_path(const GrpcChannel *ch);
void grpc_channel_set_timeout(GrpcChannel *ch, uint64_t usec);
/* A deadline for every call from now on (CLOCK_MONOTONIC microseconds; 0 = none): a call's timeout
 * is cut to what is left, and a call left less than GRPC_CALL_MIN_USEC is not started and fails
 * with -ETIME. */
#define GRPC_CALL_MIN_USEC (100 * 1000ULL)
void grpc_channel_set_deadline(GrpcChannel *ch, uint64_t monotonic_usec);
uint64_t grpc_channel_get_timeout(const GrpcChannel *ch);
void grpc_channel_set_max_response(GrpcChannel *ch, size_t max);

/* Run the calls, at most concurrency at a time, each on a connection of its own and with the
 * channel's timeout as its deadline (cut to the channel's deadline, when one is set). The deadline is
 * enforced here on the monotonic clock whatever the peer sends: a call past it fails with -ETIMEDOUT
 * ("no answer within N ms"). A peer that breaks the bounds above fails the call with -EPROTO or
 * -EMSGSIZE. Every call gets its own result; the return value is -ENOMEM or another failure to run
 * at all. */
int grpc_channel_run(GrpcChannel *ch, GrpcCall *calls, size_t n, unsigned concurrency);
