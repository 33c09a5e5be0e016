/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The program's exit status (node-reset(8) EXIT STATUS), and how a run's results decide it. */
#pragma once

#include <stdbool.h>

#include "agent/engine/engine.h"
#include "agent/verdict/rejoin-check.h"
#include "agent/report/report.h"

enum {
        EXIT_CLEAN = 0,
        EXIT_RESIDUE = 1, /* an action failed or residue remains */
        EXIT_USAGE = 2,   /* bad usage or a manifest error */
        EXIT_REFUSED = 3, /* lock held, not root, not confirmed */
};

/* orphan-check's exit status is read by ExecCondition=: 0 proceeds, 1..254 skip quietly, 255
 * fails the unit loudly. */
enum {
        EXIT_ORPHANED = 0,
        EXIT_NOT_ORPHANED = 1,
        EXIT_ORPHAN_ERROR = 255,
};

/* A failed action (plan may be NULL), residue, or a verdict of "unknown" (a phase that could not
 * observe): EXIT_RESIDUE; else EXIT_CLEAN. */
int exit_status_of(const Plan *plan, const Plan *residue, const Plan *unobserved);

/* status, made worse by the rejoin verdict (rejoin_prepare()d when prepared): a node kubeadm join
 * would refuse is EXIT_RESIDUE, each reason logged; info->rejoin is set when the verdict is made. */
int exit_status_rejoin(Context *ctx, const PhaseSelection *sel, Rejoin *rejoin, bool prepared, ReportInfo *info,
                       int status);
