/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's cgroup programs (network-bpf-cgroup.c). */
#pragma once

#include <stdbool.h>

#include "agent/config/manifest.h"
#include "agent/engine/context.h"
#include "agent/engine/plan.h"
#include "agent/os/mountinfo.h"

/* The cgroup2 mount at path (the topmost one there), or NULL. */
const MountEntry *network_bpf_cgroup2_mount(const MountTable *t, const char *path);

/* The rows of the cgroup root a "bpf-cgroup" line e names: one per program of a "bpf-prog" line
 * attached there, or one placeholder. *ret_foreign: a program that is not the CNI's is attached there too. */
int network_bpf_plan_cgroup_root(Context *ctx, Plan *plan, const Manifest *m, const ManifestEntry *e, bool *ret_foreign,
                                 char **reterr);
