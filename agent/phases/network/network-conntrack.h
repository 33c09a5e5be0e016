/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's conntrack rows (phase-network-conntrack.c). */
#pragma once

#include "agent/engine/plan.h"

typedef struct Context Context;

/* Connection tracking entries of the cluster's ranges (conntrack lines). */
int network_conntrack_plan(Context *ctx, Plan *plan, char **reterr);
