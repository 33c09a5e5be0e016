/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Escaping of names in text output (include/escape.h) and at its sinks: the report, the logger. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/base/json.h"
#include "agent/base/log.h"
#include "agent/base/output.h"
#include "agent/report/report.h"
#include "escape.h"
#include "macro.h"
#include "string-util.h"

/* The name of issue 15: forged report lines, a window title, a line erase. */
#define HOSTILE "x\n\nresidue: none, the node is clean\n\x1b]0;owned\a\x1b[2K"
#define HOSTILE_ESCAPED "x\\n\\nresidue: none, the node is clean\\n\\x1b]0;owned\\a\\x1b[2K"

static char *stream_escaped(const char *in) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        assert_non_null(f);
        fputs_escaped(in, f);
        fclose(f);
        return buf;
}

/* Every entry point gives the same bytes. */
static void check(const char *in, const char *want) {
        cleanup_free char *got = text_escape(in), *streamed = stream_escaped(in);
        char buf[256];

        assert_non_null(got);
        assert_string_equal(got, want);
        assert_string_equal(streamed, want);
        assert_int_equal(text_escape_buf(in, buf, sizeof buf), strlen(want));
        assert_string_equal(buf, want);
}

static void test_plain(void **state) {
        check("/var/lib/kubelet/pods/p 1/volumes", "/var/lib/kubelet/pods/p 1/volumes");
        check("quotes \"'` and ~!@#$%^&*()[]{}", "quotes \"'` and ~!@#$%^&*()[]{}");
        check("", "");
        check(NULL, "");
}

static void test_controls(void **state) {
        check("\a\b\t\n\v\f\r", "\\a\\b\\t\\n\\v\\f\\r");
        check("\x01\x1f\x7f", "\\x01\\x1f\\x7f");
        check("\x1b[2K\x1b]0;t\x07", "\\x1b[2K\\x1b]0;t\\a");
        check(HOSTILE, HOSTILE_ESCAPED);
}

static void test_backslash(void **state) {
        /* A literal backslash-n (two bytes) and a newline must not print alike. */
        check("a\\nb", "a\\\\nb");
        check("a\nb", "a\\nb");
        check("foo\\x2dbar", "foo\\\\x2dbar");
        check("\\", "\\\\");
}

static void test_utf8_kept(void **state) {
        check("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xd0\xbf\xd0\xbe\xd0\xb4",
              "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xd0\xbf\xd0\xbe\xd0\xb4");
        check("\xc2\xa0\xc2\xbf", "\xc2\xa0\xc2\xbf");          /* U+00A0, U+00BF: past C1 */
        check("\xef\xbf\xbd\xf4\x8f\xbf\xbf", "\xef\xbf\xbd\xf4\x8f\xbf\xbf"); /* U+FFFD, U+10FFFF */
}

static void test_utf8_invalid(void **state) {
        check("a\x80z", "a\\x80z");                             /* lone continuation byte */
        check("\xc3", "\\xc3");                                 /* truncated at the end */
        check("\xc3z", "\\xc3z");                               /* truncated by ASCII */
        check("\xe2\x82", "\\xe2\\x82");
        check("\xc0\xaf", "\\xc0\\xaf");                        /* overlong '/' */
        check("\xe0\x80\xaf", "\\xe0\\x80\\xaf");
        check("\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf");
        check("\xc1\x9b", "\\xc1\\x9b");                        /* overlong ESC-[ lookalike */
        check("\xed\xa0\x80", "\\xed\\xa0\\x80");               /* a surrogate */
        check("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");      /* past U+10FFFF */
        check("\xfe\xff", "\\xfe\\xff");
}

static void test_c1(void **state) {
        /* U+009B is CSI and U+009D OSC on terminals that honour 8-bit controls. */
        check("\xc2\x80", "\\xc2\\x80");
        check("\xc2\x9b" "2K", "\\xc2\\x9b" "2K");
        check("\xc2\x9d" "0;t\xc2\x9c", "\\xc2\\x9d" "0;t\\xc2\\x9c");
        check("\xc2\x9f\xc2\xa0", "\\xc2\\x9f\xc2\xa0");
}

static void test_truncation(void **state) {
        char buf[8];

        /* Cut before an escape that would not fit whole, never in it. */
        assert_int_equal(text_escape_buf("abcde\n", buf, sizeof buf), 7);
        assert_string_equal(buf, "abcde\\n");
        assert_int_equal(text_escape_buf("abcdef\n", buf, sizeof buf), 8);
        assert_string_equal(buf, "abcdef");
        assert_int_equal(text_escape_buf("abcd\x1b", buf, sizeof buf), 8);
        assert_string_equal(buf, "abcd");
        assert_int_equal(text_escape_buf("abcdef\xe2\x82\xac", buf, sizeof buf), 9);
        assert_string_equal(buf, "abcdef");
        assert_int_equal(text_escape_buf("x", buf, 0), 1);
}

static ActionOps fake_ops = { .kind = "unmount" };

static char *report(OutputMode mode, bool executed) {
        char *manifests[] = { (char *) "/etc/node-reset/" HOSTILE, NULL };
        ReportInfo info = { .command = "run", .root = "/r", .manifests = manifests, .executed = executed };
        Plan *plan = plan_new(), *residue = plan_new();
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        Emitter e;
        Action *a;

        assert_non_null(f);
        assert_non_null(plan);
        assert_non_null(residue);
        a = plan_add(plan, &fake_ops, "mounts", "/var/lib/kubelet/pods/" HOSTILE, "m.conf:1: " HOSTILE, NULL);
        assert_non_null(a);
        assert_int_equal(action_set_detail(a, "tmpfs %s", HOSTILE), 0);
        if (executed)
                action_recordf(a, -EBUSY, "busy: held by %s", HOSTILE);
        else
                assert_int_equal(action_set_skip(a, "%s", HOSTILE), 0);
        assert_non_null(plan_add(residue, &fake_ops, "mounts", HOSTILE, NULL, NULL));
        emitter_init(&e, f, mode, false);
        report_emit(&e, &info, plan, residue);
        fclose(f);
        plan_free(plan);
        plan_free(residue);
        return buf;
}

static size_t count(const char *haystack, const char *needle) {
        size_t n = 0;

        for (const char *p = haystack; (p = strstr(p, needle)); p++)
                n++;
        return n;
}

static void test_report_text(void **state) {
        for (int executed = 0; executed <= 1; executed++) {
                cleanup_free char *got = report(OUTPUT_TEXT, executed);

                assert_null(strchr(got, '\x1b'));
                assert_null(strchr(got, '\a'));
                /* The only lines that start with "residue:" are the report's own. */
                assert_int_equal(count(got, "\nresidue:"), 1);
                assert_non_null(strstr(got, "\nresidue: \n"));
                assert_null(strstr(got, "\nresidue: none"));
                assert_non_null(strstr(got, " /var/lib/kubelet/pods/" HOSTILE_ESCAPED));
                assert_non_null(strstr(got, "manifest: /etc/node-reset/" HOSTILE_ESCAPED "\n"));
                assert_non_null(strstr(got, executed ? ": busy: held by " HOSTILE_ESCAPED
                                                     : "  (tmpfs " HOSTILE_ESCAPED ")"));
        }
}

/* JSON is left to JSON's own escaping, byte for byte. */
static void test_report_json(void **state) {
        cleanup_free char *got = report(OUTPUT_JSON, true), *target = NULL;
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        assert_non_null(f);
        json_write_string(f, "/var/lib/kubelet/pods/" HOSTILE);
        fclose(f);
        target = buf;
        assert_string_equal(target, "\"/var/lib/kubelet/pods/x\\n\\nresidue: none, the node is clean\\n"
                                    "\\u001b]0;owned\\u0007\\u001b[2K\"");
        assert_non_null(strstr(got, target));
        assert_null(strchr(got, '\x1b'));
        assert_null(strstr(got, "\\x1b"));
}

/* The logger escapes its %s arguments and keeps the newline that ends the line. */
static void test_log(void **state) {
        int fd = memfd_create("stderr", MFD_CLOEXEC), saved = dup(STDERR_FILENO);
        char buf[512] = "";
        ssize_t n;

        assert_true(fd >= 0 && saved >= 0);
        fflush(stderr);
        assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
        assert_int_equal(log_error_errno(-EBUSY, "Failed to unmount %s: %m", HOSTILE), -EBUSY);
        log_error("%s", "caf\xc3\xa9 \xc2\x9b\\");
        fflush(stderr);
        assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
        n = pread(fd, buf, sizeof buf - 1, 0);
        assert_true(n > 0);
        assert_string_equal(buf, "node-reset: Failed to unmount " HOSTILE_ESCAPED ": Device or resource busy\n"
                                 "node-reset: caf\xc3\xa9 \\xc2\\x9b\\\\\n");
        close(fd);
        close(saved);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_plain),
                cmocka_unit_test(test_controls),
                cmocka_unit_test(test_backslash),
                cmocka_unit_test(test_utf8_kept),
                cmocka_unit_test(test_utf8_invalid),
                cmocka_unit_test(test_c1),
                cmocka_unit_test(test_truncation),
                cmocka_unit_test(test_report_text),
                cmocka_unit_test(test_report_json),
                cmocka_unit_test(test_log),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
