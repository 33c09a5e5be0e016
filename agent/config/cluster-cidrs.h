/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cluster's pod and service address ranges, as the node's own configuration files state them. */
#pragma once

#include <stddef.h>

#include "netreset/conntrack.h"

typedef enum CidrKind {
        CIDR_POD,
        CIDR_SERVICE,
} CidrKind;

typedef struct ClusterCidr {
        CidrKind kind;
        char *cidr;   /* "10.244.0.0/16", or a host address ("10.96.0.10") */
        char *source; /* "FILE: what in it" */
} ClusterCidr;

typedef struct ClusterCidrs {
        ClusterCidr *items;
        size_t n;
} ClusterCidrs;

void cluster_cidrs_done(ClusterCidrs *c);

/* Read beneath root_fd: the control plane's static pod manifests (kube-controller-manager's
 * --cluster-cidr and --service-cluster-ip-range, kube-apiserver's), the kubeadm-config.yaml that
 * kubespray and kubekey write (ClusterConfiguration networking.podSubnet, serviceSubnet), kubelet's
 * config.yaml (clusterDNS, podCIDR) and flags (--pod-cidr in the environment files its units read),
 * kube-proxy's KubeProxyConfiguration (clusterCIDR: its own file, or the ConfigMap projected into its
 * pod) and the one CNI configuration the runtime loads, cni_config (a node path, the IPAM's subnet
 * and ranges; NULL: none is loaded): never another file of the CNI's directory. Each range once, with
 * the first source that gave it. Unreadable or malformed files give nothing. -ENOMEM only. */
int cluster_cidrs_read(int root_fd, const char *cni_config, ClusterCidrs *ret);

/* The ranges as prefixes (those that parse), in an array of *ret_n to free(). -ENOMEM only. */
int cluster_cidrs_prefixes(const ClusterCidrs *c, CtPrefix **ret, size_t *ret_n);

const char *cidr_kind_to_string(CidrKind k);
