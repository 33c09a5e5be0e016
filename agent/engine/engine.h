/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Plan, execute and verify a selection of phases, in the engine's fixed order. */
#pragma once

#include "agent/engine/context.h"
#include "agent/engine/phase.h"
#include "agent/engine/plan.h"

typedef struct PhaseSelection {
        const Phase *phases[32];
        size_t n;
        bool verify; /* the verify phase is selected */
} PhaseSelection;

/* Select phases from comma lists of names (NULL = all); -EINVAL with *reterr for an unknown name.
 * With tree_only (--root given) and no explicit list, only the phases that act on the tree. */
int phase_selection_parse(PhaseSelection *sel, const char *only, const char *skip, bool tree_only, char **reterr);

/* Whether sel holds the phase called name. */
bool phase_selection_has(const PhaseSelection *sel, const char *name);

/* Observe the node and build the plan of every selected phase. */
int engine_plan(Context *ctx, const PhaseSelection *sel, Plan *plan, char **reterr);

typedef enum PhaseDecision {
        PHASE_RUN,
        PHASE_SKIP, /* this phase's actions are recorded "skipped by the operator" */
        PHASE_QUIT, /* this phase and every later one are skipped */
} PhaseDecision;

/* How a person watches and steers a run (rescue shell); every member may be NULL. A phase is the
 * run of actions [first, first + n) of the plan that share a phase name. */
typedef struct ExecuteHooks {
        PhaseDecision (*phase_begin)(const Plan *plan, size_t first, size_t n, void *userdata);
        void (*progress)(const Plan *plan, size_t first, size_t n, size_t done, uint64_t elapsed_usec, void *userdata);
        void (*phase_end)(const Plan *plan, size_t first, size_t n, uint64_t elapsed_usec, void *userdata);
        void *userdata;
} ExecuteHooks;

/* Execute every action in order, going on past failures. Returns the first action error, or 0. */
int engine_execute(Context *ctx, Plan *plan, const ExecuteHooks *hooks);

/* While an action's apply (or its kind's apply_batch) runs: a row for what the plan could not have
 * seen (a pod bound to the node after the plan was made), put right after the rows being applied,
 * in their phase. The caller records its result (action_record()); the engine never applies it.
 * Takes data as plan_add() does. NULL on OOM, or outside execution. */
Action *engine_add_row(Context *ctx, const ActionOps *ops, const char *phase, const char *target, const char *reason,
                       void *data);

/* Observe again and keep only what the manifest says should be gone and is not (ret_residue), and,
 * apart, the rows of what could not be observed at all (a phase or part skipped for a library that
 * does not load: ret_unobserved, may be NULL). With any of those the node is not known to be clean.
 * The phases observe in ENGINE_PASS_VERIFY after engine_execute() ran on ctx; status, which executed
 * nothing, observes as a plan does (ENGINE_PASS_PLAN). */
int engine_verify(Context *ctx, const PhaseSelection *sel, Plan **ret_residue, Plan **ret_unobserved, char **reterr);
