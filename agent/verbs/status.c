/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The status verb: the verify half of a run on its own. What the manifest says should be gone and
 * is not, what could not be observed, and the rejoin verdict; exit 0 only when the node is clean. */

#include <string.h>
#include <time.h>

#include "agent/base/log.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/node-report.h"
#include "agent/verbs/setup.h"
#include "agent/verbs/verb.h"
#include "errno-util.h"
#include "time-util.h"

static int run_status(const ProgramOptions *o, int argc, char *argv[]) {
        ReportInfo info = { .command = "status", .started_usec = now(CLOCK_REALTIME), .verified = true };
        cleanup_free char *err = NULL;
        Plan *residue = NULL, *unobserved = NULL;
        Rejoin rejoin = {};
        bool prepared;
        Setup s;
        int r;

        r = setup_node(&s, o);
        if (r > 0)
                goto finish;
        prepared = rejoin_prepare(&s.ctx, &rejoin) >= 0;
        r = engine_verify(&s.ctx, &s.sel, &residue, &unobserved, &err);
        if (r < 0) {
                log_error("Cannot observe the node: %s", err ?: strerror(-r));
                r = EXIT_RESIDUE;
                goto finish;
        }
        info.unobserved = unobserved;
        info.exit_status = r = exit_status_of(NULL, residue, unobserved);
        info.exit_status = r = exit_status_rejoin(&s.ctx, &s.sel, &rejoin, prepared, &info, r);
        node_report_emit(&s, o, &info, NULL, residue);
finish:
        rejoin_done(&rejoin);
        plan_free(residue);
        plan_free(unobserved);
        setup_done(&s);
        return r;
}

const Verb status_verb = {
        .name = "status",
        .summary = "Show what is left (residue); exit 0 when clean",
        .options = setup_options,
        .all_phase_options = true,
        .run = run_status,
};
