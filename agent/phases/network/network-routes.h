/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's routes (routes.c). */
#pragma once

#include "agent/config/manifest.h"
#include "agent/phases/network/network-observation.h"

/* A "route" action for r (copied), refused when the guard holds it. */
int network_plan_route(Plan *plan, const NetworkObservation *o, const RouteInfo *r, const char *reason);

/* The rows of one "route-proto" line. */
int network_plan_route_entry(Plan *plan, const NetworkObservation *o, const ManifestEntry *e, char **reterr);
