/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gRPC unary calls over HTTP/2 prior knowledge on a unix socket, many at once through one libcurl
 * multi handle: the channel, a transfer per call and the run loop. The verdict comes from grpc-status
 * (a trailer, or the only header block of an error; head.c), never from the HTTP status. */

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>
#include <time.h>

#include "grpc/curl.h"
#include "grpc/grpc.h"
#include "grpc/relay.h"
#include "errno-util.h"
#include "macro.h"
#include "time-util.h"

#define GRPC_TIMEOUT_DEFAULT_USEC (10ULL * 1000000ULL)
#define POLL_SLICE_MS 100
#define CURL_BACKSTOP_MS 250

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

void grpc_call_done(GrpcCall *c) {
        free(c->message);
        free(c->response);
        c->message = NULL;
        c->response = NULL;
        c->response_len = 0;
        c->result = 0;
        c->grpc_status = -1;
}

int grpc_channel_new(const char *socket_path, GrpcChannel **ret) {
        CurlFeatures f;
        GrpcChannel *ch;
        int r;

        if (!socket_path || socket_path[0] != '/')
                return -EINVAL;
        if (strlen(socket_path) >= sizeof(((struct sockaddr_un *) NULL)->sun_path))
                return -ENAMETOOLONG;
        r = curl_global_once();
        if (r < 0)
                return r;
        if (curl_features_get(&f) < 0 || !f.http2 || !f.unix_sockets)
                return -EPROTONOSUPPORT;
        ch = calloc(1, sizeof *ch);
        if (!ch)
                return -ENOMEM;
        ch->socket_path = strdup(socket_path);
        ch->multi = curl_multi_init();
        if (!ch->socket_path || !ch->multi) {
                grpc_channel_free(ch);
                return -ENOMEM;
        }
        ch->timeout_usec = GRPC_TIMEOUT_DEFAULT_USEC;
        ch->max_response = GRPC_RESPONSE_MAX_DEFAULT;
        *ret = ch;
        return 0;
}

GrpcChannel *grpc_channel_free(GrpcChannel *ch) {
        if (!ch)
                return NULL;
        if (ch->multi)
                curl_multi_cleanup(ch->multi);
        free(ch->socket_path);
        free(ch->url);
        free(ch->host);
        free(ch->port);
        free(ch->ca_file);
        free(ch->cert_file);
        free(ch->key_file);
        return mfree(ch);
}

/* "https://host:port" or "http://host:port", with nothing after the authority: the call's path is
 * appended to it. */
static bool url_is_base(const char *url) {
        const char *a;

        if (strncmp(url, "https://", 8) == 0)
                a = url + 8;
        else if (strncmp(url, "http://", 7) == 0)
                a = url + 7;
        else
                return false;
        return *a != '\0' && !strpbrk(a, "/?#@ \t\r\n");
}

/* "host:port", "[v6]:port" or "host" (the scheme's port) of a base URL. */
static int url_split(GrpcChannel *ch) {
        const char *a = strstr(ch->url, "://") + 3, *colon;
        bool tls = ch->url[4] == 's';

        if (*a == '[') {
                const char *end = strchr(a, ']');

                if (!end || (end[1] != '\0' && end[1] != ':'))
                        return -EINVAL;
                ch->host = strndup(a + 1, (size_t) (end - a - 1));
                colon = end[1] == ':' ? end + 1 : NULL;
        } else {
                colon = strchr(a, ':');
                ch->host = colon ? strndup(a, (size_t) (colon - a)) : strdup(a);
        }
        ch->port = strdup(colon ? colon + 1 : tls ? "443" : "80");
        if (!ch->host || !ch->port)
                return -ENOMEM;
        return *ch->host && *ch->port ? 0 : -EINVAL;
}

static int strdup_or_null(const char *s, char **ret) {
        if (!s)
                return 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

int grpc_channel_new_url(const char *url, const GrpcTls *tls, GrpcChannel **ret) {
        CurlFeatures f;
        GrpcChannel *ch;
        int r;

        if (!url || !url_is_base(url))
                return -EINVAL;
        r = curl_global_once();
        if (r < 0)
                return r;
        if (curl_features_get(&f) < 0 || !f.http2 || (url[4] == 's' && !f.ssl))
                return -EPROTONOSUPPORT;
        ch = calloc(1, sizeof *ch);
        if (!ch)
                return -ENOMEM;
        ch->url = strdup(url);
        ch->multi = curl_multi_init();
        r = ch->url && ch->multi ? 0 : -ENOMEM;
        if (r >= 0)
                r = url_split(ch);
        if (r >= 0 && tls)
                r = strdup_or_null(tls->ca_file, &ch->ca_file) < 0 ||
                                    strdup_or_null(tls->cert_file, &ch->cert_file) < 0 ||
                                    strdup_or_null(tls->key_file, &ch->key_file) < 0
                            ? -ENOMEM
                            : 0;
        if (r < 0) {
                grpc_channel_free(ch);
                return r;
        }
        ch->timeout_usec = GRPC_TIMEOUT_DEFAULT_USEC;
        ch->max_response = GRPC_RESPONSE_MAX_DEFAULT;
        *ret = ch;
        return 0;
}

const char *grpc_channel_socket_path(const GrpcChannel *ch) {
        return ch->socket_path;
}

const char *grpc_channel_url(const GrpcChannel *ch) {
        return ch->url;
}

void grpc_channel_set_deadline(GrpcChannel *ch, uint64_t monotonic_usec) {
        ch->deadline_usec = monotonic_usec;
}

void grpc_channel_set_timeout(GrpcChannel *ch, uint64_t usec) {
        /* A deadline is not optional: 0 means the default, never "wait forever". */
        ch->timeout_usec = usec ? usec : GRPC_TIMEOUT_DEFAULT_USEC;
}

uint64_t grpc_channel_get_timeout(const GrpcChannel *ch) {
        return ch->timeout_usec;
}

void grpc_channel_set_max_response(GrpcChannel *ch, size_t max) {
        ch->max_response = max;
}

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

static void transfer_done(Transfer *t) {
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

static int transfer_setup(Transfer *t, const GrpcChannel *ch, GrpcCall *call, uint64_t start, uint64_t deadline) {
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

static void call_fail(GrpcCall *c, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void call_fail(GrpcCall *c, int r, const char *fmt, ...) {
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
                return call_fail(c, -EPROTO, "not a gRPC response: content-type '%s' (HTTP %d)", h->content_type,
                                 h->http_status);
        if (h->bad_status)
                return call_fail(c, -EPROTO, "malformed grpc-status (HTTP %d)", h->http_status);
        if (h->http_status != 200)
                return call_fail(c, -EPROTO, "HTTP status %d without grpc-status", h->http_status);
        call_fail(c, -EPROTO, "the response ended without grpc-status");
}

/* Tell a missing socket (no runtime) from one that refuses (runtime dead). */
static void fail_connect(Transfer *t) {
        const char *path = t->ch->socket_path ?: t->ch->url;

        switch (t->connect_error) {
        case -ENOENT:
                return call_fail(t->call, -ENOENT, "%s does not exist", path);
        case -ECONNREFUSED:
                return call_fail(t->call, -ECONNREFUSED, "nothing accepts connections on %s", path);
        case -EAGAIN:
                return call_fail(t->call, -EAGAIN, "the listen queue of %s is full", path);
        }
        call_fail(t->call, t->connect_error, "cannot connect to %s: %s", path, strerror(-t->connect_error));
}

static void fail_timeout(Transfer *t) {
        call_fail(t->call, -ETIMEDOUT, "no answer within %llu ms", (unsigned long long) (t->timeout_usec / 1000));
}

/* The peer broke a bound of the relay: the call is refused however the rest of it would have gone. */
static void fail_relay(Transfer *t) {
        if (t->relay_error == -ENOBUFS)
                return call_fail(t->call, -EPROTO,
                                 "the server sent more than %" PRIu64 " HTTP/2 frames for one call: "
                                 "refused as a flood",
                                 t->relay.max_frames);
        if (t->relay_error == -EMSGSIZE)
                return call_fail(t->call, -EMSGSIZE, "the server sent more than %" PRIu64 " bytes for one call",
                                 t->relay.max_bytes);
        call_fail(t->call, -ECONNRESET, "connection lost: %s", strerror(-t->relay_error));
}

static void fail_callback(Transfer *t) {
        const GrpcFrameParser *p = &t->parser;
        GrpcCall *c = t->call;

        switch (t->callback_error) {
        case -ETIMEDOUT:
                return fail_timeout(t);
        case -EMSGSIZE:
                return call_fail(c, -EMSGSIZE, "response message of %" PRIu32 " bytes is over the limit of %zu bytes",
                                 p->declared, p->max);
        case -EFBIG:
                return call_fail(c, -EMSGSIZE, "the response stream is over the limit of %" PRIu64 " bytes",
                                 p->max_total);
        case -E2BIG:
                return call_fail(c, -EMSGSIZE, "more than %u bytes of response headers", GRPC_RESPONSE_OVERHEAD_MAX);
        case -EPROTONOSUPPORT:
                return call_fail(c, -EPROTONOSUPPORT, "compressed response message (never asked for)");
        case -EBADMSG:
                return call_fail(c, -EBADMSG, "malformed response body (a bad frame flag, or more than one message)");
        case -EPROTO:
                return fail_head(t);
        }
        call_fail(c, t->callback_error, "%s", strerror(-t->callback_error));
}

static void fail_curl(Transfer *t, CURLcode cc) {
        const char *text = t->errbuf[0] ? t->errbuf : curl_easy_strerror(cc);
        GrpcCall *c = t->call;

        switch (cc) {
        case CURLE_OPERATION_TIMEDOUT:
                return fail_timeout(t);
        case CURLE_COULDNT_CONNECT:
                return call_fail(c, -EIO, "cannot reach the call's relay: %s", text);
        case CURLE_COULDNT_RESOLVE_HOST:
                return call_fail(c, -EHOSTUNREACH, "%s", text);
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CIPHER:
        case CURLE_SSL_ISSUER_ERROR:
        case CURLE_SSL_CRL_BADFILE:
                return call_fail(c, -EACCES, "TLS: %s", text);
        case CURLE_OUT_OF_MEMORY:
                return call_fail(c, -ENOMEM, "%s", text);
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
        case CURLE_WEIRD_SERVER_REPLY:
        case CURLE_UNSUPPORTED_PROTOCOL:
                return call_fail(c, -EPROTO, "HTTP/2: %s", text);
        case CURLE_GOT_NOTHING:
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_PARTIAL_FILE:
                return call_fail(c, -ECONNRESET, "connection lost: %s", text);
        default:
                return call_fail(c, -EIO, "%s", text);
        }
}

/* The verdict on a finished transfer, written into its call. */
static void transfer_finish(Transfer *t, CURLcode cc) {
        GrpcResponseHead *h = &t->head;
        GrpcCall *c = t->call;
        int r;

        if (t->relay_error < 0)
                return fail_relay(t);
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
                return call_fail(c, -EBADMSG, "grpc-status 0 without a response message");
        if (r < 0)
                return call_fail(c, -EBADMSG, "the response ended inside a message: %zu of %zu bytes", t->parser.have,
                                 t->parser.message_len);
        c->result = 0;
}

/* A call cut by the channel's deadline ends exactly at it, not a few microseconds before: the caller
 * can tell by the clock that it was the deadline that ended it. */
static int start_next(GrpcChannel *ch, Transfer *t, GrpcCall *call) {
        uint64_t start = now(CLOCK_MONOTONIC), deadline = start + ch->timeout_usec, bound = ch->deadline_usec;
        CURLMcode mc;
        int r;

        if (call->deadline_usec > 0)
                bound = bound > 0 ? u64_min(bound, call->deadline_usec) : call->deadline_usec;
        if (bound > 0) {
                if (bound < start + GRPC_CALL_MIN_USEC) {
                        call->grpc_status = -1;
                        call_fail(call, -ETIME, "not started: the deadline has passed");
                        return -ETIME;
                }
                deadline = u64_min(deadline, bound);
        }
        r = transfer_setup(t, ch, call, start, deadline);
        if (r < 0) {
                if (t->connect_error < 0)
                        fail_connect(t);
                else
                        call_fail(call, r, "cannot set up the call: %s", strerror(-r));
                transfer_done(t);
                return r;
        }
        mc = curl_multi_add_handle(ch->multi, t->easy);
        if (mc != CURLM_OK) {
                call_fail(call, -ENOMEM, "cannot start the call: %s", curl_multi_strerror(mc));
                transfer_done(t);
                return -ENOMEM;
        }
        return 0;
}

/* Collect the finished transfers; returns how many finished. */
static size_t reap(GrpcChannel *ch) {
        CURLMsg *m;
        size_t n = 0;
        int queued;

        while ((m = curl_multi_info_read(ch->multi, &queued))) {
                CURLcode cc = m->data.result;
                CURL *e = m->easy_handle;
                Transfer *t = NULL;

                if (m->msg != CURLMSG_DONE)
                        continue;
                (void) curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **) &t);
                transfer_finish(t, cc);
                (void) curl_multi_remove_handle(ch->multi, e);
                transfer_done(t);
                n++;
        }
        return n;
}

/* Take a call out before its end: it fails with the reason set_reason writes. */
static void drop(GrpcChannel *ch, Transfer *t, void (*set_reason)(Transfer *t)) {
        set_reason(t);
        (void) curl_multi_remove_handle(ch->multi, t->easy);
        transfer_done(t);
}

/* One turn of every call's relay; a call whose peer broke a bound is dropped. Returns how many were. */
static size_t pump(GrpcChannel *ch, Transfer *ts, size_t n) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                Transfer *t = &ts[i];

                if (!t->easy)
                        continue;
                t->relay_error = relay_pump(&t->relay);
                if (t->relay_error < 0) {
                        t->connect_error = t->relay.connect_error;
                        drop(ch, t, t->connect_error < 0 ? fail_connect : fail_relay);
                        k++;
                }
        }
        return k;
}

/* The channel enforces each call's deadline itself rather than trusting CURLOPT_TIMEOUT_MS: libcurl
 * 7.88 with nghttp2 1.52 keeps a transfer going past it while a peer streams empty DATA frames. A
 * call past its deadline is dropped; returns how many were. */
static size_t expire(GrpcChannel *ch, Transfer *ts, size_t n) {
        uint64_t t_now = now(CLOCK_MONOTONIC);
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                if (ts[i].easy && t_now >= ts[i].deadline) {
                        drop(ch, &ts[i], fail_timeout);
                        k++;
                }
        return k;
}

/* Wait for libcurl's sockets and the relays', never past the nearest deadline of a call in flight. */
static void wait_turn(GrpcChannel *ch, const Transfer *ts, size_t n, struct curl_waitfd *w) {
        uint64_t t_now = now(CLOCK_MONOTONIC), wait = POLL_SLICE_MS * 1000ULL;
        unsigned nw = 0;

        for (size_t i = 0; i < n; i++) {
                int fds[2];
                short ev[2];
                size_t k;

                if (!ts[i].easy)
                        continue;
                wait = u64_min(wait, ts[i].deadline > t_now ? ts[i].deadline - t_now : 0);
                k = relay_wait(&ts[i].relay, fds, ev);
                for (size_t j = 0; j < k; j++)
                        w[nw++] = (struct curl_waitfd) { .fd = fds[j], .events = ev[j] };
        }
        (void) curl_multi_poll(ch->multi, w, nw, (int) ((wait + 999) / 1000), NULL);
}

/* A broken multi handle: every call not finished yet fails with the same reason. */
static void abort_all(GrpcChannel *ch, Transfer *ts, GrpcCall *calls, size_t n, size_t next, CURLMcode mc) {
        for (size_t i = 0; i < n; i++) {
                if (i >= next)
                        call_fail(&calls[i], -EIO, "libcurl: %s", curl_multi_strerror(mc));
                if (!ts[i].easy)
                        continue;
                call_fail(ts[i].call, -EIO, "libcurl: %s", curl_multi_strerror(mc));
                (void) curl_multi_remove_handle(ch->multi, ts[i].easy);
                transfer_done(&ts[i]);
        }
}

/* Each turn moves at most one relay chunk per call, so no turn is long, and the clock is read after
 * every one of them. */
int grpc_channel_run(GrpcChannel *ch, GrpcCall *calls, size_t n, unsigned concurrency) {
        cleanup_free Transfer *ts = NULL;
        cleanup_free struct curl_waitfd *w = NULL;
        size_t next = 0, active = 0, finished = 0;

        if (n == 0)
                return 0;
        ts = calloc(n, sizeof(Transfer));
        w = calloc(2 * n, sizeof(struct curl_waitfd));
        if (!ts || !w)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                relay_init(&ts[i].relay, 0, 0);
        (void) curl_multi_setopt(ch->multi, CURLMOPT_PIPELINING, (long) CURLPIPE_NOTHING);
        concurrency = concurrency ? concurrency : 1;
        while (finished < n) {
                CURLMcode mc;
                size_t k;
                int running;

                for (; active < concurrency && next < n; next++)
                        if (start_next(ch, &ts[next], &calls[next]) < 0)
                                finished++;
                        else
                                active++;
                mc = curl_multi_perform(ch->multi, &running);
                if (mc != CURLM_OK) {
                        abort_all(ch, ts, calls, n, next, mc);
                        return -EIO;
                }
                k = reap(ch);
                k += pump(ch, ts, n);
                k += expire(ch, ts, n);
                active -= k;
                finished += k;
                if (active > 0 && k == 0)
                        wait_turn(ch, ts, n, w);
        }
        return 0;
}
