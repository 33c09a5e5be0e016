/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON string escaping and the text/JSON emitter. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/base/json.h"
#include "agent/base/output.h"
#include "macro.h"

static char *escaped(const char *in) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        assert_non_null(f);
        json_write_string(f, in);
        fclose(f);
        return buf;
}

static void check(const char *in, const char *want) {
        cleanup_free char *got = escaped(in);

        assert_string_equal(got, want);
}

static void test_plain(void **state) {
        check("/var/lib/kubelet", "\"/var/lib/kubelet\"");
        check("", "\"\"");
        check(NULL, "\"\"");
}

static void test_specials(void **state) {
        check("a\"b", "\"a\\\"b\"");
        check("a\\b", "\"a\\\\b\"");
        check("line\nnext\ttab\rcr", "\"line\\nnext\\ttab\\rcr\"");
        check("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
}

static void test_utf8(void **state) {
        /* Valid multi-byte sequences pass through untouched. */
        check("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
        /* A lone continuation byte, a truncated sequence, an overlong '/', a surrogate: each byte is
         * U+FFFD, never a \u00XX that a real character (U+00FF "ÿ") would also give. */
        check("a\x80z", "\"a\\ufffdz\"");
        check("\xc3", "\"\\ufffd\"");
        check("\xc0\xaf", "\"\\ufffd\\ufffd\"");
        check("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
        check("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
        check("\xc3\xbf", "\"\xc3\xbf\"");
        assert_true(json_utf8_valid("caf\xc3\xa9"));
        assert_true(json_utf8_valid(""));
        assert_false(json_utf8_valid("bad-\xff"));
}

static void test_base64(void **state) {
        /* RFC 4648 section 10's vectors, and the bytes a file name may hold. */
        static const char *const vectors[][2] = {
                { "", "" },
                { "f", "Zg==" },
                { "fo", "Zm8=" },
                { "foo", "Zm9v" },
                { "foob", "Zm9vYg==" },
                { "fooba", "Zm9vYmE=" },
                { "foobar", "Zm9vYmFy" },
                { "bad-\xff", "YmFkLf8=" },
        };

        for (size_t i = 0; i < ELEMENTSOF(vectors); i++) {
                cleanup_free char *got = json_base64(vectors[i][0]);

                assert_string_equal(got, vectors[i][1]);
        }
}

/* A string field with invalid UTF-8 gets KEY_b64 beside it, holding the exact bytes. */
static void test_emitter_b64(void **state) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        Emitter e;

        assert_non_null(f);
        emitter_init(&e, f, OUTPUT_JSON, false);
        emit_open_object(&e, NULL);
        emit_string(&e, COLOR_NONE, "target", NULL, "bad-\xff");
        emit_string(&e, COLOR_NONE, "ok", NULL, "\xc3\xbf");
        emit_close_object(&e);
        fclose(f);
        assert_string_equal(buf, "{\"target\":\"bad-\\ufffd\",\"target_b64\":\"YmFkLf8=\",\"ok\":\"\xc3\xbf\"}\n");
        free(buf);
}

static char *emit_sample(OutputMode mode) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        Emitter e;

        assert_non_null(f);
        emitter_init(&e, f, mode, false);
        emit_open_object(&e, NULL);
        emit_string(&e, COLOR_NONE, "name", "name=%s", "a \"b\"");
        emit_uint(&e, COLOR_NONE, "n", " n=%llu", 42);
        emit_bool(&e, "ok", " ok=%s", true);
        emit_null(&e, "nothing");
        emit_open_array(&e, "list");
        emit_string(&e, COLOR_NONE, NULL, " %s", "x");
        emit_string(&e, COLOR_NONE, NULL, " %s", "y");
        emit_close_array(&e);
        emit_open_array(&e, "empty");
        emit_close_array(&e);
        emit_text(&e, COLOR_NONE, "\n");
        emit_close_object(&e);
        fclose(f);
        return buf;
}

static void test_emitter_json(void **state) {
        cleanup_free char *got = emit_sample(OUTPUT_JSON);

        assert_string_equal(got, "{\"name\":\"a \\\"b\\\"\",\"n\":42,\"ok\":true,\"nothing\":null,"
                                 "\"list\":[\"x\",\"y\"],\"empty\":[]}\n");
}

static void test_emitter_text(void **state) {
        cleanup_free char *got = emit_sample(OUTPUT_TEXT);

        assert_string_equal(got, "name=a \"b\" n=42 ok=yes x y\n");
}

static void test_output_mode(void **state) {
        assert_int_equal(output_mode_from_string("json"), OUTPUT_JSON);
        assert_int_equal(output_mode_from_string("text"), OUTPUT_TEXT);
        assert_int_equal(output_mode_from_string("yaml"), _OUTPUT_MODE_INVALID);
}

static void test_color_wanted(void **state) {
        FILE *f = tmpfile();

        assert_non_null(f);
        setenv("TERM", "xterm", 1);
        unsetenv("NO_COLOR");
        assert_false(color_wanted(f)); /* not a terminal */
        setenv("NO_COLOR", "1", 1);
        assert_false(color_wanted(f));
        fclose(f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_plain),        cmocka_unit_test(test_specials),
                cmocka_unit_test(test_utf8),         cmocka_unit_test(test_base64),
                cmocka_unit_test(test_emitter_b64),  cmocka_unit_test(test_emitter_json),
                cmocka_unit_test(test_emitter_text), cmocka_unit_test(test_output_mode),
                cmocka_unit_test(test_color_wanted),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
