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

/* The source that names addr as the node's own, or NULL. */
const char *node_addresses_find(const NodeAddresses *l, int family, const uint8_t *addr);

/* The value of --FLAG in the API server's static pod (/etc/kubernetes/manifests/kube-apiserver.yaml
 * beneath root_fd, its command and args), malloc'd in *ret; 0 and NULL when the file or the flag is
 * not there or the file does not parse; -ENOMEM. */
int node_apiserver_flag(int root_fd, const char *flag, char **ret);

/* Exposed for tests: the words of one env file's assignments to any of names (the last assignment
 * of a name wins, comments and blank lines skipped, '…' and "…" quoting, backslash escapes in
 * double quotes), appended to *words (a NULL-terminated strv). -ENOMEM only. */
int node_env_words(const char *text, const char *const *names, char ***words);
/* Exposed for tests: the value of --FLAG=V, --FLAG V, -FLAG=V or -FLAG V in argv (the last wins), or NULL. */
const char *node_flag_value(char *const *argv, const char *flag);
