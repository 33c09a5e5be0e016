/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The verb table (one file a verb in agent/verbs/, as systemctl's verbs[] and crun's commands[]), and
 * what the command line's operands name in it. */

#include <errno.h>
#include <stdio.h>

#include "agent/verbs/verbs.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

static const Verb *const verbs[] = {
        &plan_verb,         &run_verb,    &status_verb, &manifest_check_verb, &manifest_print_verb,
        &orphan_check_verb, &forget_verb, &drain_verb,  &help_verb,           &completion_verb,
};

const Verb *const *verbs_table(size_t *ret_n) {
        *ret_n = ELEMENTSOF(verbs);
        return verbs;
}

/* The length of the command word of a verb's name ("manifest" in "manifest check"). */
static size_t command_len(const char *name) {
        return strcspn(name, " ");
}

static bool is_command(const Verb *v, const char *command) {
        size_t l = command_len(v->name);

        return strlen(command) == l && strncmp(v->name, command, l) == 0;
}

const char *verbs_command_nth(size_t i) {
        /* Each command's word, copied once: a pointer stays valid while the next is asked for. */
        static char commands[ELEMENTSOF(verbs)][32];
        size_t n = 0;

        for (size_t k = 0; k < ELEMENTSOF(verbs); k++) {
                if (k > 0 && command_len(verbs[k - 1]->name) == command_len(verbs[k]->name) &&
                    strncmp(verbs[k - 1]->name, verbs[k]->name, command_len(verbs[k]->name)) == 0)
                        continue; /* the same command's next subcommand */
                if (n++ < i)
                        continue;
                (void) snprintf(commands[k], sizeof commands[k], "%.*s", (int) command_len(verbs[k]->name),
                                verbs[k]->name);
                return commands[k];
        }
        return NULL;
}

size_t verbs_of_command(const char *command, const Verb **ret, size_t max) {
        size_t n = 0;

        for (size_t k = 0; k < ELEMENTSOF(verbs); k++)
                if (is_command(verbs[k], command) && n < max)
                        ret[n++] = verbs[k];
        return n;
}

void verbs_match(char *const *operands, VerbMatch *m) {
        *m = (VerbMatch) {};
        if (!operands[0])
                return;
        for (size_t k = 0; k < ELEMENTSOF(verbs); k++) {
                const char *sub = verbs[k]->name + command_len(verbs[k]->name);

                if (!is_command(verbs[k], operands[0]))
                        continue;
                m->command = operands[0];
                if (!*sub || (operands[1] && streq(sub + 1, operands[1]))) {
                        m->verb = verbs[k];
                        m->n_words = *sub ? 2 : 1;
                        return;
                }
        }
        if (!m->command)
                m->unknown = operands[0];
}

static int verb_options_add(const Verb *v, CmdlineOptions *set, bool merge, char **reterr) {
        int r;

        r = cmdline_options_add(set, v->options, merge, reterr);
        if (r >= 0 && (v->all_phase_options || v->phase_options))
                r = cmdline_options_add_phases(set, v->all_phase_options ? NULL : v->phase_options, merge, reterr);
        return r;
}

int verbs_options(const Verb *const *rows, size_t n, CmdlineOptions *ret, char **reterr) {
        int r = 0;

        *ret = (CmdlineOptions) {};
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = verb_options_add(rows[i], ret, n > 1, reterr);
        if (r < 0)
                cmdline_options_done(ret);
        return r;
}

int verbs_all_options(CmdlineOptions *ret, char **reterr) {
        static const CmdlineOption *const program_only[] = { &option_version, NULL };
        int r;

        r = verbs_options(verbs, ELEMENTSOF(verbs), ret, reterr);
        if (r >= 0)
                r = cmdline_options_add(ret, program_only, true, reterr);
        if (r < 0)
                cmdline_options_done(ret);
        return r;
}
