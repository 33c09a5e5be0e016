/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Environment files as systemd's EnvironmentFile= reads them, and command lines as argument vectors:
 * what the node's services really get, never a substring that a comment happens to contain. */
#pragma once

#include <stddef.h>

/* Parse an environment file: KEY=VALUE lines; '#' or ';' first on a line starts a comment; values
 * unquoted (backslash escapes the next character, trailing blanks dropped), 'single-quoted' (literal)
 * or "double-quoted" (\" \\ \` \$ escaped), parts concatenated; a backslash before the end of a line
 * continues it. The last assignment of a key wins. Returns 0 with a strv of "KEY=value" in *ret_pairs,
 * or -EBADMSG for a file that is not an environment file (a line that is no assignment, an invalid
 * key, an unterminated quote) with its 1-based line in *ret_line (when not NULL); -ENOMEM. */
int env_file_parse(const char *text, size_t size, char ***ret_pairs, unsigned *ret_line);

/* The value of key in a strv of "KEY=value" pairs, or NULL. */
const char *env_get(char *const *pairs, const char *key);

/* Split s into words as a POSIX shell would, without any expansion: blanks separate words, 'single'
 * and "double" quotes and backslashes group and escape. 0 with the words (none for a blank string),
 * -EBADMSG for an unterminated quote or a trailing backslash, -ENOMEM. */
int argv_split(const char *s, char ***ret);

/* Split s at blanks only, as systemd expands an unbraced $VAR in ExecStart= into several words:
 * quotes in the value are part of the words. */
int argv_split_blanks(const char *s, char ***ret);

/* The value of a command-line flag named name (without dashes) in argv as Go's flag and pflag
 * packages read it: "--name=value", "-name=value", or "--name value"/"-name value"; the last one
 * wins; nothing after a "--" operand counts. argv[0] is the program and is not read. */
const char *argv_flag(char *const *argv, const char *name);
