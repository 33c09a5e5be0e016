/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The verb table, in the order --help lists it, and what the command line's operands name in it. */
#pragma once

#include <stddef.h>

#include "agent/engine/cmdline.h"
#include "agent/verbs/verb.h"

const Verb *const *verbs_table(size_t *ret_n);

/* The commands, each once, in the table's order ("manifest" for "manifest check" and "manifest
 * print"): the i-th, NULL past the last. */
const char *verbs_command_nth(size_t i);

/* What the operands name: a verb (m->verb, m->n_words of the operands its name takes), or a command
 * whose subcommand is missing or unknown (m->command set, m->verb NULL), or nothing (an unknown
 * command: m->command NULL, m->unknown the word; no operand at all: both NULL). */
typedef struct VerbMatch {
        const Verb *verb;
        const char *command;
        const char *unknown;
        size_t n_words;
} VerbMatch;
void verbs_match(char *const *operands, VerbMatch *m);

/* The rows a command has (its subcommands' when it has several), for help and the option set. */
size_t verbs_of_command(const char *command, const Verb **ret, size_t max);

/* The options a verb takes, copied in order: its program options, then its phases'. With several rows
 * (a command's subcommands, every verb), their union: an option several rows take comes once. */
int verbs_options(const Verb *const *rows, size_t n, CmdlineOptions *ret, char **reterr);
/* Every option: every verb's, and -V, the program's own (node-reset --version). What the operands
 * are found with, what a command line without a known verb is parsed with, what help -o json and the
 * completions list before a verb. */
int verbs_all_options(CmdlineOptions *ret, char **reterr);
