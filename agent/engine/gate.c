/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A phase with a gate (the backup, the drain) that failed stops the run before anything later is
 * done, unless the failure is one its gate lets through (a backup with no room: the files phase then
 * keeps what has no other copy, phase-backup.h). What a phase needs is read from its row of the
 * phase table, never from its name. */

#include <stdlib.h>

#include "agent/engine/gate.h"
#include "string-util.h"

static bool gate_failed(const Phase *ph, const Action *a) {
        return ph && ph->gate && a->result == ACTION_FAILED && !(ph->gate_passes && ph->gate_passes(a->error));
}

static PhaseDecision gate_phase_begin(const Plan *plan, size_t first, size_t n, void *userdata) {
        GateHooks *g = userdata;

        for (size_t i = 0; i < first && !g->failed; i++) {
                const Phase *ph = phase_find(plan->actions[i]->phase);

                if (gate_failed(ph, plan->actions[i]))
                        g->failed = ph;
        }
        if (g->failed)
                return PHASE_QUIT;
        return g->inner.phase_begin ? g->inner.phase_begin(plan, first, n, g->inner.userdata) : PHASE_RUN;
}

static void gate_progress(const Plan *plan, size_t first, size_t n, size_t done, uint64_t elapsed_usec,
                          void *userdata) {
        GateHooks *g = userdata;

        if (g->inner.progress)
                g->inner.progress(plan, first, n, done, elapsed_usec, g->inner.userdata);
}

static void gate_phase_end(const Plan *plan, size_t first, size_t n, uint64_t elapsed_usec, void *userdata) {
        GateHooks *g = userdata;

        if (g->inner.phase_end)
                g->inner.phase_end(plan, first, n, elapsed_usec, g->inner.userdata);
}

ExecuteHooks gate_hooks(GateHooks *g, ExecuteHooks inner) {
        *g = (GateHooks) { .inner = inner };
        return (ExecuteHooks) { gate_phase_begin, gate_progress, gate_phase_end, g };
}

void gate_explain(Plan *plan, const Phase *gate) {
        PLAN_FOREACH(a, plan)
                if (phase_find(a->phase) != gate && a->result == ACTION_SKIPPED && !a->skip_reason) {
                        free(a->message);
                        a->message = strprintf("not run: %s", gate->gate);
                        a->code = "refused";
                }
}
