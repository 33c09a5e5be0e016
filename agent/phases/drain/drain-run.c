/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The drain as it runs: kubectl drain's contract (kubernetes 1.20 staging/src/k8s.io/kubectl/pkg/drain/
 * drain.go) after the cordon, with the list asked again until no pod is left, so that a pod bound
 * between the plan and the cordon (the whole confirmation prompt) is evicted too. */

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "agent/base/log.h"
#include "agent/engine/engine.h"
#include "agent/phases/drain/drain-run.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

/* evictPods: a 429 is asked again after 5 s; waitForDelete polls every second. */
#define EVICT_RETRY_USEC (5 * USEC_PER_SEC)
#define POLL_USEC (1 * USEC_PER_SEC)

typedef enum TrackState {
        TRACK_PENDING, /* to be evicted (again) */
        TRACK_EVICTED, /* the API server took the eviction: waited for until gone */
        TRACK_DONE,    /* its row is recorded */
} TrackState;

/* A pod of the node, from the first list that held it on. */
typedef struct Tracked {
        Action *a;
        char *uid;
        DrainPod pod; /* as first listed and classified (ns, name, uid, class) */
        TrackState state;
        unsigned listed; /* the last round whose list held it */
        unsigned refusals;
        uint64_t next_usec, evicted_usec;
        char *why; /* the last refusal's words */
} Tracked;

typedef struct DrainRun {
        Context *ctx;
        const KubeIdentity *id;
        const DrainOptions *o;
        uint64_t deadline;
        Tracked *t;
        size_t n;
        char *version;    /* the Eviction API's, asked once before the first eviction */
        char *refused_by; /* the row target of the first pod that refused the drain */
        unsigned evicted, late, kept;
        unsigned round;
        int error; /* the first failure */
        char *error_msg;
} DrainRun;

static void pod_ref_free(void *p) {
        DrainPodRef *r = p;

        if (!r)
                return;
        free(r->ns);
        free(r->name);
        free(r->uid);
        free(r);
}

DrainPodRef *drain_pod_ref_new(const DrainPod *p) {
        DrainPodRef *r = calloc(1, sizeof *r);

        if (!r || !(r->ns = strdup(p->ns)) || !(r->name = strdup(p->name)) || !(r->uid = strdup(p->uid))) {
                pod_ref_free(r);
                return NULL;
        }
        return r;
}

char *drain_pod_target(const char *ns, const char *name) {
        return strprintf("Pod/%s/%s", ns, name);
}

/* Only reached when the drain row never ran (the run's --timeout, the operator's quit): a planned pod
 * row is otherwise recorded by drain_run(). */
static int evict_apply(Action *a, Context *ctx, char **ret_msg) {
        return set_errmsg(ret_msg, -ECANCELED, "not evicted: the drain did not run");
}

const ActionOps drain_evict_ops = {
        .kind = "evict",
        .apply = evict_apply,
        .free_data = pod_ref_free,
};

static void drain_run_done(DrainRun *d) {
        for (size_t i = 0; i < d->n; i++) {
                free(d->t[i].uid);
                free(d->t[i].why);
                drain_pod_done(&d->t[i].pod);
        }
        free(d->t);
        free(d->version);
        free(d->error_msg);
}

static void keep_error(DrainRun *d, int r, const char *msg) {
        if (d->error != 0)
                return;
        d->error = r;
        d->error_msg = strdup(strna(msg));
}

static void record(DrainRun *d, Tracked *t, int r, const char *fmt, ...) _printf_(4, 5);
static void record(DrainRun *d, Tracked *t, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        action_recordv(t->a, r, fmt, ap);
        va_end(ap);
        t->a->skip_reason = mfree(t->a->skip_reason);
        t->state = TRACK_DONE;
        if (r < 0)
                keep_error(d, r, t->a->message);
}

static void record_skip(Tracked *t, const char *code, const char *msg) {
        t->a->result = ACTION_SKIPPED;
        t->a->code = code;
        free(t->a->message);
        t->a->message = strdup(msg);
        t->state = TRACK_DONE;
}

static Tracked *tracked_find(DrainRun *d, const char *uid) {
        for (size_t i = 0; i < d->n; i++)
                if (streq(d->t[i].uid, uid))
                        return &d->t[i];
        return NULL;
}

static bool row_tracked(const DrainRun *d, const Action *a) {
        for (size_t i = 0; i < d->n; i++)
                if (d->t[i].a == a)
                        return true;
        return false;
}

/* The plan's row for this pod: one of the phase's evict rows not yet recorded, of the same pod (a pod
 * of the same name with another UID is another pod: the planned one is gone). */
static Action *planned_row(const DrainRun *d, const DrainPod *p) {
        PLAN_FOREACH(a, d->ctx->plan) {
                const DrainPodRef *ref = a->data;

                if (a->ops == &drain_evict_ops && a->result == ACTION_PENDING && ref && streq(ref->ns, p->ns) &&
                    streq(ref->name, p->name) && streq(ref->uid, p->uid))
                        return a;
        }
        return NULL;
}

static Action *late_row(DrainRun *d, const DrainPod *p) {
        cleanup_free char *target = drain_pod_target(p->ns, p->name);
        DrainPodRef *ref = drain_pod_ref_new(p);
        Action *a;

        if (!target || !ref) {
                pod_ref_free(ref);
                return NULL;
        }
        a = engine_add_row(d->ctx, &drain_evict_ops, DRAIN_PHASE, target, "--drain", ref);
        if (a && action_set_detail(a, "bound to Node %s after the plan: %s", d->id->node,
                                   drain_class_to_string(p->class)) < 0)
                return NULL;
        return a;
}

static int lookup(const char *ns, const char *name, void *userdata, char **reterr) {
        DrainRun *d = userdata;

        return drain_daemonset_exists(d->id->kc, ns, name, d->deadline, reterr);
}

/* A pod listed for the first time: classified (its DaemonSet asked for), given its row, and settled
 * at once unless it is to be evicted. */
static int track_new(DrainRun *d, DrainPod *p) {
        cleanup_free char *why = NULL;
        Tracked *t;
        int r;

        r = drain_pod_classify(p, d->o, lookup, d);
        if (r < 0)
                return r;
        t = reallocarray(d->t, d->n + 1, sizeof *d->t);
        if (!t)
                return -ENOMEM;
        d->t = t;
        t = &d->t[d->n];
        *t = (Tracked) { .uid = strdup(p->uid), .pod = *p };
        *p = (DrainPod) {}; /* taken */
        t->a = planned_row(d, &t->pod);
        if (!t->a) {
                t->a = late_row(d, &t->pod);
                d->late += t->a != NULL;
        }
        d->n++;
        if (!t->uid || !t->a)
                return -ENOMEM;
        switch (t->pod.class) {
        case DRAIN_DAEMONSET:
        case DRAIN_MIRROR:
                d->kept++;
                if (!t->a->skip_reason)
                        record_skip(t, drain_class_to_string(t->pod.class),
                                    t->pod.class == DRAIN_MIRROR ? "the mirror of a static pod: left"
                                                                 : "its DaemonSet exists: left, as kubectl drain "
                                                                   "--ignore-daemonsets does");
                else
                        t->state = TRACK_DONE; /* the engine settles the planned skip */
                return 0;
        case DRAIN_REFUSED:
                why = drain_refusal_describe(&t->pod);
                t->a->code = drain_refusal_to_string(t->pod.refusal);
                record(d, t, -EPERM, "refused: %s", strna(why));
                if (!d->refused_by)
                        d->refused_by = t->a->target;
                return 0;
        default:
                t->state = TRACK_PENDING;
                return 0;
        }
}

/* What the list says now: new pods tracked, the plan's rows of pods no longer there settled, evicted
 * pods that are gone recorded, and whether a pod is being deleted. */
static int observe(DrainRun *d, DrainPodList *l) {
        int r;

        d->round++;
        for (size_t i = 0; i < l->n; i++) {
                Tracked *t = tracked_find(d, l->pods[i].uid);

                if (t)
                        t->pod.deleting = l->pods[i].deleting;
                else if ((r = track_new(d, &l->pods[i])) < 0)
                        return r;
                else
                        t = &d->t[d->n - 1];
                t->listed = d->round;
        }
        /* The plan's rows no listed pod took are of pods gone since. */
        PLAN_FOREACH(a, d->ctx->plan)
                if (a->ops == &drain_evict_ops && a->result == ACTION_PENDING && !a->skip_reason && !row_tracked(d, a))
                        action_recordf(a, 0, "gone from the node before its eviction");
        for (size_t i = 0; i < d->n; i++) {
                Tracked *t = &d->t[i];

                if (t->listed == d->round || t->state == TRACK_DONE)
                        continue;
                if (t->state == TRACK_EVICTED) {
                        d->evicted++;
                        record(d, t, 1, "evicted (%s Eviction), gone from the node %.1f s later", d->version,
                               (double) (now(CLOCK_MONOTONIC) - t->evicted_usec) / USEC_PER_SEC);
                } else
                        record(d, t, 0, "gone from the node before its eviction");
        }
        return 0;
}

/* drain.go's evictPods: NotFound is done, 429 and a terminating namespace are asked again after 5 s
 * (a pod already being deleted there is waited for), anything else fails that pod. */
static void evict_one(DrainRun *d, Tracked *t) {
        cleanup_free char *err = NULL;
        int r;

        r = drain_pod_evict(d->id->kc, d->version, &t->pod, d->deadline, &err);
        if (r == -EAGAIN && t->pod.deleting)
                r = 1;
        if (r == -EBUSY || r == -EAGAIN) {
                if (t->refusals++ == 0)
                        log_info("%s: %s; asking again every 5 s until --drain-timeout.", t->a->target, err);
                free(t->why);
                t->why = TAKE_PTR(err);
                t->next_usec = now(CLOCK_MONOTONIC) + EVICT_RETRY_USEC;
                return;
        }
        if (r > 0) {
                t->state = TRACK_EVICTED;
                t->evicted_usec = now(CLOCK_MONOTONIC);
        } else if (r == 0)
                record(d, t, 0, "gone before its eviction (NotFound)");
        else
                record(d, t, r, "%s", strna(err));
}

static bool any_in(const DrainRun *d, TrackState s) {
        for (size_t i = 0; i < d->n; i++)
                if (d->t[i].state == s)
                        return true;
        return false;
}

static void fail_open(DrainRun *d, int r, const char *why) {
        for (size_t i = 0; i < d->n; i++)
                if (d->t[i].state != TRACK_DONE)
                        record(d, &d->t[i], r, "%s", why);
        PLAN_FOREACH(a, d->ctx->plan)
                if (a->ops == &drain_evict_ops && a->result == ACTION_PENDING && !a->skip_reason && !row_tracked(d, a))
                        action_recordf(a, r, "%s", why);
        keep_error(d, r, why);
}

static void evict_due(DrainRun *d) {
        cleanup_free char *err = NULL;
        int r;

        if (!any_in(d, TRACK_PENDING))
                return;
        if (!d->version && (r = drain_eviction_version(d->id->kc, d->deadline, &d->version, &err)) < 0)
                return fail_open(d, r, strna(err));
        for (size_t i = 0; i < d->n; i++)
                if (d->t[i].state == TRACK_PENDING && now(CLOCK_MONOTONIC) >= d->t[i].next_usec)
                        evict_one(d, &d->t[i]);
}

/* kubectl evicts nothing while one pod is refused: the pods not yet evicted are not. */
static void skip_pending(DrainRun *d) {
        cleanup_free char *why = strprintf("not evicted: the drain is refused, as %s is", d->refused_by);

        for (size_t i = 0; i < d->n; i++)
                if (d->t[i].state == TRACK_PENDING) {
                        record_skip(&d->t[i], "refused", strna(why));
                        d->t[i].a->skip_reason = mfree(d->t[i].a->skip_reason);
                }
}

/* What the deadline left: a budget that still refuses, a pod evicted but not gone. */
static void record_timeout(DrainRun *d) {
        for (size_t i = 0; i < d->n; i++) {
                Tracked *t = &d->t[i];

                if (t->state == TRACK_PENDING && t->refusals > 0) {
                        t->a->code = "disruption-budget";
                        record(d, t, -EBUSY, "not evicted: %s (asked %u times until --drain-timeout)", strna(t->why),
                               t->refusals);
                } else if (t->state == TRACK_PENDING)
                        record(d, t, -ETIMEDOUT, "not evicted before --drain-timeout");
                else if (t->state == TRACK_EVICTED)
                        record(d, t, -ETIMEDOUT, "evicted, but still on the node at --drain-timeout");
        }
}

/* One round: list, settle, evict. 1 to go on, 0 when nothing is left, -errno when listing failed. */
static int drain_round(DrainRun *d) {
        cleanup_free char *err = NULL;
        DrainPodList l;
        int r;

        r = drain_pods_list(d->id->kc, d->id->node, d->deadline, &l, &err);
        if (r < 0) {
                fail_open(d, r, strna(err));
                return r;
        }
        r = observe(d, &l);
        drain_pod_list_done(&l);
        if (r < 0)
                return r;
        if (d->refused_by)
                skip_pending(d);
        else
                evict_due(d);
        return any_in(d, TRACK_PENDING) || any_in(d, TRACK_EVICTED);
}

static int drain_summary(DrainRun *d, char **ret_msg) {
        if (d->error < 0)
                return set_errmsg(ret_msg, d->error, "Node %s not drained: %s", d->id->node,
                                  d->refused_by ? "a pod refuses the drain" : strna(d->error_msg));
        return set_errmsg(ret_msg, d->evicted > 0,
                          "Node %s drained: %u pods evicted (%u of them bound after the plan), %u left (DaemonSet, "
                          "mirror)",
                          d->id->node, d->evicted, d->late, d->kept);
}

int drain_run(Context *ctx, const KubeIdentity *id, const DrainOptions *o, uint64_t deadline, char **ret_msg) {
        DrainRun d = { .ctx = ctx, .id = id, .o = o, .deadline = deadline };
        int r;

        for (;;) {
                r = drain_round(&d);
                if (r <= 0)
                        break;
                if (now(CLOCK_MONOTONIC) + POLL_USEC >= deadline) {
                        record_timeout(&d);
                        break;
                }
                (void) usleep(POLL_USEC);
        }
        if (r == -ENOMEM)
                keep_error(&d, r, strerror(-r));
        r = drain_summary(&d, ret_msg);
        drain_run_done(&d);
        return r;
}
