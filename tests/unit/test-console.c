/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Progress without a terminal: a start line per phase, a heartbeat while a long phase (one pods
 * batch) completes nothing, the end line; and no heartbeat left running after the phase. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/engine/console.h"
#include "agent/engine/engine.h"
#include "agent/engine/plan.h"
#include "macro.h"

/* A batch that takes a while and completes everything at once, as the pods phase does. */
static void slow_batch(Action **actions, size_t n, Context *ctx) {
        usleep(120 * 1000);
        for (size_t i = 0; i < n; i++)
                action_record(actions[i], 1, NULL);
}

static const ActionOps slow_ops = { .kind = "stop-pod", .apply_batch = slow_batch };

static int quick_apply(Action *a, Context *ctx, char **reterr_msg) {
        return 0;
}

static const ActionOps quick_apply_ops = { .kind = "fake", .apply = quick_apply };

/* Runs plan with a console whose stderr (where the log lines go) is a file; returns what it got. */
static char *run_captured(Plan *p, uint64_t heartbeat_usec) {
        char *buf = calloc(1, 8192);
        FILE *out = tmpfile(), *err = tmpfile();
        int saved = dup(STDERR_FILENO);
        ExecuteHooks hooks;
        Context ctx = {};
        Console c;

        assert_non_null(buf);
        assert_non_null(out);
        assert_non_null(err);
        assert_true(dup2(fileno(err), STDERR_FILENO) >= 0);
        console_init(&c, stdin, out, false);
        assert_false(c.tty);
        c.heartbeat_usec = heartbeat_usec;
        hooks = console_hooks(&c);
        (void) engine_execute(&ctx, p, &hooks);
        console_done(&c);
        fflush(stderr);
        assert_true(dup2(saved, STDERR_FILENO) >= 0);
        close(saved);
        rewind(err);
        assert_true(fread(buf, 1, 8191, err) > 0);
        fclose(err);
        fclose(out);
        return buf;
}

static void test_start_heartbeat_end(void **state) {
        Plan *p = plan_new();
        char *log;

        assert_non_null(plan_add(p, &slow_ops, "pods", "a", NULL, NULL));
        assert_non_null(plan_add(p, &slow_ops, "pods", "b", NULL, NULL));
        assert_non_null(plan_add(p, &quick_apply_ops, "files", "c", NULL, NULL));
        log = run_captured(p, 30 * 1000);
        assert_non_null(strstr(log, "node-reset: pods: starting, 2 actions, 2 with something to do\n"));
        assert_non_null(strstr(log, "node-reset: pods: 0/2 actions done, running for "));
        assert_non_null(strstr(log, "node-reset: pods: 2 changed, 0 unchanged, 0 failed, 0 skipped"));
        assert_non_null(strstr(log, "node-reset: files: starting, 1 actions, 1 with something to do\n"));
        /* The start line comes before the heartbeat, the heartbeat before the end line. */
        assert_true(strstr(log, "pods: starting") < strstr(log, "pods: 0/2"));
        assert_true(strstr(log, "pods: 0/2") < strstr(log, "pods: 2 changed"));
        /* The quick phase ends before a heartbeat: none logged for it. */
        assert_null(strstr(log, "files: 0/1"));
        free(log);
        plan_free(p);
}

static void test_no_heartbeat(void **state) {
        Plan *p = plan_new();
        char *log;

        assert_non_null(plan_add(p, &slow_ops, "pods", "a", NULL, NULL));
        log = run_captured(p, 0);
        assert_non_null(strstr(log, "pods: starting"));
        assert_null(strstr(log, "actions done"));
        free(log);
        plan_free(p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_start_heartbeat_end),
                cmocka_unit_test(test_no_heartbeat),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
