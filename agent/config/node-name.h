/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which Node object this node is: the name its kubelet's client certificate carries, as the API
 * server knows it, shared by orphan-check and the node-object phase. */
#pragma once

#include <stdbool.h>

#include "agent/config/kubeconfig.h"

/* A node name is a DNS subdomain (RFC 1123), so it goes into a URL as it is. */
bool node_name_is_valid(const char *s);

/* The node's name: override when given, else the CN=system:node:NAME of cert (the kubelet's client
 * certificate; NULL or not such a certificate: skipped), else the host name lower-cased as kubelet
 * defaults to. *ret_source says which ("--node-name", "client certificate", "hostname"). Returns 0,
 * -ENOMEM, or -EINVAL for a name that is no valid node name (*ret set all the same, for the message). */
int node_name_pick(const char *override, const KubeconfigPem *cert, char **ret, const char **ret_source);
