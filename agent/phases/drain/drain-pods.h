/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods bound to a node as the API server lists them, classified as kubectl drain's filters do,
 * and the calls that move them off: cordon, the Eviction API's version, eviction. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/kube/kube-api.h"

typedef enum DrainClass {
        DRAIN_EVICT,     /* a controller recreates it elsewhere, or it has finished: evicted */
        DRAIN_DAEMONSET, /* its DaemonSet exists: left, as kubectl drain --ignore-daemonsets does */
        DRAIN_MIRROR,    /* the kubelet's mirror of a static pod: the API cannot delete it */
        DRAIN_REFUSED,   /* kubectl refuses the whole drain for it (refusal says why) */
        _DRAIN_CLASS_MAX,
} DrainClass;

/* Why a pod refuses the drain: kubectl's filters' errors (filters.go), each with the option that
 * overrides it, when one does. */
typedef enum DrainRefusal {
        DRAIN_REFUSAL_NONE,
        DRAIN_REFUSAL_UNMANAGED,        /* no controller: --drain-force */
        DRAIN_REFUSAL_DAEMONSET_GONE,   /* its DaemonSet is gone (NotFound): --drain-force */
        DRAIN_REFUSAL_DAEMONSET_LOOKUP, /* its DaemonSet could not be asked for: nothing overrides */
        DRAIN_REFUSAL_EMPTYDIR,         /* emptyDir data, lost with the pod: --drain-delete-emptydir-data */
        _DRAIN_REFUSAL_MAX,
} DrainRefusal;

typedef struct DrainPod {
        char *ns, *name, *uid;
        char *owner_kind, *owner_name; /* its controller (metav1.GetControllerOf), NULL without */
        bool finished;                 /* status.phase Succeeded or Failed */
        bool emptydir;                 /* has an emptyDir volume */
        bool mirror;                   /* the kubernetes.io/config.mirror annotation */
        bool deleting;                 /* metadata.deletionTimestamp is set */
        /* Decided by drain_pod_classify(): */
        DrainClass class;
        DrainRefusal refusal;
        bool owner_gone; /* a DaemonSet's pod whose DaemonSet is gone */
        char *why;       /* a failed DaemonSet lookup's words */
} DrainPod;

typedef struct DrainPodList {
        DrainPod *pods;
        size_t n;
} DrainPodList;

typedef struct DrainOptions {
        bool force;           /* --drain-force: kubectl drain --force */
        bool delete_emptydir; /* --drain-delete-emptydir-data: kubectl drain --delete-emptydir-data */
} DrainOptions;

void drain_pod_done(DrainPod *p);
void drain_pod_list_done(DrainPodList *l);
const DrainPod *drain_pod_list_find(const DrainPodList *l, const char *ns, const char *name);
const char *drain_class_to_string(DrainClass c);
/* The report's code of a refusal ("unmanaged", "emptydir", ...). */
const char *drain_refusal_to_string(DrainRefusal r);
/* A refusal in words, with what overrides it ("no controller manages it (--drain-force evicts it)"). */
char *drain_refusal_describe(const DrainPod *p);

/* A PodList (JSON, as the API server sends it) read: 0, -EBADMSG (not a v1 PodList, a pod without a
 * name or uid), -ENOMEM. The pods are not classified yet. */
int drain_pods_parse(const char *text, size_t size, DrainPodList *ret);

/* Does the DaemonSet ns/name exist? 1 yes, 0 NotFound, another -errno with the words in *reterr. */
typedef int (*DrainDaemonSetLookup)(const char *ns, const char *name, void *userdata, char **reterr);

/* The pod's class, as kubectl 1.20's filters decide it in their order (skipDeleted, daemonSet,
 * mirrorPod, localStorage, unreplicated), --ignore-daemonsets always on. lookup is asked only for a
 * running pod of a DaemonSet. 0, or -ENOMEM. */
int drain_pod_classify(DrainPod *p, const DrainOptions *o, DrainDaemonSetLookup lookup, void *userdata);

/* What the API server says of a Node: 1 and spec.unschedulable, -ENOENT no such Node (NotFound),
 * -EHOSTUNREACH no answer, -EACCES or -EIO a refusal; the words in *reterr. */
int drain_node_get(const Kubeconfig *kc, const char *node, uint64_t deadline, bool *ret_unschedulable, char **reterr);
/* spec.unschedulable = true (a strategic merge patch, cordon.go): 1, -ENOENT when the Node is gone, -errno. */
int drain_node_cordon(const Kubeconfig *kc, const char *node, uint64_t deadline, char **reterr);

/* Every pod bound to node (fieldSelector spec.nodeName), unclassified. */
int drain_pods_list(const Kubeconfig *kc, const char *node, uint64_t deadline, DrainPodList *ret, char **reterr);

/* GET the DaemonSet ns/name (apps/v1): 1 it exists, 0 NotFound, -errno (the words in *reterr). */
int drain_daemonset_exists(const Kubeconfig *kc, const char *ns, const char *name, uint64_t deadline, char **reterr);

/* The Eviction API's version: the group/version the pods/eviction subresource names in the core
 * group's discovery (/api/v1), as kubectl asks since 1.22 (CheckEvictionSupport): 1.21 prefers
 * policy/v1 for its group but its pods/eviction takes only policy/v1beta1. A server that names none
 * there (before 1.8) gets the policy group's preferred version, as kubectl 1.20 asked. -EOPNOTSUPP
 * without a pods/eviction subresource. */
int drain_eviction_version(const Kubeconfig *kc, uint64_t deadline, char **ret, char **reterr);

/* POST an Eviction for the pod: 1 accepted, 0 the pod is gone already (NotFound), -EBUSY refused for
 * now (HTTP 429: a PodDisruptionBudget), -EAGAIN refused while its namespace terminates (drain.go
 * retries it, or waits for a pod already being deleted), other -errno; the server's words in *reterr. */
int drain_pod_evict(const Kubeconfig *kc, const char *version, const DrainPod *p, uint64_t deadline, char **reterr);
