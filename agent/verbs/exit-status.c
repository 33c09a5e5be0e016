/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* From what a run did and what verify saw to the exit status: residue, an unobserved phase and a
 * node kubeadm join would refuse are all "not clean". */

#include "agent/base/log.h"
#include "agent/verbs/exit-status.h"
#include "string-util.h"

int exit_status_of(const Plan *plan, const Plan *residue, const Plan *unobserved) {
        if (plan && plan_count(plan, NULL, ACTION_FAILED) > 0)
                return EXIT_RESIDUE;
        if (residue && !streq(report_verdict(residue, unobserved), "clean"))
                return EXIT_RESIDUE;
        return EXIT_CLEAN;
}

/* A node with no residue that kubeadm join still refuses (a port in use, a kept runtime that does not
 * answer, a kubeconfig left) is not a success: exit 1 and say why. A warning is said, and is no failure. */
int exit_status_rejoin(Context *ctx, const PhaseSelection *sel, Rejoin *rejoin, bool prepared, ReportInfo *info,
                       int status) {
        if (!prepared || rejoin_check(ctx, sel, rejoin) < 0) {
                log_error("Cannot make the rejoin verdict: %s", prepared ? "out of memory" : "not prepared");
                return status == EXIT_CLEAN ? EXIT_RESIDUE : status;
        }
        info->rejoin = rejoin;
        for (size_t i = 0; i < rejoin->n_warnings; i++)
                log_warning("Rejoin warning: %s: %s", rejoin->warnings[i].name, rejoin->warnings[i].message);
        if (rejoin_is_rejoinable(rejoin))
                return status;
        for (size_t i = 0; i < rejoin->n_checks; i++)
                if (rejoin->checks[i].state == REJOIN_FAILED)
                        log_error("Not rejoinable: %s: %s", rejoin->checks[i].name, rejoin->checks[i].message);
        return status == EXIT_CLEAN ? EXIT_RESIDUE : status;
}
