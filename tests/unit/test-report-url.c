/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/report/report-url.c and agent/base/http.c: header files, URL redaction, the report_url member. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/base/http.h"
#include "agent/report/report-url.h"
#include "macro.h"
#include "string-util.h"

static void test_header_valid(void **state) {
        assert_true(http_header_is_valid("Authorization: Bearer abc"));
        assert_true(http_header_is_valid("X-Cluster-Id:c-1"));
        assert_true(http_header_is_valid("X-Empty:"));
        assert_false(http_header_is_valid(": value"));
        assert_false(http_header_is_valid("Authorization Bearer abc"));
        assert_false(http_header_is_valid("Bad Name: x"));
        assert_false(http_header_is_valid("X-A: 1\r\nX-Injected: 2"));
        assert_false(http_header_is_valid("X-A: 1\n"));
        assert_false(http_header_is_valid(""));
}

static void test_header_file(void **state) {
        cleanup_free char *err = NULL;
        char **h = NULL;

        assert_int_equal(report_url_parse_headers("# a comment\r\n"
                                                  "Authorization: Bearer s3cret\r\n"
                                                  "\n"
                                                  "   \t\n"
                                                  "  X-Cluster-Id: c-1  \n"
                                                  "X-Last: no newline",
                                                  "hdr", &h, &err),
                         0);
        assert_null(err);
        assert_non_null(h);
        assert_string_equal(h[0], "Authorization: Bearer s3cret");
        assert_string_equal(h[1], "X-Cluster-Id: c-1");
        assert_string_equal(h[2], "X-Last: no newline");
        assert_null(h[3]);

        /* Appends; a bad line is named by its number, never quoted (it may hold a token). */
        assert_int_equal(report_url_parse_headers("X-More: 1\nAuthorization Bearer s3cret\n", "hdr", &h, &err),
                         -EINVAL);
        assert_string_equal(err, "hdr:2: not a 'Name: value' header");
        assert_null(strstr(err, "s3cret"));
        strv_free(h);
}

static void check_redact(const char *in, const char *out) {
        cleanup_free char *r = http_url_redact(in);

        assert_non_null(r);
        assert_string_equal(r, out);
}

static void test_redact(void **state) {
        check_redact("https://user:pw@status.example:8443/a/b?token=x#frag", "https://status.example:8443/a/b");
        check_redact("http://127.0.0.1/x", "http://127.0.0.1/x");
        check_redact("https://10.0.0.1:6443", "https://10.0.0.1:6443/");
        check_redact("not a url", "(invalid URL)");
}

static void test_new_errors(void **state) {
        cleanup_free char *err = NULL;
        char *bad_header[] = { (char *) "No colon here", NULL };
        ReportUrl *u = NULL;

        assert_int_equal(report_url_new("ftp://x/", NULL, NULL, NULL, NULL, &u, &err), -EINVAL);
        assert_non_null(strstr(err, "http:// or https://"));
        err = mfree(err);
        assert_int_equal(report_url_new("https://x/", bad_header, NULL, NULL, NULL, &u, &err), -EINVAL);
        assert_string_equal(err, "--report-header: not a 'Name: value' header");
        err = mfree(err);
        assert_int_equal(report_url_new("https://x/", NULL, "/nonexistent/headers", NULL, NULL, &u, &err), -ENOENT);
        assert_non_null(strstr(err, "--report-header-file /nonexistent/headers"));
        err = mfree(err);
        assert_int_equal(report_url_new("https://x/", NULL, NULL, "/nonexistent/ca.pem", NULL, &u, &err), -ENOENT);
        assert_non_null(strstr(err, "--report-cacert /nonexistent/ca.pem"));
        assert_null(u);
}

/* The report_url member: start known, final not (as in the final POST's own body), then both. */
static void test_emit(void **state) {
        char *headers[] = { (char *) "Authorization: Bearer s3cret", NULL };
        cleanup_free char *err = NULL, *buf = NULL;
        ReportUrl *u = NULL;
        size_t size = 0;
        Emitter e;
        FILE *f;

        assert_int_equal(report_url_new("https://h/p?token=x", headers, NULL, NULL, NULL, &u, &err), 0);
        u->outcome.start = (ReportUrlPost) { .attempted = true, .ok = true, .attempts = 1, .http_status = 200 };

        f = open_memstream(&buf, &size);
        assert_non_null(f);
        emitter_init(&e, f, OUTPUT_JSON, false);
        emit_open_object(&e, NULL);
        report_url_outcome_emit(&e, &u->outcome);
        emit_close_object(&e);
        fclose(f);
        assert_string_equal(buf, "{\"report_url\":{\"url\":\"https://h/p\","
                                 "\"start\":{\"ok\":true,\"attempts\":1,\"http_status\":200,\"error\":null},"
                                 "\"final\":null}}\n");
        buf = mfree(buf);

        u->outcome.final = (ReportUrlPost) { .attempted = true, .attempts = 3, .error = strdup("curl error 7: refused") };
        f = open_memstream(&buf, &size);
        assert_non_null(f);
        emitter_init(&e, f, OUTPUT_TEXT, false);
        report_url_outcome_emit(&e, &u->outcome);
        fclose(f);
        assert_string_equal(buf, "\nreport-url https://h/p: start ok (HTTP 200), final failed after 3 attempts: "
                                 "curl error 7: refused\n");
        assert_null(strstr(buf, "s3cret"));
        report_url_free(u);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_header_valid),
                cmocka_unit_test(test_header_file),
                cmocka_unit_test(test_redact),
                cmocka_unit_test(test_new_errors),
                cmocka_unit_test(test_emit),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
