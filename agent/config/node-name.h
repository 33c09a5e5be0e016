/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which Node object this node is: the name its kubelet's client certificate carries, as the API
 * server knows it, shared by orphan-check and the node-object phase; and its host name, which the
 * report names. */
#pragma once

#include <stdbool.h>

#include "agent/config/kubeconfig.h"

/* A node name is a DNS subdomain (RFC 1123), so it goes into a URL as it is. */
bool node_name_is_valid(const char *s);

/* The node's host name, lower-cased as kubelet takes it: gethostname() on the node itself (on_node,
 * the root is "/"), else the tree's /etc/hostname (hostname(5)) read beneath root_fd: under --root
 * the running system's name is not the node's. 1 and the name, 0 when there is none to be had (the
 * tree has no /etc/hostname: unknown), -ENOMEM. */
int node_host_name(int root_fd, bool on_node, char **ret);

/* The node's name: override when given, else the CN=system:node:NAME of cert (the kubelet's client
 * certificate; NULL or not such a certificate: skipped), else k3s's or rke2's agent's (its
 * client-kubelet.crt, else the node name its unit, config file or env files give:
 * rancher_node_name()), else node_host_name() as kubelet defaults to. *ret_source says which
 * ("--node-name", "client certificate", ..., "hostname", "tree's /etc/hostname"). Returns 0, -ENXIO
 * when the name is unknown (none of them, or k3s's --with-node-id without its id file: *ret NULL),
 * -ENOMEM, or -EINVAL for a name that is no valid node name (*ret set all the same, for the message). */
int node_name_pick(const char *override, const KubeconfigPem *cert, int root_fd, bool on_node, char **ret,
                   const char **ret_source);
