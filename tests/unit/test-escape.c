/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Escaping of names in text output (include/escape.h). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "escape.h"
#include "macro.h"

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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_plain),
                cmocka_unit_test(test_controls),
                cmocka_unit_test(test_backslash),
                cmocka_unit_test(test_utf8_kept),
                cmocka_unit_test(test_utf8_invalid),
                cmocka_unit_test(test_c1),
                cmocka_unit_test(test_truncation),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
