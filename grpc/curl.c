/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one libcurl layer (grpc/curl.h): the library's features and the options every easy handle shares. */

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

int curl_code_to_errno(CURLcode cc) {
        return cc == CURLE_OK ? 0 : cc == CURLE_OUT_OF_MEMORY ? -ENOMEM : -EINVAL;
}
