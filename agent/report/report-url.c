/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --report-url: POST the run's status and report to a status store, at the start and at the end. */

#include <time.h>

#include "agent/os/fileio.h"
#include "agent/base/http.h"
#include "agent/base/json.h"
#include "agent/base/log.h"
#include "agent/report/report-url.h"
#include "agent/report/report.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define HEADER_FILE_MAX (64 * 1024)
#define CA_FILE_MAX (1024 * 1024)

static char *strip(char *s) {
        size_t n;

        s += strspn(s, " \t");
        n = strlen(s);
        while (n > 0 && strchr(" \t\r", s[n - 1]))
                s[--n] = '\0';
        return s;
}

int report_url_parse_headers(const char *text, const char *name, char ***headers, char **reterr) {
        cleanup_free char *copy = strdup(text);
        unsigned line = 0;
        char *next;

        if (!copy)
                return -ENOMEM;
        for (char *l = copy; l; l = next) {
                next = strchr(l, '\n');
                if (next)
                        *next++ = '\0';
                line++;
                l = strip(l);
                if (l[0] == '\0' || l[0] == '#')
                        continue;
                /* Never quote the line: it likely holds a token. */
                if (!http_header_is_valid(l))
                        return set_errmsg(reterr, -EINVAL, "%s:%u: not a 'Name: value' header", name, line);
                if (strv_extend(headers, l) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int read_headers(ReportUrl *u, char *const *headers, const char *header_file, char **reterr) {
        cleanup_free char *text = NULL;
        int r;

        for (char *const *h = headers; h && *h; h++) {
                if (!http_header_is_valid(*h))
                        return set_errmsg(reterr, -EINVAL, "--report-header: not a 'Name: value' header");
                if (strv_extend(&u->headers, *h) < 0)
                        return -ENOMEM;
        }
        if (!header_file)
                return 0;
        r = fileio_read_file(header_file, HEADER_FILE_MAX, &text, NULL);
        if (r < 0)
                return set_errmsg(reterr, r, "Cannot read --report-header-file %s: %s", header_file, strerror(-r));
        r = report_url_parse_headers(text, header_file, &u->headers, reterr);
        explicit_bzero(text, strlen(text));
        return r;
}

int report_url_new(const char *url, char *const *headers, const char *header_file, const char *cacert,
                   const char *proxy, ReportUrl **ret, char **reterr) {
        ReportUrl *u = calloc(1, sizeof *u);
        int r = -ENOMEM;

        if (!u || !(u->url = strdup(url)) || !(u->outcome.redacted = http_url_redact(url)))
                goto fail;
        if (!startswith(url, "https://") && !startswith(url, "http://")) {
                r = set_errmsg(reterr, -EINVAL, "--report-url must be an http:// or https:// URL");
                goto fail;
        }
        r = read_headers(u, headers, header_file, reterr);
        if (r >= 0 && cacert) {
                r = fileio_read_file(cacert, CA_FILE_MAX, &u->ca, &u->ca_size);
                if (r < 0)
                        (void) set_errmsg(reterr, r, "Cannot read --report-cacert %s: %s", cacert, strerror(-r));
        }
        if (r < 0)
                goto fail;
        u->proxy = proxy;
        u->backoff_ms = 500;
        *ret = u;
        return 0;
fail:
        report_url_free(u);
        return r;
}

static void post_done(ReportUrlPost *p) {
        p->error = mfree(p->error);
}

ReportUrl *report_url_free(ReportUrl *u) {
        if (!u)
                return NULL;
        free(u->url);
        free(u->outcome.redacted);
        STRV_FOREACH(h, u->headers)
                explicit_bzero(*h, strlen(*h));
        strv_free(u->headers);
        free(u->ca);
        post_done(&u->outcome.start);
        post_done(&u->outcome.final);
        free(u);
        return NULL;
}

/* Worth another try: the network or the server may recover; a 4xx answer will not change. */
static bool retryable(const HttpResult *h) {
        if (h->code == CURLE_OK)
                return h->status == 408 || h->status == 429 || h->status >= 500;
        switch (h->code) {
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
        case CURLE_COULDNT_CONNECT:
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
                return true;
        default:
                return false;
        }
}

static void sleep_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static void post(ReportUrl *u, ReportUrlPost *p, const char *which, const char *body, size_t size) {
        HttpRequest req = {
                .url = u->url,
                .body = body,
                .body_size = size,
                .headers = u->headers,
                .ca = { u->ca, u->ca_size },
                .proxy = u->proxy,
                .connect_timeout_ms = REPORT_URL_CONNECT_TIMEOUT_MS,
                .timeout_ms = REPORT_URL_TIMEOUT_MS,
        };
        unsigned delay = u->backoff_ms;
        HttpResult h = {};
        int r = 0;

        post_done(p);
        *p = (ReportUrlPost) { .attempted = true };
        for (p->attempts = 1;; p->attempts++, delay *= 2) {
                r = http_perform(&req, &h);
                if (r < 0 || (h.code == CURLE_OK && h.status / 100 == 2) || !retryable(&h) ||
                    p->attempts >= REPORT_URL_ATTEMPTS)
                        break;
                sleep_ms(delay);
        }
        p->http_status = h.status;
        p->ok = r >= 0 && h.code == CURLE_OK && h.status / 100 == 2;
        if (p->ok)
                return;
        if (r < 0)
                (void) set_errmsg(&p->error, r, "%s", h.error[0] ? h.error : strerror(-r));
        else if (h.code != CURLE_OK)
                (void) set_errmsg(&p->error, -EIO, "curl error %d: %s", (int) h.code, h.error);
        else
                (void) set_errmsg(&p->error, -EIO, "HTTP %ld", h.status);
        log_warning("Failed to POST the %s status to %s after %u attempt%s, ignoring: %s", which, u->outcome.redacted,
                    p->attempts, p->attempts == 1 ? "" : "s", strempty(p->error));
}

static void format_now(char *buf, size_t size) {
        time_t t = time(NULL);
        struct tm tm;

        if (!gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                snprintf(buf, size, "%lld", (long long) t);
}

/* {"status": ..., "hostname": ..., "time": ..., "report": <report_json or null>} */
static void post_status(ReportUrl *u, ReportUrlPost *p, const char *which, const char *status,
                        const char *report_json) {
        cleanup_free char *body = NULL;
        char now[64];
        size_t size = 0;
        FILE *f;

        format_now(now, sizeof now);
        f = open_memstream(&body, &size);
        if (!f) {
                *p = (ReportUrlPost) { .attempted = true, .error = strdup("out of memory") };
                return;
        }
        fputs("{\"status\":", f);
        json_write_string(f, status);
        fputs(",\"hostname\":", f);
        if (u->hostname)
                json_write_string(f, u->hostname);
        else
                fputs("null", f);
        fputs(",\"time\":", f);
        json_write_string(f, now);
        fprintf(f, ",\"report\":%s}\n", report_json ?: "null");
        if (fclose(f) != 0 || !body) {
                *p = (ReportUrlPost) { .attempted = true, .error = strdup("out of memory") };
                return;
        }
        post(u, p, which, body, size);
}

void report_url_post_start(ReportUrl *u) {
        if (u)
                post_status(u, &u->outcome.start, "start", "deleting", NULL);
}

void report_url_post_final(ReportUrl *u, const ReportInfo *info, const Plan *plan, const Plan *residue) {
        cleanup_free char *json = NULL;
        size_t size = 0;
        Emitter e;
        FILE *f;

        if (!u)
                return;
        if (info) {
                f = open_memstream(&json, &size);
                if (f) {
                        emitter_init(&e, f, OUTPUT_JSON, false);
                        report_emit(&e, info, plan, residue);
                        if (fclose(f) != 0)
                                json = mfree(json);
                }
                /* report_emit ends the object with a newline. */
                if (json && size > 0 && json[size - 1] == '\n')
                        json[size - 1] = '\0';
        }
        post_status(u, &u->outcome.final, "final", info && info->exit_status == 0 ? "deleted" : "failed", json);
}
