/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a completion script is written from: the verbs, the commands (a command with subcommands has
 * several verbs), the options each takes and every option; and the few ways a script prints them. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "agent/verbs/verb.h"

#define COMPLETION_MAX_ROWS 8

typedef struct CompletionCommand {
        const char *name;                      /* "plan", "manifest" */
        const Verb *rows[COMPLETION_MAX_ROWS]; /* its verbs: one, or its subcommands' */
        size_t n_rows;
        bool subcommands;   /* its verbs are "NAME SUB" */
        CmdlineOptions set; /* every option its verbs take */
} CompletionCommand;

typedef struct CompletionTables {
        const Verb *const *verbs;
        size_t n_verbs;
        CmdlineOptions *sets; /* sets[i]: verbs[i]'s options */
        CompletionCommand *commands;
        size_t n_commands;
        CmdlineOptions all; /* every option, -V too: before the verb, and after an unknown one */
} CompletionTables;

int completion_tables_load(CompletionTables *t, char **reterr);
void completion_tables_done(CompletionTables *t);

/* nth(0) sep nth(1) ... */
void completion_print_values(FILE *f, const char *(*nth)(size_t i), const char *sep);
/* "-v --verbose --root ...": every word an option of set is typed as. */
void completion_print_option_words(FILE *f, const CmdlineOptions *set);
/* The words of the options whose value may be the next word (--root DIR, -m FILE), sep between. */
void completion_print_takes_value(FILE *f, const CmdlineOptions *set, const char *sep);
/* The help text on one line inside a script's single quotes: a "'" written as quote, zsh's "[...]"
 * brackets escaped when brackets. */
void completion_print_description(FILE *f, const char *help, const char *quote, bool brackets);
/* "check" of "manifest check". */
const char *completion_subcommand(const Verb *v);
