/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One HTTP(S) request over libcurl with in-memory TLS material: the orphan probe, the report POSTs, the
 * Node object, and Docker's Engine API on its unix socket. */

#include <ctype.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "agent/base/http.h"
#include "alloc-util.h"
#include "agent/base/log.h"
#include "macro.h"
#include "dlib/dlopen.h"
#include "grpc/curl.h"
#include "string-util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(CURLU *, curl_url_cleanup);

static size_t discard(char *ptr, size_t size, size_t nmemb, void *userdata) {
        return size * nmemb;
}

typedef struct Sink {
        HttpResult *result;
        size_t max, allocated;
} Sink;

/* Keep up to max bytes of the response; past that the rest is counted as truncation, not an error,
 * so the status line of an oversized answer still arrives. */
static size_t keep(char *ptr, size_t size, size_t nmemb, void *userdata) {
        Sink *s = userdata;
        HttpResult *r = s->result;
        size_t n = size * nmemb, take = n;

        if (r->body_size + take > s->max) {
                take = s->max - r->body_size;
                r->truncated = true;
        }
        if (take > 0) {
                if (GREEDY_REALLOC(r->body, s->allocated, r->body_size + take + 1) < 0)
                        return 0;
                memcpy(r->body + r->body_size, ptr, take);
                r->body_size += take;
                r->body[r->body_size] = '\0';
        }
        return n;
}

void http_result_done(HttpResult *r) {
        r->body = mfree(r->body);
        r->body_size = 0;
}

/* The PEM files a transfer hands libcurl where it cannot take the bytes: each fd stays open until the
 * transfer is done. */
typedef struct PemFiles {
        int fds[3];
        char paths[3][32];
} PemFiles;

/* Where libcurl cannot take PEM bytes (a *_BLOB option), it gets a file name: a sealed memfd seen
 * through /proc/self/fd, so the key never touches a disk. */
static CURLcode pem_memfd(const HttpBlob *b, int *fd, char path[static 32], CurlPem *ret) {
        *fd = memfd_create("node-reset-pem", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (*fd < 0)
                return CURLE_OUT_OF_MEMORY;
        if (write(*fd, b->data, b->size) != (ssize_t) b->size ||
            fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return CURLE_WRITE_ERROR;
        (void) snprintf(path, 32, "/proc/self/fd/%d", *fd);
        if (access(path, R_OK) < 0) {
                log_debug("%s not readable (is /proc mounted?): %m", path);
                return CURLE_READ_ERROR;
        }
        *ret = (CurlPem) { .file = path };
        return CURLE_OK;
}

static CURLcode pem_of(const HttpBlob *b, bool have_blob, PemFiles *files, size_t i, CurlPem *ret) {
        *ret = (CurlPem) {};
        if (b->size == 0)
                return CURLE_OK;
        if (!have_blob)
                return pem_memfd(b, &files->fds[i], files->paths[i], ret);
        *ret = (CurlPem) { .data = b->data, .size = b->size };
        return CURLE_OK;
}

/* The request's TLS material under the one policy every HTTPS call has (grpc/curl.h). */
static CURLcode set_tls(CURL *h, const HttpRequest *req, const CurlFeatures *f, PemFiles *files) {
        CurlTls tls = { .insecure = req->insecure };
        CURLcode ok;

        if (!f->ca_blob || !f->cert_blob)
                log_debug("libcurl without%s%s: PEM material passed as memfd files",
                          f->ca_blob ? "" : " CURLOPT_CAINFO_BLOB", f->cert_blob ? "" : " CURLOPT_SSLCERT_BLOB");
        ok = pem_of(&req->ca, f->ca_blob, files, 0, &tls.ca);
        if (ok == CURLE_OK)
                ok = pem_of(&req->cert, f->cert_blob, files, 1, &tls.cert);
        /* A PEM with both the certificate and the key (kubelet-client-current.pem) serves as both. */
        if (ok == CURLE_OK)
                ok = pem_of(req->key.size > 0 ? &req->key : &req->cert, f->cert_blob, files, 2, &tls.key);
        return ok == CURLE_OK ? curl_tls_apply(h, &tls) : ok;
}

/* The easy handle with what every transfer sets (grpc/curl.c), for this request. */
static int new_handle(const HttpRequest *req, const CurlFeatures *f, HttpResult *ret, CURL **h) {
        if (!f->protocols_str)
                log_debug("libcurl without CURLOPT_PROTOCOLS_STR: the CURLOPT_PROTOCOLS bitmask");
        return curl_easy_new(f,
                             &(CurlTransfer) {
                                     .url = req->url,
                                     .user_agent = "node-reset/" NODE_RESET_VERSION,
                                     .proxy = req->proxy,
                                     .unix_socket = req->unix_socket,
                                     .connect_timeout_ms = req->connect_timeout_ms,
                                     .timeout_ms = req->timeout_ms,
                                     .errbuf = ret->error,
                             },
                             h);
}

/* What this request sends and where the answer goes. */
static CURLcode set_request(CURL *h, const HttpRequest *req, Sink *sink) {
        CURLcode ok = CURLE_OK;

        if (sink->max > 0) {
                CURL_SETOPT(h, ok, CURLOPT_WRITEFUNCTION, keep);
                CURL_SETOPT(h, ok, CURLOPT_WRITEDATA, sink);
        } else
                CURL_SETOPT(h, ok, CURLOPT_WRITEFUNCTION, discard);
        if (req->body) {
                CURL_SETOPT(h, ok, CURLOPT_POST, 1L);
                CURL_SETOPT(h, ok, CURLOPT_POSTFIELDS, req->body);
                CURL_SETOPT(h, ok, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) req->body_size);
        }
        if (req->method)
                CURL_SETOPT(h, ok, CURLOPT_CUSTOMREQUEST, req->method);
        return ok;
}

static int build_headers(const HttpRequest *req, struct curl_slist **ret) {
        struct curl_slist *l = NULL, *n;

        /* No "Expect: 100-continue" round trip for a body of a few KiB. */
        l = curl_slist_append(NULL, "Expect:");
        if (l && req->body) {
                cleanup_free char *ct = strprintf("Content-Type: %s", req->content_type ?: "application/json");

                n = ct ? curl_slist_append(l, ct) : NULL;
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

static void pem_files_close(PemFiles *files) {
        for (size_t i = 0; i < ELEMENTSOF(files->fds); i++)
                closep(&files->fds[i]);
}

int http_perform(const HttpRequest *req, HttpResult *ret) {
        CLEANUP(curl_slist_free_allp) struct curl_slist *headers = NULL;
        CLEANUP(curl_easy_cleanupp) CURL *h = NULL;
        CLEANUP(pem_files_close) PemFiles files = { .fds = { -EBADF, -EBADF, -EBADF } };
        Sink sink = { .result = ret, .max = req->response_max };
        const char *ct = NULL;
        CurlFeatures f;
        CURLcode ok;
        int r;

        *ret = (HttpResult) {};
        if (curl_features_get(&f) < 0) {
                ret->code = CURLE_FAILED_INIT;
                (void) snprintf(ret->error, sizeof ret->error, "%s", strna(dlib_why(DLIB_LIBCURL)));
                return -EOPNOTSUPP;
        }
        if (build_headers(req, &headers) < 0)
                return -ENOMEM;
        r = new_handle(req, &f, ret, &h);
        if (r < 0)
                return r;
        ok = set_request(h, req, &sink);
        if (ok == CURLE_OK)
                ok = set_tls(h, req, &f, &files);
        if (ok == CURLE_OK)
                ok = curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
        if (ok != CURLE_OK)
                return curl_code_to_errno(ok);
        ret->code = curl_easy_perform(h);
        (void) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &ret->status);
        if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
                (void) snprintf(ret->content_type, sizeof ret->content_type, "%s", ct);
        if (ret->code != CURLE_OK && ret->error[0] == '\0')
                snprintf(ret->error, sizeof ret->error, "%s", curl_easy_strerror(ret->code));
        return 0;
}

/* Without libcurl the same cut by hand: the scheme, the authority without "user:password@", the
 * path; nothing from the first '?' or '#' on. The POSTs then fail saying why, the run goes on. */
static char *redact_by_hand(const char *url) {
        const char *sep = strstr(url, "://"), *auth, *host, *path, *end;

        if (!sep)
                return strdup("(invalid URL)");
        auth = sep + 3;
        path = auth + strcspn(auth, "/?#");
        host = memrchr(auth, '@', path - auth);
        host = host ? host + 1 : auth;
        end = path + strcspn(path, "?#");
        return strprintf("%.*s%.*s%.*s", (int) (auth - url), url, (int) (path - host), host, (int) (end - path), path);
}

char *http_url_redact(const char *url) {
        CLEANUP(curl_url_cleanupp) CURLU *u = NULL;
        char *s = NULL, *copy;

        if (dlib_load(DLIB_LIBCURL) < 0)
                return redact_by_hand(url);
        u = curl_url();
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
