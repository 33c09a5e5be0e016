/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's kube-vip rows (phase-network-vip.c). */
#pragma once

#include "agent/config/manifest.h"
#include "agent/phases/network/network-observation.h"

typedef struct Context Context;

/* The address a kube-vip line's static pod manifest put on its interface. */
int network_vip_plan(Context *ctx, Plan *plan, const NetworkObservation *o, const ManifestEntry *e);
