/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The option tables: a verb's set is the program options it lists and the phases' it takes, a name
 * declared twice is refused, an option another verb takes is said as that verb's refusal, getopt's
 * own errors are said as they always were, --help's lines, the one duration grammar; and node-reset's
 * own tables: every verb's set builds, every value --help and the completion offer is one the
 * parser takes, every duration option takes 90, 90s and 5m and refuses the same way. */

#include <errno.h>
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/engine/cmdline.h"
#include "agent/engine/engine.h"
#include "agent/engine/phase.h"
#include "agent/phases/phases.h"
#include "agent/verbs/verbs.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

static unsigned wait_sec;
static bool flag, yes;
static const char *root;

static int parse_wait(const char *arg, char **reterr) {
        return cmdline_parse_duration("wait", arg, 0, 3600, &wait_sec, reterr);
}

static int parse_flag(const char *arg, char **reterr) {
        flag = true;
        return 0;
}

static int parse_nothing(const char *arg, char **reterr) {
        return 0;
}

static const PhaseOption a_options[] = {
        { "wait", PHASE_OPTION_REQUIRED_ARG, "DURATION", "How long to wait (10s)", parse_wait },
        {},
};
static const PhaseOption b_options[] = {
        { "flag", PHASE_OPTION_NO_ARG, NULL, "A long description that goes on\non a second line", parse_flag },
        {},
};
static const PhaseOption b_clash[] = {
        { "wait", PHASE_OPTION_REQUIRED_ARG, "DURATION", "The same name again", parse_wait },
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

static int parse_root(const char *arg, char **reterr) {
        root = arg;
        return 0;
}

static int parse_yes(const char *arg, char **reterr) {
        yes = true;
        return 0;
}

static const char *color_nth(size_t i) {
        static const char *const colors[] = { "red", "green", "blue" };

        return i < ELEMENTSOF(colors) ? colors[i] : NULL;
}

static const CmdlineOption opt_root = {
        .name = "root",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "DIR",
        .help = "A tree",
        .parse = parse_root,
};
static const CmdlineOption opt_yes = { .name = "yes", .help = "Do not ask", .parse = parse_yes, .short_name = 'y' };
static const CmdlineOption opt_color = {
        .name = "color",
        .arg = CMDLINE_OPTIONAL_ARG,
        .metavar = "COLOR",
        .help = "Paint it",
        .parse = parse_nothing,
        .complete = CMDLINE_COMPLETE_WORD,
        .value_nth = color_nth,
};
static const CmdlineOption *const verb_a[] = { &opt_root, NULL };
static const CmdlineOption *const verb_b[] = { &opt_root, &opt_yes, &opt_color, NULL };

/* The argv last parsed, as getopt_long() left it (it permutes the operands behind the options). */
static char *argv[16];

static int load(const char *const *args) {
        int argc = 0;

        for (; args[argc]; argc++)
                argv[argc] = (char *) args[argc]; /* getopt_long() moves the pointers, never the strings */
        argv[argc] = NULL;
        return argc;
}

/* Parse args with verb_a's options and every phase's, against verb_b's as the known ones. */
static int parse(const char *const *args, char **reterr) {
        CmdlineOptions set = {}, known = {};
        int argc = load(args), r;

        phase_table_register(good, ELEMENTSOF(good));
        assert_int_equal(cmdline_options_add(&set, verb_a, false, reterr), 0);
        assert_int_equal(cmdline_options_add_phases(&set, NULL, false, reterr), 0);
        assert_int_equal(cmdline_options_add(&known, verb_b, false, reterr), 0);
        r = cmdline_parse(argc, argv, &set, &known, "plan", reterr);
        cmdline_options_done(&set);
        cmdline_options_done(&known);
        return r;
}

static void test_options_parsed(void **state) {
        const char *args[] = { "node-reset", "--wait=3m", "--flag", "plan", "--root", "/t", NULL };
        cleanup_free char *err = NULL;

        wait_sec = 0, flag = false, root = NULL;
        assert_int_equal(parse(args, &err), 0);
        assert_null(err);
        assert_int_equal(wait_sec, 180);
        assert_true(flag);
        assert_string_equal(root, "/t");
        assert_string_equal(argv[optind], "plan");
}

static void test_bad_value(void **state) {
        const char *args[] = { "node-reset", "--wait", "soon", "plan", NULL };
        cleanup_free char *err = NULL;

        assert_int_equal(parse(args, &err), -EINVAL);
        assert_string_equal(
                err, "invalid --wait 'soon': expected a duration from 0s to 1h, such as 90 (seconds), 90s, 5m or 2h");
}

/* The lines getopt_long()'s errors always gave (tests/integration/test-cli.sh checks them), and an
 * option the verb does not take, which another does, said as the verb's refusal. */
static void test_usage_errors(void **state) {
        static const struct {
                const char *args[4];
                const char *err;
        } cases[] = {
                { { "--bogus", "plan" }, "unrecognized option '--bogus'" },
                { { "-x", "plan" }, "invalid option -- 'x'" },
                { { "plan", "--wait" }, "option '--wait' requires an argument" },
                { { "plan", "--yes" }, "'plan' does not take --yes" },
                { { "plan", "--ye" }, "'plan' does not take --yes" },
                { { "-y", "plan" }, "'plan' does not take -y (--yes)" },
                { { "--color=red", "plan" }, "'plan' does not take --color" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *args[6] = { "node-reset", cases[i].args[0], cases[i].args[1], NULL };
                cleanup_free char *err = NULL;

                assert_int_equal(parse(args, &err), -EINVAL);
                assert_string_equal(err, cases[i].err);
        }
}

static void test_operands(void **state) {
        const char *args[] = { "node-reset", "--root", "plan", "-y", "manifest", "--color=red", "print", NULL };
        CmdlineOptions known = {};
        cleanup_free char **ops = NULL;
        cleanup_free char *err = NULL;
        int argc = load(args);

        assert_int_equal(cmdline_options_add(&known, verb_b, false, &err), 0);
        assert_int_equal(cmdline_operands(argc, argv, &known, &ops), 0);
        /* "plan" is --root's value; argv itself is left as it was. */
        assert_string_equal(ops[0], "manifest");
        assert_string_equal(ops[1], "print");
        assert_null(ops[2]);
        assert_string_equal(argv[2], "plan");
        cmdline_options_done(&known);
}

static void test_duplicate_across_phases(void **state) {
        CmdlineOptions set = {};
        char *err = NULL;

        phase_table_register(clash, ELEMENTSOF(clash));
        assert_int_equal(cmdline_options_add_phases(&set, NULL, false, &err), -EEXIST);
        assert_string_equal(err, "option --wait is declared twice: by a and by b");
        free(err);
        cmdline_options_done(&set);
}

static void test_duplicate_with_program(void **state) {
        CmdlineOptions set = {};
        cleanup_free char *err = NULL;

        phase_table_register(root_clash, ELEMENTSOF(root_clash));
        assert_int_equal(cmdline_options_add(&set, verb_a, false, &err), 0);
        assert_int_equal(cmdline_options_add_phases(&set, NULL, false, &err), -EEXIST);
        assert_string_equal(err, "option --root is declared twice: by the program and by b");
        cmdline_options_done(&set);
}

/* The union of several verbs' options: the same option twice is once; two spelled apart are refused. */
static void test_merge(void **state) {
        static const CmdlineOption other_yes = { .name = "yes", .help = "Another", .parse = parse_yes };
        static const CmdlineOption *const other[] = { &other_yes, NULL };
        CmdlineOptions set = {};
        char *err = NULL;

        assert_int_equal(cmdline_options_add(&set, verb_a, true, &err), 0);
        assert_int_equal(cmdline_options_add(&set, verb_b, true, &err), 0);
        assert_int_equal(set.n, 3);
        assert_int_equal(cmdline_options_add(&set, other, true, &err), -EEXIST);
        assert_non_null(err);
        free(err);
        cmdline_options_done(&set);
}

static void test_phase_names(void **state) {
        static const char *const names[] = { "b", NULL };
        static const char *const bogus[] = { "nope", NULL };
        CmdlineOptions set = {};
        char *err = NULL;

        phase_table_register(good, ELEMENTSOF(good));
        assert_int_equal(cmdline_options_add_phases(&set, names, false, &err), -ENOENT);
        assert_string_equal(err, "no phase declares the option --b");
        err = mfree(err);
        assert_int_equal(cmdline_options_add_phases(&set, (const char *const[]) { "flag", NULL }, false, &err), 0);
        assert_int_equal(set.n, 1);
        assert_string_equal(set.options[0].phase, "b");
        assert_int_equal(cmdline_options_add_phases(&set, bogus, false, &err), -ENOENT);
        free(err);
        cmdline_options_done(&set);
        assert_string_equal(cmdline_phase_name_nth(0), "a");
        assert_string_equal(cmdline_phase_name_nth(2), "b");
        assert_string_equal(cmdline_phase_name_nth(3), "verify");
        assert_null(cmdline_phase_name_nth(4));
}

static void test_help(void **state) {
        CmdlineOptions set = {};
        cleanup_free char *err = NULL;
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        assert_non_null(f);
        phase_table_register(good, ELEMENTSOF(good));
        assert_int_equal(cmdline_options_add(&set, verb_b, false, &err), 0);
        assert_int_equal(cmdline_options_add_phases(&set, NULL, false, &err), 0);
        cmdline_help(f, &set, false);
        fputs("--\n", f);
        cmdline_help(f, &set, true);
        assert_int_equal(fclose(f), 0);
        assert_string_equal(buf, "     --root=DIR         A tree\n"
                                 "  -y --yes              Do not ask\n"
                                 "     --color[=COLOR]    Paint it: red, green or blue\n"
                                 "--\n"
                                 "     --wait=DURATION    How long to wait (10s)\n"
                                 "     --flag             A long description that goes on\n"
                                 "                        on a second line\n");
        free(buf);
        cmdline_options_done(&set);
}

static void test_duration(void **state) {
        static const struct {
                const char *text;
                unsigned sec;
        } good_durations[] = {
                { "90", 90 }, { "90s", 90 }, { "5m", 300 }, { "2h", 7200 }, { "1h30m", 5400 }, { "0", 0 }
        };
        static const char *const bad[] = { "", "5x", "-1", "1h30", "m", "2h", "1d" };
        unsigned v;

        for (size_t i = 0; i < ELEMENTSOF(good_durations); i++) {
                assert_int_equal(cmdline_parse_duration("t", good_durations[i].text, 0, 7200, &v, NULL), 0);
                assert_int_equal(v, good_durations[i].sec);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                cleanup_free char *err = NULL;

                /* 2h and 1d are durations, past this option's bound of 1h30m */
                assert_int_equal(cmdline_parse_duration("t", bad[i], 1, 5400, &v, &err), -EINVAL);
                assert_true(startswith(err, "invalid --t '"));
                assert_non_null(
                        strstr(err, "': expected a duration from 1s to 1h30m, such as 90 (seconds), 90s, 5m or 2h"));
        }
        assert_int_equal(cmdline_parse_duration("t", "366d", 1, CMDLINE_DURATION_MAX, &v, NULL), 0);
        assert_int_equal(v, CMDLINE_DURATION_MAX);
}

static void test_parse_count_and_size(void **state) {
        unsigned n;
        uint64_t v;

        assert_int_equal(cmdline_parse_count("16", &n), 0);
        assert_int_equal(n, 16);
        assert_int_equal(cmdline_parse_count("16s", &n), -EINVAL);
        assert_int_equal(cmdline_parse_count("-1", &n), -EINVAL);
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

/* Every verb of node-reset's table builds its set (no option declared twice, every phase option it
 * names is one); every option has its help, and every value its --help and completion offer is one
 * its parser takes; every duration option takes the grammar and says the one error. */
static void check_option(const CmdlineOption *o) {
        cleanup_free char *err = NULL;
        const char *w;

        assert_non_null(o->help);
        assert_true(o->parse || (o->string && o->arg != CMDLINE_NO_ARG) || (o->flag && o->arg == CMDLINE_NO_ARG));
        assert_true((o->metavar != NULL) == (o->arg != CMDLINE_NO_ARG));
        for (size_t i = 0; o->value_nth && (w = o->value_nth(i)); i++) {
                if (o->complete == CMDLINE_COMPLETE_WORD)
                        assert_int_equal(o->parse(w, &err), 0);
                if (o->complete == CMDLINE_COMPLETE_LIST) {
                        PhaseSelection sel;

                        assert_int_equal(phase_selection_parse(&sel, w, NULL, false, &err), 0);
                }
        }
        if (!streq_ptr(o->metavar, "DURATION"))
                return;
        assert_int_equal(o->parse("90", &err), 0);
        assert_int_equal(o->parse("90s", &err), 0);
        assert_int_equal(o->parse("5m", &err), 0);
        assert_int_equal(o->parse("5x", &err), -EINVAL);
        assert_non_null(strstr(err, "': expected a duration from "));
        assert_non_null(strstr(err, ", such as 90 (seconds), 90s, 5m or 2h"));
}

static void test_real_tables(void **state) {
        size_t n, n_known = 0;
        const Verb *const *verbs;
        CmdlineOptions all = {};
        cleanup_free char *err = NULL;

        reset_phases_register();
        verbs = verbs_table(&n);
        for (size_t i = 0; i < n; i++) {
                CmdlineOptions set = {};

                assert_int_equal(verbs_options(&verbs[i], 1, &set, &err), 0);
                assert_non_null(cmdline_options_find(&set, "help"));
                assert_true(verbs[i]->summary && verbs[i]->run);
                n_known += set.n;
                cmdline_options_done(&set);
        }
        assert_int_equal(verbs_options(verbs, n, &all, &err), 0);
        assert_true(all.n > 40 && all.n < n_known);
        for (size_t i = 0; i < all.n; i++)
                check_option(&all.options[i]);
        cmdline_options_done(&all);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_options_parsed),
                cmocka_unit_test(test_bad_value),
                cmocka_unit_test(test_usage_errors),
                cmocka_unit_test(test_operands),
                cmocka_unit_test(test_duplicate_across_phases),
                cmocka_unit_test(test_duplicate_with_program),
                cmocka_unit_test(test_merge),
                cmocka_unit_test(test_phase_names),
                cmocka_unit_test(test_help),
                cmocka_unit_test(test_duration),
                cmocka_unit_test(test_parse_count_and_size),
                cmocka_unit_test(test_real_tables),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
