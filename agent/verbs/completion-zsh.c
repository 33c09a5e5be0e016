/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The zsh completion script, written from the tables: for the verb the words name so far, its
 * options as _arguments specs (with their values: files, directories, one of its words, a comma list
 * through _values) and its operands; before the verb, every option and the commands. */

#include <string.h>

#include "agent/verbs/completion-shells.h"

static void value_action(FILE *f, const CmdlineOption *o) {
        switch (o->complete) {
        case CMDLINE_COMPLETE_FILE:
                fputs("_files", f);
                break;
        case CMDLINE_COMPLETE_DIR:
                fputs("_files -/", f);
                break;
        case CMDLINE_COMPLETE_WORD:
                fputc('(', f);
                completion_print_values(f, o->value_nth, " ");
                fputc(')', f);
                break;
        case CMDLINE_COMPLETE_LIST:
                fprintf(f, "_values -s , %s ", o->name);
                completion_print_values(f, o->value_nth, " ");
                break;
        case CMDLINE_COMPLETE_NONE:
                fputc(' ', f);
                break;
        }
}

/* '*-v[...]' '*--verbose[...]'; '*-m+[...]:manifest:_files' '*--manifest=[...]:manifest:_files';
 * '*--with-runtime=-[...]::with-runtime:(...)' (its value only after '='). Every option may be given
 * again, as the parser takes it. */
static void option_spec(FILE *f, const CmdlineOption *o) {
        static const char *const long_arg[] = {
                [CMDLINE_NO_ARG] = "", [CMDLINE_REQUIRED_ARG] = "=", [CMDLINE_OPTIONAL_ARG] = "=-"
        };

        for (int k = o->short_name ? 0 : 1; k < 2; k++) {
                if (k == 0)
                        fprintf(f, "                '*-%c%s[", o->short_name, o->arg == CMDLINE_NO_ARG ? "" : "+");
                else
                        fprintf(f, "                '*--%s%s[", o->name, long_arg[o->arg]);
                completion_print_description(f, o->help, "'\\''", true);
                fputc(']', f);
                if (o->arg != CMDLINE_NO_ARG) {
                        fprintf(f, ":%s%s:", o->arg == CMDLINE_OPTIONAL_ARG ? ":" : "", o->name);
                        value_action(f, o);
                }
                fputs("'\n", f);
        }
}

/* '1:command:(manifest)' '2:subcommand:(check)' '*:file:_files' */
static void operand_specs(FILE *f, const Verb *const *rows, size_t n) {
        const Verb *v = rows[0];
        unsigned pos = 2;

        fprintf(f, "                '1:command:(%.*s)'\n", (int) strcspn(v->name, " "), v->name);
        if (completion_subcommand(v)) {
                fputs("                '2:subcommand:(", f);
                for (size_t k = 0; k < n; k++)
                        fprintf(f, "%s%s", k == 0 ? "" : " ", completion_subcommand(rows[k]));
                fputs(")'\n", f);
                pos = 3;
        }
        if (n > 1 || !v->operands)
                return;
        if (strstr(v->operands, "..."))
                fputs("                '*", f);
        else
                fprintf(f, "                '%u:", pos);
        fprintf(f, "%s%s:", v->operands[0] == '[' ? ":" : "",
                v->operand_complete == CMDLINE_COMPLETE_FILE ? "file" : "operand");
        if (v->operand_complete == CMDLINE_COMPLETE_FILE)
                fputs("_files", f);
        else if (v->operand_complete == CMDLINE_COMPLETE_WORD) {
                fputc('(', f);
                completion_print_values(f, v->operand_nth, " ");
                fputc(')', f);
        } else
                fputc(' ', f);
        fputs("'\n", f);
}

static void verb_case(FILE *f, const char *name, const CmdlineOptions *set, const Verb *const *rows, size_t n) {
        fprintf(f, "        (\"%s\")\n                specs=(\n", name);
        for (size_t k = 0; k < set->n; k++)
                option_spec(f, &set->options[k]);
        operand_specs(f, rows, n);
        fputs("                ) ;;\n", f);
}

static void verb_loop(FILE *f, const CompletionTables *t) {
        bool first = true;

        fputs("        # The verb (\"manifest check\"), skipping the options and their values.\n"
              "        for ((i = 2; i < CURRENT; i++)); do\n"
              "                w=${words[i]}\n"
              "                case $w in\n"
              "                (",
              f);
        completion_print_takes_value(f, &t->all, "|");
        fputs(") ((i++)) ;;\n"
              "                (-*) ;;\n"
              "                (*)\n"
              "                        if [[ -z $verb ]]; then\n"
              "                                verb=$w\n"
              "                        elif [[ $verb == (",
              f);
        for (size_t i = 0; i < t->n_commands; i++)
                if (t->commands[i].subcommands) {
                        fprintf(f, "%s%s", first ? "" : "|", t->commands[i].name);
                        first = false;
                }
        fputs(") ]]; then\n"
              "                                verb=\"$verb $w\"\n"
              "                        fi ;;\n"
              "                esac\n"
              "        done\n\n",
              f);
}

void completion_zsh(FILE *f, const CompletionTables *t) {
        fputs("#compdef node-reset\n"
              "# SPDX-License-Identifier: LGPL-2.1-or-later\n"
              "# zsh completion for node-reset(8), written by \"node-reset completion zsh\" from the program's verb\n"
              "# and option tables (make completions): do not edit. Installed to\n"
              "# /usr/share/zsh/vendor-completions/_node-reset.\n\n"
              "_node-reset() {\n"
              "        local -a specs\n"
              "        local verb=\"\" w i\n\n",
              f);
        verb_loop(f, t);
        fputs("        case $verb in\n", f);
        for (size_t i = 0; i < t->n_verbs; i++)
                verb_case(f, t->verbs[i]->name, &t->sets[i], &t->verbs[i], 1);
        for (size_t i = 0; i < t->n_commands; i++)
                if (t->commands[i].subcommands)
                        verb_case(f, t->commands[i].name, &t->commands[i].set, t->commands[i].rows,
                                  t->commands[i].n_rows);
        fputs("        (*)\n                specs=(\n", f);
        for (size_t k = 0; k < t->all.n; k++)
                option_spec(f, &t->all.options[k]);
        fputs("                '1:command:(", f);
        for (size_t i = 0; i < t->n_commands; i++)
                fprintf(f, "%s%s", i == 0 ? "" : " ", t->commands[i].name);
        fputs(")'\n"
              "                ) ;;\n"
              "        esac\n"
              "        _arguments -s -S : $specs\n"
              "}\n\n"
              "_node-reset \"$@\"\n",
              f);
}
