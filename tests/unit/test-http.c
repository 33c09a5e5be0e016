/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* grpc/curl.c: which libcurl options a given libcurl version is asked for (agent/base/http.c asks them). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_features_by_version),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
