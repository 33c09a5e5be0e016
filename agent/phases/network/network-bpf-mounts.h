/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's rows for the CNI's own cgroup2 and bpffs mounts (network-bpf-mounts.c). */
#pragma once

#include <stdbool.h>

#include "agent/config/manifest.h"
#include "agent/engine/context.h"
#include "agent/engine/plan.h"

/* The mounts of the "bpf-cgroup" roots and "bpf-mount" lines, last: foreign[i] says a program that is
 * not the CNI's is attached to the i-th "bpf-cgroup" root (network_bpf_plan_cgroup_root()). */
int network_bpf_plan_mounts(Context *ctx, Plan *plan, const Manifest *m, const bool *foreign);
