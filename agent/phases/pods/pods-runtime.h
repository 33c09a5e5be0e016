/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's runtime row (pods-runtime.c): one per runtime, last, rung 3 when needed. */
#pragma once

#include <stdbool.h>

#include "agent/engine/plan.h"
#include "agent/phases/pods/pods-target.h"

/* The runtime row: what fmt says of it, then its PID, config, CNI conf dir and unit. */
int pods_runtime_row(Plan *plan, PodsTarget *pt, bool present, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* A runtime that does not answer Version: rung 3 is the plan, unless it is simply not running and
 * left nothing behind. */
int pods_runtime_plan_unanswered(Plan *plan, PodsTarget *pt);
