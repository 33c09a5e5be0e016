/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One HTTP(S) request over libcurl with in-memory TLS material: the orphan probe and the report POSTs. */

#include <ctype.h>

#include "agent/http.h"
#include "macro.h"
#include "string-util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(CURL *, curl_easy_cleanup);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct curl_slist *, curl_slist_free_all);
DEFINE_TRIVIAL_CLEANUP_FUNC(CURLU *, curl_url_cleanup);

static size_t discard(char *ptr, size_t size, size_t nmemb, void *userdata) {
        return size * nmemb;
}

/* Collect the first failure of a run of curl_easy_setopt() calls. */
#define SETOPT(h, ok, opt, val)                                              \
        do {                                                                 \
                if ((ok) == CURLE_OK)                                        \
                        (ok) = curl_easy_setopt((h), (opt), (val));          \
        } while (0)

static CURLcode set_blob(CURL *h, CURLoption opt, const HttpBlob *b) {
        struct curl_blob blob = {
                .data = (void *) b->data,
                .len = b->size,
                .flags = CURL_BLOB_COPY,
        };

        if (b->size == 0)
                return CURLE_OK;
        return curl_easy_setopt(h, opt, &blob);
}

static CURLcode set_tls(CURL *h, const HttpRequest *req) {
        CURLcode ok = CURLE_OK;

        if (ok == CURLE_OK)
                ok = set_blob(h, CURLOPT_CAINFO_BLOB, &req->ca);
        if (ok == CURLE_OK)
                ok = set_blob(h, CURLOPT_SSLCERT_BLOB, &req->cert);
        /* A PEM with both the certificate and the key (kubelet-client-current.pem) serves as both. */
        if (ok == CURLE_OK)
                ok = set_blob(h, CURLOPT_SSLKEY_BLOB, req->key.size > 0 ? &req->key : &req->cert);
        if (req->insecure) {
                SETOPT(h, ok, CURLOPT_SSL_VERIFYPEER, 0L);
                SETOPT(h, ok, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        return ok;
}

static CURLcode set_transport(CURL *h, const HttpRequest *req, HttpResult *ret) {
        CURLcode ok = CURLE_OK;

        SETOPT(h, ok, CURLOPT_URL, req->url);
        SETOPT(h, ok, CURLOPT_PROTOCOLS_STR, "http,https");
        SETOPT(h, ok, CURLOPT_NOSIGNAL, 1L);
        SETOPT(h, ok, CURLOPT_ERRORBUFFER, ret->error);
        SETOPT(h, ok, CURLOPT_USERAGENT, "node-reset/" NODE_RESET_VERSION);
        SETOPT(h, ok, CURLOPT_CONNECTTIMEOUT_MS, (long) req->connect_timeout_ms);
        SETOPT(h, ok, CURLOPT_TIMEOUT_MS, (long) req->timeout_ms);
        SETOPT(h, ok, CURLOPT_WRITEFUNCTION, discard);
        /* The environment's http_proxy is not for a root agent talking to its own control plane. */
        SETOPT(h, ok, CURLOPT_PROXY, req->proxy ?: "");
        SETOPT(h, ok, CURLOPT_NOPROXY, req->proxy ? "" : "*");
        if (req->body) {
                SETOPT(h, ok, CURLOPT_POST, 1L);
                SETOPT(h, ok, CURLOPT_POSTFIELDS, req->body);
                SETOPT(h, ok, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) req->body_size);
        }
        return ok;
}

static int build_headers(const HttpRequest *req, struct curl_slist **ret) {
        struct curl_slist *l = NULL, *n;

        /* No "Expect: 100-continue" round trip for a body of a few KiB. */
        l = curl_slist_append(NULL, "Expect:");
        if (l && req->body) {
                n = curl_slist_append(l, "Content-Type: application/json");
                if (!n)
                        goto oom;
                l = n;
        }
        for (char *const *h = req->headers; l && h && *h; h++) {
                n = curl_slist_append(l, *h);
                if (!n)
                        goto oom;
                l = n;
        }
        if (!l)
                return -ENOMEM;
        *ret = l;
        return 0;
oom:
        curl_slist_free_all(l);
        return -ENOMEM;
}

int http_perform(const HttpRequest *req, HttpResult *ret) {
        CLEANUP(curl_slist_free_allp) struct curl_slist *headers = NULL;
        CLEANUP(curl_easy_cleanupp) CURL *h = NULL;
        CURLcode ok;

        *ret = (HttpResult) {};
        h = curl_easy_init();
        if (!h || build_headers(req, &headers) < 0)
                return -ENOMEM;
        ok = set_transport(h, req, ret);
        if (ok == CURLE_OK)
                ok = set_tls(h, req);
        if (ok == CURLE_OK)
                ok = curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
        if (ok != CURLE_OK)
                return ok == CURLE_OUT_OF_MEMORY ? -ENOMEM : -EINVAL;
        ret->code = curl_easy_perform(h);
        (void) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &ret->status);
        if (ret->code != CURLE_OK && ret->error[0] == '\0')
                snprintf(ret->error, sizeof ret->error, "%s", curl_easy_strerror(ret->code));
        return 0;
}

char *http_url_redact(const char *url) {
        CLEANUP(curl_url_cleanupp) CURLU *u = curl_url();
        char *s = NULL, *copy;

        if (!u)
                return NULL;
        if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK)
                return strdup("(invalid URL)");
        (void) curl_url_set(u, CURLUPART_USER, NULL, 0);
        (void) curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
        (void) curl_url_set(u, CURLUPART_QUERY, NULL, 0);
        (void) curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
        if (curl_url_get(u, CURLUPART_URL, &s, 0) != CURLUE_OK)
                return strdup("(invalid URL)");
        /* Hand back memory that free() may release, not curl's. */
        copy = strdup(s);
        curl_free(s);
        return copy;
}

/* RFC 9110 token characters. */
static bool is_tchar(char c) {
        return isalnum((unsigned char) c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

bool http_header_is_valid(const char *h) {
        const char *p = h;

        while (is_tchar(*p))
                p++;
        if (p == h || *p != ':')
                return false;
        return !strpbrk(p, "\r\n");
}
