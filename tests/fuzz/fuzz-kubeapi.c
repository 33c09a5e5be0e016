/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for what the API server answers the drain and forget calls: a PodList read
 * (drain_pods_parse) and classified as kubectl's filters do (drain_pod_classify), any answer as JSON
 * (kube_api_json) with the fields the calls read from it (a Node's spec.unschedulable, the policy group's
 * preferredVersion, the kubeadm-config ConfigMap's ClusterStatus, a Node and a Lease as forget reads them), and a
 * refusal's Status in words (kube_api_describe, an Eviction's 429). Every answer first goes through the check
 * kube_api_request() makes (kube_api_check_answer): one it lets through is a JSON object. Any bytes, not
 * NUL-terminated; never a crash, never a leak. */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/kube/kube-api.h"
#include "agent/phases/drain/drain-pods.h"
#include "agent/forget/forget-kubeadm.h"
#include "agent/forget/forget-node.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int lookup(const char *ns, const char *name, void *userdata, char **reterr) {
        /* Every answer a DaemonSet lookup has: there, gone, refused. */
        return name[0] == 'a' ? 1 : name[0] == 'g' ? 0 : -EACCES;
}

static void pods(const char *text, size_t size) {
        DrainOptions opts[] = { {}, { .force = true }, { .force = true, .delete_emptydir = true } };
        DrainPodList l;
        int r = drain_pods_parse(text, size, &l);

        assert(r == 0 || r == -EBADMSG || r == -ENOMEM);
        assert(r == 0 || (!l.pods && l.n == 0));
        for (size_t i = 0; i < l.n; i++) {
                DrainPod *p = &l.pods[i];
                char *why;

                assert(p->ns && p->name && *p->name && p->uid && *p->uid);
                assert(drain_pod_list_find(&l, p->ns, p->name));
                for (size_t k = 0; k < sizeof opts / sizeof *opts; k++) {
                        r = drain_pod_classify(p, &opts[k], lookup, NULL);
                        assert(r == 0 || r == -ENOMEM);
                        assert(drain_class_to_string(p->class));
                        assert((p->class == DRAIN_REFUSED) == (p->refusal != DRAIN_REFUSAL_NONE));
                        /* Only a running DaemonSet's pod is left as a DaemonSet's. */
                        assert(p->class != DRAIN_DAEMONSET || (p->owner_kind && !p->finished));
                        why = drain_refusal_describe(p);
                        assert(why || r == -ENOMEM);
                        free(why);
                }
        }
        drain_pod_list_done(&l);
}

/* The check every answer gets (kube_api_check_answer): an answer it lets through parses as JSON. */
static void check(const char *buf, size_t size, long status, const char *kind) {
        HttpResult res = { .code = CURLE_OK, .status = status, .body = (char *) buf, .body_size = size };
        KubeRequest req = { .path = "/api/v1/nodes/w1", .kind = kind, .api_version = kind ? "v1" : NULL };
        JsonValue *v = NULL;

        strcpy(res.content_type, "application/json");
        assert(kube_api_check_answer(&req, &res) == 0 || res.code == CURLE_OK);
        if (!kube_api_answered(&res)) {
                assert(res.code == CURLE_WEIRD_SERVER_REPLY && res.error[0]);
                return;
        }
        assert(kube_api_json(&res, &v) == 0);
        assert(v && v->type == JSON_OBJECT);
        json_free(v);
}

/* What kubeadm_endpoint_find() reads of the kubeadm-config ConfigMap, with its ClusterStatus (YAML). */
static void config_map(const JsonValue *cm) {
        const char *status = json_string_of(json_get(json_get(cm, "data", false), "ClusterStatus", false));
        KubeadmEndpoint e = {};
        int r;

        (void) json_string_of(json_get(json_get(cm, "metadata", false), "resourceVersion", false));
        if (!status)
                return;
        r = kubeadm_cluster_status_without(status, "cp1", &e);
        assert(r == 1 || r == 0 || r == -EBADMSG || r == -ENOMEM);
        assert(r == 1 ? !!e.status_without : !e.status_without);
        kubeadm_endpoint_done(&e);
}

/* A Node and a Lease as forget reads them (forget-node.h). */
static void node_and_lease(const JsonValue *v) {
        ForgetNode n = {};
        usec_t renew = 0;
        int r = forget_node_read(v, &n);

        assert(r == 0 || r == -ENOMEM);
        r = forget_lease_read(v, &renew);
        assert(r == 0 ? renew > 0 : r == -ENOENT && renew == 0);
        (void) forget_node_last_seen(&n, renew);
        forget_node_done(&n);
}

/* An answer as drain_node_get(), drain_eviction_version(), kubeadm_endpoint_find() and forget read it. */
static void answer(const HttpResult *res) {
        JsonValue *v = NULL;
        int r = kube_api_json(res, &v);

        assert(r == 0 || r == -EBADMSG || r == -ENOMEM);
        if (r < 0)
                return;
        assert(v);
        (void) json_is_true(json_get(json_get(v, "spec", false), "unschedulable", false));
        (void) json_string_of(json_get(json_get(v, "preferredVersion", false), "groupVersion", false));
        config_map(v);
        node_and_lease(v);
        json_free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* Exactly size bytes, no NUL after them: a parser that reads past the answer is caught. */
        char *buf = malloc(size);
        HttpResult res = { .code = CURLE_OK, .status = 200 };
        char *why;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        res.body = buf;
        res.body_size = size;

        pods(buf, size);
        check(buf, size, 200, "Node");
        check(buf, size, 200, NULL);
        check(buf, size, 404, "Node");
        answer(&res);
        /* A refusal: "HTTP 429: Cannot evict pod as it would violate the pod's disruption budget." */
        res.status = 429;
        why = kube_api_describe(&res);
        assert(why && strncmp(why, "HTTP 429", 8) == 0);
        free(why);
        /* Cut short: no document, the status alone. */
        res.truncated = true;
        assert(kube_api_json(&res, &(JsonValue *) { NULL }) == -EFBIG);
        why = kube_api_describe(&res);
        assert(why && strcmp(why, "HTTP 429") == 0);
        free(why);

        free(buf);
        return 0;
}
