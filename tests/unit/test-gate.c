/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/engine/gate.c: a gated phase's failure quits the later phases, and says why,
 * as the phase table's row says (gate, gate_passes), whatever the phases are called. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/engine/engine.h"
#include "agent/engine/gate.h"
#include "macro.h"
#include "string-util.h"

static unsigned inner_begins, inner_ends;

/* The target says what the fake does: "ok", "fail" (-EIO), "full" (-ENOSPC). */
static int fake_apply(Action *a, Context *ctx, char **reterr_msg) {
        if (streq(a->target, "fail"))
                return -EIO;
        if (streq(a->target, "full"))
                return -ENOSPC;
        return 1;
}

static const ActionOps fake_ops = { .kind = "fake", .apply = fake_apply };

static bool passes_when_full(int error) {
        return error == -ENOSPC;
}

/* The gated phase has a name no code knows: only its row makes it a gate. */
static const Phase table[] = {
        { .name = "first" },
        { .name = "save", .gate = "the save failed", .gate_passes = passes_when_full },
        { .name = "act" },
        { .name = "finish" },
};

static PhaseDecision inner_begin(const Plan *plan, size_t first, size_t n, void *userdata) {
        inner_begins++;
        return PHASE_RUN;
}

static void inner_end(const Plan *plan, size_t first, size_t n, uint64_t elapsed_usec, void *userdata) {
        inner_ends++;
}

/* Run a plan of one row per phase, the "save" row doing what save_target says. */
static Plan *run(const char *save_target, const Phase **ret_failed) {
        ExecuteHooks inner = { .phase_begin = inner_begin, .phase_end = inner_end }, hooks;
        Context ctx = {};
        Plan *p = plan_new();
        GateHooks g;

        assert_non_null(p);
        assert_non_null(plan_add(p, &fake_ops, "first", "ok", NULL, NULL));
        assert_non_null(plan_add(p, &fake_ops, "save", save_target, NULL, NULL));
        assert_non_null(plan_add(p, &fake_ops, "save", "ok", NULL, NULL));
        assert_non_null(plan_add(p, &fake_ops, "act", "ok", NULL, NULL));
        assert_non_null(plan_add(p, &fake_ops, "finish", "ok", NULL, NULL));
        inner_begins = inner_ends = 0;
        hooks = gate_hooks(&g, inner);
        (void) engine_execute(&ctx, p, &hooks);
        if (g.failed)
                gate_explain(p, g.failed);
        *ret_failed = g.failed;
        return p;
}

static void test_gate_closes(void **state) {
        const Phase *failed;
        Plan *p;

        phase_table_register(table, ELEMENTSOF(table));
        p = run("fail", &failed);
        assert_ptr_equal(failed, &table[1]);
        assert_int_equal(p->actions[0]->result, ACTION_CHANGED);
        assert_int_equal(p->actions[1]->result, ACTION_FAILED);
        /* The gate's own rows keep their results and messages: the gate quits what comes after. */
        assert_int_equal(p->actions[2]->result, ACTION_CHANGED);
        assert_null(p->actions[2]->message);
        for (size_t i = 3; i < 5; i++) {
                assert_int_equal(p->actions[i]->result, ACTION_SKIPPED);
                assert_string_equal(p->actions[i]->message, "not run: the save failed");
                assert_string_equal(p->actions[i]->code, "refused");
        }
        /* The console's hooks saw the phases that ran, not the ones the gate quit. */
        assert_int_equal(inner_begins, 2);
        assert_int_equal(inner_ends, 2);
        plan_free(p);
}

static void test_gate_passes(void **state) {
        const Phase *failed;
        Plan *p;

        phase_table_register(table, ELEMENTSOF(table));
        p = run("full", &failed);
        assert_null(failed);
        assert_int_equal(p->actions[1]->result, ACTION_FAILED);
        for (size_t i = 3; i < 5; i++)
                assert_int_equal(p->actions[i]->result, ACTION_CHANGED);
        assert_int_equal(inner_begins, 4);
        plan_free(p);
}

static void test_no_gate(void **state) {
        static const Phase ungated[] = {
                { .name = "first" }, { .name = "save" }, { .name = "act" }, { .name = "finish" }
        };
        const Phase *failed;
        Plan *p;

        /* The same names without a gate in the table: a failure is only a failure. */
        phase_table_register(ungated, ELEMENTSOF(ungated));
        p = run("fail", &failed);
        assert_null(failed);
        for (size_t i = 3; i < 5; i++)
                assert_int_equal(p->actions[i]->result, ACTION_CHANGED);
        plan_free(p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_gate_closes),
                cmocka_unit_test(test_gate_passes),
                cmocka_unit_test(test_no_gate),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
