/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's runtime row: rung 3 of the ladder (stop the runtime, kill its shims, unmount what
 * they left) when the CRI could not finish, and what verify finds of it. */

#include <errno.h>
#include <stdarg.h>

#include "agent/base/log.h"
#include "agent/os/proc.h"
#include "agent/phases/pods/pods-batch.h"
#include "agent/phases/pods/pods-ladder.h"
#include "agent/phases/pods/pods-runtime.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

/* --- Rung 3: the runtime action ------------------------------------------------------------ */

static const char *rung3_reason(const PodsTarget *pt) {
        if (pt->probe_error < 0)
                return pt->probe_message ?: "the runtime does not answer";
        if (pt->needs_rung3)
                return pt->rung3_reason ?: "the CRI could not finish";
        return NULL;
}

static int runtime_apply(Action *a, Context *ctx, char **ret_msg) {
        PodsTarget *pt = a->data;
        const char *why = rung3_reason(pt);

        pods_rescue_release(pt);
        if (!why && pt->rescued > 0)
                return set_errmsg(ret_msg, 0,
                                  "rung 3 not needed: every pod went through the CRI, %u calls with "
                                  "the rung 2 rescue",
                                  pt->rescued);
        if (!why)
                return set_errmsg(ret_msg, 0, "no rescue needed: every pod went through the CRI");
        return ladder_rung3(ctx, pt->socket_path, &pt->info, pt->probe_error >= 0, why, ret_msg);
}

/* Residue: the runtime still listens without answering, or shims or their mounts remain. */
static int runtime_check(Action *a, Context *ctx, char **ret_msg) {
        PodsTarget *pt = a->data;
        LeftoverUnmount lu = {};
        unsigned shims = 0;
        pid_t pid = 0;

        (void) proc_socket_listener(pt->socket_path, &pid);
        ladder_residue(pt->socket_path, &pt->info, &shims, &lu);
        if (pid <= 0 && shims == 0 && lu.rootfs + lu.shm + lu.netns == 0)
                return 0;
        *ret_msg = strprintf("%s; %u shims; %u rootfs, %u shm, %u netns mounts left",
                             pid > 0 ? "still listening without answering" : "not running", shims, lu.rootfs, lu.shm,
                             lu.netns);
        return 1;
}

static const ActionOps runtime_ops = {
        .kind = "runtime",
        .apply = runtime_apply,
        .check = runtime_check,
        .free_data = pods_target_data_free,
};

int pods_runtime_row(Plan *plan, PodsTarget *pt, bool present, const char *fmt, ...) {
        cleanup_free char *what = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        what = vstrprintf(fmt, ap);
        va_end(ap);
        if (!what)
                return -ENOMEM;
        r = pods_add_row(
                plan, &runtime_ops, pt->socket_path, pods_target_ref(pt), present, NULL,
                "%s; %s PID %d, config %s, CNI conf dir %s, unit %s; rung 3 if needed: stop the unit, kill the "
                "shims, unmount what they left",
                what, runtime_kind_to_string(pt->info.kind), (int) pt->info.pid, strna(pt->info.config),
                strna(pt->info.cni_conf_dir), strna(pt->info.unit));
        if (r >= 0 && pt->probe_error >= 0)
                plan->actions[plan->n_actions - 1]->cri_api = cri_client_api_version(pt->client);
        return r;
}

/* A runtime that does not answer Version: rung 3 is the plan, unless it is simply not running and
 * left nothing behind. */
int pods_runtime_plan_unanswered(Plan *plan, PodsTarget *pt) {
        LeftoverUnmount lu = {};
        unsigned shims = 0;

        if (pt->probe_error == -ECONNREFUSED || pt->probe_error == -ENOENT) {
                ladder_residue(pt->socket_path, &pt->info, &shims, &lu);
                return pods_runtime_row(plan, pt, shims + lu.rootfs + lu.shm + lu.netns > 0,
                                        "not running (%s); %u shims and %u mounts left", strna(pt->probe_message),
                                        shims, lu.rootfs + lu.shm + lu.netns);
        }
        log_warning("The container runtime at %s does not answer: %s", pt->socket_path, strna(pt->probe_message));
        return pods_runtime_row(plan, pt, true, "not answering: %s", strna(pt->probe_message));
}
