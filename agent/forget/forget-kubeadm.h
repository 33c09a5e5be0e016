/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubeadm's own record of a control plane: its key in the kubeadm-config ConfigMap's ClusterStatus. */
#pragma once

#include <stdint.h>

#include "agent/kube/kube-api.h"

typedef struct KubeadmEndpoint {
        char *address;          /* its advertiseAddress, NULL when none is given */
        char *resource_version; /* of the ConfigMap as read */
        char *status_without;   /* ClusterStatus with the node's key removed (YAML) */
} KubeadmEndpoint;

void kubeadm_endpoint_done(KubeadmEndpoint *e);

/* A ClusterStatus document (YAML) without node's key in apiEndpoints, into e->status_without, with
 * its advertiseAddress: 1, 0 when it has no such key, -EBADMSG (no YAML, or one that would be written
 * back nested deeper than 32 levels: kubeadm's has three), -ENOMEM. Sets nothing in e unless 1. */
int kubeadm_cluster_status_without(const char *text, const char *node, KubeadmEndpoint *e);

/* 1 when ClusterStatus.apiEndpoints has node's key, 0 when not (no ConfigMap, no ClusterStatus:
 * kubeadm >= 1.22 keeps none, k3s and rke2 have no kubeadm-config), -errno with the words. */
int kubeadm_endpoint_find(const Kubeconfig *kc, const char *node, uint64_t deadline, KubeadmEndpoint *ret,
                          char **reterr);

/* Remove node's key, the update conditional on the resourceVersion read (a 409 reads again, three
 * times at most): 1 removed, 0 there was none, -errno. */
int kubeadm_endpoint_remove(const Kubeconfig *kc, const char *node, uint64_t deadline, char **reterr);
