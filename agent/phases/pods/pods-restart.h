/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The runtime restarted with its pods' tasks cleared (pods-restart.c): from enough pods on, a stop and
 * a start of containerd cost less than a runc and a shim per task. */
#pragma once

#include <stddef.h>

#include "agent/engine/context.h"
#include "agent/engine/plan.h"
#include "agent/phases/pods/pods-target.h"

/* The restart's first row, before the kill pass, for n pods: none when the restart is refused (then
 * pt->restart stays false). */
int pods_restart_plan_stop(Context *ctx, Plan *plan, PodsTarget *pt, size_t n);
/* The restart's second row: after the kill pass, before the CRI calls. */
int pods_restart_plan_start(Plan *plan, PodsTarget *pt);
