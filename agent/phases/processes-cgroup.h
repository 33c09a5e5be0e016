/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The processes phase's cgroup rows: the cgroups kubelet and the runtime made for pods ("cgroup
 * kubepods"), removed deepest first in every hierarchy once the processes in them are gone. */
#pragma once

#include "agent/engine/plan.h"

typedef struct Context Context;

/* One row per hierarchy that holds a directive's cgroup, or one "absent" row per directive. */
int processes_plan_cgroups(Context *ctx, Plan *plan);
