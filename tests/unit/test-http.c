/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* grpc/curl.c: which libcurl options a given libcurl version is asked for (agent/base/http.c asks them),
 * and the one TLS policy every HTTPS call is set up with. */

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grpc/curl.h"

static void test_features_by_version(void **state) {
        CurlFeatures f;

        f = curl_features_for(0x075800, 0); /* 7.88, Debian 12 */
        assert_true(f.protocols_str && f.ca_blob && f.cert_blob);
        f = curl_features_for(0x075500, 0); /* 7.85: CURLOPT_PROTOCOLS_STR appears */
        assert_true(f.protocols_str);
        f = curl_features_for(0x075100, 0); /* 7.81, Ubuntu 22.04 */
        assert_false(f.protocols_str);
        assert_true(f.ca_blob && f.cert_blob);
        f = curl_features_for(0x074d00, 0); /* 7.77: CURLOPT_CAINFO_BLOB appears */
        assert_true(f.ca_blob);
        f = curl_features_for(0x074c00, 0); /* 7.76, RHEL 9 */
        assert_false(f.ca_blob);
        assert_true(f.cert_blob);
        f = curl_features_for(0x074600, 0); /* 7.70: no blobs at all */
        assert_false(f.protocols_str || f.ca_blob || f.cert_blob);
}

static const CurlOption *find(const CurlOption *o, size_t n, CURLoption which) {
        const CurlOption *found = NULL;

        for (size_t i = 0; i < n; i++)
                if (o[i].option == which) {
                        assert_null(found); /* each option once */
                        found = &o[i];
                }
        return found;
}

static void assert_long(const CurlOption *o, size_t n, CURLoption which, long want) {
        const CurlOption *x = find(o, n, which);

        assert_non_null(x);
        assert_int_equal(x->type, CURL_OPTION_LONG);
        assert_int_equal(x->number, want);
}

/* The floor and the verification are set on every transfer, whatever else is given. */
static void assert_floor_and_verify(const CurlOption *o, size_t n, bool insecure) {
        assert_long(o, n, CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1_2);
        assert_long(o, n, CURLOPT_PROXY_SSLVERSION, CURL_SSLVERSION_TLSv1_2);
        assert_long(o, n, CURLOPT_SSL_VERIFYPEER, insecure ? 0 : 1);
        assert_long(o, n, CURLOPT_SSL_VERIFYHOST, insecure ? 0 : 2);
}

static void test_tls_policy(void **state) {
        static const char pem[] = "-----BEGIN CERTIFICATE-----\n";
        CurlOption o[CURL_TLS_OPTIONS_MAX];
        const CurlOption *x;
        size_t n;

        /* Nothing given: the system's store, TLS 1.2 at least, the peer verified. */
        n = curl_tls_options(&(CurlTls) {}, o);
        assert_int_equal(n, 4);
        assert_floor_and_verify(o, n, false);
        assert_null(find(o, n, CURLOPT_CAPATH));

        /* A CA as bytes (a kubeconfig's certificate-authority-data): it alone, the system's hashed
         * directory unset; the client certificate and key as bytes too. */
        n = curl_tls_options(&(CurlTls) { .ca = { .data = pem, .size = sizeof pem - 1 },
                                          .cert = { .data = pem, .size = sizeof pem - 1 },
                                          .key = { .data = pem, .size = 3 } },
                             o);
        assert_int_equal(n, CURL_TLS_OPTIONS_MAX);
        assert_floor_and_verify(o, n, false);
        x = find(o, n, CURLOPT_CAINFO_BLOB);
        assert_non_null(x);
        assert_int_equal(x->type, CURL_OPTION_BLOB);
        assert_ptr_equal(x->blob.data, pem);
        assert_int_equal(x->blob.len, sizeof pem - 1);
        assert_int_equal(x->blob.flags, CURL_BLOB_COPY);
        x = find(o, n, CURLOPT_CAPATH);
        assert_non_null(x);
        assert_int_equal(x->type, CURL_OPTION_STRING);
        assert_null(x->string);
        assert_null(find(o, n, CURLOPT_CAINFO));
        assert_non_null(find(o, n, CURLOPT_SSLCERT_BLOB));
        assert_int_equal(find(o, n, CURLOPT_SSLKEY_BLOB)->blob.len, 3);

        /* Files (etcd's, or PEM passed as memfd files to an old libcurl): the same policy. */
        n = curl_tls_options(&(CurlTls) { .ca.file = "/pki/ca.crt", .cert.file = "/pki/c.crt", .key.file = "/pki/c.key" },
                             o);
        assert_floor_and_verify(o, n, false);
        assert_string_equal(find(o, n, CURLOPT_CAINFO)->string, "/pki/ca.crt");
        assert_null(find(o, n, CURLOPT_CAPATH)->string);
        assert_string_equal(find(o, n, CURLOPT_SSLCERT)->string, "/pki/c.crt");
        assert_string_equal(find(o, n, CURLOPT_SSLKEY)->string, "/pki/c.key");
        assert_null(find(o, n, CURLOPT_CAINFO_BLOB));

        /* insecure-skip-tls-verify: no verification and no trust anchor, the floor still stands. */
        n = curl_tls_options(&(CurlTls) { .insecure = true, .ca.file = "/pki/ca.crt", .cert.file = "/pki/c.crt" }, o);
        assert_floor_and_verify(o, n, true);
        assert_null(find(o, n, CURLOPT_CAINFO));
        assert_null(find(o, n, CURLOPT_CAPATH));
        assert_non_null(find(o, n, CURLOPT_SSLCERT));

        /* An empty blob is no CA. */
        n = curl_tls_options(&(CurlTls) { .ca = { .data = pem, .size = 0 } }, o);
        assert_int_equal(n, 4);
}

/* The loaded libcurl takes every option the policy sets. */
static void test_tls_apply(void **state) {
        static const char pem[] = "-----BEGIN CERTIFICATE-----\n";
        CLEANUP(curl_easy_cleanupp) CURL *h = curl_easy_init();

        assert_non_null(h);
        assert_int_equal(curl_tls_apply(h, &(CurlTls) {}), CURLE_OK);
        assert_int_equal(curl_tls_apply(h, &(CurlTls) { .ca = { .data = pem, .size = sizeof pem - 1 },
                                                        .cert.file = "/nonexistent/c.crt",
                                                        .key.file = "/nonexistent/c.key" }),
                         CURLE_OK);
        assert_int_equal(curl_tls_apply(h, &(CurlTls) { .insecure = true }), CURLE_OK);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_features_by_version),
                cmocka_unit_test(test_tls_policy),
                cmocka_unit_test(test_tls_apply),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
