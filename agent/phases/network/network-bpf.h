/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's BPF part (network-bpf.c, with its tc/XDP, cgroup, pin and mount rows in
 * network-bpf-*.c): programs on the links the node keeps, on the CNIs' cgroup roots, pins. */
#pragma once

#include <stdbool.h>

#include "agent/config/manifest.h"
#include "agent/phases/network/network-observation.h"

typedef struct Context Context;

bool network_bpf_wanted(const Manifest *m);
int network_bpf_plan(Context *ctx, Plan *plan, const NetworkObservation *o, char **reterr);
