/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase: stop and remove every pod sandbox and container through the CRI socket, without the
 * API server, in a bounded time, climbing a rescue ladder when the CNI plugin or the runtime fails:
 * (1) retry with backoff, (2) a loopback-only CNI conflist while pods stop, (3) stop the runtime, kill
 * its shims and unmount what they left. This file plans and runs the batches (rung 1, and rung 2's
 * retries); pods-ladder.c holds what rungs 2 and 3 do to the node. */

#include <stdarg.h>
#include <sys/stat.h>

#include "agent/phases/phases.h"
#include "agent/phases/pods/pods.h"
#include "agent/engine/cmdline.h"
#include "agent/engine/libraries.h"
#include "agent/base/json.h"
#include "agent/base/log.h"
#include "agent/engine/phase.h"
#include "agent/phases/pods/pods-docker.h"
#include "agent/phases/pods/pods-kill.h"
#include "agent/phases/pods/pods-ladder.h"
#include "agent/phases/pods/pods-teardown.h"
#include "agent/os/proc.h"
#include "agent/os/runtime-info.h"
#include "agent/os/services.h"
#include "cri/cri.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

#define PODS_BUDGET_DEFAULT_USEC (120 * USEC_PER_SEC)
/* A runtime that does not say its version within this is hung, not busy. */
#define PROBE_TIMEOUT_USEC (5 * USEC_PER_SEC)
#define LIST_TIMEOUT_USEC (15 * USEC_PER_SEC)
/* StopPodSandbox waits for the CNI DEL, RemovePodSandbox stops the sandbox too (its DEL, waiting
 * for containerd's event monitor to see the killed tasks exit) and then removes it: give it long,
 * but less than the budget. A slow node (the e2e VM under TCG) took over 30 s for one call behind
 * the IPAM lock. */
#define CALL_TIMEOUT_USEC (60 * USEC_PER_SEC)
/* Below this a call is not worth starting: the budget is spent. */
#define CALL_TIMEOUT_MIN_USEC (200 * USEC_PER_MSEC)
/* Rung 1: retries after the first attempt, the first backoff (doubling), and one retry for a CNI
 * failure before rung 2. */
#define RETRIES 2U
#define BACKOFF_USEC (250 * USEC_PER_MSEC)
/* Rung 2: how long the rescue conflist may stand in, and how often the pods are retried meanwhile
 * (containerd reloads its CNI config within about a second). */
#define RESCUE_WINDOW_USEC (20 * USEC_PER_SEC)
#define RESCUE_POLL_USEC (500 * USEC_PER_MSEC)
#define ID_SHORT 12
/* The kill pass waits this long for the pods' processes to be gone (SIGKILL: only a process stuck in
 * the kernel takes longer) before the CRI calls go on regardless. */
#define KILL_WAIT_USEC (5 * USEC_PER_SEC)
/* containerd reloads its CNI config on the conf dir's inotify event: the stand-in is usually loaded
 * within milliseconds; past this the calls go on (a call before it still gets the real DEL). */
#define STANDIN_WAIT_USEC (3 * USEC_PER_SEC)
#define STANDIN_POLL_USEC (20 * USEC_PER_MSEC)
/* From this many pods on, restarting containerd with its pods' tasks cleared (ladder_runtime_stop(),
 * ladder_runtime_clear_start()) costs less than what it spares: per pod, containerd runs runc once per
 * task to delete it and, as the shim of a pod exits, the shim binary and runc again per task to clean
 * up after it (about 6 Go programs started per pod); the restart costs a stop and a start of the
 * runtime. The stop is waited for this long before the kill pass goes on regardless: no pod process
 * may live long. */
#define RESTART_MIN_PODS 8U
#define RESTART_STOP_WAIT_USEC (1 * USEC_PER_SEC)

static const char *arg_cri_endpoint;  /* --cri-endpoint, before the manifest's; NULL = those, else probe */
static unsigned arg_concurrency;      /* --concurrency; 0: pods_concurrency() */
static unsigned arg_pods_timeout_sec; /* --pods-timeout; 0: PODS_BUDGET_DEFAULT_USEC */

static usec_t pods_budget(void) {
        return (usec_t) arg_pods_timeout_sec * USEC_PER_SEC;
}

/* One CRI endpoint the phase works on: its client, what is known of the runtime behind it and the
 * ladder state, shared (counted) by the actions planned for it. */
typedef struct PodsTarget {
        unsigned n_ref;
        char *socket_path;
        CriClient *client;
        CriVersion version;
        RuntimeInfo info;
        int probe_error; /* Version's failure at plan time; 0 when it answered */
        char *probe_message;
        unsigned concurrency;
        uint64_t budget_usec;
        uint64_t deadline;      /* CLOCK_MONOTONIC, from the first action executed */
        uint64_t plan_deadline; /* CLOCK_MONOTONIC: no planning call runs past it */
        bool hung;              /* a call ran into its deadline: no more calls, rung 3 */
        bool needs_rung3;       /* the CRI could not finish, even with rung 2 */
        char *rung3_reason;
        unsigned rescued;  /* stops and removes that rung 2 made possible */
        char *rescue_path; /* the loopback-only conflist while it stands in: from the first call
                            * that needs it (rung 2) or from the cni-teardown row (a teardown this
                            * run makes pointless) to the end of the pod-network remove batch */
        bool standin;      /* rescue_path stands in by plan (TEARDOWN_CHEAP), not as rung 2 */
        bool restart;      /* the plan restarts the runtime with its pods' tasks cleared before the calls */
        int stopped;       /* ladder_runtime_stop()'s result: 1 stopped, -ETIME still stopping, else not */
        PodsTeardown teardown;
        char **keep_ids; /* sandboxes whose processes the kill pass leaves to their CRI call */
} PodsTarget;

typedef struct PodData {
        PodsTarget *pt;
        CriOpKind op;
        char *id;
        bool cni; /* a pod-network sandbox: its stop and remove run the CNI DEL */
} PodData;

static PodsTarget *target_unref(PodsTarget *pt) {
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

static PodsTarget *target_ref(PodsTarget *pt) {
        pt->n_ref++;
        return pt;
}

static inline void target_unrefp(PodsTarget **pt) {
        target_unref(*pt);
}

static void pod_data_free(void *p) {
        PodData *d = p;

        target_unref(d->pt);
        free(d->id);
        free(d);
}

static void target_data_free(void *p) {
        target_unref(p);
}

/* The phase budget starts when the first action of this runtime runs. */
static void budget_start(PodsTarget *pt, const Context *ctx) {
        if (pt->deadline > 0)
                return;
        pt->deadline = now(CLOCK_MONOTONIC) + pt->budget_usec;
        if (ctx->deadline_usec > 0)
                pt->deadline = u64_min(pt->deadline, ctx->deadline_usec);
}

static uint64_t budget_left(const PodsTarget *pt) {
        return usec_left(pt->deadline);
}

static void sleep_in_budget(const PodsTarget *pt, uint64_t usec) {
        usec = u64_min(usec, budget_left(pt));
        if (usec > 0)
                (void) usleep((useconds_t) usec);
}

static void need_rung3(PodsTarget *pt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void need_rung3(PodsTarget *pt, const char *fmt, ...) {
        va_list ap;

        pt->needs_rung3 = true;
        if (pt->rung3_reason)
                return;
        va_start(ap, fmt);
        pt->rung3_reason = vstrprintf(fmt, ap);
        va_end(ap);
}

/* CRI errors that come from the CNI plugin's teardown (containerd, CRI-O, cri-dockerd wording). */
static bool is_cni_error(const char *msg) {
        static const char *const needles[] = {
                "destroy network",          "teardown",          "tear down",    "cni plugin not initialized",
                "cni config uninitialized", "networkplugin cni", "plugin type=",
        };

        if (!msg)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(needles); i++)
                if (strcasestr(msg, needles[i]))
                        return true;
        return false;
}

/* --- Execution: rungs 1 and 2, one batch of one kind at a time ------------------------------- */

typedef enum AttemptState {
        ATTEMPT_PENDING,
        ATTEMPT_DONE,
        ATTEMPT_GONE, /* NOT_FOUND: someone was first */
} AttemptState;

typedef struct Attempt {
        Action *a;
        AttemptState state;
        int error;
        char *message;       /* the last failure */
        char *first_message; /* the first failure, for the report */
        unsigned tries;
        unsigned rung; /* what made it: 0 the first try, 1 a retry, 2 the rescue conflist */
        bool cni;
        bool cut; /* the last call ran out of budget, not of its own deadline */
} Attempt;

static void attempts_free(Attempt *at, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(at[i].message);
                free(at[i].first_message);
        }
        free(at);
}

static PodData *pod_data(const Attempt *at) {
        return at->a->data;
}

static size_t count_pending(const Attempt *at, size_t n, bool cni_only) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                k += at[i].state == ATTEMPT_PENDING && (!cni_only || at[i].cni);
        return k;
}

static void attempt_update(PodsTarget *pt, Attempt *at, CriOp *op, unsigned rung) {
        if (op->result == -ETIME)
                return; /* not started: the budget ran out while earlier calls of the round ran */
        at->tries++;
        if (op->result >= 0) {
                at->state = ATTEMPT_DONE;
                at->rung = pt->rescue_path && !pt->standin && ((PodData *) at->a->data)->cni ? 2 : rung;
                return;
        }
        if (op->grpc_status == GRPC_NOT_FOUND) {
                at->state = ATTEMPT_GONE;
                return;
        }
        at->error = op->result;
        at->cni = is_cni_error(op->message);
        at->cut = op->result == -ETIMEDOUT && budget_left(pt) == 0;
        free(at->message);
        at->message = TAKE_PTR(op->message);
        if (!at->first_message && at->message)
                at->first_message = strdup(at->message);
}

/* A call the budget cut short says nothing about the runtime; one that had its whole deadline says it
 * hangs, unless other calls of the same round were answered: then the runtime is only slow (a slow
 * node's containerd handles the exits of the killed tasks one at a time, and a RemovePodSandbox waits
 * for its sandbox's), and the call is retried like any other failure. */
static void round_verdict(PodsTarget *pt, CriOpKind kind, bool timed_out, bool answered) {
        if (!timed_out || answered || pt->hung)
                return;
        pt->hung = true;
        need_rung3(pt, "%s did not answer within its deadline", cri_op_kind_to_method(kind));
}

/* Every pending attempt once, concurrently. Returns how many are still pending. */
static size_t attempt_round(PodsTarget *pt, Attempt *at, size_t n, unsigned rung) {
        cleanup_free CriOp *ops = calloc(n, sizeof(CriOp));
        cleanup_free size_t *idx = calloc(n, sizeof(size_t));
        uint64_t timeout = u64_min(CALL_TIMEOUT_USEC, budget_left(pt));
        bool timed_out = false, answered = false;
        size_t k = 0;
        int r;

        if (pt->hung || timeout < CALL_TIMEOUT_MIN_USEC || !ops || !idx)
                return count_pending(at, n, false);
        for (size_t i = 0; i < n; i++)
                if (at[i].state == ATTEMPT_PENDING) {
                        ops[k] = (CriOp) { .kind = pod_data(&at[i])->op, .id = pod_data(&at[i])->id };
                        idx[k++] = i;
                }
        /* Each call gets its full deadline, but none runs past the budget: with more pods than
         * --concurrency, the last calls of a round start late. */
        cri_client_set_timeout(pt->client, timeout);
        r = cri_run_ops(pt->client, pt->deadline, ops, k, pt->concurrency);
        for (size_t j = 0; j < k; j++) {
                if (r < 0)
                        ops[j] = (CriOp) { .result = r, .grpc_status = -1 };
                timed_out |= ops[j].result == -ETIMEDOUT && budget_left(pt) > 0;
                answered |= ops[j].result >= 0 || ops[j].grpc_status >= 0;
                attempt_update(pt, &at[idx[j]], &ops[j], rung);
                cri_op_done(&ops[j]);
        }
        if (k > 0)
                round_verdict(pt, pod_data(&at[idx[0]])->op, timed_out, answered);
        return count_pending(at, n, false);
}

/* Rung 1: retry with backoff; a CNI failure gets one retry, then it is rung 2's. */
static void rung1(PodsTarget *pt, Attempt *at, size_t n) {
        size_t pending = attempt_round(pt, at, n, 0);

        for (unsigned retry = 1; pending > 0 && !pt->hung && retry <= RETRIES; retry++) {
                if (retry > 1 && count_pending(at, n, true) == pending)
                        break;
                sleep_in_budget(pt, BACKOFF_USEC << (retry - 1));
                pending = attempt_round(pt, at, n, 1);
        }
}

static bool op_uses_cni(CriOpKind op) {
        return op == CRI_OP_STOP_SANDBOX || op == CRI_OP_REMOVE_SANDBOX;
}

/* Rung 2: the runtime cannot tear a pod's network down because the CNI plugin fails (calico without
 * its API server). A first-sorting loopback-only conflist makes the teardown a no-op; it stands in
 * while the pods are retried, until rescue_release(). */
static void rung2(PodsTarget *pt, Attempt *at, size_t n) {
        cleanup_free char *err = NULL;
        uint64_t until;
        int r;

        if (count_pending(at, n, true) == 0 || pt->hung || !op_uses_cni(pod_data(&at[0])->op))
                return;
        if (!pt->rescue_path) {
                r = cni_rescue_install(pt->info.cni_conf_dir, &pt->rescue_path, &err);
                if (r < 0) {
                        need_rung3(pt, "rung 2 impossible: %s", strna(err));
                        return;
                }
                log_notice("CNI teardown fails; the loopback-only conflist %s stands in while pods go.",
                           pt->rescue_path);
        }
        until = now(CLOCK_MONOTONIC) + u64_min(RESCUE_WINDOW_USEC, budget_left(pt));
        while (count_pending(at, n, false) > 0 && !pt->hung && now(CLOCK_MONOTONIC) < until) {
                sleep_in_budget(pt, RESCUE_POLL_USEC);
                (void) attempt_round(pt, at, n, 2);
        }
}

/* The rescue conflist goes again: after the last batch that may tear a network down, before rung 3,
 * and (pods-ladder.c) on a signal or at exit. */
static void rescue_release(PodsTarget *pt) {
        int r;

        if (!pt->rescue_path)
                return;
        r = cni_rescue_remove();
        if (r < 0)
                log_error_errno(r, "Cannot remove the rescue conflist %s, remove it by hand: %m", pt->rescue_path);
        else
                log_info("Removed the rescue conflist %s again.", pt->rescue_path);
        pt->rescue_path = mfree(pt->rescue_path);
}

static const char *op_done_verb(CriOpKind op) {
        return op == CRI_OP_STOP_SANDBOX || op == CRI_OP_STOP_CONTAINER ? "stopped" : "removed";
}

static char *describe_done(const PodsTarget *pt, const Attempt *at) {
        const char *verb = op_done_verb(pod_data(at)->op);
        char *m = NULL;
        int r = 0;

        if (at->rung == 0)
                m = strdup(verb);
        else if (at->rung == 1)
                r = asprintf(&m, "%s on attempt %u (rung 1: retry with backoff) after: %s", verb, at->tries,
                             strna(at->first_message));
        else if (at->first_message)
                r = asprintf(&m,
                             "%s with the CNI rescue (rung 2): the CNI teardown failed (%s); the loopback-only "
                             "conflist %s stood in, removed again after the last pod",
                             verb, at->first_message, strna(pt->rescue_path));
        else
                r = asprintf(&m, "%s while the rung 2 rescue conflist %s stood in (the CNI teardown had failed)", verb,
                             strna(pt->rescue_path));
        return r < 0 ? NULL : m;
}

static void settle_failed(PodsTarget *pt, Attempt *at) {
        char *m = NULL;

        if (at->cut) {
                need_rung3(pt, "the pods budget was spent");
                m = strprintf("cut off when the pods budget ran out: %s (%u attempt%s); rung 3 follows (see the "
                              "runtime action)",
                              strna(at->message), at->tries, at->tries == 1 ? "" : "s");
                action_record(at->a, -ETIME, m);
                return;
        }
        if (at->tries == 0) {
                need_rung3(pt, "the pods budget was spent");
                m = strprintf("not attempted: %s; rung 3 follows (see the runtime action)",
                              pt->hung ? "the runtime stopped answering" : "the pods budget is spent");
                action_record(at->a, at->error < 0 ? at->error : -ETIME, m);
                return;
        }
        need_rung3(pt, "%s failed: %s", cri_op_kind_to_method(pod_data(at)->op), strna(at->message));
        m = strprintf("%s (%u attempt%s%s); rung 3 follows (see the runtime action)", strna(at->message), at->tries,
                      at->tries == 1 ? "" : "s", at->cni ? ", the CNI rescue included" : "");
        action_record(at->a, at->error, m);
}

static void settle(PodsTarget *pt, Attempt *at, size_t n) {
        for (size_t i = 0; i < n; i++)
                switch (at[i].state) {
                case ATTEMPT_DONE:
                        pt->rescued += at[i].rung == 2;
                        action_record(at[i].a, 1, describe_done(pt, &at[i]));
                        break;
                case ATTEMPT_GONE:
                        action_record(at[i].a, 0, strdup("already gone"));
                        break;
                default:
                        settle_failed(pt, &at[i]);
                }
}

static const ActionOps remove_pod_ops;

static void target_batch(PodsTarget *pt, Context *ctx, Action **actions, size_t n) {
        Attempt *at;

        budget_start(pt, ctx);
        at = calloc(n, sizeof(Attempt));
        if (!at) {
                for (size_t i = 0; i < n; i++)
                        action_record(actions[i], -ENOMEM, NULL);
                return;
        }
        for (size_t i = 0; i < n; i++)
                at[i] = (Attempt) { .a = actions[i], .error = -ETIME };
        if (pt->hung)
                for (size_t i = 0; i < n; i++)
                        at[i].error = -ETIMEDOUT;
        else {
                rung1(pt, at, n);
                rung2(pt, at, n);
        }
        settle(pt, at, n);
        if (actions[0]->ops == &remove_pod_ops)
                rescue_release(pt);
        attempts_free(at, n);
}

/* A batch may hold actions of several runtimes (never in practice): each run of one goes alone. */
static void pods_apply_batch(Action **actions, size_t n, Context *ctx) {
        for (size_t i = 0; i < n;) {
                PodsTarget *pt = ((PodData *) actions[i]->data)->pt;
                size_t j = i + 1;

                while (j < n && ((PodData *) actions[j]->data)->pt == pt)
                        j++;
                target_batch(pt, ctx, actions + i, j - i);
                i = j;
        }
}

/* On containerd one RemovePodSandbox per pod: it stops the sandbox (its containers, the CNI DEL) and
 * removes its containers itself (pkg/cri/server/sandbox_remove.go), so StopContainer, StopPodSandbox
 * and RemoveContainer would only repeat it. Other runtimes get StopPodSandbox first, as the CRI asks.
 * Pod-network pods go before host-network ones (so the CNI can still tear pods down while
 * host-network CNI agents live): separate rows, so separate batches. */
static const ActionOps stop_pod_ops = {
        .kind = "stop-pod",
        .apply_batch = pods_apply_batch,
        .free_data = pod_data_free,
};
static const ActionOps stop_host_pod_ops = {
        .kind = "stop-pod",
        .apply_batch = pods_apply_batch,
        .free_data = pod_data_free,
};
static const ActionOps remove_container_ops = {
        .kind = "remove-container",
        .apply_batch = pods_apply_batch,
        .free_data = pod_data_free,
};
static const ActionOps remove_pod_ops = {
        .kind = "remove-pod",
        .apply_batch = pods_apply_batch,
        .free_data = pod_data_free,
};
static const ActionOps remove_host_pod_ops = {
        .kind = "remove-pod",
        .apply_batch = pods_apply_batch,
        .free_data = pod_data_free,
};

/* --- Before the CRI calls: the teardown the CNI gets, and the kill pass ------------------------ */

/* Whether containerd's verbose Status shows the stand-in among the networks it loaded ("cniconfig":
 * {"Networks": [{"Config": {"Name": ...}}]}, go-cni's ConfigResult): 1 yes, 0 not yet, -errno. */
static int standin_loaded(PodsTarget *pt) {
        CLEANUP(json_freep) JsonValue *root = NULL;
        cleanup_free char *conf = NULL;
        const JsonValue *nets;
        int r;

        cri_client_set_timeout(pt->client, u64_min(PROBE_TIMEOUT_USEC, budget_left(pt)));
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
        usec_t start = now(CLOCK_MONOTONIC), until = start + u64_min(STANDIN_WAIT_USEC, budget_left(pt));
        int r;

        while ((r = standin_loaded(pt)) == 0 && now(CLOCK_MONOTONIC) < until)
                sleep_in_budget(pt, STANDIN_POLL_USEC);
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

        budget_start(pt, ctx);
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
        .free_data = target_data_free,
};

/* Every process of the pods' containers SIGKILLed at once, before any CRI call: nothing of the
 * cluster runs after this row, however many pods the CRI calls then take down. */
static int kill_apply(Action *a, Context *ctx, char **ret_msg) {
        PodsTarget *pt = a->data;
        PodsKill k = {};
        int r;

        budget_start(pt, ctx);
        r = pods_kill(pt->socket_path, &pt->info, pt->keep_ids, u64_min(KILL_WAIT_USEC, budget_left(pt)), &k);
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
        .free_data = target_data_free,
};

/* The restart around the kill pass (ladder_runtime_stop(), ladder_runtime_clear_start()): the pods exit
 * while nobody is there to handle their exits, and the CRI calls that follow find no task to delete. */
static int runtime_stop_apply(Action *a, Context *ctx, char **ret_msg) {
        PodsTarget *pt = a->data;

        budget_start(pt, ctx);
        pt->stopped = ladder_runtime_stop(ctx, &pt->info, u64_min(RESTART_STOP_WAIT_USEC, budget_left(pt)), ret_msg);
        if (pt->stopped == -ETIME)
                return 1; /* the stop job is queued and runs on: the start row waits for it */
        return pt->stopped > 0 ? 1 : 0;
}

static int runtime_start_apply(Action *a, Context *ctx, char **ret_msg) {
        PodsTarget *pt = a->data;

        budget_start(pt, ctx);
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
        cri_client_set_timeout(pt->client, PROBE_TIMEOUT_USEC);
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
        .free_data = target_data_free,
};

static const ActionOps runtime_start_ops = {
        .kind = "runtime-start",
        .apply = runtime_start_apply,
        .check = restart_check,
        .free_data = target_data_free,
};

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

        rescue_release(pt);
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
        .free_data = target_data_free,
};

/* --- Small rows: a stale rescue conflist, kubelet, no runtime --------------------------------- */

static int stale_apply(Action *a, Context *ctx, char **ret_msg) {
        return cni_rescue_remove_stale(a->target, ret_msg);
}

static int stale_check(Action *a, Context *ctx, char **ret_msg) {
        return access(a->target, F_OK) >= 0;
}

static const ActionOps stale_rescue_ops = {
        .kind = "cni-rescue",
        .apply = stale_apply,
        .check = stale_check,
};

static int kubelet_apply(Action *a, Context *ctx, char **ret_msg) {
        pid_t pid = 0;

        if (proc_find_exe_name("kubelet", &pid) <= 0)
                return set_errmsg(ret_msg, 0, "not running any more");
        log_warning("kubelet (PID %d) still runs while the pods phase removes pods: it recreates them.", (int) pid);
        return set_errmsg(ret_msg, 0, "warning: still running (PID %d); pods it recreates are left behind", (int) pid);
}

static const ActionOps kubelet_ops = {
        .kind = "kubelet",
        .apply = kubelet_apply,
};

static int nothing_apply(Action *a, Context *ctx, char **ret_msg) {
        return 0;
}

static const ActionOps no_runtime_ops = {
        .kind = "runtime",
        .apply = nothing_apply,
};

/* --- Planning ---------------------------------------------------------------------------- */

static int add_row(Plan *plan, const ActionOps *ops, const char *target, void *data, bool present, const char *skip,
                   const char *detail_fmt, ...) __attribute__((format(printf, 7, 8)));
static int add_row(Plan *plan, const ActionOps *ops, const char *target, void *data, bool present, const char *skip,
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

static int plan_kubelet(Context *ctx, Plan *plan) {
        const ProcTable *procs;
        const ProcInfo *p;
        char target[64];
        pid_t pid;

        if (phase_procs(ctx, &procs) < 0 || !(p = proc_table_find_exe_name(procs, "kubelet")))
                return 0;
        pid = p->pid;
        log_warning("kubelet is running (PID %d): it must be stopped before the pods phase, or it recreates pods.",
                    (int) pid);
        snprintf(target, sizeof target, "kubelet (PID %d)", (int) pid);
        return add_row(plan, &kubelet_ops, target, NULL, false, NULL,
                       "running: it must be stopped before this phase (the services phase does), or it recreates "
                       "the pods");
}

static int plan_stale_rescue(Plan *plan, const PodsTarget *pt) {
        cleanup_strv char **stale = NULL;
        int r;

        if (!pt->info.cni_conf_dir)
                return 0;
        r = cni_rescue_find_stale(pt->info.cni_conf_dir, &stale);
        STRV_FOREACH(p, stale)
                if (r >= 0)
                        r = add_row(plan, &stale_rescue_ops, *p, NULL, true, NULL,
                                    "a rescue conflist left by an interrupted run: it hides the real CNI config");
        return r;
}

static void short_id(const char *id, char buf[static ID_SHORT + 1]) {
        snprintf(buf, ID_SHORT + 1, "%s", strempty(id));
}

static int add_pod_action(Plan *plan, PodsTarget *pt, const ActionOps *ops, CriOpKind op, const char *id, bool cni,
                          const char *target, const char *detail) {
        PodData *d;
        Action *a;

        d = calloc(1, sizeof *d);
        if (!d || !(d->id = strdup(id))) {
                free(d);
                return -ENOMEM;
        }
        d->pt = target_ref(pt);
        d->op = op;
        d->cni = cni;
        a = plan_add(plan, ops, "pods", target, NULL, d);
        if (!a)
                return -ENOMEM;
        return detail ? action_set_detail(a, "%s", detail) : 0;
}

/* What the plan knows of each sandbox. */
typedef struct SandboxView {
        const CriSandbox *s;
        bool host_network;
        bool status_known;
        char target[256];
        unsigned containers;
} SandboxView;

static const SandboxView *find_sandbox(const SandboxView *v, size_t n, const char *id) {
        for (size_t i = 0; i < n; i++)
                if (streq_ptr(v[i].s->id, id))
                        return &v[i];
        return NULL;
}

/* PodSandboxStatus of every sandbox at once: its network namespace mode tells host network pods. */
static int sandbox_network_modes(PodsTarget *pt, SandboxView *v, size_t n) {
        cleanup_free CriOp *ops = calloc(n ? n : 1, sizeof(CriOp));
        int r;

        if (!ops)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                ops[i] = (CriOp) { .kind = CRI_OP_SANDBOX_STATUS, .id = v[i].s->id };
        r = cri_run_ops(pt->client, pt->plan_deadline, ops, n, pt->concurrency);
        for (size_t i = 0; i < n; i++) {
                if (r >= 0 && ops[i].result >= 0) {
                        v[i].status_known = true;
                        v[i].host_network = ops[i].status.network_mode == CRI_NAMESPACE_NODE;
                } else
                        log_debug("PodSandboxStatus %s: %s; taken as a pod network pod", v[i].s->id,
                                  strna(ops[i].message));
                cri_op_done(&ops[i]);
        }
        return r;
}

static void container_target(const CriContainer *c, const SandboxView *sb, char *buf, size_t size) {
        char id[ID_SHORT + 1];

        short_id(c->id, id);
        if (sb)
                snprintf(buf, size, "%s/%s/%s %s", strna(sb->s->namespace), strna(sb->s->name), strna(c->name), id);
        else
                snprintf(buf, size, "%s %s", strna(c->name), id);
}

static int plan_sandboxes(Plan *plan, PodsTarget *pt, const SandboxView *v, size_t n, const ActionOps *ops,
                          CriOpKind op, int host_network) {
        for (size_t i = 0; i < n; i++) {
                char detail[160];
                int r;

                if (host_network >= 0 && v[i].host_network != (bool) host_network)
                        continue;
                snprintf(detail, sizeof detail, "%s network%s, %s, %u container%s", v[i].host_network ? "host" : "pod",
                         v[i].status_known ? "" : " (status unknown)", cri_sandbox_state_to_string(v[i].s->state),
                         v[i].containers, v[i].containers == 1 ? "" : "s");
                r = add_pod_action(plan, pt, ops, op, v[i].s->id, !v[i].host_network, v[i].target, detail);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Containers whose sandbox the listing does not show: no RemovePodSandbox takes them. */
static int plan_orphans(Plan *plan, PodsTarget *pt, const CriContainer *c, size_t nc, const SandboxView *v, size_t nv) {
        for (size_t i = 0; i < nc; i++) {
                char target[512], detail[128];
                int r;

                if (find_sandbox(v, nv, c[i].pod_sandbox_id))
                        continue;
                container_target(&c[i], NULL, target, sizeof target);
                snprintf(detail, sizeof detail, "%s, its pod %s not listed", cri_container_state_to_string(c[i].state),
                         strna(c[i].pod_sandbox_id));
                r = add_pod_action(plan, pt, &remove_container_ops, CRI_OP_REMOVE_CONTAINER, c[i].id, false, target,
                                   detail);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int plan_order(Plan *plan, PodsTarget *pt, const CriContainer *c, size_t nc, const SandboxView *v, size_t nv) {
        int r = 0;

        if (pt->info.kind != RUNTIME_CONTAINERD) {
                r = plan_sandboxes(plan, pt, v, nv, &stop_pod_ops, CRI_OP_STOP_SANDBOX, false);
                if (r >= 0)
                        r = plan_sandboxes(plan, pt, v, nv, &stop_host_pod_ops, CRI_OP_STOP_SANDBOX, true);
        }
        if (r >= 0)
                r = plan_sandboxes(plan, pt, v, nv, &remove_pod_ops, CRI_OP_REMOVE_SANDBOX, false);
        if (r >= 0)
                r = plan_sandboxes(plan, pt, v, nv, &remove_host_pod_ops, CRI_OP_REMOVE_SANDBOX, true);
        if (r >= 0)
                r = plan_orphans(plan, pt, c, nc, v, nv);
        return r;
}

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
        if (phase_systemd(ctx, &m) < 0 || services_manager_why_absent(m))
                return "systemd is out of reach";
        if (services_unit_main_pid(m, pt->info.unit, &main_pid) < 0 || main_pid != pt->info.pid)
                return "the runtime is not its unit's main process";
        if (ladder_foreign_shims(pt->socket_path, &foreign) < 0 || foreign > 0)
                return "it runs containers of another namespace than k8s.io";
        return NULL;
}

/* The restart's first row: before the kill pass. */
static int plan_runtime_stop(Context *ctx, Plan *plan, PodsTarget *pt, size_t n) {
        const char *why = restart_refused(ctx, pt, n);

        if (why) {
                log_debug("Pods phase: no restart of the runtime at %s: %s.", pt->socket_path, why);
                return 0;
        }
        pt->restart = true;
        return add_row(plan, &runtime_stop_ops, pt->info.unit, target_ref(pt), true, NULL,
                       "stop (PID %d) before the kill pass, its shims staying: nobody is left to handle the exits of "
                       "the %zu pods, whose tasks' state is cleared below it (at most %u ms waited, then the kill "
                       "pass goes on)",
                       (int) pt->info.pid, n, (unsigned) (RESTART_STOP_WAIT_USEC / USEC_PER_MSEC));
}

/* The restart's second row: after the kill pass, before the CRI calls. */
static int plan_runtime_start(Plan *plan, PodsTarget *pt) {
        if (!pt->restart)
                return 0;
        return add_row(plan, &runtime_start_ops, pt->info.unit, target_ref(pt), true, NULL,
                       "SIGKILL the k8s.io shims, unmount their rootfs, shm and netns, empty their task state (%s), "
                       "start it again: each pod's removal then runs no runc and no shim",
                       pt->info.state_dir);
}

/* The rows before the CRI calls: which teardown the CNI gets (and the concurrency it allows), the
 * kill pass, and the restart that spares each pod's task deletion. */
static int plan_before_calls(Context *ctx, Plan *plan, PodsTarget *pt, const SandboxView *v, size_t n) {
        const char *cwhy = "--concurrency";
        unsigned pods = 0, processes = 0;
        int r;

        if (!arg_concurrency)
                pt->concurrency = pods_concurrency(&pt->teardown, n, (unsigned) sysconf(_SC_NPROCESSORS_ONLN), &cwhy);
        r = add_row(plan, &teardown_ops, pt->teardown.config ?: pt->socket_path, target_ref(pt),
                    pt->teardown.kind == TEARDOWN_CHEAP, NULL, "%s; %u CRI calls in flight (%s)", pt->teardown.why,
                    pt->concurrency, cwhy);
        if (r < 0)
                return r;
        r = keep_agents(pt, v, n);
        if (r < 0)
                return r;
        r = pods_kill_count(pt->socket_path, &pt->info, pt->keep_ids, &pods, &processes);
        if (r == -EOPNOTSUPP || r == -EPERM)
                return add_row(plan, &kill_ops, pt->socket_path, target_ref(pt), false, NULL,
                               "no kill pass %s: the CRI calls stop the containers",
                               r == -EPERM ? "(/proc is another PID namespace's)" : "for this runtime");
        if (r < 0)
                return r;
        r = plan_runtime_stop(ctx, plan, pt, n);
        if (r >= 0)
                r = add_row(plan, &kill_ops, pt->socket_path, target_ref(pt), processes > 0, NULL,
                            "%u processes of %u pods' containers, SIGKILL in one pass before any CRI call (%s)%s",
                            processes, pods,
                            pt->restart ? "the shims go with the restart" : "the shims stay for the CRI calls",
                            pt->keep_ids ? "; the host-network pods' run until their own call (the CNI's DEL may "
                                           "need its agent)"
                                         : "");
        return r < 0 ? r : plan_runtime_start(plan, pt);
}

static int runtime_row(Plan *plan, PodsTarget *pt, bool present, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int runtime_row(Plan *plan, PodsTarget *pt, bool present, const char *fmt, ...) {
        cleanup_free char *what = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        what = vstrprintf(fmt, ap);
        va_end(ap);
        if (!what)
                return -ENOMEM;
        r = add_row(plan, &runtime_ops, pt->socket_path, target_ref(pt), present, NULL,
                    "%s; %s PID %d, config %s, CNI conf dir %s, unit %s; rung 3 if needed: stop the unit, kill the "
                    "shims, unmount what they left",
                    what, runtime_kind_to_string(pt->info.kind), (int) pt->info.pid, strna(pt->info.config),
                    strna(pt->info.cni_conf_dir), strna(pt->info.unit));
        if (r >= 0 && pt->probe_error >= 0)
                plan->actions[plan->n_actions - 1]->cri_api = cri_client_api_version(pt->client);
        return r;
}

/* A planning call that ran out of time says which bound cut it, so the report blames the budget the
 * operator set and not only the runtime. */
static void note_cut(const Context *ctx, const PodsTarget *pt, int r, char **msg) {
        const char *bound;
        char *m;

        if ((r != -ETIMEDOUT && r != -ETIME) || pt->plan_deadline == 0 || now(CLOCK_MONOTONIC) < pt->plan_deadline)
                return;
        bound = ctx->deadline_usec > 0 && pt->plan_deadline >= ctx->deadline_usec ? "the run's --timeout"
                                                                                  : "the pods budget (--pods-timeout)";
        m = strprintf("%s, cut by %s", strna(*msg), bound);
        if (!m)
                return;
        free(*msg);
        *msg = m;
}

/* Every pod and container of an answering runtime, in the order they go. */
static int plan_pods(Context *ctx, Plan *plan, PodsTarget *pt) {
        cleanup_free SandboxView *v = NULL;
        cleanup_free char *err = NULL;
        CriSandbox *s = NULL;
        CriContainer *c = NULL;
        size_t ns = 0, nc = 0, n_host = 0;
        int r;

        cri_client_set_timeout(pt->client, LIST_TIMEOUT_USEC);
        r = cri_list_sandboxes(pt->client, pt->plan_deadline, &s, &ns, &err);
        if (r >= 0)
                r = cri_list_containers(pt->client, pt->plan_deadline, &c, &nc, &err);
        if (r >= 0 && !(v = calloc(ns ? ns : 1, sizeof(SandboxView))))
                r = -ENOMEM;
        if (r < 0) {
                note_cut(ctx, pt, r, &err);
                pt->probe_error = r;
                pt->probe_message = TAKE_PTR(err);
                if (r != -ENOMEM)
                        r = runtime_row(plan, pt, true, "answers Version but not the listing: %s",
                                        strna(pt->probe_message));
                goto finish;
        }
        for (size_t i = 0; i < ns; i++) {
                char id[ID_SHORT + 1];

                short_id(s[i].id, id);
                v[i].s = &s[i];
                snprintf(v[i].target, sizeof v[i].target, "%s/%s %s", strna(s[i].namespace), strna(s[i].name), id);
        }
        for (size_t i = 0; i < nc; i++) {
                SandboxView *sb = (SandboxView *) find_sandbox(v, ns, c[i].pod_sandbox_id);

                if (sb)
                        sb->containers++;
        }
        r = sandbox_network_modes(pt, v, ns);
        for (size_t i = 0; i < ns; i++)
                n_host += v[i].host_network;
        if (r >= 0)
                r = pods_teardown_decide(ctx, &pt->info, &pt->teardown);
        if (r >= 0 && ns > 0)
                r = plan_before_calls(ctx, plan, pt, v, ns);
        if (r >= 0)
                r = plan_order(plan, pt, c, nc, v, ns);
        if (r >= 0)
                r = runtime_row(plan, pt, false,
                                "%s %s answers (%s): %zu pods, %zu on the host network, %zu containers",
                                strna(pt->version.runtime_name), strna(pt->version.runtime_version),
                                cri_client_service(pt->client), ns, n_host, nc);
finish:
        cri_sandboxes_free(s, ns);
        cri_containers_free(c, nc);
        return r;
}

/* A runtime that does not answer Version: rung 3 is the plan, unless it is simply not running and
 * left nothing behind. */
static int plan_unanswered(Plan *plan, PodsTarget *pt) {
        LeftoverUnmount lu = {};
        unsigned shims = 0;

        if (pt->probe_error == -ECONNREFUSED || pt->probe_error == -ENOENT) {
                ladder_residue(pt->socket_path, &pt->info, &shims, &lu);
                return runtime_row(plan, pt, shims + lu.rootfs + lu.shm + lu.netns > 0,
                                   "not running (%s); %u shims and %u mounts left", strna(pt->probe_message), shims,
                                   lu.rootfs + lu.shm + lu.netns);
        }
        log_warning("The container runtime at %s does not answer: %s", pt->socket_path, strna(pt->probe_message));
        return runtime_row(plan, pt, true, "not answering: %s", strna(pt->probe_message));
}

static int target_new(const Context *ctx, const char *path, PodsTarget **ret) {
        PodsTarget *pt;
        int r;

        pt = calloc(1, sizeof *pt);
        if (!pt)
                return -ENOMEM;
        pt->n_ref = 1;
        /* Until the plan knows the pods and the CNI (plan_before_calls()): the status reads. */
        pt->concurrency = arg_concurrency ?: 8;
        pt->budget_usec = pods_budget() ?: PODS_BUDGET_DEFAULT_USEC;
        pt->socket_path = strdup(path);
        if (!pt->socket_path) {
                target_unref(pt);
                return -ENOMEM;
        }
        r = cri_client_new(path, &pt->client);
        if (r < 0) {
                target_unref(pt);
                return r;
        }
        *ret = pt;
        return 0;
}

static int plan_target(Context *ctx, Plan *plan, const char *path, uint64_t deadline, bool *ret_cri_dockerd,
                       char **reterr) {
        CLEANUP(target_unrefp) PodsTarget *pt = NULL;
        int r;

        r = target_new(ctx, path, &pt);
        if (r < 0)
                return set_errmsg(reterr, r, "pods: cannot create a CRI client for %s: %s", path, strerror(-r));
        pt->plan_deadline = deadline;
        cri_client_set_timeout(pt->client, PROBE_TIMEOUT_USEC);
        pt->probe_error = cri_version(pt->client, deadline, &pt->version, &pt->probe_message);
        note_cut(ctx, pt, pt->probe_error, &pt->probe_message);
        r = runtime_info_probe(path, pt->version.runtime_name, &pt->info);
        if (r >= 0)
                r = plan_stale_rescue(plan, pt);
        if (r >= 0)
                r = pt->probe_error < 0 ? plan_unanswered(plan, pt) : plan_pods(ctx, plan, pt);
        if (r < 0)
                return set_errmsg(reterr, r, "pods: cannot plan for %s: %s", path, strerror(-r));
        if (pt->info.kind == RUNTIME_CRI_DOCKERD && pt->probe_error >= 0)
                *ret_cri_dockerd = true;
        return 0;
}

static bool is_socket(const char *path) {
        struct stat st;

        return stat(path, &st) >= 0 && S_ISSOCK(st.st_mode);
}

/* --cri-endpoint, else the manifest's cri-endpoint lines, else the known sockets. */
static int endpoints(const Context *ctx, char ***ret, bool *ret_explicit) {
        size_t n = 0, known = 0;
        char **l;

        while (pods_known_sockets[known])
                known++;
        l = calloc(ctx->manifest->n_entries + known + 2, sizeof(char *));
        if (!l)
                return -ENOMEM;
        *ret_explicit = true;
        if (arg_cri_endpoint)
                l[n++] = strdup(arg_cri_endpoint);
        else
                MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_CRI_ENDPOINT)
                        l[n++] = strdup(e->args[0]);
        if (n == 0) {
                *ret_explicit = false;
                for (const char *const *s = pods_known_sockets; *s; s++)
                        l[n++] = strdup(*s);
        }
        for (size_t i = 0; i < n; i++)
                if (!l[i]) {
                        for (size_t j = 0; j < n; j++)
                                free(l[j]);
                        free(l);
                        return -ENOMEM;
                }
        *ret = l;
        return 0;
}

/* The same socket twice (a symlinked /var/run, a manifest naming it again) is one runtime. */
static bool seen_before(char **paths, size_t i) {
        struct stat a, b;

        if (stat(paths[i], &a) < 0)
                return false;
        for (size_t j = 0; j < i; j++)
                if (paths[j] && stat(paths[j], &b) >= 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
                        return true;
        return false;
}

static int plan_no_runtime(Plan *plan, char **eps) {
        cleanup_free char *list = NULL;

        STRV_FOREACH(e, eps) {
                char *t;

                if (asprintf(&t, "%s%s%s", strempty(list), list ? ", " : "", *e) < 0)
                        return -ENOMEM;
                free(list);
                list = t;
        }
        return add_row(plan, &no_runtime_ops, "cri", NULL, false, "no container runtime", "no CRI socket at %s",
                       strna(list));
}

/* The planning calls get the pods budget too, from the start of the phase's planning, and never run
 * past the run's --timeout: a runtime that answers Version and then hangs cannot hold the run. */
static uint64_t plan_deadline(const Context *ctx) {
        uint64_t d = now(CLOCK_MONOTONIC) + (pods_budget() ?: PODS_BUDGET_DEFAULT_USEC);

        return ctx->deadline_usec > 0 ? u64_min(d, ctx->deadline_usec) : d;
}

/* The CRI sockets: the runtimes kubelet talks to through the CRI. */
static int plan_cri(Context *ctx, Plan *plan, bool *ret_cri_dockerd, char **reterr) {
        cleanup_strv char **eps = NULL, **paths = NULL;
        uint64_t deadline = plan_deadline(ctx);
        size_t n = 0, found = 0;
        bool explicit;
        int r;

        r = endpoints(ctx, &eps, &explicit);
        if (r < 0)
                return r;
        if (!streq(ctx->root, "/") && !explicit)
                return add_row(plan, &no_runtime_ops, "cri", NULL, false,
                               "--root acts on file system state only; --cri-endpoint names a runtime to reset",
                               "no runtime probed beneath --root");
        r = plan_kubelet(ctx, plan);
        STRV_FOREACH(e, eps)
                n++;
        paths = calloc(n + 1, sizeof(char *));
        if (!paths)
                return -ENOMEM;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                r = cri_endpoint_to_path(eps[i], &paths[i]);
                if (r < 0)
                        return set_errmsg(reterr, r, "pods: invalid CRI endpoint '%s'", eps[i]);
                if (!is_socket(paths[i]) || seen_before(paths, i))
                        continue;
                found++;
                /* The first CRI call: libcurl is loaded here, not when the phase was chosen. */
                if (found == 1 && (r = libraries_plan_missing(plan, "pods", DLIB_LIBCURL, "the pods phase")) != 0)
                        return r < 0 ? r : 0;
                r = plan_target(ctx, plan, paths[i], deadline, ret_cri_dockerd, reterr);
        }
        if (r < 0)
                return r;
        if (found == 0)
                return plan_no_runtime(plan, eps);
        return 0;
}

/* The CRI sockets, then Docker's Engine API where Docker is kubelet's runtime (docker-endpoint lines):
 * dockershim died with kubelet, and a cri-dockerd that does not answer removes nothing. */
int phase_pods_plan(Context *ctx, Plan *plan, char **reterr) {
        bool cri_dockerd = false;
        int r;

        r = plan_cri(ctx, plan, &cri_dockerd, reterr);
        if (r < 0)
                return r;
        return pods_docker_plan(ctx, plan, cri_dockerd);
}

const char *phase_pods_cri_endpoint(void) {
        return arg_cri_endpoint;
}

static int parse_cri_endpoint(const char *arg, char **reterr) {
        if (!startswith(arg, "unix:///") && arg[0] != '/')
                return set_errmsg(reterr, -EINVAL, "invalid --cri-endpoint '%s': expected unix:///PATH or /PATH", arg);
        arg_cri_endpoint = arg;
        return 0;
}

static int parse_concurrency(const char *arg, char **reterr) {
        if (cmdline_parse_count(arg, &arg_concurrency) < 0 || arg_concurrency == 0 || arg_concurrency > 256)
                return set_errmsg(reterr, -EINVAL, "invalid --concurrency '%s': expected a number from 1 to 256", arg);
        return 0;
}

static int parse_pods_timeout(const char *arg, char **reterr) {
        return cmdline_parse_duration("pods-timeout", arg, 1, CMDLINE_DURATION_MAX, &arg_pods_timeout_sec, reterr);
}

const PhaseOption phase_pods_options[] = {
        { "cri-endpoint", PHASE_OPTION_REQUIRED_ARG, "URI", "The CRI socket (unix:///PATH), instead of probing",
          parse_cri_endpoint },
        { "concurrency", PHASE_OPTION_REQUIRED_ARG, "N",
          "CRI calls in flight at once in the pods phase\n(default: from the cores and the CNI's IPAM lock)",
          parse_concurrency },
        { "pods-timeout", PHASE_OPTION_REQUIRED_ARG, "DURATION",
          "Bound the pods phase, its rescue ladder included (120s)", parse_pods_timeout },
        {},
};
