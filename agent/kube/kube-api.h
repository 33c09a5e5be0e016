/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requests to the Kubernetes API server with a kubeconfig's credentials, and who a node-level call acts as. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/config/installers.h"
#include "agent/base/http.h"
#include "agent/base/json.h"
#include "agent/config/kubeconfig.h"

#define KUBE_ADMIN_CONF KUBEADM_ADMIN_CONF
/* Each call: a server that is down refuses at once, one that hangs costs this much. */
#define KUBE_API_CALL_TIMEOUT_MS 10000ULL
#define KUBE_API_CONNECT_TIMEOUT_MS 3000ULL

typedef struct KubeRequest {
        const char *method;       /* NULL: GET (POST with a body) */
        const char *path;         /* "/api/v1/nodes/NAME" (kube_api_path()): appended to the kubeconfig's server */
        const char *body;         /* JSON, or a patch */
        const char *content_type; /* of the body; NULL: application/json */
        /* What a 2xx answer must be: its kind ("Node", "PodList") and apiVersion ("v1", "apps/v1"); NULL:
         * any (the answer must still name one). To a call other than GET a Status whose status is
         * "Success" answers too (a DELETE, an Eviction). */
        const char *kind;
        const char *api_version;
        size_t response_max;    /* keep this much of the answer; 0: KUBE_API_RESPONSE_MAX */
        uint64_t deadline_usec; /* CLOCK_MONOTONIC; 0: none beyond the call's own timeout */
} KubeRequest;

#define KUBE_API_RESPONSE_MAX (16U << 20)

/* One request; the answer (asked for as JSON) is in *ret (http_result_done() it). < 0 only when it
 * could not be set up, as http_perform(). Every answer is checked before any caller reads it, as
 * client-go decodes one: a 2xx answer must be a JSON object (Content-Type application/json, no member
 * named twice) of req's kind and apiVersion, any other status a v1 Status. One that is not (an HTML
 * page of a dashboard or a default backend at the server's URL, a proxy's error page, a body cut
 * short) is no answer: ret->code is then CURLE_WEIRD_SERVER_REPLY and ret->error says why, so that
 * kube_api_answered() is false and no caller takes it for an object, an empty list or "not found". */
int kube_api_request(const Kubeconfig *kc, const KubeRequest *req, HttpResult *ret);

/* The check kube_api_request() makes of every answer (above), on its own: an answer that is none of the
 * API's becomes no answer (ret->code CURLE_WEIRD_SERVER_REPLY, ret->error saying why). 0, -ENOMEM. */
int kube_api_check_answer(const KubeRequest *req, HttpResult *res);

/* Did an answer of the Kubernetes API arrive at all (any HTTP status, checked as above)? */
bool kube_api_answered(const HttpResult *res);

/* The answer's body as a JSON tree (kube_api_request() has checked it): 0, -EBADMSG, -ENOMEM. */
int kube_api_json(const HttpResult *res, JsonValue **ret);

/* A path of the API from its segments ("api", "v1", "nodes", NAME, ...; NULL ends them): "/api/v1/nodes/NAME".
 * Each segment is refused as client-go's request builder refuses a name (apimachinery's
 * IsValidPathSegmentName: "", ".", "..", or one holding '/' or '%': -EINVAL) and percent-escaped
 * otherwise, so that no name reaches the server as another path or a query ("?watch=1"). query, when
 * not NULL, is appended after '?' as it is: its values go through kube_api_escape(). */
int kube_api_path(char **ret, const char *query, const char *first, ...) _sentinel_;

/* s percent-escaped for a path segment or a query value: everything but RFC 3986's unreserved
 * characters. NULL on OOM. */
char *kube_api_escape(const char *s);

/* What an answer says in words: the transport's error, or the HTTP status with the Status object's
 * message when it has one ("HTTP 429: Cannot evict pod ..."). malloc'd; NULL on OOM. */
char *kube_api_describe(const HttpResult *res);

/* A Node's Ready condition (status.conditions[type=Ready]), as the node lifecycle controller keeps it. */
typedef struct KubeNodeReady {
        char *status;    /* "True", "False", "Unknown"; NULL: the Node has no Ready condition */
        char *reason;    /* "KubeletReady", "NodeStatusUnknown", ...; NULL when none */
        char *since;     /* lastTransitionTime (RFC 3339), NULL when none */
        char *heartbeat; /* lastHeartbeatTime, NULL when none */
} KubeNodeReady;

/* GET the Node and read its Ready condition: 1, -ENOENT no such Node (NotFound), -EHOSTUNREACH no
 * answer of the API, -EACCES or -EIO a refusal; the words in *reterr. */
int kube_api_node_ready(const Kubeconfig *kc, const char *node, uint64_t deadline, KubeNodeReady *ret, char **reterr);
void kube_node_ready_done(KubeNodeReady *r);

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
