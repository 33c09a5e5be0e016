/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* node-reset: find the verb the command line names (agent/verbs/verbs.c), parse the options that verb
 * takes (its own table), then run it. Each verb lives in agent/verbs/, the rest in modules. */

#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "agent/base/log.h"
#include "agent/engine/cmdline.h"
#include "agent/phases/phases.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/help.h"
#include "agent/verbs/usage.h"
#include "agent/verbs/verbs.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

typedef struct Command {
        VerbMatch m;
        const Verb *rows[16]; /* the verb, or the rows of a command without its subcommand */
        size_t n_rows;
        CmdlineOptions set;   /* what the command line is parsed with */
        CmdlineOptions known; /* every verb's options: an option set lacks is another verb's */
        char name[64];        /* "plan", "manifest check", "manifest": for the usage errors */
} Command;

/* The rows whose options parse argv: the verb, or a command's subcommands; with no command, or an
 * unknown one, every option anyone has. */
static int command_options(Command *c, char **reterr) {
        if (c->m.verb) {
                c->rows[0] = c->m.verb;
                c->n_rows = 1;
                (void) snprintf(c->name, sizeof c->name, "%s", c->m.verb->name);
        } else if (c->m.command) {
                c->n_rows = verbs_of_command(c->m.command, c->rows, ELEMENTSOF(c->rows));
                (void) snprintf(c->name, sizeof c->name, "%s", c->m.command);
        }
        if (c->n_rows > 0)
                return verbs_options(c->rows, c->n_rows, &c->set, reterr);
        return verbs_all_options(&c->set, reterr);
}

static int usage_status(const Command *c) {
        return c->m.verb && c->m.verb->usage_status ? c->m.verb->usage_status : EXIT_USAGE;
}

/* "check or print": the subcommands of a command, from its rows. */
static char *subcommands(const Command *c) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        for (size_t i = 0; i < c->n_rows; i++)
                fprintf(f, "%s%s",
                        i == 0              ? ""
                        : i + 1 < c->n_rows ? ", "
                                            : " or ",
                        c->rows[i]->name + strlen(c->m.command) + 1);
        return fclose(f) == 0 ? buf : mfree(buf);
}

/* After the options: a verb, with the operands it takes; else the usage error. 0 to run it. */
static int command_check(const Command *c, int argc, char *argv[]) {
        cleanup_free char *names = NULL;

        if (c->m.unknown)
                return usage_error("unknown command '%s'", c->m.unknown);
        if (!c->m.command) {
                names = strjoin_nth(verbs_command_nth, ", ", " or ");
                return usage_error("a command is needed: %s", strna(names));
        }
        if (!c->m.verb && argc < 2)
                return usage_error("'%s' needs a subcommand: %s", c->m.command, strna(names = subcommands(c)));
        if (!c->m.verb)
                return usage_error("unknown '%s' subcommand '%s'", c->m.command, argv[1]);
        /* "run status" must not reset the node and exit 0: refused, like util-linux. */
        if (!c->m.verb->operands && argc > (int) c->m.n_words)
                return usage_error("'%s' takes no operands, got '%s'", c->m.verb->name, argv[c->m.n_words]);
        return 0;
}

static int run_command(int argc, char *argv[]) {
        Command c = {};
        cleanup_free char *err = NULL;
        cleanup_free char **operands = NULL;
        int r;

        r = verbs_all_options(&c.known, &err);
        if (r >= 0)
                r = cmdline_operands(argc, argv, &c.known, &operands);
        if (r >= 0) {
                verbs_match(operands, &c.m);
                r = command_options(&c, &err);
        }
        if (r < 0) {
                /* A table that declares an option twice: the program's fault, said as such. */
                log_error("Cannot build the command line's options: %s", err ?: strerror(-r));
                r = EXIT_USAGE;
                goto finish;
        }
        usage_set_command(c.name[0] ? c.name : NULL);
        r = cmdline_parse(argc, argv, &c.set, &c.known, c.name[0] ? c.name : NULL, &err);
        if (r < 0)
                r = (usage_error("%s", err), usage_status(&c));
        else if (r == CMDLINE_HELP && c.n_rows > 0)
                r = help_verbs(stdout, c.rows, c.n_rows) < 0 ? EXIT_RESIDUE : EXIT_CLEAN;
        else if (r == CMDLINE_HELP)
                help_program(stdout), r = EXIT_CLEAN;
        else if (r == CMDLINE_DONE)
                r = EXIT_CLEAN;
        else if (command_check(&c, argc - optind, argv + optind) < 0)
                r = usage_status(&c);
        else {
                program_options_finish();
                r = c.m.verb->run(&program_options, argc - optind, argv + optind);
        }
finish:
        cmdline_options_done(&c.set);
        cmdline_options_done(&c.known);
        return r;
}

/* A run reads the same large state up to three times (the plan; the act, under the xtables lock;
 * the verify), and a legacy table read is a whole-table copy out of the kernel plus libiptc's copy
 * of each rule: megabytes for a node with a few thousand Services. Freed memory is kept for the
 * next read instead of being handed back and faulted in again (the bench node: 1,000 page faults
 * fewer, 3,560 -> 2,540); the tool is a short-lived process, its peak unchanged. */
static void keep_freed_memory(void) {
        (void) mallopt(M_MMAP_THRESHOLD, 32 << 20);
        (void) mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

/* The removal walk holds one directory fd per level of a tree: allow as many as the hard limit. */
static void raise_nofile_limit(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
                return;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_debug_errno(negative_errno(), "Cannot raise RLIMIT_NOFILE, ignoring: %m");
}

int main(int argc, char *argv[]) {
        int r;

        program_options.started_usec = now(CLOCK_MONOTONIC);
        reset_phases_register();
        log_setup();
        keep_freed_memory();
        raise_nofile_limit();
        r = run_command(argc, argv);
        program_options_done();
        return r;
}
