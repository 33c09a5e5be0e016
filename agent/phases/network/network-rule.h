/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's policy routing (phase-network-rule.c): the CNIs' rules and the routes of
 * their tables. */
#pragma once

#include "agent/config/manifest.h"
#include "agent/phases/network/network-observation.h"

int network_rule_plan(Plan *plan, const NetworkObservation *o, const Manifest *m);

/* The routes the guard is to weigh: all but those of tables that only a CNI's rules look up, which
 * unmarked traffic (the management path) never reaches. A shallow view into routes: free the array
 * only. */
int network_rule_guard_view(const NetworkObservation *o, const Manifest *m, RouteTable *ret);
