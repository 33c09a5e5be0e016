/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The plan/act engine with fake action kinds: results, batches, skips, the deadline, selection. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/engine/console.h"
#include "agent/engine/engine.h"
#include "agent/engine/plan.h"
#include "agent/phases/phases.h"
#include "macro.h"
#include "string-util.h"

static unsigned applied, batches, batch_size;

/* The target says what the fake does: "ok", "clean", "fail". */
static int fake_apply(Action *a, Context *ctx, char **reterr_msg) {
        applied++;
        if (streq(a->target, "fail")) {
                *reterr_msg = strdup("it broke");
                return -EIO;
        }
        return streq(a->target, "ok") ? 1 : 0;
}

static void fake_batch(Action **actions, size_t n, Context *ctx) {
        batches++;
        batch_size += n;
        for (size_t i = 0; i < n; i++)
                action_record(actions[i], streq(actions[i]->target, "fail") ? -ENODEV : 1, NULL);
}

static void free_counter(void *p) {
        (*(unsigned *) p)++;
}

static const ActionOps fake_ops = { .kind = "fake", .apply = fake_apply, .free_data = free_counter };
static const ActionOps batch_ops = { .kind = "batch", .apply = fake_apply, .apply_batch = fake_batch };

static void test_results(void **state) {
        Context ctx = {};
        Plan *p = plan_new();
        unsigned freed = 0;
        Action *a;

        applied = 0;
        assert_non_null(plan_add(p, &fake_ops, "one", "ok", "m.conf:1: x", &freed));
        assert_non_null(plan_add(p, &fake_ops, "one", "clean", NULL, &freed));
        assert_non_null(plan_add(p, &fake_ops, "one", "fail", NULL, &freed));
        a = plan_add(p, &fake_ops, "two", "ok", NULL, &freed);
        assert_non_null(a);
        assert_int_equal(action_set_skip(a, "refused: %s", "guard"), 0);

        assert_int_equal(plan_count(p, NULL, ACTION_PENDING), 4);
        assert_int_equal(plan_count_present(p), 3);
        assert_int_equal(engine_execute(&ctx, p, NULL), -EIO);
        assert_int_equal(applied, 3); /* the skipped one is never applied */
        assert_int_equal(p->actions[0]->result, ACTION_CHANGED);
        assert_int_equal(p->actions[1]->result, ACTION_UNCHANGED);
        assert_int_equal(p->actions[2]->result, ACTION_FAILED);
        assert_string_equal(p->actions[2]->message, "it broke");
        assert_int_equal(p->actions[3]->result, ACTION_SKIPPED);
        assert_string_equal(p->actions[3]->message, "refused: guard");
        assert_int_equal(plan_count(p, "one", ACTION_CHANGED), 1);
        assert_int_equal(plan_count(p, "two", -1), 1);
        plan_free(p);
        assert_int_equal(freed, 4);
}

static void test_batch(void **state) {
        Context ctx = {};
        Plan *p = plan_new();
        Action *a;

        batches = batch_size = 0;
        assert_non_null(plan_add(p, &batch_ops, "net", "ok", NULL, NULL));
        assert_non_null(plan_add(p, &batch_ops, "net", "fail", NULL, NULL));
        a = plan_add(p, &batch_ops, "net", "ok", NULL, NULL);
        assert_non_null(a);
        assert_int_equal(action_set_skip(a, "not this one"), 0);
        assert_non_null(plan_add(p, &fake_ops, "net", "ok", NULL, NULL));
        assert_non_null(plan_add(p, &batch_ops, "net", "ok", NULL, NULL));
        assert_int_equal(engine_execute(&ctx, p, NULL), -ENODEV);
        /* Two runs of the batch kind, split by another kind; the skipped action is not handed over. */
        assert_int_equal(batches, 2);
        assert_int_equal(batch_size, 3);
        assert_int_equal(p->actions[1]->result, ACTION_FAILED);
        assert_int_equal(p->actions[2]->result, ACTION_SKIPPED);
        assert_int_equal(p->actions[4]->result, ACTION_CHANGED);
        plan_free(p);
}

static void test_deadline(void **state) {
        Context ctx = { .deadline_usec = 1 }; /* long past */
        Plan *p = plan_new();

        applied = 0;
        assert_non_null(plan_add(p, &fake_ops, "one", "ok", NULL, NULL));
        /* Not done for want of time is a failure, never "skipped": the run must not say clean. */
        assert_int_equal(engine_execute(&ctx, p, NULL), -ETIME);
        assert_int_equal(applied, 0);
        assert_int_equal(p->actions[0]->result, ACTION_FAILED);
        assert_int_equal(p->actions[0]->error, -ETIME);
        assert_non_null(strstr(p->actions[0]->message, "timeout"));
        plan_free(p);
}

static PhaseDecision decide(const Plan *plan, size_t first, size_t n, void *userdata) {
        const char *phase = plan->actions[first]->phase;

        (*(unsigned *) userdata)++;
        if (streq(phase, "two"))
                return PHASE_SKIP;
        return streq(phase, "three") ? PHASE_QUIT : PHASE_RUN;
}

static unsigned ends;
static void count_end(const Plan *plan, size_t first, size_t n, uint64_t elapsed, void *userdata) {
        ends++;
}

static void test_hooks(void **state) {
        unsigned asked = 0;
        ExecuteHooks h = { .phase_begin = decide, .phase_end = count_end, .userdata = &asked };
        Context ctx = {};
        Plan *p = plan_new();

        applied = ends = 0;
        assert_non_null(plan_add(p, &fake_ops, "one", "ok", NULL, NULL));
        assert_non_null(plan_add(p, &fake_ops, "one", "ok", NULL, NULL));
        assert_non_null(plan_add(p, &fake_ops, "two", "ok", NULL, NULL));
        assert_non_null(plan_add(p, &fake_ops, "three", "ok", NULL, NULL));
        assert_non_null(plan_add(p, &fake_ops, "four", "ok", NULL, NULL));
        assert_int_equal(engine_execute(&ctx, p, &h), 0);
        assert_int_equal(asked, 3); /* one question per phase, none after quit */
        assert_int_equal(ends, 1);
        assert_int_equal(applied, 2);
        assert_int_equal(p->actions[1]->result, ACTION_CHANGED);
        assert_int_equal(p->actions[2]->result, ACTION_SKIPPED);
        assert_non_null(strstr(p->actions[2]->message, "skipped this phase"));
        assert_int_equal(p->actions[3]->result, ACTION_SKIPPED);
        assert_non_null(strstr(p->actions[4]->message, "quit"));
        plan_free(p);
}

static void test_decisions(void **state) {
        PhaseDecision d;

        assert_int_equal(phase_decision_from_string("yes\n", &d), 0);
        assert_int_equal(d, PHASE_RUN);
        assert_int_equal(phase_decision_from_string("  Skip ", &d), 0);
        assert_int_equal(d, PHASE_SKIP);
        assert_int_equal(phase_decision_from_string("q", &d), 0);
        assert_int_equal(d, PHASE_QUIT);
        assert_int_equal(phase_decision_from_string("maybe", &d), -EINVAL);
        assert_int_equal(phase_decision_from_string("", &d), -EINVAL);
        assert_int_equal(phase_decision_from_string("yesplease", &d), -EINVAL);
}

static void test_selection(void **state) {
        cleanup_free char *err = NULL;
        PhaseSelection sel;

        /* Before the program registers its table, the engine knows no phase. */
        assert_int_equal(phase_selection_parse(&sel, NULL, NULL, false, &err), 0);
        assert_int_equal(sel.n, 0);
        assert_int_equal(phase_selection_parse(&sel, "files", NULL, false, &err), -EINVAL);
        err = mfree(err);
        reset_phases_register();
        assert_int_equal(phase_selection_parse(&sel, NULL, NULL, false, &err), 0);
        assert_true(sel.n >= 2);
        assert_true(sel.verify);
        /* The backup before anything changes; the drain while the kubelet and the API server still
         * run; the etcd member leaves before kubelet stops. */
        assert_string_equal(sel.phases[0]->name, "backup");
        assert_string_equal(sel.phases[1]->name, "drain");
        assert_string_equal(sel.phases[2]->name, "etcd");
        assert_string_equal(sel.phases[3]->name, "services-early");
        assert_string_equal(sel.phases[sel.n - 1]->name, "reload");

        /* --root: only the phases that act on the tree, unless named. */
        assert_int_equal(phase_selection_parse(&sel, NULL, NULL, true, &err), 0);
        assert_int_equal(sel.n, 3);
        assert_string_equal(sel.phases[0]->name, "backup");
        assert_string_equal(sel.phases[1]->name, "mounts");
        assert_string_equal(sel.phases[2]->name, "files");
        assert_true(sel.verify);

        /* The engine's order wins over the order the user wrote. */
        assert_int_equal(phase_selection_parse(&sel, "files,mounts", NULL, false, &err), 0);
        assert_int_equal(sel.n, 2);
        assert_string_equal(sel.phases[0]->name, "mounts");
        assert_false(sel.verify);

        assert_int_equal(phase_selection_parse(&sel, NULL, "files,verify", false, &err), 0);
        assert_false(sel.verify);
        for (size_t i = 0; i < sel.n; i++)
                assert_string_not_equal(sel.phases[i]->name, "files");

        assert_int_equal(phase_selection_parse(&sel, "mounts,filez", NULL, false, &err), -EINVAL);
        assert_string_equal(err, "unknown phase 'filez'");
}

static void test_result_names(void **state) {
        assert_string_equal(action_result_to_string(ACTION_PENDING), "planned");
        assert_string_equal(action_result_to_string(ACTION_UNCHANGED), "unchanged");
        assert_string_equal(action_result_to_string(ACTION_CHANGED), "changed");
        assert_string_equal(action_result_to_string(ACTION_FAILED), "failed");
        assert_string_equal(action_result_to_string(ACTION_SKIPPED), "skipped");
        assert_null(action_result_to_string(_ACTION_RESULT_MAX));
}

/* Which pass the phases plan in, and the rows apply in: verify is a mode of the engine, set only when
 * the context executed (status, which acts on nothing, observes as a plan does). */
static EnginePass seen[8];
static size_t n_seen;

static int pass_apply(Action *a, Context *ctx, char **reterr_msg) {
        seen[n_seen++] = ctx->pass;
        return 1;
}

static const ActionOps pass_ops = { .kind = "pass", .apply = pass_apply };

static int pass_plan(Context *ctx, Plan *plan, char **reterr) {
        seen[n_seen++] = ctx->pass;
        return plan_add(plan, &pass_ops, "passes", "ok", NULL, NULL) ? 0 : -ENOMEM;
}

static const Phase pass_table[] = {
        { .name = "passes", .plan = pass_plan },
};

static void test_passes(void **state) {
        Plan *plan = plan_new(), *residue = NULL;
        cleanup_free char *err = NULL;
        Context ctx = { .root = "/", .root_fd = -EBADF };
        PhaseSelection sel;

        phase_table_register(pass_table, ELEMENTSOF(pass_table));
        assert_int_equal(phase_selection_parse(&sel, NULL, NULL, false, &err), 0);
        n_seen = 0;
        assert_int_equal(engine_verify(&ctx, &sel, &residue, NULL, &err), 0); /* status */
        residue = plan_free(residue);
        assert_int_equal(engine_plan(&ctx, &sel, plan, &err), 0);
        assert_int_equal(engine_execute(&ctx, plan, NULL), 0);
        assert_int_equal(ctx.pass, ENGINE_PASS_PLAN);
        assert_true(ctx.executed);
        assert_int_equal(engine_verify(&ctx, &sel, &residue, NULL, &err), 0);
        assert_int_equal(n_seen, 4);
        assert_int_equal(seen[0], ENGINE_PASS_PLAN);
        assert_int_equal(seen[1], ENGINE_PASS_PLAN);
        assert_int_equal(seen[2], ENGINE_PASS_EXECUTE);
        assert_int_equal(seen[3], ENGINE_PASS_VERIFY);
        assert_int_equal(residue->n_actions, 1); /* no check: still to do */
        plan_free(residue);
        plan_free(plan);
        phase_facts_done(&ctx);
        mount_table_free(ctx.mounts);
}

static unsigned a_done, b_done;

static void count_a(void *state) {
        assert_int_equal(*(int *) state, 7);
        a_done++;
}

static void count_b(void *state) {
        b_done++;
}

/* What a module keeps for the run: found by its type, zeroed at the first ask, freed once at the end. */
static void test_context_states(void **state) {
        static const ContextStateType a = { .name = "a", .size = sizeof(int), .done = count_a },
                                      b = { .name = "b", .size = 64, .done = count_b }, c = { .name = "c", .size = 1 };
        static ContextStateType many[CONTEXT_STATES_MAX];
        Context ctx = {};
        int *ia;

        assert_null(context_state_peek(&ctx, &a));
        ia = context_state(&ctx, &a);
        assert_non_null(ia);
        assert_int_equal(*ia, 0);
        *ia = 7;
        assert_ptr_equal(context_state(&ctx, &a), ia);
        assert_ptr_equal(context_state_peek(&ctx, &a), ia);
        assert_ptr_not_equal(context_state(&ctx, &b), ia);
        assert_non_null(context_state(&ctx, &c)); /* no done: only freed */
        context_states_done(&ctx);
        assert_int_equal(a_done, 1);
        assert_int_equal(b_done, 1);
        assert_null(context_state_peek(&ctx, &a));
        /* A context holds CONTEXT_STATES_MAX states: one more is refused, never overwritten. */
        for (size_t i = 0; i < ELEMENTSOF(many); i++) {
                many[i] = (ContextStateType) { .name = "many", .size = 1 };
                assert_non_null(context_state(&ctx, &many[i]));
        }
        assert_null(context_state(&ctx, &a));
        context_states_done(&ctx);
        assert_int_equal(a_done, 1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_results),        cmocka_unit_test(test_batch),
                cmocka_unit_test(test_deadline),       cmocka_unit_test(test_hooks),
                cmocka_unit_test(test_decisions),      cmocka_unit_test(test_selection),
                cmocka_unit_test(test_result_names),   cmocka_unit_test(test_passes),
                cmocka_unit_test(test_context_states),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
