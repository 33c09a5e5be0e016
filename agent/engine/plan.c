/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Plan container and Action bookkeeping shared by every phase. */

#include <stdarg.h>
#include <time.h>

#include "agent/engine/context.h"
#include "agent/engine/plan.h"
#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"

static const char *const result_names[_ACTION_RESULT_MAX] = {
        [ACTION_PENDING] = "planned", [ACTION_UNCHANGED] = "unchanged", [ACTION_CHANGED] = "changed",
        [ACTION_FAILED] = "failed",   [ACTION_SKIPPED] = "skipped",
};

const char *action_result_to_string(ActionResult r) {
        if (r < 0 || r >= _ACTION_RESULT_MAX)
                return NULL;
        return result_names[r];
}

Plan *plan_new(void) {
        return calloc(1, sizeof(Plan));
}

static Action *action_free(Action *a) {
        if (!a)
                return NULL;
        if (a->ops && a->ops->free_data && a->data)
                a->ops->free_data(a->data);
        free(a->target);
        free(a->detail);
        free(a->reason);
        free(a->skip_reason);
        free(a->message);
        free(a->backup_path);
        return mfree(a);
}

Plan *plan_free(Plan *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_actions; i++)
                action_free(p->actions[i]);
        free(p->actions);
        return mfree(p);
}

void plan_truncate(Plan *p, size_t n) {
        while (p->n_actions > n)
                action_free(p->actions[--p->n_actions]);
}

static int plan_grow(Plan *p) {
        return GREEDY_REALLOC(p->actions, p->allocated, p->n_actions + 1);
}

int plan_append(Plan *p, Action *a) {
        int r;

        r = plan_grow(p);
        if (r < 0)
                return r;
        p->actions[p->n_actions++] = a;
        return 0;
}

Action *plan_add(Plan *p, const ActionOps *ops, const char *phase, const char *target, const char *reason, void *data) {
        Action *a;

        a = calloc(1, sizeof(Action));
        if (!a || plan_grow(p) < 0)
                goto fail;
        a->ops = ops;
        a->phase = phase;
        a->data = data;
        a->present = true;
        a->target = strdup(target);
        a->reason = reason ? strdup(reason) : NULL;
        if (!a->target || (reason && !a->reason))
                goto fail;
        p->actions[p->n_actions++] = a;
        return a;
fail:
        if (a) {
                a->data = NULL;
                action_free(a);
        }
        if (data && ops->free_data)
                ops->free_data(data);
        return NULL;
}

static int set_formatted(char **field, const char *fmt, va_list ap) {
        char *s = vstrprintf(fmt, ap);

        if (!s)
                return -ENOMEM;
        free(*field);
        *field = s;
        return 0;
}

int action_set_detail(Action *a, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = set_formatted(&a->detail, fmt, ap);
        va_end(ap);
        return r;
}

int action_set_skip(Action *a, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = set_formatted(&a->skip_reason, fmt, ap);
        va_end(ap);
        return r;
}

int action_set_skip_code(Action *a, const char *code, const char *fmt, ...) {
        va_list ap;
        int r;

        a->code = code;
        va_start(ap, fmt);
        r = set_formatted(&a->skip_reason, fmt, ap);
        va_end(ap);
        return r;
}

const char *action_error_code(const Action *a) {
        const char *name;

        if (a->result == ACTION_FAILED) {
                if (a->code)
                        return a->code;
                name = a->error ? strerrorname_np(-a->error) : NULL;
                return name ?: "failed";
        }
        if (a->result != ACTION_SKIPPED)
                return NULL;
        if (a->code)
                return a->code;
        /* No skip reason from the plan: the operator skipped or quit (--step). */
        return a->skip_reason ? "refused" : "operator";
}

void action_record(Action *a, int r, char *message) {
        free(a->message);
        a->message = message;
        if (r < 0) {
                a->result = ACTION_FAILED;
                a->error = r;
        } else
                a->result = r > 0 ? ACTION_CHANGED : ACTION_UNCHANGED;
}

void action_recordv(Action *a, int r, const char *fmt, va_list ap) {
        action_record(a, r, vstrprintf(fmt, ap));
}

void action_recordf(Action *a, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        action_recordv(a, r, fmt, ap);
        va_end(ap);
}

size_t plan_count(const Plan *p, const char *phase, int r) {
        size_t n = 0;

        for (size_t i = 0; i < p->n_actions; i++) {
                const Action *a = p->actions[i];

                if (phase && strcmp(a->phase, phase) != 0)
                        continue;
                if (r >= 0 && a->result != (ActionResult) r)
                        continue;
                n++;
        }
        return n;
}

size_t plan_count_present(const Plan *p) {
        size_t n = 0;

        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i]->present && !p->actions[i]->skip_reason)
                        n++;
        return n;
}
