/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A phase's gate (Phase.gate): its failed action quits every later phase of the run. */
#pragma once

#include "agent/engine/engine.h"

/* Hooks for engine_execute() that pass each call on to inner, but quit every phase after one whose
 * gate failed: a failed action of a gated phase, unless its gate_passes() lets the error through. */
typedef struct GateHooks {
        ExecuteHooks inner;
        const Phase *failed; /* the gate that failed, NULL while none did */
} GateHooks;

/* Wrap inner (the console's hooks) in *g, and return the hooks to hand engine_execute(). */
ExecuteHooks gate_hooks(GateHooks *g, ExecuteHooks inner);
/* After the run: each action the failed gate quit says why ("not run: " and the gate's words). */
void gate_explain(Plan *plan, const Phase *gate);
