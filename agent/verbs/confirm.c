/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The confirmation before a run: the detection and the plan as a person reads them, then "yes". */

#include <stdio.h>
#include <unistd.h>

#include "agent/base/log.h"
#include "agent/engine/console.h"
#include "agent/report/report.h"
#include "agent/verbs/confirm.h"

/* The plan as a person reads it before confirming. stdout carries only the report: in JSON mode
 * this goes to stderr. */
static void show_plan(const Setup *s, const ProgramOptions *o, const Plan *plan) {
        FILE *f = o->output == OUTPUT_JSON ? stderr : stdout;
        Emitter e;

        emitter_init(&e, f, OUTPUT_TEXT, color_wanted(f));
        e.all_actions = o->all_actions;
        detection_emit(&e, &s->config.detection, s->config.profile, s->config.profile_why);
        report_plan_text(&e, plan);
        fflush(f);
}

bool confirm_reset(const Setup *s, const ProgramOptions *o, const Plan *plan) {
        show_plan(s, o, plan);
        return console_confirm(stdin, stderr, "reset this node");
}

bool confirm_step_possible(const Setup *s, const ProgramOptions *o, const Plan *plan) {
        show_plan(s, o, plan);
        if (!isatty(STDIN_FILENO)) {
                log_error("--step needs a terminal to ask on; nothing was changed.");
                return false;
        }
        return true;
}
