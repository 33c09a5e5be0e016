/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --help and the help verb, written from the tables: the verb table for the commands, each verb's
 * options (its own, the shared ones it lists, the phases' it takes), the phase table for the phases.
 * "help -o json" gives the same tables to a program (the docs tests read them). */

#include <errno.h>

#include "agent/base/log.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/help.h"
#include "agent/verbs/usage.h"
#include "agent/verbs/verbs.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

#define HELP_WIDTH 100

/* text at column 0 with prefix before it, wrapped at HELP_WIDTH between words. */
static void print_wrapped(FILE *f, const char *prefix, const char *text) {
        int col = fprintf(f, "%s", prefix);

        for (const char *p = text; *p;) {
                size_t w = strcspn(p, " ");

                if (col + (int) w + 1 > HELP_WIDTH && col > 0) {
                        fputc('\n', f);
                        col = 0;
                } else if (p != text)
                        col += fprintf(f, " ");
                col += fprintf(f, "%.*s", (int) w, p);
                p += w;
                p += strspn(p, " ");
        }
        fputc('\n', f);
}

static void print_phases(FILE *f) {
        cleanup_free char *names = strjoin_nth(cmdline_phase_name_nth, ", ", ", ");
        cleanup_free char *line = strprintf("%s.", strna(names));

        print_wrapped(f, "Phases, in order: ", strna(line));
}

/* "  plan                  Show what ..." with the operands after the name. */
static void command_line(FILE *f, const Verb *v) {
        int n = fprintf(f, "  %s%s%s", v->name, v->operands ? " " : "", strempty(v->operands));

        fprintf(f, "%*s%s\n", n < 24 ? 24 - n : 2, "", v->summary);
}

void help_program(FILE *f) {
        static const CmdlineOption *const own[] = { &option_help, &option_version, NULL };
        CmdlineOptions set = {};
        cleanup_free char *err = NULL;
        size_t n;
        const Verb *const *verbs = verbs_table(&n);

        fputs("Usage: node-reset [OPTIONS...] COMMAND [OPERANDS...]\n"
              "       node-reset COMMAND --help\n\n"
              "Bring a Kubernetes node back to a clean, rejoinable state.\n\nCommands:\n",
              f);
        for (size_t i = 0; i < n; i++)
                command_line(f, verbs[i]);
        fputs("\nOptions:\n", f);
        if (cmdline_options_add(&set, own, false, &err) >= 0)
                cmdline_help(f, &set, false);
        cmdline_options_done(&set);
        fputc('\n', f);
        print_phases(f);
        fputs("Each command's options: node-reset COMMAND --help. All of them, the manifest and the exit status:\n"
              "node-reset(8).\n",
              f);
}

int help_verbs(FILE *f, const Verb *const *rows, size_t n) {
        CmdlineOptions set = {};
        cleanup_free char *err = NULL;
        bool phases = false;
        int r;

        for (size_t i = 0; i < n; i++) {
                fprintf(f, "%s node-reset %s [OPTIONS...]%s%s\n", i == 0 ? "Usage:" : "      ", rows[i]->name,
                        rows[i]->operands ? " " : "", strempty(rows[i]->operands));
                phases = phases || rows[i]->all_phase_options;
        }
        fputc('\n', f);
        for (size_t i = 0; i < n; i++) {
                fprintf(f, "%s%s%s.\n", n > 1 ? rows[i]->name : "", n > 1 ? ": " : "", rows[i]->summary);
                if (rows[i]->operand_nth && rows[i]->operand_complete == CMDLINE_COMPLETE_WORD) {
                        cleanup_free char *words = strjoin_nth(rows[i]->operand_nth, ", ", " or ");
                        const char *op = rows[i]->operands + (rows[i]->operands[0] == '[');

                        fprintf(f, "%.*s: %s.\n", (int) strcspn(op, "]"), op, strna(words));
                }
        }
        r = verbs_options(rows, n, &set, &err);
        if (r < 0)
                return log_error_errno(r, "%s", strna(err));
        fputs("\nOptions:\n", f);
        cmdline_help(f, &set, false);
        if (set.n > 0 && set.options[set.n - 1].phase) {
                fputs("\nPhase options:\n", f);
                cmdline_help(f, &set, true);
        }
        cmdline_options_done(&set);
        if (phases) {
                fputc('\n', f);
                print_phases(f);
        }
        fputs("See node-reset(8).\n", f);
        return 0;
}

static void json_words(Emitter *e, const char *key, const char *(*nth)(size_t i)) {
        const char *w;

        if (!nth) {
                emit_null(e, key);
                return;
        }
        emit_open_array(e, key);
        for (size_t i = 0; (w = nth(i)); i++)
                emit_string(e, COLOR_NONE, NULL, NULL, w);
        emit_close_array(e);
}

static void json_option(Emitter *e, const CmdlineOption *o) {
        static const char *const args[] = {
                [CMDLINE_NO_ARG] = "none", [CMDLINE_REQUIRED_ARG] = "required", [CMDLINE_OPTIONAL_ARG] = "optional"
        };
        static const char *const completes[] = {
                [CMDLINE_COMPLETE_NONE] = "none", [CMDLINE_COMPLETE_FILE] = "file", [CMDLINE_COMPLETE_DIR] = "dir",
                [CMDLINE_COMPLETE_WORD] = "word", [CMDLINE_COMPLETE_LIST] = "list",
        };
        char short_name[2] = { o->short_name, '\0' };

        emit_open_object(e, NULL);
        emit_string(e, COLOR_NONE, "name", NULL, o->name);
        emit_string(e, COLOR_NONE, "short", NULL, o->short_name ? short_name : NULL);
        emit_string(e, COLOR_NONE, "argument", NULL, args[o->arg]);
        emit_string(e, COLOR_NONE, "metavar", NULL, o->metavar);
        emit_string(e, COLOR_NONE, "help", NULL, o->help);
        emit_string(e, COLOR_NONE, "phase", NULL, o->phase);
        emit_string(e, COLOR_NONE, "complete", NULL, completes[o->complete]);
        json_words(e, "values", o->value_nth);
        emit_close_object(e);
}

/* One verb: its name, usage, summary, the names of its options, and how its operands complete. */
static int json_verb(Emitter *e, const Verb *v) {
        CmdlineOptions set = {};
        cleanup_free char *err = NULL;
        int r;

        r = verbs_options(&v, 1, &set, &err);
        if (r < 0)
                return log_error_errno(r, "%s", strna(err));
        emit_open_object(e, NULL);
        emit_string(e, COLOR_NONE, "name", NULL, v->name);
        emit_string(e, COLOR_NONE, "operands", NULL, v->operands);
        emit_string(e, COLOR_NONE, "summary", NULL, v->summary);
        json_words(e, "operand_values", v->operand_nth);
        emit_open_array(e, "options");
        for (size_t i = 0; i < set.n; i++)
                emit_string(e, COLOR_NONE, NULL, NULL, set.options[i].name);
        emit_close_array(e);
        emit_close_object(e);
        cmdline_options_done(&set);
        return 0;
}

/* "help -o json": the verbs given, every option they take (and -V, the program's own, with program),
 * the phases. */
static int help_json(FILE *f, const Verb *const *rows, size_t n, bool program) {
        CmdlineOptions all = {};
        cleanup_free char *err = NULL;
        Emitter e;
        int r = 0;

        r = program ? verbs_all_options(&all, &err) : verbs_options(rows, n, &all, &err);
        if (r < 0)
                return log_error_errno(r, "%s", strna(err));
        emitter_init(&e, f, OUTPUT_JSON, false);
        emit_open_object(&e, NULL);
        emit_open_array(&e, "commands");
        for (size_t i = 0; i < n && r >= 0; i++)
                r = json_verb(&e, rows[i]);
        emit_close_array(&e);
        emit_open_array(&e, "options");
        for (size_t i = 0; i < all.n; i++)
                json_option(&e, &all.options[i]);
        emit_close_array(&e);
        json_words(&e, "phases", cmdline_phase_name_nth);
        emit_close_object(&e);
        cmdline_options_done(&all);
        return r;
}

/* "node-reset help [COMMAND [SUBCOMMAND]]" */
static int run_help(const ProgramOptions *o, int argc, char *argv[]) {
        const Verb *rows[16];
        const Verb *const *table;
        size_t n;
        VerbMatch m;

        verbs_match(argv + 1, &m);
        if (m.unknown)
                return usage_error("unknown command '%s'", m.unknown), EXIT_USAGE;
        if (!m.verb && m.command && argc > 2)
                return usage_error("unknown '%s' subcommand '%s'", m.command, argv[2]), EXIT_USAGE;
        if (m.verb && argc > 1 + (int) m.n_words)
                return usage_error("'help %s' takes nothing more, got '%s'", m.verb->name, argv[1 + m.n_words]),
                       EXIT_USAGE;
        if (m.verb)
                rows[0] = m.verb, n = 1;
        else if (m.command)
                n = verbs_of_command(m.command, rows, ELEMENTSOF(rows));
        else if (o->output == OUTPUT_JSON) {
                table = verbs_table(&n);
                return help_json(stdout, table, n, true) < 0 ? EXIT_RESIDUE : EXIT_CLEAN;
        } else {
                help_program(stdout);
                return EXIT_CLEAN;
        }
        if (o->output == OUTPUT_JSON)
                return help_json(stdout, rows, n, false) < 0 ? EXIT_RESIDUE : EXIT_CLEAN;
        return help_verbs(stdout, rows, n) < 0 ? EXIT_RESIDUE : EXIT_CLEAN;
}

static const CmdlineOption *const help_options[] = { OPTIONS_COMMON, &option_output, NULL };

const Verb help_verb = {
        .name = "help",
        .operands = "[COMMAND]",
        .summary = "Show this help, or a command's options",
        .options = help_options,
        .operand_nth = verbs_command_nth,
        .operand_complete = CMDLINE_COMPLETE_WORD,
        .run = run_help,
};
