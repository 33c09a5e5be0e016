/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one libcurl layer: global init, what the loaded libcurl can be asked, an easy handle with the
 * options every transfer shares, the one TLS policy, and CURLcode to errno; for grpc/ and the agent's
 * HTTP client. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(CURL *, curl_easy_cleanup);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct curl_slist *, curl_slist_free_all);

/* Collect the first failure of a run of curl_easy_setopt() calls. */
#define CURL_SETOPT(h, cc, opt, val)                                \
        do {                                                        \
                if ((cc) == CURLE_OK)                               \
                        (cc) = curl_easy_setopt((h), (opt), (val)); \
        } while (0)

/* What the loaded libcurl can be asked, by its version_num: CURLOPT_PROTOCOLS_STR (7.85, else the
 * CURLOPT_PROTOCOLS bitmask), CURLOPT_CAINFO_BLOB (7.77) and CURLOPT_SSLCERT_BLOB/SSLKEY_BLOB
 * (7.71; else PEM goes to libcurl as a file); and what it was built with (HTTP/2, unix sockets, TLS). */
typedef struct CurlFeatures {
        bool protocols_str;
        bool ca_blob;
        bool cert_blob;
        bool http2;
        bool unix_sockets;
        bool ssl;
} CurlFeatures;

/* features: curl_version_info_data.features (CURL_VERSION_HTTP2, ...). */
CurlFeatures curl_features_for(unsigned version_num, int features);

/* The loaded libcurl's features, or -EOPNOTSUPP without one. NODE_RESET_TEST_CURL_VERSION_NUM
 * (tests only) pretends an older version, so each fallback runs against the real library; it can
 * only take features away, never claim one the library lacks. */
int curl_features_get(CurlFeatures *ret);

/* curl_global_init(), once per process; -ENOMEM when it fails. */
int curl_global_once(void);

/* What every transfer sets. */
typedef struct CurlTransfer {
        const char *url;
        const char *user_agent;
        const char *proxy;       /* NULL: no proxy at all, whatever the environment says */
        const char *unix_socket; /* connect to this socket instead of the URL's host; NULL: TCP */
        bool abstract_socket;    /* unix_socket is an abstract name (grpc's relays) */
        uint64_t connect_timeout_ms, timeout_ms;
        char *errbuf; /* CURL_ERROR_SIZE bytes: libcurl's own words */
} CurlTransfer;

/* A new easy handle, asked for t and for what is the same everywhere: the http and https
 * protocols only, no signals. -ENOMEM, -EINVAL (an option the library refused). */
int curl_easy_new(const CurlFeatures *f, const CurlTransfer *t, CURL **ret);

/* PEM material for libcurl: a file it reads, or the bytes themselves (the *_BLOB options, which the
 * caller asks for only when curl_features_get() says the library has them). Neither: not given. */
typedef struct CurlPem {
        const char *file;
        const void *data;
        size_t size;
} CurlPem;

/* What one transfer trusts and presents. */
typedef struct CurlTls {
        CurlPem ca;        /* given: these trust anchors alone; not given: the system's store */
        CurlPem cert, key; /* the client certificate and its key */
        bool insecure;     /* no verification of the peer: only a kubeconfig's insecure-skip-tls-verify */
} CurlTls;

typedef enum CurlOptionType {
        CURL_OPTION_LONG,
        CURL_OPTION_STRING, /* NULL unsets the option */
        CURL_OPTION_BLOB,   /* copied by libcurl */
} CurlOptionType;

typedef struct CurlOption {
        CURLoption option;
        CurlOptionType type;
        long number;
        const char *string;
        struct curl_blob blob;
} CurlOption;

/* The one TLS policy of every HTTPS call (the Kubernetes API clients, orphan-check, --report-url,
 * etcd), as the options it sets, in order:
 *   - at least TLS 1.2, to the server and to an HTTPS proxy alike (TLS 1.0 and 1.1 are refused
 *     whatever the TLS library's own configuration would let through);
 *   - the peer's chain and host name verified (VERIFYPEER 1, VERIFYHOST 2), both off only when
 *     tls->insecure, as client-go's InsecureSkipVerify (which refuses a CA beside it);
 *   - with a CA given, that CA alone: CAINFO (or CAINFO_BLOB) and CAPATH unset, so the system's
 *     hashed directory (libcurl's build default, /etc/ssl/certs on Debian) is not trusted beside it,
 *     as client-go's and etcd's clientv3's RootCAs; without one, the system's store;
 *   - the client certificate and key, when given.
 * Returns how many of ret it filled. */
#define CURL_TLS_OPTIONS_MAX 8U
size_t curl_tls_options(const CurlTls *tls, CurlOption ret[static CURL_TLS_OPTIONS_MAX]);

/* Set curl_tls_options() on h: CURLE_OK or the first option the library refused. */
CURLcode curl_tls_apply(CURL *h, const CurlTls *tls);

/* A failed run of setopt calls as a negative errno. */
int curl_code_to_errno(CURLcode cc);
