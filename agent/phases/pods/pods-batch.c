/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's CRI calls: the stop and remove rows of every pod and container, each kind run as one
 * batch, retried with backoff (rung 1) and with the rescue conflist standing in (rung 2). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/base/log.h"
#include "agent/phases/pods/pods-batch.h"
#include "agent/phases/pods/pods-ladder.h"
#include "agent/phases/pods/pods-rescue.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

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
/* ... and how long a pod whose containers the runtime still sees running is retried: containerd marks
 * a task exited only when its event monitor handles the exit, one at a time, seconds after the kill
 * pass on a loaded node, and until then RemovePodSandbox answers "still running, to stop first". */
#define SETTLE_WINDOW_USEC (15 * USEC_PER_SEC)
#define SETTLE_BACKOFF_MAX_USEC (1 * USEC_PER_SEC)
/* Rung 2: how long the rescue conflist may stand in, and how often the pods are retried meanwhile
 * (containerd reloads its CNI config within about a second). */
#define RESCUE_WINDOW_USEC (20 * USEC_PER_SEC)
#define RESCUE_POLL_USEC (500 * USEC_PER_MSEC)

typedef struct PodData {
        PodsTarget *pt;
        CriOpKind op;
        char *id;
        bool cni; /* a pod-network sandbox: its stop and remove run the CNI DEL */
} PodData;

static void pod_data_free(void *p) {
        PodData *d = p;

        pods_target_unref(d->pt);
        free(d->id);
        free(d);
}

/* CRI errors that say a container has not exited yet in the runtime's eyes (containerd's "container
 * is still running, to stop first", "sandbox container is not fully stopped"; CRI-O's "cannot be
 * removed: ... running"): after the kill pass, the runtime catching up. */
static bool is_settling_error(const char *msg) {
        return msg && (strcasestr(msg, "still running") || strcasestr(msg, "to stop first") ||
                       strcasestr(msg, "not fully stopped"));
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
        char *cni_message;   /* the first failure of the CNI teardown, what rung 2 stood in for */
        unsigned tries;
        unsigned rung; /* what made it: 0 the first try, 1 a retry, 2 the rescue conflist */
        bool cni;
        bool settling; /* the runtime has not yet seen its containers exit */
        bool cut;      /* the last call ran out of budget, not of its own deadline */
} Attempt;

static void attempts_free(Attempt *at, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(at[i].message);
                free(at[i].first_message);
                free(at[i].cni_message);
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

static size_t count_settling(const Attempt *at, size_t n) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                k += at[i].state == ATTEMPT_PENDING && at[i].settling;
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
        at->settling = is_settling_error(op->message);
        at->cut = op->result == -ETIMEDOUT && pods_budget_left(pt) == 0;
        free(at->message);
        at->message = TAKE_PTR(op->message);
        if (!at->first_message && at->message)
                at->first_message = strdup(at->message);
        if (at->cni && !at->cni_message && at->message)
                at->cni_message = strdup(at->message);
}

/* A call the budget cut short says nothing about the runtime; one that had its whole deadline says it
 * hangs, unless other calls of the same round were answered: then the runtime is only slow (a slow
 * node's containerd handles the exits of the killed tasks one at a time, and a RemovePodSandbox waits
 * for its sandbox's), and the call is retried like any other failure. */
static void round_verdict(PodsTarget *pt, CriOpKind kind, bool timed_out, bool answered) {
        if (!timed_out || answered || pt->hung)
                return;
        pt->hung = true;
        pods_need_rung3(pt, "%s did not answer within its deadline", cri_op_kind_to_method(kind));
}

/* Every pending attempt once, concurrently. Returns how many are still pending. */
static size_t attempt_round(PodsTarget *pt, Attempt *at, size_t n, unsigned rung) {
        cleanup_free CriOp *ops = calloc(n, sizeof(CriOp));
        cleanup_free size_t *idx = calloc(n, sizeof(size_t));
        uint64_t timeout = u64_min(CALL_TIMEOUT_USEC, pods_budget_left(pt));
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
                timed_out |= ops[j].result == -ETIMEDOUT && pods_budget_left(pt) > 0;
                answered |= ops[j].result >= 0 || ops[j].grpc_status >= 0;
                attempt_update(pt, &at[idx[j]], &ops[j], rung);
                cri_op_done(&ops[j]);
        }
        if (k > 0)
                round_verdict(pt, pod_data(&at[idx[0]])->op, timed_out, answered);
        return count_pending(at, n, false);
}

/* Rung 1: retry with backoff; a CNI failure gets one retry, then it is rung 2's. Past RETRIES, only
 * while every pending call is one the runtime is still settling, for SETTLE_WINDOW_USEC. */
static void rung1(PodsTarget *pt, Attempt *at, size_t n) {
        uint64_t settle_until = now(CLOCK_MONOTONIC) + SETTLE_WINDOW_USEC;
        size_t pending = attempt_round(pt, at, n, 0);

        for (unsigned retry = 1; pending > 0 && !pt->hung; retry++) {
                if (retry > 1 && count_pending(at, n, true) == pending)
                        break;
                if (retry > RETRIES && (count_settling(at, n) < pending || now(CLOCK_MONOTONIC) >= settle_until ||
                                        pods_budget_left(pt) < CALL_TIMEOUT_MIN_USEC))
                        break;
                pods_sleep_in_budget(pt, u64_min(BACKOFF_USEC << u64_min(retry - 1, 2), SETTLE_BACKOFF_MAX_USEC));
                pending = attempt_round(pt, at, n, 1);
        }
}

static bool op_uses_cni(CriOpKind op) {
        return op == CRI_OP_STOP_SANDBOX || op == CRI_OP_REMOVE_SANDBOX;
}

/* Rung 2: the runtime cannot tear a pod's network down because the CNI plugin fails (calico without
 * its API server). A first-sorting loopback-only conflist makes the teardown a no-op; it stands in
 * while the pods are retried, until pods_rescue_release(). */
static void rung2(PodsTarget *pt, Attempt *at, size_t n) {
        cleanup_free char *err = NULL;
        uint64_t until;
        int r;

        if (count_pending(at, n, true) == 0 || pt->hung || !op_uses_cni(pod_data(&at[0])->op))
                return;
        if (!pt->rescue_path) {
                r = cni_rescue_install(pt->info.cni_conf_dir, &pt->rescue_path, &err);
                if (r < 0) {
                        pods_need_rung3(pt, "rung 2 impossible: %s", strna(err));
                        return;
                }
                log_notice("CNI teardown fails; the loopback-only conflist %s stands in while pods go.",
                           pt->rescue_path);
        }
        until = now(CLOCK_MONOTONIC) + u64_min(RESCUE_WINDOW_USEC, pods_budget_left(pt));
        while (count_pending(at, n, false) > 0 && !pt->hung && now(CLOCK_MONOTONIC) < until) {
                pods_sleep_in_budget(pt, RESCUE_POLL_USEC);
                (void) attempt_round(pt, at, n, 2);
        }
}

/* The rescue conflist goes again: after the last batch that may tear a network down, before rung 3,
 * and (pods-ladder.c) on a signal or at exit. */
void pods_rescue_release(PodsTarget *pt) {
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
        else if (at->cni_message || at->first_message)
                r = asprintf(&m,
                             "%s with the CNI rescue (rung 2): the CNI teardown failed (%s); the loopback-only "
                             "conflist %s stood in, removed again after the last pod",
                             verb, at->cni_message ?: at->first_message, strna(pt->rescue_path));
        else
                r = asprintf(&m, "%s while the rung 2 rescue conflist %s stood in (the CNI teardown had failed)", verb,
                             strna(pt->rescue_path));
        return r < 0 ? NULL : m;
}

static void settle_failed(PodsTarget *pt, Attempt *at) {
        char *m = NULL;

        if (at->cut) {
                pods_need_rung3(pt, "the pods budget was spent");
                m = strprintf("cut off when the pods budget ran out: %s (%u attempt%s); rung 3 follows (see the "
                              "runtime action)",
                              strna(at->message), at->tries, at->tries == 1 ? "" : "s");
                action_record(at->a, -ETIME, m);
                return;
        }
        if (at->tries == 0) {
                pods_need_rung3(pt, "the pods budget was spent");
                m = strprintf("not attempted: %s; rung 3 follows (see the runtime action)",
                              pt->hung ? "the runtime stopped answering" : "the pods budget is spent");
                action_record(at->a, at->error < 0 ? at->error : -ETIME, m);
                return;
        }
        pods_need_rung3(pt, "%s failed: %s", cri_op_kind_to_method(pod_data(at)->op), strna(at->message));
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

        pods_budget_start(pt, ctx);
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
                pods_rescue_release(pt);
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

void pods_short_id(const char *id, char buf[static PODS_ID_SHORT + 1]) {
        snprintf(buf, PODS_ID_SHORT + 1, "%s", strempty(id));
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
        d->pt = pods_target_ref(pt);
        d->op = op;
        d->cni = cni;
        a = plan_add(plan, ops, "pods", target, NULL, d);
        if (!a)
                return -ENOMEM;
        return detail ? action_set_detail(a, "%s", detail) : 0;
}

const SandboxView *pods_find_sandbox(const SandboxView *v, size_t n, const char *id) {
        for (size_t i = 0; i < n; i++)
                if (streq_ptr(v[i].s->id, id))
                        return &v[i];
        return NULL;
}

static void container_target(const CriContainer *c, const SandboxView *sb, char *buf, size_t size) {
        char id[PODS_ID_SHORT + 1];

        pods_short_id(c->id, id);
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

                if (pods_find_sandbox(v, nv, c[i].pod_sandbox_id))
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

int pods_batch_plan(Plan *plan, PodsTarget *pt, const CriContainer *c, size_t nc, const SandboxView *v, size_t nv) {
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
