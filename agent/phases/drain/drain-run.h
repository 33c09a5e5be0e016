/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The drain as it runs, after the cordon: the pods on the node listed, classified and evicted, then
 * listed again until none is left to evict, as kubectl drain does (drain.go: GetPodsForDeletion,
 * evictPods, waitForDelete), with every pod bound meanwhile included. */
#pragma once

#include "agent/kube/kube-api.h"
#include "agent/engine/plan.h"
#include "agent/phases/drain/drain-pods.h"

#define DRAIN_PHASE "drain"

/* A pod row's data: the pod the plan saw. */
typedef struct DrainPodRef {
        char *ns, *name, *uid;
} DrainPodRef;

/* The kind of every pod row ("evict"), planned or added while the drain runs; its rows are recorded
 * by drain_run(), never applied on their own. */
extern const ActionOps drain_evict_ops;

DrainPodRef *drain_pod_ref_new(const DrainPod *p);

/* The Pod row target "Pod/NS/NAME", malloc'd. */
char *drain_pod_target(const char *ns, const char *name);

/* Drain node: list the pods bound to it, settle the planned rows (ctx->plan's drain_evict_ops rows)
 * by what the list says now and add one for each pod the plan did not see, evict (429 asked again
 * every 5 s), and list again every second until no pod is left to evict or wait for, or deadline.
 * One refused pod refuses the drain (no pod is evicted after it, as kubectl evicts none). 1 pods
 * were evicted, 0 none was to be, -errno the drain failed; what happened in *ret_msg. */
int drain_run(Context *ctx, const KubeIdentity *id, const DrainOptions *o, uint64_t deadline, char **ret_msg);
