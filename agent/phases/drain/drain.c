/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The drain phase (--drain): before anything is reset, this node's Node is cordoned and every pod
 * bound to it evicted through the Eviction API, as kubectl drain --ignore-daemonsets does
 * (kubernetes 1.20 staging/src/k8s.io/kubectl/pkg/drain/drain.go, filters.go, cordon.go), then
 * waited for until gone. The plan lists the pods it sees; the run cordons first and decides from
 * the pods listed after the cordon, again until none is left (drain-run.c). A failed row quits every
 * later phase (its gate in phases.c): a node is never reset with pods the drain did not move. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/base/log.h"
#include "agent/kube/kube-api.h"
#include "agent/engine/cmdline.h"
#include "agent/engine/phase.h"
#include "agent/node/phase-options.h"
#include "agent/phases/drain/drain-pods.h"
#include "agent/phases/drain/drain-run.h"
#include "agent/phases/phases.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

#define PHASE DRAIN_PHASE
#define DRAIN_TIMEOUT_DEFAULT_SEC 300

/* The options: configuration, set once by the command line before any run. */
static bool arg_drain;
static DrainOptions arg_options;
static unsigned arg_drain_timeout_sec = DRAIN_TIMEOUT_DEFAULT_SEC;

/* What the phase keeps for the run, in its Context. */
typedef struct DrainState {
        KubeIdentity *id; /* found by the first planning, kept for verify */
        bool cordoned;    /* this run's cordon row found the Node and left it unschedulable */
} DrainState;

static void drain_state_done(void *p) {
        DrainState *st = p;

        kube_identity_done(st->id);
        free(st->id);
}

static const ContextStateType drain_state_type = {
        .name = "drain",
        .size = sizeof(DrainState),
        .done = drain_state_done,
};

/* The state planning made: every row's apply runs after its phase planned. */
static DrainState *drain_state(Context *ctx) {
        return context_state(ctx, &drain_state_type);
}

static uint64_t drain_deadline(const Context *ctx) {
        uint64_t d = now(CLOCK_MONOTONIC) + (usec_t) arg_drain_timeout_sec * USEC_PER_SEC;

        return ctx->deadline_usec > 0 && ctx->deadline_usec < d ? ctx->deadline_usec : d;
}

/* kubectl drain cordons first (RunCordonOrUncordon); a Node that is not there fails it (NotFound). */
static int cordon_apply(Action *act, Context *ctx, char **ret_msg) {
        DrainState *st = drain_state(ctx);
        bool unschedulable = false;
        int r;

        if (!st)
                return -ENOMEM;
        st->cordoned = false;
        if (!st->id)
                return set_errmsg(ret_msg, -EACCES, "%s", act->detail ?: "no credentials to drain with");
        r = drain_node_get(st->id->kc, st->id->node, ctx->deadline_usec, &unschedulable, ret_msg);
        if (r == -ENOENT)
                act->code = "not-found";
        if (r < 0)
                return r;
        if (!unschedulable) {
                r = drain_node_cordon(st->id->kc, st->id->node, ctx->deadline_usec, ret_msg);
                if (r < 0)
                        return r;
        }
        st->cordoned = true;
        return set_errmsg(ret_msg, !unschedulable,
                          unschedulable ? "Node %s was cordoned already" : "cordoned Node %s (spec.unschedulable)",
                          st->id->node);
}

static const ActionOps cordon_ops = {
        .kind = "cordon",
        .apply = cordon_apply,
};

static int drain_apply(Action *act, Context *ctx, char **ret_msg) {
        DrainState *st = drain_state(ctx);

        if (!st)
                return -ENOMEM;
        if (!st->cordoned) {
                /* The pods the plan saw are not evicted either: recorded by drain_run() only. */
                PLAN_FOREACH(a, ctx->plan)
                        if (a->ops == &drain_evict_ops && a->result == ACTION_PENDING && !a->skip_reason)
                                action_recordf(a, -ECANCELED, "not evicted: Node %s was not cordoned",
                                               st->id ? st->id->node : "?");
                return set_errmsg(ret_msg, -ECANCELED, "not drained: the Node was not cordoned");
        }
        return drain_run(ctx, st->id, &arg_options, drain_deadline(ctx), ret_msg);
}

static const ActionOps drain_ops = {
        .kind = "drain",
        .apply = drain_apply,
};

static const char *pod_plan_detail(const DrainPod *p, char *buf, size_t size) {
        cleanup_free char *why = NULL;

        if (p->class == DRAIN_REFUSED) {
                why = drain_refusal_describe(p);
                (void) snprintf(buf, size, "%s: refused, and then no pod is evicted", strna(why));
        } else if (p->finished)
                (void) snprintf(buf, size, "it has finished: evict it");
        else if (p->owner_gone)
                (void) snprintf(buf, size, "its DaemonSet %s is gone: evicted with --drain-force, nothing recreates it",
                                p->owner_name);
        else if (!p->owner_kind)
                (void) snprintf(buf, size,
                                "no controller manages it: evicted with --drain-force, nothing recreates it");
        else
                (void) snprintf(buf, size, "managed by %s/%s: evict it%s", p->owner_kind, p->owner_name,
                                p->emptydir ? " (its emptyDir data goes)" : "");
        return buf;
}

static int plan_pod(Plan *plan, const DrainPod *p) {
        cleanup_free char *target = drain_pod_target(p->ns, p->name);
        DrainPodRef *ref = drain_pod_ref_new(p);
        char buf[512];
        Action *act;

        if (!target || !ref || !(act = plan_add(plan, &drain_evict_ops, PHASE, target, "--drain", ref)))
                return -ENOMEM;
        act->present = p->class == DRAIN_EVICT || p->class == DRAIN_REFUSED;
        if (p->class == DRAIN_DAEMONSET)
                return action_set_skip_code(act, "daemonset",
                                            "managed by DaemonSet/%s: left, as kubectl drain --ignore-daemonsets does",
                                            p->owner_name);
        if (p->class == DRAIN_MIRROR)
                return action_set_skip_code(act, "mirror",
                                            "the mirror of a static pod: the API server cannot evict it (the pods "
                                            "phase stops it)");
        return action_set_detail(act, "%s", pod_plan_detail(p, buf, sizeof buf));
}

typedef struct Lookup {
        const Context *ctx;
        const KubeIdentity *id;
} Lookup;

static int lookup(const char *ns, const char *name, void *userdata, char **reterr) {
        const Lookup *l = userdata;

        return drain_daemonset_exists(l->id->kc, ns, name, l->ctx->deadline_usec, reterr);
}

/* The drain row, then the pods on the node now, each as kubectl's filters classify it: the drain row
 * runs first and records their rows. */
static int plan_pods(Context *ctx, const KubeIdentity *id, Plan *plan, char **reterr) {
        cleanup_free char *target = strprintf("Node/%s", id->node);
        Lookup lk = { .ctx = ctx, .id = id };
        DrainPodList l;
        Action *act;
        int r;

        if (!target || !(act = plan_add(plan, &drain_ops, PHASE, target, "--drain", NULL)))
                return -ENOMEM;
        act->present = false;
        r = drain_pods_list(id->kc, id->node, ctx->deadline_usec, &l, reterr);
        if (r < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                r = drain_pod_classify(&l.pods[i], &arg_options, lookup, &lk);
                if (r >= 0)
                        r = plan_pod(plan, &l.pods[i]);
                act->present = act->present || l.pods[i].class == DRAIN_EVICT || l.pods[i].class == DRAIN_REFUSED;
        }
        drain_pod_list_done(&l);
        if (r < 0)
                return r;
        return action_set_detail(act,
                                 "evict the pods bound to Node %s as listed after the cordon, and list them again "
                                 "until none is left (pods bound meanwhile too); --drain-timeout %llus",
                                 id->node, (unsigned long long) arg_drain_timeout_sec);
}

/* The cordon row, and whether there is a Node (and an API server) to drain. */
static int plan_cordon(Context *ctx, const KubeIdentity *id, Plan *plan, bool *ret_node) {
        cleanup_free char *target = strprintf("Node/%s", id->node), *err = NULL;
        bool unschedulable = false;
        Action *act;
        int r;

        if (!target || !(act = plan_add(plan, &cordon_ops, PHASE, target, "--drain", NULL)))
                return -ENOMEM;
        r = drain_node_get(id->kc, id->node, ctx->deadline_usec, &unschedulable, &err);
        *ret_node = r > 0;
        if (r == -ENOMEM)
                return r;
        if (r == -ENOENT && ctx->pass == ENGINE_PASS_VERIFY) {
                /* The node-object phase deleted it, after the drain. */
                act->present = false;
                return action_set_detail(act, "no Node object %s: nothing left to drain", id->node);
        }
        if (r < 0) {
                /* The API must answer for a drain, and a Node that is not there is kubectl drain's
                 * NotFound; after the run (verify) the reset may have stopped the API server. */
                act->present = ctx->pass != ENGINE_PASS_VERIFY;
                if (r == -ENOENT)
                        act->code = "not-found";
                return action_set_detail(act, "%s: %s", strna(err),
                                         act->present ? "the drain will fail, as kubectl drain does, and the "
                                                        "reset will not run"
                                                      : "not asked again");
        }
        act->present = !unschedulable;
        return action_set_detail(act,
                                 unschedulable ? "Node %s is cordoned already (credentials of %s)"
                                               : "mark Node %s unschedulable (credentials of %s)",
                                 id->node, id->kc->path);
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

/* The credentials and the Node's name (the program's --kubeconfig and --node-name, in the Context),
 * found by the first planning and kept for verify. */
static int open_identity(Context *ctx, DrainState *st, char **reterr) {
        int r;

        if (st->id)
                return 0;
        st->id = calloc(1, sizeof *st->id);
        if (!st->id)
                return -ENOMEM;
        r = kube_identity_open(ctx->root_fd, streq(ctx->root, "/"), ctx->kubeconfig, ctx->node_name, false, st->id,
                               reterr);
        if (r < 0) {
                kube_identity_done(st->id);
                st->id = mfree(st->id);
        }
        return r;
}

int phase_drain_plan(Context *ctx, Plan *plan, char **reterr) {
        cleanup_free char *err = NULL;
        DrainState *st;
        bool node;
        int r;

        if (!arg_drain && !ctx->drain)
                return 0;
        st = drain_state(ctx);
        if (!st)
                return -ENOMEM;
        r = open_identity(ctx, st, &err);
        if (r < 0)
                return r == -ENOMEM ? r : plan_no_credentials(plan, r, err);
        r = plan_cordon(ctx, st->id, plan, &node);
        if (r >= 0 && node)
                r = plan_pods(ctx, st->id, plan, &err);
        if (r < 0)
                return set_errmsg(reterr, r, "Cannot plan the drain: %s", err ?: strerror(-r));
        return 0;
}

static int parse_drain(const char *arg, char **reterr) {
        arg_drain = true;
        return phase_option_delete_node_parse(NULL, reterr); /* --drain implies --delete-node */
}

static int parse_drain_force(const char *arg, char **reterr) {
        arg_options.force = true;
        return 0;
}

static int parse_drain_emptydir(const char *arg, char **reterr) {
        arg_options.delete_emptydir = true;
        return 0;
}

static int parse_drain_timeout(const char *arg, char **reterr) {
        return cmdline_parse_duration("drain-timeout", arg, 1, CMDLINE_DURATION_MAX, &arg_drain_timeout_sec, reterr);
}

const PhaseOption phase_drain_options[] = {
        { "drain", PHASE_OPTION_NO_ARG, NULL,
          "Cordon this node and evict its pods (Eviction API, PodDisruptionBudgets\n"
          "respected) before the reset, as kubectl drain --ignore-daemonsets; implies\n"
          "--delete-node",
          parse_drain },
        { "drain-force", PHASE_OPTION_NO_ARG, NULL,
          "--drain: evict pods no controller manages too (kubectl drain --force)", parse_drain_force },
        { "drain-delete-emptydir-data", PHASE_OPTION_NO_ARG, NULL,
          "--drain: evict pods with emptyDir data too, which is lost\n(kubectl drain --delete-emptydir-data)",
          parse_drain_emptydir },
        { "drain-timeout", PHASE_OPTION_REQUIRED_ARG, "DURATION",
          "--drain: retry refused evictions and wait for the pods this long (5m)", parse_drain_timeout },
        {},
};
