/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The node's own addresses as its configuration names them: kubelet's --node-ip, the API server's advertise address. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct NodeAddress {
        int family; /* AF_INET or AF_INET6 */
        uint8_t bytes[16];
        char *source; /* "kubelet's --node-ip (/var/lib/kubelet/kubeadm-flags.env)" */
} NodeAddress;

typedef struct NodeAddresses {
        NodeAddress *v;
        size_t n;
} NodeAddresses;

/* Read, beneath root_fd, kubelet's flags (kubeadm-flags.env, /etc/default/kubelet,
 * /etc/sysconfig/kubelet, kubespray's kubelet.env: env files, the values as argument vectors), the
 * API server's static pod (--advertise-address in its command and args) and kubeadm's configuration
 * file (localAPIEndpoint.advertiseAddress, YAML). A missing file or one that does not parse is
 * evidence of nothing. -ENOMEM only. */
int node_addresses_read(int root_fd, NodeAddresses *ret);
void node_addresses_done(NodeAddresses *l);

/* The environment files kubelet's units read (kubeadm's, Debian's, Red Hat's, kubespray's), NULL-terminated. */
extern const char *const node_kubelet_env_files[];
/* kubelet's command line from one of them ("kubelet" first, then the KUBELET_*ARGS values split as
 * systemd splits an unbraced $VAR): 1 with it, 0 when there is no such file or it is no environment
 * file, -ENOMEM. */
int node_kubelet_argv(int root_fd, const char *path, char ***ret);

/* The source that names addr as the node's own, or NULL. */
const char *node_addresses_find(const NodeAddresses *l, int family, const uint8_t *addr);

/* The value of one flag on the API server's command line (its static pod's kube-apiserver
 * container, command and args): 0 with it in *ret, or NULL when there is no such pod, container or
 * flag; -ENOMEM. */
int node_apiserver_flag(int root_fd, const char *flag, char **ret);
