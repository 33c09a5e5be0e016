/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods bound to a node as the API server lists them, classified as kubectl drain's filters do,
 * and the calls that move them off: cordon, eviction, the wait until they are gone. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/config/kube-api.h"

typedef enum DrainClass {
        DRAIN_EVICT,     /* a controller recreates it elsewhere, or it has finished */
        DRAIN_DAEMONSET, /* its controller is a DaemonSet: skipped (--ignore-daemonsets) */
        DRAIN_MIRROR,    /* the kubelet's mirror of a static pod: the API cannot delete it */
        DRAIN_UNMANAGED, /* no controller (or its DaemonSet is gone): refused unless --drain-force */
} DrainClass;

typedef struct DrainPod {
        char *ns, *name, *uid;
        char *owner; /* "ReplicaSet/web-5d4f", NULL without a controller */
        DrainClass class;
        bool owner_gone; /* its DaemonSet is gone: unmanaged now */
        bool finished;   /* status.phase Succeeded or Failed */
        bool emptydir;   /* has an emptyDir volume: its data goes (--delete-emptydir-data) */
} DrainPod;

typedef struct DrainPodList {
        DrainPod *pods;
        size_t n;
} DrainPodList;

void drain_pod_list_done(DrainPodList *l);
const DrainPod *drain_pod_list_find(const DrainPodList *l, const char *ns, const char *name);
const char *drain_class_to_string(DrainClass c);

/* What the API server says of a Node: 1 and spec.unschedulable, 0 no such Node, -EHOSTUNREACH no
 * answer (or a refusal), with the words in *reterr. */
int drain_node_get(const Kubeconfig *kc, const char *node, uint64_t deadline, bool *ret_unschedulable, char **reterr);
/* spec.unschedulable = true (a strategic merge patch): 1, 0 when the Node is gone, -errno. */
int drain_node_cordon(const Kubeconfig *kc, const char *node, uint64_t deadline, char **reterr);

/* A PodList (YAML or JSON) classified, without asking for any DaemonSet: 0, -EBADMSG (not YAML, a
 * pod without a name), -ENOMEM. */
int drain_pods_parse(const char *text, size_t size, DrainPodList *ret);

/* Every pod bound to node (fieldSelector spec.nodeName), classified; a pod whose DaemonSet is gone
 * is DRAIN_UNMANAGED. */
int drain_pods_list(const Kubeconfig *kc, const char *node, uint64_t deadline, DrainPodList *ret, char **reterr);

/* The Eviction API's version: the policy group's preferred version ("policy/v1beta1" on 1.20,
 * "policy/v1" on newer), as kubectl's CheckEvictionSupport asks. -EOPNOTSUPP without one. */
int drain_eviction_version(const Kubeconfig *kc, uint64_t deadline, char **ret, char **reterr);

/* POST an Eviction for the pod: 1 accepted, 0 the pod is gone already, -EBUSY refused for now by a
 * PodDisruptionBudget (HTTP 429: try again later), other -errno; the server's words in *reterr. */
int drain_pod_evict(const Kubeconfig *kc, const char *version, const DrainPod *p, uint64_t deadline, char **reterr);
