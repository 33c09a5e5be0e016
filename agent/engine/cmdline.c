/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The command line's options as tables: sets built from the program's and the phases' declarations,
 * one getopt_long() loop, --help's lines, and the option values every table shares (durations,
 * counts, sizes). */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>

#include "agent/engine/cmdline.h"
#include "agent/engine/phase.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

/* getopt_long()'s val for set->options[i]: above every short option's character. */
#define LONG_VAL 0x100

static const char *declared_by(const CmdlineOption *o) {
        return o->phase ?: "the program";
}

static int options_push(CmdlineOptions *set, const CmdlineOption *o, bool merge, char **reterr) {
        const CmdlineOption *old = cmdline_options_find(set, o->name);
        CmdlineOption *n;

        if (old) {
                if (merge && old->arg == o->arg && old->short_name == o->short_name)
                        return 0;
                return set_errmsg(reterr, -EEXIST, "option --%s is declared twice: by %s and by %s", o->name,
                                  declared_by(old), declared_by(o));
        }
        n = reallocarray(set->options, set->n + 1, sizeof *n);
        if (!n)
                return set_errmsg(reterr, -ENOMEM, "Out of memory.");
        set->options = n;
        set->options[set->n++] = *o;
        return 0;
}

int cmdline_options_add(CmdlineOptions *set, const CmdlineOption *const *options, bool merge, char **reterr) {
        for (; options && *options; options++) {
                int r = options_push(set, *options, merge, reterr);

                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_phase_option(CmdlineOptions *set, const Phase *p, const PhaseOption *o, bool merge, char **reterr) {
        const CmdlineOption c = {
                .name = o->name,
                .arg = o->arg == PHASE_OPTION_REQUIRED_ARG ? CMDLINE_REQUIRED_ARG : CMDLINE_NO_ARG,
                .metavar = o->metavar,
                .help = o->help,
                .parse = o->parse,
                .phase = p->name,
        };

        return options_push(set, &c, merge, reterr);
}

static bool name_listed(const char *const *names, const char *name) {
        for (; *names; names++)
                if (streq(*names, name))
                        return true;
        return false;
}

static bool phase_declares(const char *name) {
        size_t n;
        const Phase *table = phase_table(&n);

        for (size_t i = 0; i < n; i++)
                for (const PhaseOption *o = table[i].options; o && o->name; o++)
                        if (streq(o->name, name))
                                return true;
        return false;
}

int cmdline_options_add_phases(CmdlineOptions *set, const char *const *names, bool merge, char **reterr) {
        size_t n;
        const Phase *table = phase_table(&n);
        int r;

        for (const char *const *k = names; k && *k; k++)
                if (!phase_declares(*k))
                        return set_errmsg(reterr, -ENOENT, "no phase declares the option --%s", *k);
        for (size_t i = 0; i < n; i++)
                for (const PhaseOption *o = table[i].options; o && o->name; o++) {
                        if (names && !name_listed(names, o->name))
                                continue;
                        r = add_phase_option(set, &table[i], o, merge, reterr);
                        if (r < 0)
                                return r;
                }
        return 0;
}

void cmdline_options_done(CmdlineOptions *set) {
        set->options = mfree(set->options);
        set->n = 0;
}

const CmdlineOption *cmdline_options_find(const CmdlineOptions *set, const char *name) {
        for (size_t i = 0; set && i < set->n; i++)
                if (streq(set->options[i].name, name))
                        return &set->options[i];
        return NULL;
}

static const CmdlineOption *find_short(const CmdlineOptions *set, int c) {
        for (size_t i = 0; set && i < set->n; i++)
                if (set->options[i].short_name && set->options[i].short_name == c)
                        return &set->options[i];
        return NULL;
}

/* The long option a word names: exactly, or as the one option it abbreviates (getopt's rule). */
static const CmdlineOption *find_abbreviated(const CmdlineOptions *set, const char *word) {
        const CmdlineOption *found = NULL;
        size_t len = strcspn(word, "=");
        size_t n = 0;

        for (size_t i = 0; set && i < set->n; i++) {
                if (strncmp(set->options[i].name, word, len) != 0)
                        continue;
                if (set->options[i].name[len] == '\0')
                        return &set->options[i];
                found = &set->options[i];
                n++;
        }
        return n == 1 ? found : NULL;
}

/* getopt_long()'s tables for set: "struct option"s (ended by a zero one) and the short options. */
static int getopt_tables(const CmdlineOptions *set, struct option **ret_long, char **ret_short) {
        static const int has_arg[] = {
                [CMDLINE_NO_ARG] = no_argument,
                [CMDLINE_REQUIRED_ARG] = required_argument,
                [CMDLINE_OPTIONAL_ARG] = optional_argument,
        };
        cleanup_free struct option *l = calloc(set->n + 1, sizeof *l);
        cleanup_free char *s = malloc(1 + set->n * 3 + 1);
        size_t k = 0;

        if (!l || !s)
                return -ENOMEM;
        s[k++] = ':'; /* a missing argument is ':', not '?' */
        for (size_t i = 0; i < set->n; i++) {
                const CmdlineOption *o = &set->options[i];

                l[i] = (struct option) { .name = o->name, .has_arg = has_arg[o->arg], .val = LONG_VAL + (int) i };
                if (!o->short_name)
                        continue;
                s[k++] = o->short_name;
                if (o->arg != CMDLINE_NO_ARG)
                        s[k++] = ':';
                if (o->arg == CMDLINE_OPTIONAL_ARG)
                        s[k++] = ':';
        }
        s[k] = '\0';
        *ret_long = TAKE_PTR(l);
        *ret_short = TAKE_PTR(s);
        return 0;
}

int cmdline_operands(int argc, char *argv[], const CmdlineOptions *known, char ***ret) {
        cleanup_free struct option *l = NULL;
        cleanup_free char *s = NULL;
        cleanup_free char **copy = calloc(argc + 1, sizeof *copy);
        char **out;

        if (!copy || getopt_tables(known, &l, &s) < 0)
                return -ENOMEM;
        memcpy(copy, argv, argc * sizeof *copy);
        /* getopt's own messages would name argv[0]; errors are cmdline_parse()'s to say. */
        opterr = 0;
        optind = 0;
        while (getopt_long(argc, copy, s, l, NULL) >= 0)
                ;
        out = calloc(argc - optind + 1, sizeof *out);
        if (!out)
                return -ENOMEM;
        memcpy(out, copy + optind, (argc - optind) * sizeof *out);
        optind = 0;
        *ret = out;
        return 0;
}

/* getopt_long()'s ':' (missing argument) and '?' (an option set does not have), said as util-linux
 * says them, or, for an option of another verb, naming the verb that does not take it. */
static int option_error(int c, char *argv[], const CmdlineOptions *known, const char *verb, char **reterr) {
        bool short_opt = optopt > 0 && optopt < LONG_VAL && !startswith(argv[optind - 1], "--");
        const CmdlineOption *o;

        if (c == ':')
                return short_opt ? set_errmsg(reterr, -EINVAL, "option requires an argument -- '%c'", optopt)
                                 : set_errmsg(reterr, -EINVAL, "option '%s' requires an argument", argv[optind - 1]);
        o = !verb ? NULL : short_opt ? find_short(known, optopt) : find_abbreviated(known, argv[optind - 1] + 2);
        if (o && short_opt)
                return set_errmsg(reterr, -EINVAL, "'%s' does not take -%c (--%s)", verb, optopt, o->name);
        if (o)
                return set_errmsg(reterr, -EINVAL, "'%s' does not take --%s", verb, o->name);
        return short_opt ? set_errmsg(reterr, -EINVAL, "invalid option -- '%c'", optopt)
                         : set_errmsg(reterr, -EINVAL, "unrecognized option '%s'", argv[optind - 1]);
}

static int parse_one(const CmdlineOptions *set, int c, char **reterr) {
        const CmdlineOption *o = c >= LONG_VAL ? &set->options[c - LONG_VAL] : find_short(set, c);
        int r;

        if (!o->parse) {
                if (o->string)
                        *o->string = optarg;
                if (o->flag)
                        *o->flag = true;
                return 0;
        }
        r = o->parse(optarg, reterr);
        if (r == -ENOMEM)
                return set_errmsg(reterr, r, "Out of memory.");
        if (r < 0 && !*reterr)
                return set_errmsg(reterr, r, "invalid --%s '%s'", o->name, strempty(optarg));
        return r;
}

int cmdline_parse(int argc, char *argv[], const CmdlineOptions *set, const CmdlineOptions *known, const char *verb,
                  char **reterr) {
        cleanup_free struct option *l = NULL;
        cleanup_free char *s = NULL;
        int c, r = 0;

        *reterr = NULL;
        if (getopt_tables(set, &l, &s) < 0)
                return set_errmsg(reterr, -ENOMEM, "Out of memory.");
        opterr = 0;
        optind = 0;
        while ((c = getopt_long(argc, argv, s, l, NULL)) >= 0) {
                r = c == ':' || c == '?' ? option_error(c, argv, known, verb, reterr) : parse_one(set, c, reterr);
                if (r != 0)
                        break;
        }
        return r;
}

#define HELP_WIDTH 100
#define HELP_COLUMN 24

/* The description from column col, wrapped between words at HELP_WIDTH and at each '\n', going on
 * at HELP_COLUMN. */
static void help_wrapped(FILE *f, const char *text, int col) {
        bool line_start = true;

        for (const char *p = text; *p;) {
                size_t w = strcspn(p, " \n");

                if (*p == '\n' || (!line_start && col + 1 + (int) w > HELP_WIDTH)) {
                        col = fprintf(f, "\n%*s", HELP_COLUMN, "") - 1;
                        line_start = true;
                        p += *p == '\n';
                        continue;
                }
                col += fprintf(f, "%s%.*s", line_start ? "" : " ", (int) w, p);
                line_start = false;
                p += w;
                p += strspn(p, " ");
        }
}

/* "  -v --verbose" or "     --name=METAVAR" then the description at column 24, or, for a longer one,
 * at column 29 where the "--name=DURATION" lines align, two spaces after it at least. A WORD
 * option's values follow its description. */
static void help_line(FILE *f, const CmdlineOption *o) {
        cleanup_free char *values = NULL, *text = NULL;
        int n, col;

        n = o->short_name ? fprintf(f, "  -%c --%s", o->short_name, o->name) : fprintf(f, "     --%s", o->name);
        if (o->metavar)
                n += fprintf(f, o->arg == CMDLINE_OPTIONAL_ARG ? "[=%s]" : "=%s", o->metavar);
        col = n + 2 <= HELP_COLUMN ? HELP_COLUMN : n + 2 > 29 ? n + 2 : 29;
        fprintf(f, "%*s", col - n, "");
        if (o->complete == CMDLINE_COMPLETE_WORD && o->value_nth)
                values = strjoin_nth(o->value_nth, ", ", " or ");
        text = values ? strprintf("%s: %s", o->help, values) : NULL;
        help_wrapped(f, text ?: o->help, col);
        fputc('\n', f);
}

void cmdline_help(FILE *f, const CmdlineOptions *set, bool phase_options) {
        for (size_t i = 0; i < set->n; i++)
                if (!!set->options[i].phase == phase_options)
                        help_line(f, &set->options[i]);
}

const char *cmdline_phase_name_nth(size_t i) {
        size_t n;
        const Phase *table = phase_table(&n);

        return i < n ? table[i].name : i == n ? "verify" : NULL;
}

int cmdline_parse_duration(const char *name, const char *value, unsigned min_sec, unsigned max_sec, unsigned *ret_sec,
                           char **reterr) {
        char min[32], max[32];
        uint64_t sec;

        if (duration_parse(value, &sec) >= 0 && sec >= min_sec && sec <= max_sec) {
                *ret_sec = (unsigned) sec;
                return 0;
        }
        duration_format(min_sec, min, sizeof min);
        duration_format(max_sec, max, sizeof max);
        return set_errmsg(reterr, -EINVAL,
                          "invalid --%s '%s': expected a duration from %s to %s, such as 90 (seconds), 90s, 5m or 2h",
                          name, value, min, max);
}

int cmdline_parse_count(const char *s, unsigned *ret) {
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
