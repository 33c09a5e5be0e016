/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's rows before its CRI calls (pods-prepare.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "agent/engine/context.h"
#include "agent/engine/plan.h"
#include "agent/phases/pods/pods-batch.h"
#include "agent/phases/pods/pods-target.h"

/* The rows before the CRI calls of the n sandboxes v: which teardown the CNI gets (and the concurrency
 * it allows, unless --concurrency was given), the kill pass, and the restart that spares each pod's
 * task deletion. */
int pods_prepare_plan(Context *ctx, Plan *plan, PodsTarget *pt, const SandboxView *v, size_t n, bool concurrency_given);
