/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a verb is to the program: a row of the verb table (verbs.c), declared in the verb's own file
 * with the options it takes, so that --help, the completion and the parser read one table. */
#pragma once

#include <stdbool.h>

#include "agent/engine/cmdline.h"
#include "agent/verbs/options.h"

typedef struct Verb {
        /* "plan"; "manifest check": a command and its subcommand (the command alone is not a verb) */
        const char *name;
        /* What follows the name, for the usage line ("NODE", "FILE..."); NULL: nothing, and an
         * operand is a usage error said before anything runs ("run status" must not reset). */
        const char *operands;
        const char *summary; /* the command list's line */
        /* The program's options it takes, NULL-terminated (options.h declares the shared ones). */
        const CmdlineOption *const *options;
        /* The phases' options (PhaseOption) it takes: every one, or only those named (NULL-terminated). */
        bool all_phase_options;
        const char *const *phase_options;
        /* Its operands complete as these words (the completion scripts); NULL: not completed. */
        const char *(*operand_nth)(size_t i);
        CmdlineComplete operand_complete;
        /* argv: the verb's name words, then its operands. Returns the exit status. */
        int (*run)(const ProgramOptions *o, int argc, char *argv[]);
        /* The exit status of its usage errors when not 2: orphan-check's 255 (ExecCondition= reads
         * 1..254 as "skip"). */
        int usage_status;
} Verb;

/* The rows, each defined in its verb's file; verbs.c lists them in --help's order. */
extern const Verb plan_verb, run_verb, status_verb, manifest_check_verb, manifest_print_verb, orphan_check_verb,
        forget_verb, drain_verb, help_verb, completion_verb;
