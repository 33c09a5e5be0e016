/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The option registry: the phases' declared options reach getopt_long() and --help, a name declared
 * twice (by two phases, or by a phase and the program) is refused, and an unknown option is said as
 * it always was. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/engine/cmdline.h"
#include "agent/engine/phase.h"
#include "agent/phases/phases.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

static unsigned wait_sec;
static bool flag;
static int program_seen;

static int parse_wait(const char *arg, char **reterr) {
        if (cmdline_parse_seconds(arg, &wait_sec) < 0)
                return set_errmsg(reterr, -EINVAL, "invalid --wait '%s': expected seconds", arg);
        return 0;
}

static int parse_flag(const char *arg, char **reterr) {
        flag = true;
        return 0;
}

static int parse_nothing(const char *arg, char **reterr) {
        return 0;
}

static const PhaseOption a_options[] = {
        { "wait", PHASE_OPTION_REQUIRED_ARG, "SECONDS", "How long to wait (10)", parse_wait },
        {},
};
static const PhaseOption b_options[] = {
        { "flag", PHASE_OPTION_NO_ARG, NULL, "A long description that goes on\non a second line", parse_flag },
        {},
};
static const PhaseOption b_clash[] = {
        { "wait", PHASE_OPTION_REQUIRED_ARG, "SECONDS", "The same name again", parse_wait },
        {},
};
static const PhaseOption b_root[] = {
        { "root", PHASE_OPTION_REQUIRED_ARG, "DIR", "The program's name", parse_nothing },
        {},
};

static const Phase good[] = {
        { .name = "a", .options = a_options },
        { .name = "none" },
        { .name = "b", .options = b_options },
};
static const Phase clash[] = {
        { .name = "a", .options = a_options },
        { .name = "b", .options = b_clash },
};
static const Phase root_clash[] = {
        { .name = "a", .options = a_options },
        { .name = "b", .options = b_root },
};

static const struct option program[] = {
        { "root", required_argument, NULL, 'R' },
        { "yes", no_argument, NULL, 'y' },
        {},
};

static int program_option(int c, const char *arg, void *userdata) {
        program_seen = c;
        return 0;
}

/* The argv last parsed, as getopt_long() left it (it permutes the operands behind the options). */
static char *argv[16];

/* Parse a NULL-terminated argument list from scratch (optind 0: getopt's full reset). */
static int parse(const char *const *args, char **reterr) {
        int argc = 0;

        for (; args[argc]; argc++)
                argv[argc] = (char *) args[argc]; /* getopt_long() moves the pointers, never the strings */
        argv[argc] = NULL;
        optind = 0;
        return cmdline_parse(argc, argv, ":y", program, program_option, NULL, reterr);
}

static void test_phase_options_parsed(void **state) {
        const char *args[] = { "node-reset", "--wait=3", "--flag", "-y", "plan", NULL };
        cleanup_free char *err = NULL;

        phase_table_register(good, ELEMENTSOF(good));
        wait_sec = 0, flag = false, program_seen = 0;
        assert_int_equal(parse(args, &err), 1);
        assert_null(err);
        assert_int_equal(wait_sec, 3);
        assert_true(flag);
        assert_int_equal(program_seen, 'y');
        assert_string_equal(argv[optind], "plan");
}

static void test_bad_value(void **state) {
        const char *args[] = { "node-reset", "--wait", "soon", "plan", NULL };
        cleanup_free char *err = NULL;

        phase_table_register(good, ELEMENTSOF(good));
        assert_int_equal(parse(args, &err), -EINVAL);
        assert_string_equal(err, "invalid --wait 'soon': expected seconds");
}

/* The same lines getopt_long()'s errors always gave (tests/integration/test-cli.sh checks them). */
static void test_unknown_option(void **state) {
        const char *unknown[] = { "node-reset", "--bogus", "plan", NULL };
        const char *short_unknown[] = { "node-reset", "-x", "plan", NULL };
        const char *missing[] = { "node-reset", "plan", "--wait", NULL };
        char *err = NULL;

        phase_table_register(good, ELEMENTSOF(good));
        assert_int_equal(parse(unknown, &err), -EINVAL);
        assert_string_equal(err, "unrecognized option '--bogus'");
        err = mfree(err);
        assert_int_equal(parse(short_unknown, &err), -EINVAL);
        assert_string_equal(err, "invalid option -- 'x'");
        err = mfree(err);
        assert_int_equal(parse(missing, &err), -EINVAL);
        assert_string_equal(err, "option '--wait' requires an argument");
        free(err);
}

static void test_duplicate_across_phases(void **state) {
        const char *args[] = { "node-reset", "plan", NULL };
        struct option *opts = NULL;
        char *err = NULL;

        phase_table_register(clash, ELEMENTSOF(clash));
        assert_int_equal(cmdline_options(program, &opts, &err), -EEXIST);
        assert_null(opts);
        assert_string_equal(err, "option --wait is declared twice: by a and by b");
        err = mfree(err);
        /* Refused before any option is looked at. */
        assert_int_equal(parse(args, &err), -EEXIST);
        assert_non_null(err);
        free(err);
}

static void test_duplicate_with_program(void **state) {
        struct option *opts = NULL;
        cleanup_free char *err = NULL;

        phase_table_register(root_clash, ELEMENTSOF(root_clash));
        assert_int_equal(cmdline_options(program, &opts, &err), -EEXIST);
        assert_string_equal(err, "option --root is declared twice: by the program and by b");
}

static void test_help(void **state) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        assert_non_null(f);
        phase_table_register(good, ELEMENTSOF(good));
        cmdline_help_phases(f);
        assert_int_equal(fclose(f), 0);
        assert_string_equal(buf, "     --wait=SECONDS     How long to wait (10)\n"
                                 "     --flag             A long description that goes on\n"
                                 "                        on a second line\n");
        free(buf);
}

/* node-reset's own table: every phase option once, each with its help line and its parser. */
static void test_real_table(void **state) {
        static const char *const expected[] = {
                "etcd-db-copy-max", "no-backup",
                "backup-keep",      "drain",
                "drain-force",      "drain-delete-emptydir-data",
                "drain-timeout",    "etcd-timeout",
                "unit-timeout",     "delete-node",
                "cri-endpoint",     "concurrency",
                "pods-timeout",     "kill-grace",
                "xtables-wait",     "no-group-delete",
        };
        cleanup_free struct option *opts = NULL;
        cleanup_free char *err = NULL;
        const struct option none[] = { {} };
        size_t n = 0;

        reset_phases_register();
        assert_int_equal(cmdline_options(none, &opts, &err), 0);
        for (; opts[n].name; n++) {
                assert_true(n < ELEMENTSOF(expected));
                assert_string_equal(opts[n].name, expected[n]);
                assert_int_equal(opts[n].val, CMDLINE_PHASE_OPTION + (int) n);
        }
        assert_int_equal(n, ELEMENTSOF(expected));
}

static void test_parse_size(void **state) {
        uint64_t v;

        assert_int_equal(cmdline_parse_size("8G", &v), 0);
        assert_true(v == 8ULL << 30);
        assert_int_equal(cmdline_parse_size("512MiB", &v), 0);
        assert_true(v == 512ULL << 20);
        assert_int_equal(cmdline_parse_size("4096", &v), 0);
        assert_true(v == 4096);
        assert_int_equal(cmdline_parse_size("-1", &v), -EINVAL);
        assert_int_equal(cmdline_parse_size("1X", &v), -EINVAL);
        assert_int_equal(cmdline_parse_size("99999999999T", &v), -ERANGE);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_phase_options_parsed),
                cmocka_unit_test(test_bad_value),
                cmocka_unit_test(test_unknown_option),
                cmocka_unit_test(test_duplicate_across_phases),
                cmocka_unit_test(test_duplicate_with_program),
                cmocka_unit_test(test_help),
                cmocka_unit_test(test_real_table),
                cmocka_unit_test(test_parse_size),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
