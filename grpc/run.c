/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gRPC calls run many at once through the channel's libcurl multi handle: started up to the concurrency,
 * their relays pumped a turn each, their deadlines enforced by the channel itself. */

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grpc/grpc-internal.h"
#include "grpc/grpc.h"
#include "grpc/relay.h"
#include "grpc/transfer.h"
#include "macro.h"
#include "time-util.h"

#define POLL_SLICE_MS 100

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
                        grpc_call_fail(call, -ETIME, "not started: the deadline has passed");
                        return -ETIME;
                }
                deadline = u64_min(deadline, bound);
        }
        r = transfer_setup(t, ch, call, start, deadline);
        if (r < 0) {
                if (t->connect_error < 0)
                        transfer_fail_connect(t);
                else
                        grpc_call_fail(call, r, "cannot set up the call: %s", strerror(-r));
                transfer_done(t);
                return r;
        }
        mc = curl_multi_add_handle(ch->multi, t->easy);
        if (mc != CURLM_OK) {
                grpc_call_fail(call, -ENOMEM, "cannot start the call: %s", curl_multi_strerror(mc));
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
                        drop(ch, t, t->connect_error < 0 ? transfer_fail_connect : transfer_fail_relay);
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
                        drop(ch, &ts[i], transfer_fail_timeout);
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
                        grpc_call_fail(&calls[i], -EIO, "libcurl: %s", curl_multi_strerror(mc));
                if (!ts[i].easy)
                        continue;
                grpc_call_fail(ts[i].call, -EIO, "libcurl: %s", curl_multi_strerror(mc));
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
