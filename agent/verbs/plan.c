/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The plan verb: every selected phase observes the node read-only and adds its actions; the plan
 * printed is the dry run, and nothing is changed. */

#include <string.h>
#include <time.h>

#include "agent/base/log.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/node-report.h"
#include "agent/verbs/setup.h"
#include "agent/verbs/verb.h"
#include "errno-util.h"
#include "time-util.h"

static int run_plan(const ProgramOptions *o, int argc, char *argv[]) {
        ReportInfo info = { .command = "plan", .started_usec = now(CLOCK_REALTIME) };
        cleanup_free char *err = NULL;
        Setup s;
        Plan *plan;
        int r;

        r = setup_node(&s, o);
        if (r > 0)
                goto finish;
        plan = plan_new();
        if (!plan) {
                (void) log_oom();
                r = EXIT_RESIDUE;
                goto finish;
        }
        r = engine_plan(&s.ctx, &s.sel, plan, &err);
        if (r < 0)
                log_error("Cannot build the plan: %s", err ?: strerror(-r));
        info.exit_status = r < 0 ? EXIT_RESIDUE : EXIT_CLEAN;
        node_report_emit(&s, o, &info, plan, NULL);
        r = info.exit_status;
        plan_free(plan);
finish:
        setup_done(&s);
        return r;
}

const Verb plan_verb = {
        .name = "plan",
        .summary = "Show what a reset would do (dry run)",
        .options = setup_options,
        .all_phase_options = true,
        .run = run_plan,
};
