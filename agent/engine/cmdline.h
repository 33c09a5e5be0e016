/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The command line's options as tables: a verb's set (the program's options it lists, then the
 * phases' PhaseOption it takes), parsed with one getopt_long() loop, printed by --help and read by
 * the completion generator, so that what is typed, listed and completed is one table. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum CmdlineArg {
        CMDLINE_NO_ARG,       /* --name */
        CMDLINE_REQUIRED_ARG, /* --name=VALUE or --name VALUE */
        CMDLINE_OPTIONAL_ARG, /* --name or --name=VALUE, never --name VALUE */
} CmdlineArg;

/* How a shell completes the option's value (the completion scripts are generated from it). */
typedef enum CmdlineComplete {
        CMDLINE_COMPLETE_NONE, /* free text: a name, a number, a duration, a URL */
        CMDLINE_COMPLETE_FILE,
        CMDLINE_COMPLETE_DIR,
        CMDLINE_COMPLETE_WORD, /* one of value_nth() */
        CMDLINE_COMPLETE_LIST, /* a comma-separated list of value_nth() */
} CmdlineComplete;

/* What parse() returns besides 0 (go on) and -errno (a usage error, said in *reterr): the option
 * ends the parsing, and the command. */
#define CMDLINE_HELP 1 /* --help: the caller prints the help of what it was parsing for */
#define CMDLINE_DONE 2 /* the option was the command (--version): exit 0 */

typedef struct CmdlineOption {
        const char *name; /* the long name, without "--" */
        CmdlineArg arg;
        const char *metavar; /* the value's name in --help ("DIR"); NULL without an argument */
        const char *help;    /* --help's description; each '\n' goes on at the description's column */
        /* The value (NULL without one), kept by whoever declared the option. A bad value is -EINVAL
         * with *reterr the one line the operator reads ("invalid --NAME 'VALUE': ..."). Without
         * parse, the value is kept as it is in *string, or the option sets *flag. */
        int (*parse)(const char *value, char **reterr);
        char short_name; /* 'v' for -v; 0: none */
        CmdlineComplete complete;
        /* The values the parser accepts, for --help (appended as ": a, b or c" to a WORD option's
         * help), for the completion and for the parser's own error; NULL past the last. */
        const char *(*value_nth)(size_t i);
        const char *phase;   /* in a CmdlineOptions: the phase that declared it; NULL: the program's */
        const char **string; /* without parse: where the value goes as it is */
        bool *flag;          /* without parse: set by an option without a value */
} CmdlineOption;

/* A verb's options (or the union of every verb's), copied from their tables, in order. */
typedef struct CmdlineOptions {
        CmdlineOption *options;
        size_t n;
} CmdlineOptions;

/* Append the options of a NULL-terminated list. An option of the same name as one already in set is
 * -EEXIST with *reterr naming both, unless merge is true and the two are spelled alike (same
 * argument, same short name): then the first stays (the union of several verbs' options). */
int cmdline_options_add(CmdlineOptions *set, const CmdlineOption *const *options, bool merge, char **reterr);
/* Append the registered phases' options (phase.h), in the phases' order: every one (names NULL), or
 * those named (a NULL-terminated list; -ENOENT for a name no phase declares). merge as above. */
int cmdline_options_add_phases(CmdlineOptions *set, const char *const *names, bool merge, char **reterr);
void cmdline_options_done(CmdlineOptions *set);
const CmdlineOption *cmdline_options_find(const CmdlineOptions *set, const char *name);

/* argv's operands, as getopt_long() with known's options would leave them behind the options, found
 * without parsing any value: a NULL-terminated array of argv's own pointers in *ret (free() it). A
 * usage error is left for cmdline_parse() to say. */
int cmdline_operands(int argc, char *argv[], const CmdlineOptions *known, char ***ret);

/* Parse argv's options with set's, each value to its option's parse(), leaving optind at the first
 * operand. 0 to go on; CMDLINE_HELP or CMDLINE_DONE from an option; < 0 on a usage error with
 * *reterr the one line to print: getopt's own ("unrecognized option '--bogus'", "option '--root'
 * requires an argument"), or, for an option of known that set does not have, "'VERB' does not take
 * --NAME". */
int cmdline_parse(int argc, char *argv[], const CmdlineOptions *set, const CmdlineOptions *known, const char *verb,
                  char **reterr);

/* --help's lines for set's options: the program's (phase_options false) or the phases'. */
void cmdline_help(FILE *f, const CmdlineOptions *set, bool phase_options);

/* The names --phases takes: the registered phases in their order, then "verify" (engine_verify's pass). */
const char *cmdline_phase_name_nth(size_t i);

/* The longest a duration may be (duration_parse()'s bound): 366 days. */
#define CMDLINE_DURATION_MAX (366U * 86400U)

/* A duration option's value: "90" (seconds), "90s", "5m", "2h", "1d", "1h30m" (duration_parse()),
 * from min_sec to max_sec. Every duration option of the program takes this one grammar and says
 * this one error: "invalid --NAME 'VALUE': expected a duration from 1s to 1h, such as 90 (seconds),
 * 90s, 5m or 2h". */
int cmdline_parse_duration(const char *name, const char *value, unsigned min_sec, unsigned max_sec, unsigned *ret_sec,
                           char **reterr);
/* A count (at most UINT_MAX / 2), and a size in bytes with binary K/M/G/T suffixes ("8G", "512MiB").
 * -EINVAL (or -ERANGE) when the text is not one. */
int cmdline_parse_count(const char *s, unsigned *ret);
int cmdline_parse_size(const char *s, uint64_t *ret);
