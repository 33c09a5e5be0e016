/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/config/envfile.c: environment files as systemd reads them, shell words and
 * Go flags, with the commented-out and quoted cases that a substring search gets wrong. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "agent/config/envfile.h"
#include "macro.h"
#include "strv.h"

static char **parse_ok(const char *text) {
        char **pairs = NULL;
        unsigned line = 0;

        assert_int_equal(env_file_parse(text, strlen(text), &pairs, &line), 0);
        assert_non_null(pairs);
        return pairs;
}

static unsigned parse_bad(const char *text, size_t size) {
        char **pairs = NULL;
        unsigned line = 0;

        assert_int_equal(env_file_parse(text, size, &pairs, &line), -EBADMSG);
        assert_null(pairs);
        return line;
}

static void test_env_comments_and_last_wins(void **state) {
        cleanup_strv char **p = parse_ok("# ETCD_DATA_DIR=/srv/nfs-export\n"
                                         "  ; ETCD_NAME=old\n"
                                         "ETCD_DATA_DIR=/var/lib/etcd\n"
                                         "\n"
                                         "ETCD_NAME=node1\n"
                                         "ETCD_DATA_DIR = /var/lib/etcd-new   \n");

        assert_string_equal(env_get(p, "ETCD_DATA_DIR"), "/var/lib/etcd-new");
        assert_string_equal(env_get(p, "ETCD_NAME"), "node1");
        assert_int_equal(strv_length(p), 2);
        assert_null(env_get(p, "ETCD"));
        assert_null(env_get(p, "ETCD_DATA"));
}

static void test_env_quotes(void **state) {
        cleanup_strv char **p = parse_ok("A='single # not a comment'\n"
                                         "B=\"double \\\"quoted\\\" \\$HOME \\n\"\n"
                                         "C=un\\ quoted\\\n"
                                         "continued\n"
                                         "D=\"--flag=1 \"'--x=2'  \n"
                                         "E=value # still the value, as systemd reads it\n"
                                         "F=\n"
                                         "G='  kept  '\n");

        assert_string_equal(env_get(p, "A"), "single # not a comment");
        assert_string_equal(env_get(p, "B"), "double \"quoted\" $HOME \\n");
        assert_string_equal(env_get(p, "C"), "un quotedcontinued");
        assert_string_equal(env_get(p, "D"), "--flag=1 --x=2");
        assert_string_equal(env_get(p, "E"), "value # still the value, as systemd reads it");
        assert_string_equal(env_get(p, "F"), "");
        assert_string_equal(env_get(p, "G"), "  kept  ");
}

static void test_env_multiline_quote(void **state) {
        cleanup_strv char **p = parse_ok("A=\"one\ntwo\"\nB=3\n");

        assert_string_equal(env_get(p, "A"), "one\ntwo");
        assert_string_equal(env_get(p, "B"), "3");
}

static void test_env_errors(void **state) {
        static const char nul[] = "A=1\nB=2\0C=3\n";
        char **p = NULL;

        assert_int_equal(parse_bad("A=1\nnot an assignment\n", strlen("A=1\nnot an assignment\n")), 2);
        assert_int_equal(parse_bad("A=1\n\nB='open\n", strlen("A=1\n\nB='open\n")), 4);
        assert_int_equal(parse_bad("1A=x\n", 5), 1);
        assert_int_equal(parse_bad("export A=x\n", 11), 1);
        assert_int_equal(parse_bad("A=x\\", 4), 1);
        assert_int_equal(parse_bad(nul, sizeof(nul) - 1), 2);
        /* Empty and comment-only files are valid and say nothing. */
        assert_int_equal(env_file_parse("", 0, &p, NULL), 0);
        assert_int_equal(strv_length(p), 0);
        p = strv_free(p);
        assert_int_equal(env_file_parse("# x\n\n", 5, &p, NULL), 0);
        assert_int_equal(strv_length(p), 0);
        strv_free(p);
}

static void test_argv_split(void **state) {
        cleanup_strv char **a = NULL, **b = NULL, **c = NULL;
        char **bad = NULL;

        assert_int_equal(argv_split("kubelet --a=1  'two words' \"x\\\"y\" e\\ f ''", &a), 0);
        assert_int_equal(strv_length(a), 6);
        assert_string_equal(a[0], "kubelet");
        assert_string_equal(a[1], "--a=1");
        assert_string_equal(a[2], "two words");
        assert_string_equal(a[3], "x\"y");
        assert_string_equal(a[4], "e f");
        assert_string_equal(a[5], "");
        assert_int_equal(argv_split("  \t ", &b), 0);
        assert_int_equal(strv_length(b), 0);
        assert_int_equal(argv_split("a 'open", &bad), -EBADMSG);
        assert_null(bad);
        assert_int_equal(argv_split_blanks("--x='a b' --y", &c), 0);
        assert_int_equal(strv_length(c), 3);
        assert_string_equal(c[0], "--x='a");
        assert_string_equal(c[1], "b'");
}

static void test_argv_flag(void **state) {
        char *argv[] = {
                (char *) "etcd",
                (char *) "--data-dir=/var/lib/etcd",
                (char *) "-name",
                (char *) "node1",
                (char *) "--data-dir-extra=/x",
                (char *) "--data-dir",
                (char *) "/srv/etcd",
                (char *) "--",
                (char *) "--name=after-terminator",
                NULL,
        };
        char *only_prog[] = { (char *) "--data-dir=/prog-name", NULL };

        assert_string_equal(argv_flag(argv, "data-dir"), "/srv/etcd");
        assert_string_equal(argv_flag(argv, "name"), "node1");
        assert_string_equal(argv_flag(argv, "data-dir-extra"), "/x");
        assert_null(argv_flag(argv, "data"));
        assert_null(argv_flag(only_prog, "data-dir"));
        assert_null(argv_flag(NULL, "x"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_env_comments_and_last_wins),
                cmocka_unit_test(test_env_quotes),
                cmocka_unit_test(test_env_multiline_quote),
                cmocka_unit_test(test_env_errors),
                cmocka_unit_test(test_argv_split),
                cmocka_unit_test(test_argv_flag),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
