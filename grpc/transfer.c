/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One gRPC call's transfer: its libcurl handle and the options every call sets, the callbacks that
 * collect its headers, trailers and messages, and the verdict written into its call. The verdict comes
 * from grpc-status (a trailer, or the only header block of an error; head.c), never from the HTTP
 * status. */

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc/curl.h"
#include "grpc/grpc-internal.h"
#include "grpc/grpc.h"
#include "grpc/relay.h"
#include "grpc/transfer.h"
#include "macro.h"
#include "time-util.h"

#define CURL_BACKSTOP_MS 250

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata) {
        Transfer *t = userdata;
        int r;

        /* The headers came first: a body that is not gRPC is never parsed as frames. */
        if (t->head.content_type && !grpc_content_type_ok(t->head.content_type)) {
                t->callback_error = -EPROTO;
                return 0;
        }
        /* Without a relay (TLS) the parser's bounds are the byte cap: a message over max, or a stream
         * over max_total, fails before it is allocated. */
        r = grpc_frame_parser_feed(&t->parser, ptr, size * nmemb);
        if (r < 0) {
                t->callback_error = r;
                return 0; /* anything short of the whole chunk aborts the transfer */
        }
        return size * nmemb;
}

static size_t on_header(char *ptr, size_t size, size_t nitems, void *userdata) {
        Transfer *t = userdata;
        int r;

        t->head_bytes += size * nitems;
        if (t->head_bytes > GRPC_RESPONSE_OVERHEAD_MAX) {
                t->callback_error = -E2BIG;
                return 0;
        }
        r = grpc_response_head_parse(&t->head, ptr, size * nitems);
        if (r < 0) {
                t->callback_error = r;
                return 0;
        }
        return size * nitems;
}

/* libcurl calls this whenever data moves and at least once a second: past the deadline it stops the
 * transfer from inside libcurl, before the channel's own check after the turn. */
static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
        Transfer *t = userdata;

        if (now(CLOCK_MONOTONIC) < t->deadline)
                return 0;
        t->callback_error = -ETIMEDOUT;
        return 1;
}

void transfer_done(Transfer *t) {
        if (t->easy)
                curl_easy_cleanup(t->easy);
        relay_close(&t->relay);
        curl_slist_free_allp(&t->headers);
        free(t->body);
        grpc_frame_parser_done(&t->parser);
        grpc_response_head_done(&t->head);
        *t = (Transfer) {};
}

static int transfer_headers(Transfer *t) {
        static const char *const fixed[] = { "Content-Type: application/grpc", "TE: trailers", "Expect:" };
        char timeout[16], line[48];
        struct curl_slist *l;

        for (size_t i = 0; i < ELEMENTSOF(fixed); i++) {
                l = curl_slist_append(t->headers, fixed[i]);
                if (!l)
                        return -ENOMEM;
                t->headers = l;
        }
        grpc_timeout_format(t->timeout_usec, timeout);
        snprintf(line, sizeof line, "grpc-timeout: %s", timeout);
        l = curl_slist_append(t->headers, line);
        if (!l)
                return -ENOMEM;
        t->headers = l;
        return 0;
}

/* A TCP channel: TLS with ALPN h2 under the one TLS policy (grpc/curl.h: TLS 1.2 at least, the peer's
 * chain and host name verified against the channel's CA alone), or cleartext h2 with prior knowledge. */
static CURLcode transfer_options_tcp(Transfer *t) {
        const GrpcChannel *ch = t->ch;
        CURL *e = t->easy;
        CURLcode cc;

        cc = curl_easy_setopt(
                e, CURLOPT_HTTP_VERSION,
                (long) (ch->url[4] == 's' ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE));
        if (cc == CURLE_OK)
                cc = curl_tls_apply(
                        e, &(CurlTls) { .ca.file = ch->ca_file, .cert.file = ch->cert_file, .key.file = ch->key_file });
        return cc;
}

/* The easy handle with what every transfer sets (grpc/curl.c), for this call. */
static int transfer_handle(Transfer *t, const char *url) {
        /* libcurl's own timeout is only a backstop, a little after the channel's deadline: it runs on
         * CLOCK_MONOTONIC_RAW and may fire a millisecond early by CLOCK_MONOTONIC, and the channel
         * alone decides when a call has run out of time. */
        uint64_t timeout_ms = u64_min((t->timeout_usec + 999) / 1000 + CURL_BACKSTOP_MS, (uint64_t) LONG_MAX);
        CurlFeatures f;

        if (curl_features_get(&f) < 0)
                return -EPROTONOSUPPORT;
        /* libcurl talks to the call's relay (relay.c), which holds the peer's connection; TLS too runs
         * through it, verified against the URL's host. */
        return curl_easy_new(&f,
                             &(CurlTransfer) {
                                     .url = url,
                                     .user_agent = "node-reset-cri",
                                     .unix_socket = t->relay.name,
                                     .abstract_socket = true,
                                     .connect_timeout_ms = timeout_ms,
                                     .timeout_ms = timeout_ms,
                                     .errbuf = t->errbuf,
                             },
                             &t->easy);
}

static int transfer_options(Transfer *t) {
        CURL *e = t->easy;
        CURLcode cc = CURLE_OK;

#define SET(opt, val)       \
        if (cc == CURLE_OK) \
        cc = curl_easy_setopt(e, opt, val)
        if (t->ch->socket_path) {
                SET(CURLOPT_HTTP_VERSION, (long) CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
        } else if (cc == CURLE_OK)
                cc = transfer_options_tcp(t);
        SET(CURLOPT_POST, 1L);
        SET(CURLOPT_POSTFIELDS, t->body);
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) t->body_len);
        SET(CURLOPT_HTTPHEADER, t->headers);
        SET(CURLOPT_WRITEFUNCTION, on_body);
        SET(CURLOPT_WRITEDATA, t);
        SET(CURLOPT_HEADERFUNCTION, on_header);
        SET(CURLOPT_HEADERDATA, t);
        SET(CURLOPT_XFERINFOFUNCTION, on_progress);
        SET(CURLOPT_XFERINFODATA, t);
        SET(CURLOPT_NOPROGRESS, 0L);
        SET(CURLOPT_PRIVATE, t);
        /* One connection per call: the relay meters what the peer sends for this call alone (and
         * libcurl before 8.0.0 fails a second transfer on a prior-knowledge connection, curl#10634). */
        SET(CURLOPT_FRESH_CONNECT, 1L);
        SET(CURLOPT_FORBID_REUSE, 1L);
#undef SET
        return curl_code_to_errno(cc);
}

int transfer_setup(Transfer *t, const GrpcChannel *ch, GrpcCall *call, uint64_t start, uint64_t deadline) {
        cleanup_free char *url = NULL;
        int r;

        uint64_t max_body = call->on_message && call->max_stream ? call->max_stream : ch->max_response;

        *t = (Transfer) { .ch = ch, .call = call, .timeout_usec = deadline - start, .deadline = deadline };
        /* A stream of many messages has as many more frames: one per 1 KiB of it is still far from a flood. */
        relay_init(&t->relay, max_body + GRPC_RESPONSE_OVERHEAD_MAX,
                   GRPC_RESPONSE_FRAMES_MAX + (call->on_message ? max_body / 1024 : 0));
        grpc_frame_parser_init(&t->parser, ch->max_response);
        if (call->on_message)
                grpc_frame_parser_set_stream(&t->parser, call->on_message, call->userdata, max_body);
        grpc_response_head_done(&t->head);
        call->result = 0;
        call->grpc_status = -1;
        if (!call->path || call->path[0] != '/')
                return -EINVAL;
        if (asprintf(&url, "%s%s", ch->url ?: "http://localhost", call->path) < 0) {
                url = NULL; /* asprintf() leaves it undefined */
                return -ENOMEM;
        }
        r = grpc_frame_encode(call->request, call->request_len, &t->body, &t->body_len);
        if (r < 0)
                return r;
        r = transfer_headers(t);
        if (r < 0)
                return r;
        r = ch->socket_path ? relay_open(&t->relay, ch->socket_path)
                            : relay_open_tcp(&t->relay, ch->host, ch->port, ch->url[4] == 's');
        if (r < 0)
                return (t->connect_error = r);
        r = transfer_handle(t, url);
        if (r < 0)
                return r;
        return transfer_options(t);
}

void grpc_call_fail(GrpcCall *c, int r, const char *fmt, ...) {
        va_list ap;

        c->result = r;
        free(c->message);
        va_start(ap, fmt);
        if (vasprintf(&c->message, fmt, ap) < 0)
                c->message = NULL;
        va_end(ap);
}

static void fail_head(Transfer *t) {
        const GrpcResponseHead *h = &t->head;
        GrpcCall *c = t->call;

        if (h->content_type && !grpc_content_type_ok(h->content_type))
                return grpc_call_fail(c, -EPROTO, "not a gRPC response: content-type '%s' (HTTP %d)", h->content_type,
                                      h->http_status);
        if (h->bad_status)
                return grpc_call_fail(c, -EPROTO, "malformed grpc-status (HTTP %d)", h->http_status);
        if (h->http_status != 200)
                return grpc_call_fail(c, -EPROTO, "HTTP status %d without grpc-status", h->http_status);
        grpc_call_fail(c, -EPROTO, "the response ended without grpc-status");
}

/* Tell a missing socket (no runtime) from one that refuses (runtime dead). */
void transfer_fail_connect(Transfer *t) {
        const char *path = t->ch->socket_path ?: t->ch->url;

        switch (t->connect_error) {
        case -ENOENT:
                return grpc_call_fail(t->call, -ENOENT, "%s does not exist", path);
        case -ECONNREFUSED:
                return grpc_call_fail(t->call, -ECONNREFUSED, "nothing accepts connections on %s", path);
        case -EAGAIN:
                return grpc_call_fail(t->call, -EAGAIN, "the listen queue of %s is full", path);
        }
        grpc_call_fail(t->call, t->connect_error, "cannot connect to %s: %s", path, strerror(-t->connect_error));
}

void transfer_fail_timeout(Transfer *t) {
        grpc_call_fail(t->call, -ETIMEDOUT, "no answer within %llu ms", (unsigned long long) (t->timeout_usec / 1000));
}

/* The peer broke a bound of the relay: the call is refused however the rest of it would have gone. */
void transfer_fail_relay(Transfer *t) {
        if (t->relay_error == -ENOBUFS)
                return grpc_call_fail(t->call, -EPROTO,
                                      "the server sent more than %" PRIu64 " HTTP/2 frames for one call: "
                                      "refused as a flood",
                                      t->relay.max_frames);
        if (t->relay_error == -EMSGSIZE)
                return grpc_call_fail(t->call, -EMSGSIZE, "the server sent more than %" PRIu64 " bytes for one call",
                                      t->relay.max_bytes);
        grpc_call_fail(t->call, -ECONNRESET, "connection lost: %s", strerror(-t->relay_error));
}

static void fail_callback(Transfer *t) {
        const GrpcFrameParser *p = &t->parser;
        GrpcCall *c = t->call;

        switch (t->callback_error) {
        case -ETIMEDOUT:
                return transfer_fail_timeout(t);
        case -EMSGSIZE:
                return grpc_call_fail(c, -EMSGSIZE,
                                      "response message of %" PRIu32 " bytes is over the limit of %zu bytes",
                                      p->declared, p->max);
        case -EFBIG:
                return grpc_call_fail(c, -EMSGSIZE, "the response stream is over the limit of %" PRIu64 " bytes",
                                      p->max_total);
        case -E2BIG:
                return grpc_call_fail(c, -EMSGSIZE, "more than %u bytes of response headers",
                                      GRPC_RESPONSE_OVERHEAD_MAX);
        case -EPROTONOSUPPORT:
                return grpc_call_fail(c, -EPROTONOSUPPORT, "compressed response message (never asked for)");
        case -EBADMSG:
                return grpc_call_fail(c, -EBADMSG,
                                      "malformed response body (a bad frame flag, or more than one message)");
        case -EPROTO:
                return fail_head(t);
        }
        grpc_call_fail(c, t->callback_error, "%s", strerror(-t->callback_error));
}

static void fail_curl(Transfer *t, CURLcode cc) {
        const char *text = t->errbuf[0] ? t->errbuf : curl_easy_strerror(cc);
        GrpcCall *c = t->call;

        switch (cc) {
        case CURLE_OPERATION_TIMEDOUT:
                return transfer_fail_timeout(t);
        case CURLE_COULDNT_CONNECT:
                return grpc_call_fail(c, -EIO, "cannot reach the call's relay: %s", text);
        case CURLE_COULDNT_RESOLVE_HOST:
                return grpc_call_fail(c, -EHOSTUNREACH, "%s", text);
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CIPHER:
        case CURLE_SSL_ISSUER_ERROR:
        case CURLE_SSL_CRL_BADFILE:
                return grpc_call_fail(c, -EACCES, "TLS: %s", text);
        case CURLE_OUT_OF_MEMORY:
                return grpc_call_fail(c, -ENOMEM, "%s", text);
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
        case CURLE_WEIRD_SERVER_REPLY:
        case CURLE_UNSUPPORTED_PROTOCOL:
                return grpc_call_fail(c, -EPROTO, "HTTP/2: %s", text);
        case CURLE_GOT_NOTHING:
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_PARTIAL_FILE:
                return grpc_call_fail(c, -ECONNRESET, "connection lost: %s", text);
        default:
                return grpc_call_fail(c, -EIO, "%s", text);
        }
}

/* The verdict on a finished transfer, written into its call. */
void transfer_finish(Transfer *t, CURLcode cc) {
        GrpcResponseHead *h = &t->head;
        GrpcCall *c = t->call;
        int r;

        if (t->relay_error < 0)
                return transfer_fail_relay(t);
        if (t->callback_error < 0)
                return fail_callback(t);
        if (cc != CURLE_OK)
                return fail_curl(t, cc);
        if (h->grpc_status < 0 || h->bad_status || (h->content_type && !grpc_content_type_ok(h->content_type)))
                return fail_head(t);
        c->grpc_status = h->grpc_status;
        if (h->grpc_status != GRPC_OK) {
                c->result = grpc_status_to_errno(h->grpc_status);
                c->message =
                        h->grpc_message ? TAKE_PTR(h->grpc_message) : strdup(grpc_status_to_string(h->grpc_status));
                return;
        }
        r = grpc_frame_parser_finish(&t->parser, &c->response, &c->response_len);
        if (r == -ENODATA)
                return grpc_call_fail(c, -EBADMSG, "grpc-status 0 without a response message");
        if (r < 0)
                return grpc_call_fail(c, -EBADMSG, "the response ended inside a message: %zu of %zu bytes",
                                      t->parser.have, t->parser.message_len);
        c->result = 0;
}
