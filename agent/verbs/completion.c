/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The completion verb: "node-reset completion SHELL" writes the bash, zsh or fish completion script
 * from the verb and option tables --help reads (as "kubectl completion SHELL" does), so that the
 * scripts cannot drift from the parser. shell-completion/ holds their output (make completions),
 * which test-deb.sh checks equal to it. */

#include <errno.h>
#include <stdio.h>

#include "agent/base/log.h"
#include "agent/verbs/completion-shells.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/usage.h"
#include "agent/verbs/verb.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

static const struct {
        const char *name;
        void (*write)(FILE *f, const CompletionTables *t);
} shells[] = {
        { "bash", completion_bash },
        { "zsh", completion_zsh },
        { "fish", completion_fish },
};

static const char *shell_nth(size_t i) {
        return i < ELEMENTSOF(shells) ? shells[i].name : NULL;
}

static int run_completion(const ProgramOptions *o, int argc, char *argv[]) {
        cleanup_free char *err = NULL, *names = NULL;
        CompletionTables t;
        int r;

        for (size_t i = 0; argc == 2 && i < ELEMENTSOF(shells); i++) {
                if (!streq(shells[i].name, argv[1]))
                        continue;
                r = completion_tables_load(&t, &err);
                if (r >= 0)
                        shells[i].write(stdout, &t);
                else
                        log_error("Cannot read the option tables: %s", err ?: strerror(-r));
                completion_tables_done(&t);
                return r < 0 ? EXIT_RESIDUE : EXIT_CLEAN;
        }
        names = strjoin_nth(shell_nth, ", ", " or ");
        return usage_error("'completion' takes one SHELL: %s", strna(names)), EXIT_USAGE;
}

static const CmdlineOption *const completion_options[] = { OPTIONS_COMMON, NULL };

const Verb completion_verb = {
        .name = "completion",
        .operands = "SHELL",
        .summary = "Print the completion script for SHELL",
        .options = completion_options,
        .operand_nth = shell_nth,
        .operand_complete = CMDLINE_COMPLETE_WORD,
        .run = run_completion,
};
