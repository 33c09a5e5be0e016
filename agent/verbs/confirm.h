/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Before a run changes anything: the plan shown to a person, who confirms it, or steps through it. */
#pragma once

#include <stdbool.h>

#include "agent/verbs/options.h"
#include "agent/verbs/setup.h"

/* Without --yes a person must type "yes" on a terminal; anything else refuses. */
bool confirm_reset(const Setup *s, const ProgramOptions *o, const Plan *plan);
/* --step: per-phase questions need a person at a terminal; the plan is shown first either way. */
bool confirm_step_possible(const Setup *s, const ProgramOptions *o, const Plan *plan);
