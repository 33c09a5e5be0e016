/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fish completion script, written from the tables: one "complete" line per option naming the
 * verbs that take it, its value (files, directories, one of its words, a comma list), the commands,
 * subcommands and operands. */

#include <string.h>

#include "agent/verbs/completion-shells.h"

static const char functions[] =
        "# Is the verb the command line names so far (\"manifest check\"; \"\" before any) one of the arguments?\n"
        "function __node_reset_takes\n"
        "    set -l verb (__node_reset_verb)\n"
        "    contains -- \"$verb\" $argv\n"
        "end\n\n"
        "# A comma separated list's next element, from the words given.\n"
        "function __node_reset_list\n"
        "    set -l cur (string replace -r -- '^--[a-z-]+=' '' (commandline -ct))\n"
        "    set -l head (string replace -r -- '[^,]*$' '' $cur)\n"
        "    for w in $argv\n"
        "        contains -- $w (string split , -- $head); or echo $head$w\n"
        "    end\n"
        "end\n\n"
        "complete -c node-reset -f\n";

static void verb_function(FILE *f, const CompletionTables *t) {
        fputs("# The verb the command line names so far, skipping the options and their values.\n"
              "function __node_reset_verb\n"
              "    set -l tokens (commandline -opc)\n"
              "    set -e tokens[1]\n"
              "    set -l verb\n"
              "    set -l skip 0\n"
              "    for t in $tokens\n"
              "        if test $skip = 1\n"
              "            set skip 0\n"
              "            continue\n"
              "        end\n"
              "        switch $t\n"
              "            case ",
              f);
        completion_print_takes_value(f, &t->all, " ");
        fputs("\n                set skip 1\n"
              "            case '-*'\n"
              "            case '*'\n"
              "                if test -z \"$verb\"\n"
              "                    set verb $t\n"
              "                else if contains -- $verb",
              f);
        for (size_t i = 0; i < t->n_commands; i++)
                if (t->commands[i].subcommands)
                        fprintf(f, " %s", t->commands[i].name);
        fputs("\n                    set verb \"$verb $t\"\n"
              "                end\n"
              "        end\n"
              "    end\n"
              "    echo $verb\n"
              "end\n\n",
              f);
}

/* "" (before the verb), and each verb and command with subcommands that takes the option. */
static void takers(FILE *f, const CompletionTables *t, const char *name) {
        fputs("\"\"", f);
        for (size_t i = 0; i < t->n_verbs; i++)
                if (cmdline_options_find(&t->sets[i], name))
                        fprintf(f, " \"%s\"", t->verbs[i]->name);
        for (size_t i = 0; i < t->n_commands; i++)
                if (t->commands[i].subcommands && cmdline_options_find(&t->commands[i].set, name))
                        fprintf(f, " \"%s\"", t->commands[i].name);
}

static void value_flags(FILE *f, const CmdlineOption *o) {
        if (o->arg != CMDLINE_REQUIRED_ARG)
                return;
        switch (o->complete) {
        case CMDLINE_COMPLETE_FILE:
                fputs(" -r -F", f);
                break;
        case CMDLINE_COMPLETE_DIR:
                fputs(" -x -a '(__fish_complete_directories)'", f);
                break;
        case CMDLINE_COMPLETE_WORD:
                fputs(" -x -a '", f);
                completion_print_values(f, o->value_nth, " ");
                fputc('\'', f);
                break;
        case CMDLINE_COMPLETE_LIST:
                fputs(" -x -a '(__node_reset_list ", f);
                completion_print_values(f, o->value_nth, " ");
                fputs(")'", f);
                break;
        case CMDLINE_COMPLETE_NONE:
                fputs(" -x", f);
                break;
        }
}

static void option_line(FILE *f, const CompletionTables *t, const CmdlineOption *o) {
        fputs("complete -c node-reset -n '__node_reset_takes ", f);
        takers(f, t, o->name);
        fputc('\'', f);
        if (o->short_name)
                fprintf(f, " -s %c", o->short_name);
        fprintf(f, " -l %s", o->name);
        value_flags(f, o);
        fputs(" -d '", f);
        completion_print_description(f, o->help, "\\'", false);
        fputs("'\n", f);
        if (o->arg != CMDLINE_OPTIONAL_ARG || !o->value_nth)
                return;
        /* Its value only after '=', the one form the parser takes: offered once "--NAME=" is typed. */
        fputs("complete -c node-reset -n '__node_reset_takes ", f);
        takers(f, t, o->name);
        fprintf(f, "; and string match -q -- \"--%s=*\" (commandline -ct)' -a '", o->name);
        for (size_t i = 0; o->value_nth(i); i++)
                fprintf(f, "%s--%s=%s", i == 0 ? "" : " ", o->name, o->value_nth(i));
        fputs("'\n", f);
}

static void command_lines(FILE *f, const CompletionTables *t) {
        for (size_t i = 0; i < t->n_commands; i++) {
                const CompletionCommand *c = &t->commands[i];

                fprintf(f, "complete -c node-reset -n '__node_reset_takes \"\"' -a %s -d '", c->name);
                if (c->subcommands)
                        for (size_t k = 0; k < c->n_rows; k++)
                                fprintf(f, "%s%s", k == 0 ? "" : ", ", completion_subcommand(c->rows[k]));
                else
                        completion_print_description(f, c->rows[0]->summary, "\\'", false);
                fputs("'\n", f);
                for (size_t k = 0; c->subcommands && k < c->n_rows; k++) {
                        fprintf(f, "complete -c node-reset -n '__node_reset_takes %s' -a %s -d '", c->name,
                                completion_subcommand(c->rows[k]));
                        completion_print_description(f, c->rows[k]->summary, "\\'", false);
                        fputs("'\n", f);
                }
        }
}

static void operand_lines(FILE *f, const CompletionTables *t) {
        for (size_t i = 0; i < t->n_verbs; i++) {
                const Verb *v = t->verbs[i];

                if (v->operand_complete == CMDLINE_COMPLETE_FILE)
                        fprintf(f, "complete -c node-reset -n '__node_reset_takes \"%s\"' -F\n", v->name);
                else if (v->operand_complete == CMDLINE_COMPLETE_WORD) {
                        fprintf(f, "complete -c node-reset -n '__node_reset_takes \"%s\"' -a '", v->name);
                        completion_print_values(f, v->operand_nth, " ");
                        fputs("'\n", f);
                }
        }
}

void completion_fish(FILE *f, const CompletionTables *t) {
        fputs("# SPDX-License-Identifier: LGPL-2.1-or-later\n"
              "# fish completion for node-reset(8), written by \"node-reset completion fish\" from the program's verb\n"
              "# and option tables (make completions): do not edit. Installed to\n"
              "# /usr/share/fish/vendor_completions.d/node-reset.fish.\n\n",
              f);
        verb_function(f, t);
        fputs(functions, f);
        command_lines(f, t);
        operand_lines(f, t);
        for (size_t k = 0; k < t->all.n; k++)
                option_line(f, t, &t->all.options[k]);
}
