/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requests to the Kubernetes API server with a kubeconfig's credentials, and who a node-level call acts as. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "agent/config/installers.h"
#include "agent/base/http.h"
#include "agent/config/kubeconfig.h"

#define KUBE_ADMIN_CONF KUBEADM_ADMIN_CONF
/* Each call: a server that is down refuses at once, one that hangs costs this much. */
#define KUBE_API_CALL_TIMEOUT_MS 10000ULL
#define KUBE_API_CONNECT_TIMEOUT_MS 3000ULL

typedef struct KubeRequest {
        const char *method;       /* NULL: GET (POST with a body) */
        const char *path;         /* "/api/v1/nodes/NAME": appended to the kubeconfig's server */
        const char *body;         /* JSON, or a patch */
        const char *content_type; /* of the body; NULL: application/json */
        size_t response_max;      /* keep this much of the answer; 0: KUBE_API_RESPONSE_MAX */
        uint64_t deadline_usec;   /* CLOCK_MONOTONIC; 0: none beyond the call's own timeout */
} KubeRequest;

#define KUBE_API_RESPONSE_MAX (16U << 20)

/* One request; the answer (asked for as YAML) is in *ret (http_result_done() it). < 0 only when it
 * could not be set up, as http_perform(). */
int kube_api_request(const Kubeconfig *kc, const KubeRequest *req, HttpResult *ret);

/* Did an answer arrive at all (any HTTP status)? */
bool kube_api_answered(const HttpResult *res);

/* The answer's body as a YAML document (JSON reads the same): 0, -EFBIG when it was cut short,
 * -EBADMSG, -ENOMEM. yaml_document_delete() it. */
int kube_api_document(const HttpResult *res, yaml_document_t *ret);

/* What an answer says in words: the transport's error, or the HTTP status with the Status object's
 * message when it has one ("HTTP 429: Cannot evict pod ..."). malloc'd; NULL on OOM. */
char *kube_api_describe(const HttpResult *res);

/* Who a node-level call acts as: the credentials and the node's name. */
typedef struct KubeIdentity {
        Kubeconfig *kc;
        char *node;
        const char *node_source; /* "--node-name", "client certificate", "hostname" */
        bool may_delete;         /* admin's or the operator's credentials, not the kubelet's own */
} KubeIdentity;

/* kubeconfig (the operator's --kubeconfig, a path on the running system) or the node's administrator
 * kubeconfig beneath root_fd (admin.conf, k3s.yaml, rke2.yaml); with kubelet_fallback and neither, the kubelet's
 * kubelet.conf. The node's name: node_name, else the kubelet's certificate's, else the host name (node-name.h: on_node,
 * the running system's; beneath --root, the tree's /etc/hostname, -ENXIO without one). -ENOENT when there are no
 * credentials; -EINVAL for a name that is no node name. */
int kube_identity_open(int root_fd, bool on_node, const char *kubeconfig, const char *node_name, bool kubelet_fallback,
                       KubeIdentity *ret, char **reterr);
void kube_identity_done(KubeIdentity *id);
