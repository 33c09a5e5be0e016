/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's CRI calls (pods-batch.c): what the plan knows of each sandbox, and the stop and remove
 * rows planned from it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "agent/engine/plan.h"
#include "agent/phases/pods/pods-target.h"
#include "cri/cri.h"

#define PODS_ID_SHORT 12

/* What the plan knows of each sandbox. */
typedef struct SandboxView {
        const CriSandbox *s;
        bool host_network;
        bool status_known;
        char target[256];
        unsigned containers;
} SandboxView;

/* The first PODS_ID_SHORT characters of a CRI id, as the rows name it. */
void pods_short_id(const char *id, char buf[static PODS_ID_SHORT + 1]);
const SandboxView *pods_find_sandbox(const SandboxView *v, size_t n, const char *id);

/* The rescue conflist goes again: after the last batch that may tear a network down, before rung 3,
 * and (pods-ladder.c) on a signal or at exit. */
void pods_rescue_release(PodsTarget *pt);

/* The stop and remove rows of the pods and containers, in the order they go: pod-network pods before
 * host-network ones, then the containers whose sandbox is not listed. */
int pods_batch_plan(Plan *plan, PodsTarget *pt, const CriContainer *c, size_t nc, const SandboxView *v, size_t nv);
