/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Plan, execute and verify a selection of phases, in the engine's fixed order. */

#include "agent/engine/engine.h"
#include "agent/engine/libraries.h"
#include "agent/base/log.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

static int check_names(const char *list, char **reterr) {
        cleanup_free char *copy = NULL;
        char *saveptr = NULL;

        if (!list)
                return 0;
        copy = strdup(list);
        if (!copy)
                return -ENOMEM;
        for (char *t = strtok_r(copy, ",", &saveptr); t; t = strtok_r(NULL, ",", &saveptr))
                if (!phase_find(t) && !streq(t, "verify"))
                        return set_errmsg(reterr, -EINVAL, "unknown phase '%s'", t);
        return 0;
}

int phase_selection_parse(PhaseSelection *sel, const char *only, const char *skip, bool tree_only, char **reterr) {
        const Phase *table;
        size_t n;
        int r;

        r = check_names(only, reterr);
        if (r < 0)
                return r;
        r = check_names(skip, reterr);
        if (r < 0)
                return r;

        *sel = (PhaseSelection) {};
        table = phase_table(&n);
        for (size_t i = 0; i < n && sel->n < ELEMENTSOF(sel->phases); i++) {
                if (only && !comma_list_contains(only, table[i].name))
                        continue;
                if (!only && tree_only && !table[i].tree)
                        continue;
                if (comma_list_contains(skip, table[i].name))
                        continue;
                sel->phases[sel->n++] = &table[i];
        }
        sel->verify = (!only || comma_list_contains(only, "verify")) && !comma_list_contains(skip, "verify");
        return 0;
}

static int refresh_mounts(Context *ctx) {
        MountTable *t;
        int r;

        r = mount_table_read(&t);
        if (r < 0)
                return r;
        mount_table_free(ctx->mounts);
        ctx->mounts = t;
        return 0;
}

static int engine_plan_phases(Context *ctx, const PhaseSelection *sel, Plan *plan, char **reterr) {
        int r = 0;

        for (size_t i = 0; i < sel->n; i++) {
                const Phase *ph = sel->phases[i];
                size_t before = plan->n_actions;
                int k;

                /* A phase whose library is not on this node is one skipped row, not a failure; so is
                 * one whose library is there but fails to load at the phase's first call. */
                r = libraries_plan_phase(plan, ph->name, ph->needs);
                if (r == 0)
                        r = ph->plan(ctx, plan, reterr);
                if (r < 0 && r != -ENOMEM && (k = libraries_plan_failed(plan, ph->name, ph->needs)) != 0) {
                        if (k < 0)
                                return k;
                        /* Its rows so far rest on a library it cannot call: none of them may act. */
                        Action *row = plan->actions[--plan->n_actions];

                        plan_truncate(plan, before);
                        r = plan_append(plan, row);
                        if (reterr)
                                *reterr = mfree(*reterr);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

/* One observation of the selected phases, in the pass given: the plan's, or verify's. */
static int observe_pass(Context *ctx, EnginePass pass, const PhaseSelection *sel, Plan *plan, char **reterr) {
        int r;

        r = refresh_mounts(ctx);
        if (r < 0)
                return set_errmsg(reterr, r, "cannot read /proc/self/mountinfo: %s", strerror(-r));
        /* Each pass reads /proc once, when a phase first asks; a later pass reads it anew. */
        phase_procs_drop(ctx);
        ctx->selection = sel;
        ctx->pass = pass;
        r = engine_plan_phases(ctx, sel, plan, reterr);
        phase_procs_drop(ctx);
        return r;
}

int engine_plan(Context *ctx, const PhaseSelection *sel, Plan *plan, char **reterr) {
        return observe_pass(ctx, ENGINE_PASS_PLAN, sel, plan, reterr);
}

bool phase_selection_has(const PhaseSelection *sel, const char *name) {
        for (size_t i = 0; sel && i < sel->n; i++)
                if (streq(sel->phases[i]->name, name))
                        return true;
        return false;
}

bool phase_selected(const Context *ctx, const char *name) {
        return phase_selection_has(ctx->selection, name);
}

static bool past_deadline(const Context *ctx) {
        return ctx->deadline_usec > 0 && now(CLOCK_MONOTONIC) > ctx->deadline_usec;
}

/* Actions that must not run are settled before any batch or apply is called. "Skipped" is for what
 * the plan decided not to do; an action that time ran out for is a failure: nothing was done about
 * what it observed, and the run must not say "clean". */
static bool settle_without_apply(Context *ctx, Action *a) {
        /* Recorded already by an earlier row of its phase (the drain row records its pods' rows). */
        if (a->result != ACTION_PENDING)
                return true;
        if (a->skip_reason) {
                a->result = ACTION_SKIPPED;
                free(a->message);
                a->message = strdup(a->skip_reason);
                return true;
        }
        if (past_deadline(ctx)) {
                action_record(a, -ETIME, strdup("not run: the run's --timeout was reached"));
                return true;
        }
        return false;
}

Action *engine_add_row(Context *ctx, const ActionOps *ops, const char *phase, const char *target, const char *reason,
                       void *data) {
        Plan *p = ctx->plan;
        Action *a;

        if (!p) {
                if (data && ops->free_data)
                        ops->free_data(data);
                return NULL;
        }
        a = plan_add(p, ops, phase, target, reason, data);
        if (!a)
                return NULL;
        memmove(p->actions + ctx->insert_at + 1, p->actions + ctx->insert_at,
                (p->n_actions - 1 - ctx->insert_at) * sizeof *p->actions);
        p->actions[ctx->insert_at++] = a;
        return a;
}

/* Returns the index after the action and the rows it added. */
static size_t apply_one(Context *ctx, Plan *plan, size_t i) {
        Action *a = plan->actions[i];
        char *msg = NULL;
        uint64_t t0 = now(CLOCK_MONOTONIC);
        int r;

        ctx->insert_at = i + 1;
        r = a->ops->apply(a, ctx, &msg);
        action_record(a, r, msg);
        a->duration_usec = now(CLOCK_MONOTONIC) - t0;
        return ctx->insert_at;
}

/* A run of consecutive actions of one kind that are all to be applied goes to apply_batch. Returns
 * the index after the run and the rows it added. */
static size_t apply_run(Context *ctx, Plan *plan, size_t i, size_t end) {
        const ActionOps *ops = plan->actions[i]->ops;
        Action *batch[4096];
        size_t n = 0, j = i;
        uint64_t t0;

        for (; j < end && n < ELEMENTSOF(batch) && plan->actions[j]->ops == ops; j++)
                if (!settle_without_apply(ctx, plan->actions[j]))
                        batch[n++] = plan->actions[j];
        ctx->insert_at = j;
        if (n > 0) {
                t0 = now(CLOCK_MONOTONIC);
                ops->apply_batch(batch, n, ctx);
                /* One call did the work of all: each action is charged its share. */
                for (size_t k = 0; k < n; k++)
                        batch[k]->duration_usec = (now(CLOCK_MONOTONIC) - t0) / n;
        }
        return ctx->insert_at;
}

static void skip_all(Plan *plan, size_t first, size_t end, const char *why) {
        for (size_t i = first; i < end; i++) {
                Action *a = plan->actions[i];

                a->result = ACTION_SKIPPED;
                free(a->message);
                a->message = strdup(why);
        }
}

static size_t phase_end_index(const Plan *plan, size_t first) {
        size_t end = first;

        while (end < plan->n_actions && streq(plan->actions[end]->phase, plan->actions[first]->phase))
                end++;
        return end;
}

/* Returns the phase's end, past the rows its actions added. */
static size_t execute_phase(Context *ctx, Plan *plan, size_t first, size_t end, const ExecuteHooks *h) {
        uint64_t t0 = now(CLOCK_MONOTONIC);

        for (size_t i = first; i < end;) {
                Action *a = plan->actions[i];
                size_t before = plan->n_actions;

                if (a->ops->apply_batch)
                        i = apply_run(ctx, plan, i, end);
                else if (settle_without_apply(ctx, a))
                        i++;
                else
                        i = apply_one(ctx, plan, i);
                end += plan->n_actions - before;
                if (h && h->progress)
                        h->progress(plan, first, end - first, i - first, now(CLOCK_MONOTONIC) - t0, h->userdata);
        }
        if (h && h->phase_end)
                h->phase_end(plan, first, end - first, now(CLOCK_MONOTONIC) - t0, h->userdata);
        return end;
}

int engine_execute(Context *ctx, Plan *plan, const ExecuteHooks *hooks) {
        int first_error = 0;

        ctx->pass = ENGINE_PASS_EXECUTE;
        ctx->executed = true;
        ctx->plan = plan;
        for (size_t first = 0, end; first < plan->n_actions; first = end) {
                PhaseDecision d = PHASE_RUN;

                end = phase_end_index(plan, first);
                if (hooks && hooks->phase_begin)
                        d = hooks->phase_begin(plan, first, end - first, hooks->userdata);
                if (d == PHASE_QUIT) {
                        skip_all(plan, first, plan->n_actions, "not run: the operator quit before this phase");
                        break;
                }
                if (d == PHASE_SKIP)
                        skip_all(plan, first, end, "not run: the operator skipped this phase");
                else
                        end = execute_phase(ctx, plan, first, end, hooks);
        }
        ctx->plan = NULL;
        PLAN_FOREACH(a, plan) {
                log_action_event(a->phase, a->ops->kind, a->target, action_result_to_string(a->result),
                                 a->result == ACTION_FAILED, a->error, a->message);
                if (a->result == ACTION_FAILED && first_error == 0)
                        first_error = a->error;
        }
        ctx->pass = ENGINE_PASS_PLAN;
        return first_error;
}

/* An action observed again is residue when it still has something to do and is not deliberately
 * kept (a refusal by a safety guard is reported where it happened, not as residue). */
static int action_is_residue(Context *ctx, Action *a) {
        char *msg = NULL;
        int r;

        if (!a->present || a->skip_reason)
                return 0;
        if (!a->ops->check)
                return 1;
        r = a->ops->check(a, ctx, &msg);
        if (r < 0) {
                free(a->message);
                if (asprintf(&a->message, "could not check: %s", strerror(-r)) < 0)
                        a->message = NULL;
                free(msg);
                return 1;
        }
        if (msg) {
                free(a->message);
                a->message = msg;
        }
        return r > 0;
}

/* A row that stands for what could not be looked at: the skipped "library" row of a phase, or of a
 * part of one, whose library does not load (libraries_plan_missing()), a target whose only witness
 * did not answer (the node-object phase's API server), or one planned to fail for that reason (a
 * Docker that hangs or answers garbage). */
static bool action_is_unobserved(const Action *a) {
        return a->unobserved && (a->skip_reason || a->present);
}

int engine_verify(Context *ctx, const PhaseSelection *sel, Plan **ret_residue, Plan **ret_unobserved, char **reterr) {
        Plan *fresh = NULL, *residue = NULL, *unobserved = NULL;
        int r;

        fresh = plan_new();
        residue = plan_new();
        unobserved = plan_new();
        if (!fresh || !residue || !unobserved) {
                r = -ENOMEM;
                goto finish;
        }
        /* status observes a node this run has not changed, as a plan does: nothing of its own to verify. */
        r = observe_pass(ctx, ctx->executed ? ENGINE_PASS_VERIFY : ENGINE_PASS_PLAN, sel, fresh, reterr);
        ctx->pass = ENGINE_PASS_PLAN;
        if (r < 0)
                goto finish;
        /* Move the residue and the unobserved rows over to their own plans, leaving the rest to be freed. */
        for (size_t i = 0; i < fresh->n_actions; i++) {
                Action *a = fresh->actions[i];
                Plan *to = action_is_unobserved(a) ? unobserved : action_is_residue(ctx, a) > 0 ? residue : NULL;

                if (!to)
                        continue;
                r = plan_append(to, a);
                if (r < 0)
                        goto finish;
                fresh->actions[i] = NULL;
        }
        *ret_residue = TAKE_PTR(residue);
        if (ret_unobserved)
                *ret_unobserved = TAKE_PTR(unobserved);
        r = 0;
finish:
        plan_free(unobserved);
        plan_free(residue);
        plan_free(fresh);
        return r;
}
