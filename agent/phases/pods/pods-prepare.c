/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the pods phase does before its CRI calls: the teardown the CNI gets (the stand-in conflist when it
 * is cheap) and the kill pass, with the runtime's restart around it (pods-restart.c). */

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "agent/base/json.h"
#include "agent/base/log.h"
#include "agent/phases/pods/pods-kill.h"
#include "agent/phases/pods/pods-ladder.h"
#include "agent/phases/pods/pods-rescue.h"
#include "agent/phases/pods/pods-prepare.h"
#include "agent/phases/pods/pods-restart.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

/* The kill pass waits this long for the pods' processes to be gone (SIGKILL: only a process stuck in
 * the kernel takes longer) before the CRI calls go on regardless. */
#define KILL_WAIT_USEC (5 * USEC_PER_SEC)
/* containerd reloads its CNI config on the conf dir's inotify event: the stand-in is usually loaded
 * within milliseconds; past this the calls go on (a call before it still gets the real DEL). */
#define STANDIN_WAIT_USEC (3 * USEC_PER_SEC)
#define STANDIN_POLL_USEC (20 * USEC_PER_MSEC)

/* --- Before the CRI calls: the teardown the CNI gets, and the kill pass ------------------------ */

/* Whether containerd's verbose Status shows the stand-in among the networks it loaded ("cniconfig":
 * {"Networks": [{"Config": {"Name": ...}}]}, go-cni's ConfigResult): 1 yes, 0 not yet, -errno. */
static int standin_loaded(PodsTarget *pt) {
        CLEANUP(json_freep) JsonValue *root = NULL;
        cleanup_free char *conf = NULL;
        const JsonValue *nets;
        int r;

        cri_client_set_timeout(pt->client, u64_min(PODS_PROBE_TIMEOUT_USEC, pods_budget_left(pt)));
        r = cri_status_info(pt->client, pt->deadline, "cniconfig", &conf, NULL);
        if (r < 0)
                return r;
        if (!conf || json_parse(conf, strlen(conf), &root) < 0)
                return -EBADMSG;
        nets = json_get(root, "Networks", true);
        for (size_t i = 0; nets && nets->type == JSON_ARRAY && i < nets->n; i++)
                if (streq_ptr(json_string_of(json_get(json_get(nets->items[i], "Config", true), "Name", true)),
                              CNI_RESCUE_NETWORK))
                        return 1;
        return 0;
}

/* Wait (at most STANDIN_WAIT_USEC) until the runtime has loaded the stand-in: a call made before
 * would still run the real DEL. Returns the milliseconds waited, or -errno when the runtime cannot
 * say (then the first calls may get the full DEL; correct, only slower). */
static int64_t standin_wait(PodsTarget *pt) {
        usec_t start = now(CLOCK_MONOTONIC), until = start + u64_min(STANDIN_WAIT_USEC, pods_budget_left(pt));
        int r;

        while ((r = standin_loaded(pt)) == 0 && now(CLOCK_MONOTONIC) < until)
                pods_sleep_in_budget(pt, STANDIN_POLL_USEC);
        if (r <= 0)
                return r < 0 ? r : -ETIME;
        return (int64_t) ((now(CLOCK_MONOTONIC) - start) / USEC_PER_MSEC);
}

/* TEARDOWN_CHEAP: the loopback-only conflist stands in before the first call, so that each pod's
 * teardown is loopback's; anything else: the row only says what the CNI gets. */
static int teardown_apply(Action *a, Context *ctx, char **ret_msg) {
        PodsTarget *pt = a->data;
        cleanup_free char *err = NULL;
        int64_t waited;
        int r;

        pods_budget_start(pt, ctx);
        if (pt->teardown.kind != TEARDOWN_CHEAP || pt->rescue_path)
                return set_errmsg(ret_msg, 0, "%s", strna(pt->teardown.why));
        /* The plan's choice is a claim: the configuration the runtime loads is read again. */
        pods_teardown_done(&pt->teardown);
        r = pods_teardown_decide(ctx, &pt->info, &pt->teardown);
        if (r < 0)
                return r;
        if (pt->teardown.kind != TEARDOWN_CHEAP)
                return set_errmsg(ret_msg, 0, "since the plan: %s", strna(pt->teardown.why));
        r = cni_rescue_install(pt->info.cni_conf_dir, &pt->rescue_path, &err);
        if (r < 0) {
                log_warning("The stand-in conflist cannot be written, every pod gets its full CNI DEL: %s", strna(err));
                return set_errmsg(ret_msg, 0, "full DEL after all: the stand-in cannot be written (%s)", strna(err));
        }
        pt->standin = true;
        /* The restart that follows makes the runtime load its conf dir afresh, the stand-in first. */
        if (pt->restart)
                return set_errmsg(ret_msg, 1,
                                  "%s stands in until the last pod-network pod is removed (loaded by the restart)",
                                  pt->rescue_path);
        waited = standin_wait(pt);
        if (waited < 0) {
                log_notice("The runtime does not show the stand-in %s loaded (%s): early pods may get their full DEL.",
                           pt->rescue_path, strerror((int) -waited));
                return set_errmsg(ret_msg, 1,
                                  "%s stands in until the last pod-network pod is removed; the runtime did not show "
                                  "it loaded (%s): early pods may still get their full DEL",
                                  pt->rescue_path, strerror((int) -waited));
        }
        log_info("CNI teardown made cheap: %s stands in while the pods go (loaded after %" PRIi64 " ms).",
                 pt->rescue_path, waited);
        return set_errmsg(ret_msg, 1,
                          "%s stands in until the last pod-network pod is removed (loaded after %" PRIi64 " ms)",
                          pt->rescue_path, waited);
}

static const ActionOps teardown_ops = {
        .kind = "cni-teardown",
        .apply = teardown_apply,
        .free_data = pods_target_data_free,
};

/* Every process of the pods' containers SIGKILLed at once, before any CRI call: nothing of the
 * cluster runs after this row, however many pods the CRI calls then take down. */
static int kill_apply(Action *a, Context *ctx, char **ret_msg) {
        PodsTarget *pt = a->data;
        PodsKill k = {};
        int r;

        pods_budget_start(pt, ctx);
        r = pods_kill(pt->socket_path, &pt->info, pt->keep_ids, u64_min(KILL_WAIT_USEC, pods_budget_left(pt)), &k);
        if (r == -EOPNOTSUPP)
                return set_errmsg(ret_msg, 0, "not for %s: its CRI calls stop the containers",
                                  runtime_kind_to_string(pt->info.kind));
        if (r < 0 && r != -EBUSY)
                return set_errmsg(ret_msg, r, "cannot look for the pods' processes: %s", strerror(-r));
        a->pods_gone_known = true;
        a->pods_gone_usec = k.gone_usec;
        if (r == -EBUSY)
                return set_errmsg(ret_msg, r, "SIGKILL to %u processes of %u pods; %u still alive after %" PRIu64 " ms",
                                  k.processes, k.pods, k.survivors, k.gone_usec / USEC_PER_MSEC);
        if (r > 0)
                log_info("Pods phase: %u processes of %u pods killed, none alive after %" PRIu64 " ms.", k.processes,
                         k.pods, k.gone_usec / USEC_PER_MSEC);
        return set_errmsg(ret_msg, r, "SIGKILL to %u processes of %u pods in one pass; none alive after %" PRIu64 " ms",
                          k.processes, k.pods, k.gone_usec / USEC_PER_MSEC);
}

static int kill_check(Action *a, Context *ctx, char **ret_msg) {
        PodsTarget *pt = a->data;
        unsigned pods = 0, processes = 0;

        if (pods_kill_count(pt->socket_path, &pt->info, pt->keep_ids, &pods, &processes) < 0 || processes == 0)
                return 0;
        *ret_msg = strprintf("%u processes of %u pods still run", processes, pods);
        return 1;
}

static const ActionOps kill_ops = {
        .kind = "kill-pods",
        .apply = kill_apply,
        .check = kill_check,
        .free_data = pods_target_data_free,
};

/* The host-network sandboxes whose processes live until their own RemovePodSandbox: a full DEL may
 * need the CNI's agent, which runs as such a pod. */
static int keep_agents(PodsTarget *pt, const SandboxView *v, size_t n) {
        if (pt->teardown.kind != TEARDOWN_FULL || !pt->teardown.agent_needed)
                return 0;
        for (size_t i = 0; i < n; i++)
                if (v[i].host_network && strv_extend(&pt->keep_ids, v[i].s->id) < 0)
                        return -ENOMEM;
        return 0;
}

/* The rows before the CRI calls: which teardown the CNI gets (and the concurrency it allows), the
 * kill pass, and the restart that spares each pod's task deletion. */
int pods_prepare_plan(Context *ctx, Plan *plan, PodsTarget *pt, const SandboxView *v, size_t n,
                      bool concurrency_given) {
        const char *cwhy = "--concurrency";
        unsigned pods = 0, processes = 0;
        int r;

        if (!concurrency_given)
                pt->concurrency = pods_concurrency(&pt->teardown, n, (unsigned) sysconf(_SC_NPROCESSORS_ONLN), &cwhy);
        r = pods_add_row(plan, &teardown_ops, pt->teardown.config ?: pt->socket_path, pods_target_ref(pt),
                         pt->teardown.kind == TEARDOWN_CHEAP, NULL, "%s; %u CRI calls in flight (%s)", pt->teardown.why,
                         pt->concurrency, cwhy);
        if (r < 0)
                return r;
        r = keep_agents(pt, v, n);
        if (r < 0)
                return r;
        r = pods_kill_count(pt->socket_path, &pt->info, pt->keep_ids, &pods, &processes);
        if (r == -EOPNOTSUPP || r == -EPERM)
                return pods_add_row(plan, &kill_ops, pt->socket_path, pods_target_ref(pt), false, NULL,
                                    "no kill pass %s: the CRI calls stop the containers",
                                    r == -EPERM ? "(/proc is another PID namespace's)" : "for this runtime");
        if (r < 0)
                return r;
        r = pods_restart_plan_stop(ctx, plan, pt, n);
        if (r >= 0)
                r = pods_add_row(plan, &kill_ops, pt->socket_path, pods_target_ref(pt), processes > 0, NULL,
                                 "%u processes of %u pods' containers, SIGKILL in one pass before any CRI call (%s)%s",
                                 processes, pods,
                                 pt->restart ? "the shims go with the restart" : "the shims stay for the CRI calls",
                                 pt->keep_ids ? "; the host-network pods' run until their own call (the CNI's DEL may "
                                                "need its agent)"
                                              : "");
        return r < 0 ? r : pods_restart_plan_start(plan, pt);
}
