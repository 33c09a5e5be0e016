/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --help, "node-reset help [COMMAND]" and its JSON: written from the verb and option tables. */
#pragma once

#include <stdio.h>

#include "agent/verbs/verb.h"

/* "node-reset --help": the commands, the program's own options, the phases. */
void help_program(FILE *f);
/* "node-reset VERB --help": the usage of each row (a command with subcommands has several) and the
 * options they take. -ENOMEM or -EEXIST (a table declaring an option twice) when it cannot. */
int help_verbs(FILE *f, const Verb *const *rows, size_t n);
