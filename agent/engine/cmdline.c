/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The command line's options: the program's and the registered phases', one getopt_long() loop. */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "agent/engine/cmdline.h"
#include "agent/engine/phase.h"
#include "errno-util.h"
#include "string-util.h"

/* The k-th option of the registered phases, in their order, and the phase declaring it. */
static const PhaseOption *phase_option_nth(size_t k, const Phase **ret_phase) {
        const Phase *table;
        size_t n;

        table = phase_table(&n);
        for (size_t i = 0; i < n; i++)
                for (const PhaseOption *o = table[i].options; o && o->name; o++)
                        if (k-- == 0) {
                                if (ret_phase)
                                        *ret_phase = &table[i];
                                return o;
                        }
        return NULL;
}

static size_t n_phase_options(void) {
        size_t n = 0;

        while (phase_option_nth(n, NULL))
                n++;
        return n;
}

/* Who declared opts[i], for the message naming both declarations of a name. */
static const char *declared_by(size_t i, size_t n_program) {
        const Phase *p;

        if (i < n_program)
                return "the program";
        (void) phase_option_nth(i - n_program, &p);
        return p->name;
}

static int check_unique(const struct option *opts, size_t n, size_t n_program, char **reterr) {
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < i; j++)
                        if (streq(opts[i].name, opts[j].name))
                                return set_errmsg(reterr, -EEXIST, "option --%s is declared twice: by %s and by %s",
                                                  opts[i].name, declared_by(j, n_program), declared_by(i, n_program));
        return 0;
}

int cmdline_options(const struct option *program, struct option **ret, char **reterr) {
        size_t n_program = 0, n_phase = n_phase_options(), n = 0;
        struct option *opts;
        int r;

        while (program[n_program].name)
                n_program++;
        opts = calloc(n_program + n_phase + 1, sizeof *opts);
        if (!opts)
                return set_errmsg(reterr, -ENOMEM, "Out of memory.");
        for (; n < n_program; n++)
                opts[n] = program[n];
        for (size_t k = 0; k < n_phase; k++, n++) {
                const PhaseOption *o = phase_option_nth(k, NULL);

                opts[n] = (struct option) {
                        .name = o->name,
                        .has_arg = o->arg == PHASE_OPTION_REQUIRED_ARG ? required_argument : no_argument,
                        .val = CMDLINE_PHASE_OPTION + (int) k,
                };
        }
        r = check_unique(opts, n, n_program, reterr);
        if (r < 0) {
                free(opts);
                return r;
        }
        *ret = opts;
        return 0;
}

/* getopt_long()'s ':' (missing argument) and '?' (unknown option), said as util-linux says them. */
static int option_error(int c, char *argv[], char **reterr) {
        bool short_opt = optopt > 0 && optopt < 0x100 && !startswith(argv[optind - 1], "--");

        if (c == ':')
                return short_opt ? set_errmsg(reterr, -EINVAL, "option requires an argument -- '%c'", optopt)
                                 : set_errmsg(reterr, -EINVAL, "option '%s' requires an argument", argv[optind - 1]);
        return short_opt ? set_errmsg(reterr, -EINVAL, "invalid option -- '%c'", optopt)
                         : set_errmsg(reterr, -EINVAL, "unrecognized option '%s'", argv[optind - 1]);
}

static int parse_one(int c, CmdlineProgramOption program_option, void *userdata, char **reterr) {
        const PhaseOption *o;
        int r;

        if (c < CMDLINE_PHASE_OPTION)
                return program_option(c, optarg, userdata);
        o = phase_option_nth((size_t) (c - CMDLINE_PHASE_OPTION), NULL);
        r = o->parse(optarg, reterr);
        if (r == -ENOMEM)
                return set_errmsg(reterr, r, "Out of memory.");
        if (r < 0)
                return set_errmsg(reterr, r, "invalid --%s '%s'", o->name, strempty(optarg));
        return r;
}

int cmdline_parse(int argc, char *argv[], const char *shortopts, const struct option *program,
                  CmdlineProgramOption program_option, void *userdata, char **reterr) {
        struct option *opts;
        int c, r;

        *reterr = NULL;
        r = cmdline_options(program, &opts, reterr);
        if (r < 0)
                return r;
        /* getopt's own messages would name argv[0] (a path, a staged copy): ours name node-reset. */
        opterr = 0;
        while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) >= 0) {
                r = c == ':' || c == '?' ? option_error(c, argv, reterr)
                                         : parse_one(c, program_option, userdata, reterr);
                if (r != 0)
                        break;
        }
        free(opts);
        if (r > 0)
                return 0;
        return r < 0 ? r : 1;
}

/* "     --name=METAVAR" then the description at column 24, or, for a longer one, at column 29 where
 * the "--name=SECONDS" lines align, two spaces after it at least; a '\n' goes on at column 24. */
static void help_line(FILE *f, const PhaseOption *o) {
        int n, col;

        n = fprintf(f, "     --%s%s%s", o->name, o->metavar ? "=" : "", strempty(o->metavar));
        col = n < 24 ? 24 : n + 2 > 29 ? n + 2 : 29;
        fprintf(f, "%*s", col - n, "");
        for (const char *p = o->help; *p; p++) {
                fputc(*p, f);
                if (*p == '\n')
                        fprintf(f, "%24s", "");
        }
        fputc('\n', f);
}

void cmdline_help_phases(FILE *f) {
        const PhaseOption *o;

        for (size_t k = 0; (o = phase_option_nth(k, NULL)); k++)
                help_line(f, o);
}

int cmdline_parse_seconds(const char *s, unsigned *ret) {
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || *end || v > UINT_MAX / 2 || s[0] == '-')
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

int cmdline_parse_size(const char *s, uint64_t *ret) {
        static const char units[] = "KMGT";
        unsigned long long v;
        const char *u;
        char *end;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || end == s || s[0] == '-')
                return -EINVAL;
        if (*end) {
                if (end[1] && !streq(end + 1, "iB") && !streq(end + 1, "B"))
                        return -EINVAL;
                u = strchr(units, end[0] & ~0x20);
                if (!u || end[0] == '\0')
                        return -EINVAL;
                for (const char *k = units; k <= u; k++) {
                        if (v > UINT64_MAX / 1024)
                                return -ERANGE;
                        v *= 1024;
                }
        }
        *ret = v;
        return 0;
}
