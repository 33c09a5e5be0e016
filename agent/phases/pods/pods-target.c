/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's runtime (pods-target.h), counted by the rows planned for it, its budget, and the
 * phase's row. */

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/phases/pods/pods-target.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

PodsTarget *pods_target_unref(PodsTarget *pt) {
        if (!pt || --pt->n_ref > 0)
                return NULL;
        cri_client_free(pt->client);
        cri_version_done(&pt->version);
        runtime_info_done(&pt->info);
        free(pt->socket_path);
        free(pt->probe_message);
        free(pt->rung3_reason);
        free(pt->rescue_path);
        pods_teardown_done(&pt->teardown);
        strv_free(pt->keep_ids);
        return mfree(pt);
}

PodsTarget *pods_target_ref(PodsTarget *pt) {
        pt->n_ref++;
        return pt;
}

void pods_target_data_free(void *p) {
        pods_target_unref(p);
}

/* The phase budget starts when the first action of this runtime runs. */
void pods_budget_start(PodsTarget *pt, const Context *ctx) {
        if (pt->deadline > 0)
                return;
        pt->deadline = now(CLOCK_MONOTONIC) + pt->budget_usec;
        if (ctx->deadline_usec > 0)
                pt->deadline = u64_min(pt->deadline, ctx->deadline_usec);
}

uint64_t pods_budget_left(const PodsTarget *pt) {
        return usec_left(pt->deadline);
}

void pods_sleep_in_budget(const PodsTarget *pt, uint64_t usec) {
        usec = u64_min(usec, pods_budget_left(pt));
        if (usec > 0)
                (void) usleep((useconds_t) usec);
}

void pods_need_rung3(PodsTarget *pt, const char *fmt, ...) {
        va_list ap;

        pt->needs_rung3 = true;
        if (pt->rung3_reason)
                return;
        va_start(ap, fmt);
        pt->rung3_reason = vstrprintf(fmt, ap);
        va_end(ap);
}

int pods_add_row(Plan *plan, const ActionOps *ops, const char *target, void *data, bool present, const char *skip,
                 const char *detail_fmt, ...) {
        cleanup_free char *detail = NULL;
        va_list ap;
        Action *a;

        va_start(ap, detail_fmt);
        detail = vstrprintf(detail_fmt, ap);
        va_end(ap);
        a = plan_add(plan, ops, "pods", target, NULL, data);
        if (!a || !detail)
                return -ENOMEM;
        a->present = present;
        a->detail = TAKE_PTR(detail);
        return skip ? action_set_skip(a, "%s", skip) : 0;
}
