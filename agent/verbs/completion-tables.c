/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a completion script is written from, read once from the verb table and the option tables. */

#include <errno.h>

#include "agent/verbs/completion-tables.h"
#include "agent/verbs/verbs.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

void completion_tables_done(CompletionTables *t) {
        for (size_t i = 0; t->sets && i < t->n_verbs; i++)
                cmdline_options_done(&t->sets[i]);
        for (size_t i = 0; t->commands && i < t->n_commands; i++)
                cmdline_options_done(&t->commands[i].set);
        t->sets = mfree(t->sets);
        t->commands = mfree(t->commands);
        cmdline_options_done(&t->all);
}

static int commands_load(CompletionTables *t, char **reterr) {
        const char *w;
        int r;

        while (verbs_command_nth(t->n_commands))
                t->n_commands++;
        t->commands = calloc(t->n_commands, sizeof *t->commands);
        if (!t->commands)
                return -ENOMEM;
        for (size_t i = 0; (w = verbs_command_nth(i)); i++) {
                CompletionCommand *c = &t->commands[i];

                c->name = w;
                c->n_rows = verbs_of_command(w, c->rows, ELEMENTSOF(c->rows));
                c->subcommands = c->n_rows > 0 && strchr(c->rows[0]->name, ' ');
                r = verbs_options(c->rows, c->n_rows, &c->set, reterr);
                if (r < 0)
                        return r;
        }
        return 0;
}

int completion_tables_load(CompletionTables *t, char **reterr) {
        int r;

        *t = (CompletionTables) {};
        t->verbs = verbs_table(&t->n_verbs);
        t->sets = calloc(t->n_verbs, sizeof *t->sets);
        if (!t->sets)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_verbs; i++) {
                r = verbs_options(&t->verbs[i], 1, &t->sets[i], reterr);
                if (r < 0)
                        return r;
        }
        r = commands_load(t, reterr);
        return r < 0 ? r : verbs_all_options(&t->all, reterr);
}

void completion_print_values(FILE *f, const char *(*nth)(size_t i), const char *sep) {
        const char *w;

        for (size_t i = 0; nth && (w = nth(i)); i++)
                fprintf(f, "%s%s", i == 0 ? "" : sep, w);
}

void completion_print_option_words(FILE *f, const CmdlineOptions *set) {
        for (size_t i = 0; i < set->n; i++) {
                if (set->options[i].short_name)
                        fprintf(f, "-%c ", set->options[i].short_name);
                fprintf(f, "--%s%s", set->options[i].name, i + 1 < set->n ? " " : "");
        }
}

void completion_print_takes_value(FILE *f, const CmdlineOptions *set, const char *sep) {
        bool first = true;

        for (size_t i = 0; i < set->n; i++) {
                const CmdlineOption *o = &set->options[i];

                if (o->arg != CMDLINE_REQUIRED_ARG)
                        continue;
                if (o->short_name)
                        fprintf(f, "%s-%c", first ? "" : sep, o->short_name), first = false;
                fprintf(f, "%s--%s", first ? "" : sep, o->name);
                first = false;
        }
}

void completion_print_description(FILE *f, const char *help, const char *quote, bool brackets) {
        for (const char *p = help; *p; p++) {
                if (*p == '\n')
                        fputc(' ', f);
                else if (*p == '\'')
                        fputs(quote, f);
                else if (brackets && (*p == '[' || *p == ']'))
                        fprintf(f, "\\%c", *p);
                else
                        fputc(*p, f);
        }
}

const char *completion_subcommand(const Verb *v) {
        const char *sp = strchr(v->name, ' ');

        return sp ? sp + 1 : NULL;
}
