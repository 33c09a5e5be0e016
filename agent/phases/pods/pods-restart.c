/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The runtime restarted around the kill pass with its pods' tasks cleared: the stop row before the kill
 * pass, the start row after it, and when the plan refuses them. */

#include <errno.h>
#include <string.h>

#include "agent/base/log.h"
#include "agent/engine/phase.h"
#include "agent/os/proc.h"
#include "agent/os/services.h"
#include "agent/phases/pods/pods-ladder.h"
#include "agent/phases/pods/pods-restart.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

/* From this many pods on, restarting containerd with its pods' tasks cleared (ladder_runtime_stop(),
 * ladder_runtime_clear_start()) costs less than what it spares: per pod, containerd runs runc once per
 * task to delete it and, as the shim of a pod exits, the shim binary and runc again per task to clean
 * up after it (about 6 Go programs started per pod); the restart costs a stop and a start of the
 * runtime. The stop is waited for this long before the kill pass goes on regardless: no pod process
 * may live long. */
#define RESTART_MIN_PODS 8U
#define RESTART_STOP_WAIT_USEC (1 * USEC_PER_SEC)

/* The restart around the kill pass (ladder_runtime_stop(), ladder_runtime_clear_start()): the pods exit
 * while nobody is there to handle their exits, and the CRI calls that follow find no task to delete. */
static int runtime_stop_apply(Action *a, Context *ctx, char **ret_msg) {
        PodsTarget *pt = a->data;

        pods_budget_start(pt, ctx);
        pt->stopped =
                ladder_runtime_stop(ctx, &pt->info, u64_min(RESTART_STOP_WAIT_USEC, pods_budget_left(pt)), ret_msg);
        if (pt->stopped == -ETIME)
                return 1; /* the stop job is queued and runs on: the start row waits for it */
        return pt->stopped > 0 ? 1 : 0;
}

static int runtime_start_apply(Action *a, Context *ctx, char **ret_msg) {
        PodsTarget *pt = a->data;

        pods_budget_start(pt, ctx);
        if (pt->stopped <= 0 && pt->stopped != -ETIME)
                return set_errmsg(ret_msg, 0, "nothing to start: %s was not stopped", pt->info.unit);
        return ladder_runtime_clear_start(ctx, pt->socket_path, &pt->info, pt->deadline, ret_msg);
}

/* Residue when the kept runtime does not run or answer since: the rejoin needs it. */
static int restart_check(Action *a, Context *ctx, char **ret_msg) {
        PodsTarget *pt = a->data;
        CriVersion v = {};
        pid_t pid = 0;
        int r;

        if (proc_socket_listener(pt->socket_path, &pid) <= 0) {
                *ret_msg = strprintf("nothing listens on %s since the restart: the kept runtime does not run",
                                     pt->socket_path);
                return 1;
        }
        cri_client_set_timeout(pt->client, PODS_PROBE_TIMEOUT_USEC);
        r = cri_version(pt->client, 0, &v, NULL);
        cri_version_done(&v);
        if (r >= 0)
                return 0;
        *ret_msg = strprintf("%s does not answer since the restart: %s", pt->socket_path, strerror(-r));
        return 1;
}

static const ActionOps runtime_stop_ops = {
        .kind = "runtime-stop",
        .apply = runtime_stop_apply,
        .check = restart_check,
        .free_data = pods_target_data_free,
};

static const ActionOps runtime_start_ops = {
        .kind = "runtime-start",
        .apply = runtime_start_apply,
        .check = restart_check,
        .free_data = pods_target_data_free,
};

/* Why the runtime is not restarted with its pods' tasks cleared before the CRI calls, or NULL when it
 * is: containerd as its unit's own main process (not k3s's or rke2's), reachable through systemd, kept
 * by this run, serving Kubernetes alone, with enough pods, and no CNI DEL that may need its agent. */
static const char *restart_refused(Context *ctx, const PodsTarget *pt, size_t n) {
        ServiceManager *m = NULL;
        unsigned foreign = 0;
        pid_t main_pid = 0;

        if (pt->info.kind != RUNTIME_CONTAINERD || !pt->info.unit || pt->info.pid <= 0 || !pt->info.state_dir)
                return "not a containerd with a known unit";
        if (pt->teardown.kind == TEARDOWN_FULL)
                return "the CNI gets its full DEL";
        if (n < RESTART_MIN_PODS)
                return "too few pods for a restart to pay";
        if (!streq(ctx->root, "/") || phase_manifest_stops_unit(ctx->manifest, pt->info.unit))
                return "this run does not keep the runtime running";
        if (phase_systemd_running(ctx, &m, NULL) < 0)
                return "systemd is out of reach";
        if (services_unit_main_pid(m, pt->info.unit, &main_pid) < 0 || main_pid != pt->info.pid)
                return "the runtime is not its unit's main process";
        if (ladder_foreign_shims(pt->socket_path, &foreign) < 0 || foreign > 0)
                return "it runs containers of another namespace than k8s.io";
        return NULL;
}

/* The restart's first row: before the kill pass. */
int pods_restart_plan_stop(Context *ctx, Plan *plan, PodsTarget *pt, size_t n) {
        const char *why = restart_refused(ctx, pt, n);

        if (why) {
                log_debug("Pods phase: no restart of the runtime at %s: %s.", pt->socket_path, why);
                return 0;
        }
        pt->restart = true;
        return pods_add_row(
                plan, &runtime_stop_ops, pt->info.unit, pods_target_ref(pt), true, NULL,
                "stop (PID %d) before the kill pass, its shims staying: nobody is left to handle the exits of "
                "the %zu pods, whose tasks' state is cleared below it (at most %u ms waited, then the kill "
                "pass goes on)",
                (int) pt->info.pid, n, (unsigned) (RESTART_STOP_WAIT_USEC / USEC_PER_MSEC));
}

/* The restart's second row: after the kill pass, before the CRI calls. */
int pods_restart_plan_start(Plan *plan, PodsTarget *pt) {
        if (!pt->restart)
                return 0;
        return pods_add_row(
                plan, &runtime_start_ops, pt->info.unit, pods_target_ref(pt), true, NULL,
                "SIGKILL the k8s.io shims, unmount their rootfs, shm and netns, empty their task state (%s), "
                "start it again: each pod's removal then runs no runc and no shim",
                pt->info.state_dir);
}
