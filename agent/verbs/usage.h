/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A usage error as the command line reports it: one line, then a pointer to --help. */
#pragma once

/* The command (or "command subcommand") the command line names, once known: the pointer to --help
 * becomes that command's. NULL: the program's. */
void usage_set_command(const char *command);

/* "node-reset: MESSAGE" (escaped) and "Try 'node-reset COMMAND --help'." (or 'node-reset --help'
 * without a command) on stderr; returns -EINVAL. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
