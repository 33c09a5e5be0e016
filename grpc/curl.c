/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one libcurl layer (grpc/curl.h): the library's features, the options every easy handle shares,
 * and the one TLS policy. */

/* CURLOPT_PROTOCOLS is deprecated in the headers this builds against, and needed by libcurl < 7.85. */
#define CURL_DISABLE_DEPRECATION 1

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "grpc/curl.h"

CurlFeatures curl_features_for(unsigned version_num, int features) {
        return (CurlFeatures) {
                .protocols_str = version_num >= 0x075500, /* 7.85.0 */
                .ca_blob = version_num >= 0x074d00,       /* 7.77.0 */
                .cert_blob = version_num >= 0x074700,     /* 7.71.0 */
                .http2 = features & CURL_VERSION_HTTP2,
                .unix_sockets = features & CURL_VERSION_UNIX_SOCKETS,
                .ssl = features & CURL_VERSION_SSL,
        };
}

int curl_features_get(CurlFeatures *ret) {
        const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
        const char *e = secure_getenv("NODE_RESET_TEST_CURL_VERSION_NUM");
        unsigned long forced;
        unsigned version;

        if (!v)
                return -EOPNOTSUPP;
        version = v->version_num;
        if (e && (forced = strtoul(e, NULL, 0)) < version)
                version = (unsigned) forced;
        *ret = curl_features_for(version, v->features);
        return 0;
}

int curl_global_once(void) {
        static bool done;

        if (!done) {
                if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                        return -ENOMEM;
                done = true;
        }
        return 0;
}

static CURLcode set_common(CURL *h, const CurlFeatures *f, const CurlTransfer *t) {
        CURLcode cc = CURLE_OK;

        CURL_SETOPT(h, cc, CURLOPT_URL, t->url);
        if (f->protocols_str)
                CURL_SETOPT(h, cc, CURLOPT_PROTOCOLS_STR, "http,https");
        else
                CURL_SETOPT(h, cc, CURLOPT_PROTOCOLS, (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS));
        CURL_SETOPT(h, cc, CURLOPT_NOSIGNAL, 1L);
        CURL_SETOPT(h, cc, CURLOPT_ERRORBUFFER, t->errbuf);
        CURL_SETOPT(h, cc, CURLOPT_USERAGENT, t->user_agent);
        CURL_SETOPT(h, cc, CURLOPT_CONNECTTIMEOUT_MS, (long) t->connect_timeout_ms);
        CURL_SETOPT(h, cc, CURLOPT_TIMEOUT_MS, (long) t->timeout_ms);
        /* The environment's http_proxy is not for a root agent talking to its own control plane. */
        CURL_SETOPT(h, cc, CURLOPT_PROXY, t->proxy ?: "");
        CURL_SETOPT(h, cc, CURLOPT_NOPROXY, t->proxy ? "" : "*");
        if (t->unix_socket)
                CURL_SETOPT(h, cc, t->abstract_socket ? CURLOPT_ABSTRACT_UNIX_SOCKET : CURLOPT_UNIX_SOCKET_PATH,
                            t->unix_socket);
        return cc;
}

int curl_easy_new(const CurlFeatures *f, const CurlTransfer *t, CURL **ret) {
        CLEANUP(curl_easy_cleanupp) CURL *h = curl_easy_init();
        CURLcode cc;

        if (!h)
                return -ENOMEM;
        cc = set_common(h, f, t);
        if (cc != CURLE_OK)
                return curl_code_to_errno(cc);
        *ret = TAKE_PTR(h);
        return 0;
}

static CurlOption option_long(CURLoption o, long v) {
        return (CurlOption) { .option = o, .type = CURL_OPTION_LONG, .number = v };
}

static CurlOption option_string(CURLoption o, const char *v) {
        return (CurlOption) { .option = o, .type = CURL_OPTION_STRING, .string = v };
}

/* A PEM given as a file or as bytes, or nothing: how many options it took (0 or 1). */
static size_t option_pem(CurlOption *ret, CURLoption file_option, CURLoption blob_option, const CurlPem *p) {
        if (p->file) {
                *ret = option_string(file_option, p->file);
                return 1;
        }
        if (!p->data || p->size == 0)
                return 0;
        *ret = (CurlOption) { .option = blob_option,
                              .type = CURL_OPTION_BLOB,
                              .blob = { .data = (void *) p->data, .len = p->size, .flags = CURL_BLOB_COPY } };
        return 1;
}

size_t curl_tls_options(const CurlTls *tls, CurlOption ret[static CURL_TLS_OPTIONS_MAX]) {
        size_t n = 0;

        ret[n++] = option_long(CURLOPT_SSLVERSION, (long) CURL_SSLVERSION_TLSv1_2);
        ret[n++] = option_long(CURLOPT_PROXY_SSLVERSION, (long) CURL_SSLVERSION_TLSv1_2);
        ret[n++] = option_long(CURLOPT_SSL_VERIFYPEER, tls->insecure ? 0L : 1L);
        ret[n++] = option_long(CURLOPT_SSL_VERIFYHOST, tls->insecure ? 0L : 2L);
        if (!tls->insecure && option_pem(&ret[n], CURLOPT_CAINFO, CURLOPT_CAINFO_BLOB, &tls->ca) > 0) {
                n++;
                ret[n++] = option_string(CURLOPT_CAPATH, NULL);
        }
        n += option_pem(&ret[n], CURLOPT_SSLCERT, CURLOPT_SSLCERT_BLOB, &tls->cert);
        n += option_pem(&ret[n], CURLOPT_SSLKEY, CURLOPT_SSLKEY_BLOB, &tls->key);
        return n;
}

CURLcode curl_tls_apply(CURL *h, const CurlTls *tls) {
        CurlOption o[CURL_TLS_OPTIONS_MAX];
        size_t n = curl_tls_options(tls, o);
        CURLcode cc = CURLE_OK;

        for (size_t i = 0; cc == CURLE_OK && i < n; i++)
                switch (o[i].type) {
                case CURL_OPTION_LONG:
                        cc = curl_easy_setopt(h, o[i].option, o[i].number);
                        break;
                case CURL_OPTION_STRING:
                        cc = curl_easy_setopt(h, o[i].option, o[i].string);
                        break;
                case CURL_OPTION_BLOB:
                        cc = curl_easy_setopt(h, o[i].option, &o[i].blob);
                        break;
                }
        return cc;
}

int curl_code_to_errno(CURLcode cc) {
        return cc == CURLE_OK ? 0 : cc == CURLE_OUT_OF_MEMORY ? -ENOMEM : -EINVAL;
}
