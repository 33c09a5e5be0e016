/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The command line's options: the program's own, and those the registered phases declare
 * (PhaseOption), parsed with one getopt_long() loop and listed in --help in the phases' order. */
#pragma once

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

/* getopt_long()'s val for the k-th phase option (in the phases' order): above any program option's. */
#define CMDLINE_PHASE_OPTION 0x10000

/* One program option getopt_long() returned: 0 to go on, 1 when the command is done (--help,
 * --version), < 0 for an error it has already said. */
typedef int (*CmdlineProgramOption)(int c, const char *arg, void *userdata);

/* The program's options followed by every registered phase's, ended by a zero entry, in *ret (free()
 * it). -EEXIST with *reterr when two of them, the program's or a phase's, have the same name. */
int cmdline_options(const struct option *program, struct option **ret, char **reterr);

/* Parse argv's options, leaving optind at the first operand: a program option goes to program(), a
 * phase option to its parse(). 1 to go on with the operands; 0 when program() said the command is
 * done; < 0 on a usage error, with *reterr the one line to print ("unrecognized option '--bogus'"),
 * or NULL when program() has already said it. */
int cmdline_parse(int argc, char *argv[], const char *shortopts, const struct option *program,
                  CmdlineProgramOption program_option, void *userdata, char **reterr);

/* --help's lines for the registered phases' options, in the phases' order. */
void cmdline_help_phases(FILE *f);

/* Option values as the phases take them: whole seconds (at most UINT_MAX / 2), and sizes in bytes with
 * binary K/M/G/T suffixes ("8G", "512MiB"). -EINVAL (or -ERANGE) when the text is not one. */
int cmdline_parse_seconds(const char *s, unsigned *ret);
int cmdline_parse_size(const char *s, uint64_t *ret);
