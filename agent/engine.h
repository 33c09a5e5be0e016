/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Plan, execute and verify a selection of phases, in the engine's fixed order. */
#pragma once

#include "agent/context.h"
#include "agent/phase.h"
#include "agent/plan.h"

typedef struct PhaseSelection {
        const Phase *phases[32];
        size_t n;
        bool verify;            /* the verify phase is selected */
} PhaseSelection;

/* Select phases from comma lists of names (NULL = all); -EINVAL with *reterr for an unknown name. */
int phase_selection_parse(PhaseSelection *sel, const char *only, const char *skip, char **reterr);

/* Observe the node and build the plan of every selected phase. */
int engine_plan(Context *ctx, const PhaseSelection *sel, Plan *plan, char **reterr);

/* Execute every action in order, going on past failures. Returns the first action error, or 0. */
int engine_execute(Context *ctx, Plan *plan);

/* Observe again and keep only what the manifest says should be gone and is not. */
int engine_verify(Context *ctx, const PhaseSelection *sel, Plan **ret_residue, char **reterr);
