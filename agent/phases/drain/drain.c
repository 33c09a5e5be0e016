/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The drain phase (--drain): before anything is reset, this node's Node is cordoned and every pod
 * bound to it evicted through the Eviction API, as kubectl drain --ignore-daemonsets
 * --delete-emptydir-data does (staging/src/k8s.io/kubectl/pkg/drain/drain.go, filters.go), then
 * waited for until gone. A failed row quits every later phase (its gate in phases.c): a node is
 * never reset with pods the drain did not move. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/base/log.h"
#include "agent/config/kube-api.h"
#include "agent/engine/phase.h"
#include "agent/phases/drain/drain-pods.h"
#include "agent/phases/phases.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

#define PHASE "drain"
#define DRAIN_TIMEOUT_DEFAULT_SEC 300
/* kubectl's evictPods: a 429 is asked again after 5 s; waitForDelete polls every second. */
#define EVICT_RETRY_USEC (5 * USEC_PER_SEC)
#define WAIT_POLL_USEC (1 * USEC_PER_SEC)

static bool arg_drain;
static bool arg_drain_force;
static uint64_t arg_drain_timeout_sec = DRAIN_TIMEOUT_DEFAULT_SEC;
static const char *arg_kubeconfig; /* the program's --kubeconfig and --node-name */
static const char *arg_node_name;
static KubeIdentity *drain_id; /* found by the first planning, kept for verify */
static unsigned plannings;     /* the second is verify's: by then the reset may have stopped the API server */

typedef struct PodRef {
        char *ns, *name, *uid;
} PodRef;

/* One planned pod while its batch runs. */
typedef struct Eviction {
        Action *a;
        const PodRef *ref;
        bool pending; /* to be evicted (again) */
        bool evicted; /* the API server took the eviction: wait until it is gone */
        unsigned refusals;
        uint64_t next_usec;    /* when to ask again after a 429 */
        uint64_t evicted_usec; /* when the API server took the eviction */
        char *why;             /* the last refusal's words */
} Eviction;

static void pod_ref_free(void *p) {
        PodRef *r = p;

        if (!r)
                return;
        free(r->ns);
        free(r->name);
        free(r->uid);
        free(r);
}

static uint64_t drain_deadline(const Context *ctx) {
        uint64_t d = now(CLOCK_MONOTONIC) + arg_drain_timeout_sec * USEC_PER_SEC;

        return ctx->deadline_usec > 0 && ctx->deadline_usec < d ? ctx->deadline_usec : d;
}

static int cordon_apply(Action *act, Context *ctx, char **ret_msg) {
        bool unschedulable = false;
        int r;

        if (!drain_id)
                return set_errmsg(ret_msg, -EACCES, "%s", act->detail ?: "no credentials to drain with");
        r = drain_node_get(drain_id->kc, drain_id->node, ctx->deadline_usec, &unschedulable, ret_msg);
        if (r <= 0)
                return r;
        if (unschedulable)
                return 0;
        r = drain_node_cordon(drain_id->kc, drain_id->node, ctx->deadline_usec, ret_msg);
        if (r > 0)
                *ret_msg = strprintf("cordoned Node %s (spec.unschedulable)", drain_id->node);
        return r;
}

static const ActionOps cordon_ops = {
        .kind = "cordon",
        .apply = cordon_apply,
};

static void evict_batch(Action **actions, size_t n, Context *ctx);

static const ActionOps evict_ops = {
        .kind = "evict",
        .apply_batch = evict_batch,
        .free_data = pod_ref_free,
};

/* A pod the plan saw is settled by what the list says now: gone (or another pod of that name),
 * or of a class that is not evicted after all. */
static bool settle_listed(Eviction *e, const DrainPodList *now_on_node) {
        const DrainPod *p = drain_pod_list_find(now_on_node, e->ref->ns, e->ref->name);

        if (!p || !streq(p->uid, e->ref->uid)) {
                action_recordf(e->a, 0, "gone from the node before its eviction");
                return true;
        }
        if (p->class == DRAIN_DAEMONSET || p->class == DRAIN_MIRROR) {
                action_recordf(e->a, 0, "not evicted: now a %s pod", drain_class_to_string(p->class));
                return true;
        }
        return false;
}

/* kubectl evicts nothing while one pod is refused (GetPodsForDeletion returns its errors first). */
static size_t refuse_unmanaged(Eviction *ev, size_t n, const DrainPodList *now_on_node, char **ret_first) {
        size_t refused = 0;

        for (size_t i = 0; i < n; i++) {
                const DrainPod *p = drain_pod_list_find(now_on_node, ev[i].ref->ns, ev[i].ref->name);

                if (!ev[i].pending || !p || p->class != DRAIN_UNMANAGED || arg_drain_force)
                        continue;
                ev[i].a->code = "unmanaged";
                action_recordf(ev[i].a, -EPERM, "refused: %s, nothing would recreate it (--drain-force evicts it)",
                               p->owner_gone ? "its DaemonSet is gone" : "no controller manages it");
                ev[i].pending = false;
                if (refused++ == 0)
                        *ret_first = ev[i].a->target;
        }
        return refused;
}

/* kubectl evicts nothing while one pod is refused: the others are not evicted either. */
static void skip_pending(Eviction *ev, size_t n, const char *refused) {
        for (size_t i = 0; i < n; i++) {
                if (!ev[i].pending && !ev[i].evicted)
                        continue;
                ev[i].a->result = ACTION_SKIPPED;
                ev[i].a->code = "refused";
                free(ev[i].a->message);
                ev[i].a->message = strprintf("not evicted: the drain is refused, as %s is", refused);
                ev[i].pending = ev[i].evicted = false;
        }
}

static void fail_pending(Eviction *ev, size_t n, int r, const char *why) {
        for (size_t i = 0; i < n; i++)
                if (ev[i].pending || ev[i].evicted) {
                        action_recordf(ev[i].a, r, "%s", why);
                        ev[i].pending = ev[i].evicted = false;
                }
}

static bool any(const Eviction *ev, size_t n, bool evicted) {
        for (size_t i = 0; i < n; i++)
                if (evicted ? ev[i].evicted : ev[i].pending)
                        return true;
        return false;
}

/* Ask for the pods whose turn it is; a 429 is asked again 5 s later (drain.go's evictPods). */
static void evict_due(Eviction *ev, size_t n, const char *version, uint64_t deadline) {
        for (size_t i = 0; i < n; i++) {
                cleanup_free char *err = NULL;
                DrainPod p = { .ns = ev[i].ref->ns, .name = ev[i].ref->name };
                int r;

                if (!ev[i].pending || now(CLOCK_MONOTONIC) < ev[i].next_usec)
                        continue;
                r = drain_pod_evict(drain_id->kc, version, &p, deadline, &err);
                if (r == -EBUSY) {
                        if (ev[i].refusals++ == 0)
                                log_info("%s: %s; asking again every 5 s until --drain-timeout.", ev[i].a->target, err);
                        free(ev[i].why);
                        ev[i].why = TAKE_PTR(err);
                        ev[i].next_usec = now(CLOCK_MONOTONIC) + EVICT_RETRY_USEC;
                        continue;
                }
                ev[i].pending = false;
                ev[i].evicted = r > 0;
                ev[i].evicted_usec = now(CLOCK_MONOTONIC);
                if (r <= 0)
                        action_record(ev[i].a, r, r == 0 ? strdup("gone before its eviction") : TAKE_PTR(err));
        }
}

/* waitForDelete: an evicted pod is gone when the node's list no longer holds its UID. */
static void record_gone(Eviction *ev, size_t n, const char *version, uint64_t deadline) {
        cleanup_free char *err = NULL;
        DrainPodList l;

        if (!any(ev, n, true) || drain_pods_list(drain_id->kc, drain_id->node, deadline, &l, &err) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                const DrainPod *p = drain_pod_list_find(&l, ev[i].ref->ns, ev[i].ref->name);

                if (!ev[i].evicted || (p && streq(p->uid, ev[i].ref->uid)))
                        continue;
                action_recordf(ev[i].a, 1, "evicted (%s Eviction), gone from the node %.1f s later", version,
                               (double) (now(CLOCK_MONOTONIC) - ev[i].evicted_usec) / USEC_PER_SEC);
                ev[i].evicted = false;
        }
        drain_pod_list_done(&l);
}

/* What the deadline left: a budget that still refuses, a pod evicted but not gone. */
static void record_timeout(Eviction *ev, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (ev[i].pending) {
                        ev[i].a->code = "disruption-budget";
                        action_recordf(ev[i].a, -EBUSY, "not evicted: %s (asked %u times until --drain-timeout)",
                                       ev[i].why ?: "refused", ev[i].refusals);
                        ev[i].pending = false;
                }
        fail_pending(ev, n, -ETIMEDOUT, "evicted, but still on the node at --drain-timeout");
}

/* Evict and wait at once: a pod that goes is recorded when it goes, whatever the others wait for. */
static void evict_and_wait(Eviction *ev, size_t n, const char *version, uint64_t deadline) {
        for (;;) {
                evict_due(ev, n, version, deadline);
                record_gone(ev, n, version, deadline);
                if (!any(ev, n, false) && !any(ev, n, true))
                        return;
                if (now(CLOCK_MONOTONIC) + WAIT_POLL_USEC >= deadline)
                        break;
                (void) usleep(WAIT_POLL_USEC);
        }
        record_timeout(ev, n);
}

/* Decide again from the pods on the node now, then evict, then wait: drain.go's order. */
static void evict_all(Eviction *ev, size_t n, const DrainPodList *now_on_node, uint64_t deadline) {
        cleanup_free char *err = NULL, *version = NULL;
        char *first = NULL;
        int r;

        for (size_t i = 0; i < n; i++)
                ev[i].pending = !settle_listed(&ev[i], now_on_node);
        if (refuse_unmanaged(ev, n, now_on_node, &first) > 0)
                return skip_pending(ev, n, first);
        if (!any(ev, n, false))
                return;
        r = drain_eviction_version(drain_id->kc, deadline, &version, &err);
        if (r < 0)
                return fail_pending(ev, n, r, err ?: strerror(-r));
        evict_and_wait(ev, n, version, deadline);
}

static void evict_batch(Action **actions, size_t n, Context *ctx) {
        uint64_t deadline = drain_deadline(ctx);
        cleanup_free char *err = NULL;
        cleanup_free Eviction *ev = calloc(n, sizeof *ev);
        DrainPodList l;
        int r;

        if (!ev) {
                for (size_t i = 0; i < n; i++)
                        action_record(actions[i], -ENOMEM, NULL);
                return;
        }
        for (size_t i = 0; i < n; i++)
                ev[i] = (Eviction) { .a = actions[i], .ref = actions[i]->data, .pending = true };
        r = drain_id ? drain_pods_list(drain_id->kc, drain_id->node, deadline, &l, &err) : -EACCES;
        if (r < 0)
                return fail_pending(ev, n, r, err ?: "no credentials to drain with");
        evict_all(ev, n, &l, deadline);
        drain_pod_list_done(&l);
        for (size_t i = 0; i < n; i++)
                free(ev[i].why);
}

static const char *pod_plan_detail(const DrainPod *p, char *buf, size_t size) {
        if (p->class == DRAIN_UNMANAGED)
                (void) snprintf(buf, size, "%s: %s",
                                p->owner_gone ? "its DaemonSet is gone" : "no controller manages it",
                                arg_drain_force ? "evicted with --drain-force, nothing recreates it"
                                                : "refused, and then no pod is evicted (--drain-force evicts it; "
                                                  "nothing recreates it)");
        else if (p->finished)
                (void) snprintf(buf, size, "it has finished: evict it");
        else
                (void) snprintf(buf, size, "managed by %s: evict it%s", p->owner ?: "?",
                                p->emptydir ? " (its emptyDir data goes)" : "");
        return buf;
}

static int plan_pod(Plan *plan, const DrainPod *p) {
        PodRef *ref = calloc(1, sizeof *ref);
        cleanup_free char *target = strprintf("Pod/%s/%s", p->ns, p->name);
        char buf[512];
        Action *act;

        if (!ref || !target || !(ref->ns = strdup(p->ns)) || !(ref->name = strdup(p->name)) ||
            !(ref->uid = strdup(p->uid))) {
                pod_ref_free(ref);
                return -ENOMEM;
        }
        act = plan_add(plan, &evict_ops, PHASE, target, "--drain", ref);
        if (!act)
                return -ENOMEM;
        act->present = p->class == DRAIN_EVICT || p->class == DRAIN_UNMANAGED;
        if (p->class == DRAIN_DAEMONSET)
                return action_set_skip_code(act, "daemonset",
                                            "managed by %s: left, as kubectl drain --ignore-daemonsets does", p->owner);
        if (p->class == DRAIN_MIRROR)
                return action_set_skip_code(act, "mirror",
                                            "the mirror of a static pod: the API server cannot evict it (the pods "
                                            "phase stops it)");
        return action_set_detail(act, "%s", pod_plan_detail(p, buf, sizeof buf));
}

static int plan_pods(Context *ctx, Plan *plan, char **reterr) {
        DrainPodList l;
        int r;

        r = drain_pods_list(drain_id->kc, drain_id->node, ctx->deadline_usec, &l, reterr);
        if (r < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < l.n; i++)
                r = plan_pod(plan, &l.pods[i]);
        drain_pod_list_done(&l);
        return r;
}

/* The cordon row, and whether there is a Node (and an API server) to drain. */
static int plan_cordon(Context *ctx, Plan *plan, bool *ret_node) {
        cleanup_free char *target = strprintf("Node/%s", drain_id->node), *err = NULL;
        bool unschedulable = false;
        Action *act;
        int r;

        if (!target || !(act = plan_add(plan, &cordon_ops, PHASE, target, "--drain", NULL)))
                return -ENOMEM;
        r = drain_node_get(drain_id->kc, drain_id->node, ctx->deadline_usec, &unschedulable, &err);
        *ret_node = r > 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* The API must answer for a drain; after the run (verify) the reset may have stopped it. */
                act->present = plannings == 1;
                return action_set_detail(act, "%s: %s", err,
                                         act->present ? "the drain will fail unless it answers then, and the "
                                                        "reset will not run"
                                                      : "not asked again");
        }
        act->present = r > 0 && !unschedulable;
        if (r == 0)
                return action_set_detail(act, "no Node object %s: nothing to drain", drain_id->node);
        return action_set_detail(act,
                                 unschedulable ? "Node %s is cordoned already (credentials of %s)"
                                               : "mark Node %s unschedulable (credentials of %s)",
                                 drain_id->node, drain_id->kc->path);
}

static int plan_no_credentials(Plan *plan, int r, const char *err) {
        Action *act = plan_add(plan, &cordon_ops, PHASE, "Node", "--drain", NULL);

        if (!act)
                return -ENOMEM;
        act->present = true;
        if (r == -ENOENT)
                return action_set_detail(act,
                                         "no %s or --kubeconfig: the drain cannot be done, and the reset will "
                                         "not run",
                                         KUBE_ADMIN_CONF);
        return action_set_detail(act, "%s: the drain cannot be done, and the reset will not run", err ?: strerror(-r));
}

int phase_drain_plan(Context *ctx, Plan *plan, char **reterr) {
        cleanup_free char *err = NULL;
        bool node;
        int r;

        if (!arg_drain)
                return 0;
        plannings++;
        if (!drain_id) {
                drain_id = calloc(1, sizeof *drain_id);
                if (!drain_id)
                        return -ENOMEM;
                r = kube_identity_open(ctx->root_fd, streq(ctx->root, "/"), arg_kubeconfig, arg_node_name, false,
                                       drain_id, &err);
                if (r < 0) {
                        phase_drain_done(ctx);
                        return r == -ENOMEM ? r : plan_no_credentials(plan, r, err);
                }
        }
        r = plan_cordon(ctx, plan, &node);
        if (r >= 0 && node)
                r = plan_pods(ctx, plan, &err);
        if (r < 0)
                return set_errmsg(reterr, r, "Cannot plan the drain: %s", err ?: strerror(-r));
        return 0;
}

void phase_drain_done(Context *ctx) {
        kube_identity_done(drain_id);
        drain_id = mfree(drain_id);
}

void phase_drain_identity(const char *kubeconfig, const char *node_name) {
        arg_kubeconfig = kubeconfig;
        arg_node_name = node_name;
}

static int parse_drain(const char *arg, char **reterr) {
        arg_drain = true;
        phase_node_object_enable();
        return 0;
}

static int parse_drain_force(const char *arg, char **reterr) {
        arg_drain_force = true;
        return 0;
}

static int parse_drain_timeout(const char *arg, char **reterr) {
        if (duration_parse(arg, &arg_drain_timeout_sec) < 0 || arg_drain_timeout_sec == 0)
                return set_errmsg(reterr, -EINVAL,
                                  "invalid --drain-timeout '%s': expected a positive duration such as 90s, 5m, 1h",
                                  arg);
        return 0;
}

const PhaseOption phase_drain_options[] = {
        { "drain", PHASE_OPTION_NO_ARG, NULL,
          "Cordon this node and evict its pods (Eviction API, PodDisruptionBudgets\n"
          "respected) before the reset; implies --delete-node",
          parse_drain },
        { "drain-force", PHASE_OPTION_NO_ARG, NULL, "--drain: evict pods no controller manages too",
          parse_drain_force },
        { "drain-timeout", PHASE_OPTION_REQUIRED_ARG, "DURATION",
          "--drain: retry refused evictions and wait for the pods this long (5m)", parse_drain_timeout },
        {},
};
