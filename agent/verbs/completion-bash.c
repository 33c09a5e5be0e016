/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bash completion script, written from the tables: each verb's options, each option's value
 * (files, directories, one of its words, a comma list), the commands, subcommands and operands.
 * Plain bash with compgen, no bash-completion helper needed. */

#include "agent/verbs/completion-shells.h"

static void option_cases(FILE *f, const CompletionTables *t) {
        fputs("# The options each verb takes; before the verb (or after an unknown one), every option.\n"
              "__node_reset_options() {\n"
              "        case $1 in\n",
              f);
        for (size_t i = 0; i < t->n_verbs; i++) {
                fprintf(f, "        \"%s\") echo \"", t->verbs[i]->name);
                completion_print_option_words(f, &t->sets[i]);
                fputs("\" ;;\n", f);
        }
        for (size_t i = 0; i < t->n_commands; i++) {
                if (!t->commands[i].subcommands)
                        continue;
                fprintf(f, "        \"%s\") echo \"", t->commands[i].name);
                completion_print_option_words(f, &t->commands[i].set);
                fputs("\" ;;\n", f);
        }
        fputs("        *) echo \"", f);
        completion_print_option_words(f, &t->all);
        fputs("\" ;;\n        esac\n}\n\n", f);
}

static void operand_cases(FILE *f, const CompletionTables *t) {
        fputs("# A verb's operands; 1 when they do not complete.\n"
              "__node_reset_operands() {\n"
              "        local cur=$2\n"
              "        case $1 in\n",
              f);
        for (size_t i = 0; i < t->n_verbs; i++) {
                const Verb *v = t->verbs[i];

                if (v->operand_complete == CMDLINE_COMPLETE_FILE)
                        fprintf(f,
                                "        \"%s\")\n                compopt -o filenames 2> /dev/null\n"
                                "                COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n",
                                v->name);
                else if (v->operand_complete == CMDLINE_COMPLETE_WORD) {
                        fprintf(f, "        \"%s\") COMPREPLY=($(compgen -W \"", v->name);
                        completion_print_values(f, v->operand_nth, " ");
                        fputs("\" -- \"$cur\")) ;;\n", f);
                }
        }
        fputs("        *) return 1 ;;\n        esac\n}\n\n", f);
}

static void command_lists(FILE *f, const CompletionTables *t) {
        fputs("# The commands, and the subcommands of those that have some.\n__node_reset_commands=\"", f);
        for (size_t i = 0; i < t->n_commands; i++)
                fprintf(f, "%s%s", i == 0 ? "" : " ", t->commands[i].name);
        fputs("\"\n__node_reset_subcommands() {\n        case $1 in\n", f);
        for (size_t i = 0; i < t->n_commands; i++) {
                const CompletionCommand *c = &t->commands[i];

                if (!c->subcommands)
                        continue;
                fprintf(f, "        %s) echo \"", c->name);
                for (size_t k = 0; k < c->n_rows; k++)
                        fprintf(f, "%s%s", k == 0 ? "" : " ", completion_subcommand(c->rows[k]));
                fputs("\" ;;\n", f);
        }
        fputs("        esac\n}\n\n", f);
}

static void value_case(FILE *f, const CmdlineOption *o) {
        fputs("        ", f);
        if (o->short_name)
                fprintf(f, "-%c | ", o->short_name);
        fprintf(f, "--%s)\n", o->name);
        switch (o->complete) {
        case CMDLINE_COMPLETE_FILE:
        case CMDLINE_COMPLETE_DIR:
                fprintf(f,
                        "                compopt -o filenames 2> /dev/null\n"
                        "                COMPREPLY=($(compgen -%c -- \"$cur\")) ;;\n",
                        o->complete == CMDLINE_COMPLETE_FILE ? 'f' : 'd');
                break;
        case CMDLINE_COMPLETE_WORD:
                fputs("                COMPREPLY=($(compgen -W \"", f);
                completion_print_values(f, o->value_nth, " ");
                fputs("\" -- \"$cur\")) ;;\n", f);
                break;
        case CMDLINE_COMPLETE_LIST:
                fputs("                __node_reset_list \"", f);
                completion_print_values(f, o->value_nth, " ");
                fputs("\" \"$cur\" ;;\n", f);
                break;
        case CMDLINE_COMPLETE_NONE:
                fputs("                COMPREPLY=() ;;\n", f);
                break;
        }
}

static void value_cases(FILE *f, const CompletionTables *t) {
        fputs("# The options whose value may be the next word; --with-runtime's only follows '='.\n"
              "__node_reset_takes_value=\"",
              f);
        completion_print_takes_value(f, &t->all, " ");
        fputs("\"\n\n# Complete the value of $1 ($2: what is typed of it); 1 when it takes none.\n"
              "__node_reset_value() {\n"
              "        local cur=$2\n"
              "        case $1 in\n",
              f);
        for (size_t i = 0; i < t->all.n; i++)
                if (t->all.options[i].arg != CMDLINE_NO_ARG)
                        value_case(f, &t->all.options[i]);
        fputs("        *) return 1 ;;\n        esac\n        return 0\n}\n\n", f);
}

static const char main_function[] =
        "# Complete a comma separated list's last element from the words in $1.\n"
        "__node_reset_list() {\n"
        "        local words=$1 cur=$2 head=\"\" last=$2 w\n"
        "        if [[ $cur == *,* ]]; then\n"
        "                head=${cur%,*},\n"
        "                last=${cur##*,}\n"
        "        fi\n"
        "        COMPREPLY=()\n"
        "        for w in $words; do\n"
        "                [[ ,$head == *,$w,* ]] && continue\n"
        "                [[ $w == \"$last\"* ]] && COMPREPLY+=(\"$head$w\")\n"
        "        done\n"
        "        compopt -o nospace 2> /dev/null\n"
        "}\n"
        "\n"
        "_node_reset() {\n"
        "        local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
        "        local i w verb=\"\" subs\n"
        "\n"
        "        # \"--opt=value\": bash splits at '=' when it is in COMP_WORDBREAKS, else cur holds both.\n"
        "        if [[ $cur == --*=* ]]; then\n"
        "                local o=${cur%%=*}\n"
        "                if __node_reset_value \"$o\" \"${cur#*=}\"; then\n"
        "                        COMPREPLY=(\"${COMPREPLY[@]/#/$o=}\")\n"
        "                        return 0\n"
        "                fi\n"
        "        elif [[ $cur == = && $prev == --* ]]; then\n"
        "                __node_reset_value \"$prev\" \"\" && return 0\n"
        "        elif [[ $prev == = ]] && ((COMP_CWORD >= 2)); then\n"
        "                __node_reset_value \"${COMP_WORDS[COMP_CWORD - 2]}\" \"$cur\" && return 0\n"
        "        elif [[ \" $__node_reset_takes_value \" == *\" $prev \"* ]]; then\n"
        "                __node_reset_value \"$prev\" \"$cur\" && return 0\n"
        "        fi\n"
        "\n"
        "        # The verb (\"manifest check\"), skipping the options and their values.\n"
        "        for ((i = 1; i < COMP_CWORD; i++)); do\n"
        "                w=${COMP_WORDS[i]}\n"
        "                if [[ $w == -* ]]; then\n"
        "                        if [[ ${COMP_WORDS[i + 1]} == = ]]; then\n"
        "                                ((i += 2))\n"
        "                        elif [[ \" $__node_reset_takes_value \" == *\" $w \"* ]]; then\n"
        "                                ((i++))\n"
        "                        fi\n"
        "                        continue\n"
        "                fi\n"
        "                if [[ -z $verb ]]; then\n"
        "                        verb=$w\n"
        "                elif [[ $verb != *\" \"* && -n $(__node_reset_subcommands \"$verb\") ]]; then\n"
        "                        verb=\"$verb $w\"\n"
        "                fi\n"
        "        done\n"
        "\n"
        "        if [[ $cur == -* ]]; then\n"
        "                COMPREPLY=($(compgen -W \"$(__node_reset_options \"$verb\")\" -- \"$cur\"))\n"
        "        elif [[ -z $verb ]]; then\n"
        "                COMPREPLY=($(compgen -W \"$__node_reset_commands\" -- \"$cur\"))\n"
        "        elif [[ $verb != *\" \"* ]] && subs=$(__node_reset_subcommands \"$verb\") && [[ -n $subs ]]; then\n"
        "                COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n"
        "        else\n"
        "                __node_reset_operands \"$verb\" \"$cur\" || COMPREPLY=()\n"
        "        fi\n"
        "        return 0\n"
        "}\n"
        "\n"
        "complete -F _node_reset node-reset\n";

void completion_bash(FILE *f, const CompletionTables *t) {
        fputs("# SPDX-License-Identifier: LGPL-2.1-or-later\n"
              "# bash completion for node-reset(8), written by \"node-reset completion bash\" from the program's\n"
              "# verb and option tables (make completions): do not edit. Installed to\n"
              "# $(PREFIX)/share/bash-completion/completions/node-reset; plain bash, no helper library needed.\n\n",
              f);
        command_lists(f, t);
        option_cases(f, t);
        operand_cases(f, t);
        value_cases(f, t);
        fputs(main_function, f);
}
