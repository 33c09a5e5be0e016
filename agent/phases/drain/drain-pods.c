/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods bound to a node, classified as kubectl drain --ignore-daemonsets --delete-emptydir-data
 * does (kubernetes staging/src/k8s.io/kubectl/pkg/drain/filters.go: daemonSetFilter,
 * mirrorPodFilter, localStorageFilter, unreplicatedFilter, in that order), and the API calls that move
 * them off (drain.go: GetPodsForDeletion, CheckEvictionSupport, EvictPod). */

#include <errno.h>
#include <string.h>

#include "agent/config/yaml-util.h"
#include "agent/phases/drain/drain-pods.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

#define MIRROR_ANNOTATION "kubernetes.io/config.mirror"

static void drain_pod_done(DrainPod *p) {
        free(p->ns);
        free(p->name);
        free(p->uid);
        free(p->owner);
}

void drain_pod_list_done(DrainPodList *l) {
        for (size_t i = 0; i < l->n; i++)
                drain_pod_done(&l->pods[i]);
        free(l->pods);
        *l = (DrainPodList) {};
}

const DrainPod *drain_pod_list_find(const DrainPodList *l, const char *ns, const char *name) {
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->pods[i].ns, ns) && streq(l->pods[i].name, name))
                        return &l->pods[i];
        return NULL;
}

const char *drain_class_to_string(DrainClass c) {
        static const char *const names[] = {
                [DRAIN_EVICT] = "evict",
                [DRAIN_DAEMONSET] = "daemonset",
                [DRAIN_MIRROR] = "mirror",
                [DRAIN_UNMANAGED] = "unmanaged",
        };
        return names[c];
}

/* The answer to a call whose success is 2xx: 1, 0 for 404, else -errno with the words. */
static int judge(const Kubeconfig *kc, const HttpResult *res, const char *what, char **reterr) {
        cleanup_free char *why = NULL;

        if (kube_api_answered(res) && res->status >= 200 && res->status < 300)
                return 1;
        if (kube_api_answered(res) && res->status == 404)
                return 0;
        why = kube_api_describe(res);
        if (!why)
                return -ENOMEM;
        if (!kube_api_answered(res))
                return set_errmsg(reterr, -EHOSTUNREACH, "%s: the API server %s does not answer: %s", what, kc->server,
                                  why);
        return set_errmsg(reterr,
                          res->status == 401 || res->status == 403 ? -EACCES
                          : res->status == 429                     ? -EBUSY
                                                                   : -EIO,
                          "%s: the API server refused: %s (credentials of %s)", what, why, kc->path);
}

static int call(const Kubeconfig *kc, const KubeRequest *req, const char *what, yaml_document_t *ret_doc,
                char **reterr) {
        HttpResult res;
        int r;

        r = kube_api_request(kc, req, &res);
        if (r < 0) {
                r = set_errmsg(reterr, r, "%s: %s", what, res.error[0] ? res.error : strerror(-r));
                http_result_done(&res);
                return r;
        }
        r = judge(kc, &res, what, reterr);
        if (r > 0 && ret_doc) {
                int k = kube_api_document(&res, ret_doc);

                if (k < 0)
                        r = set_errmsg(reterr, k, "%s: the answer does not parse: %s", what, strerror(-k));
        }
        http_result_done(&res);
        return r;
}

int drain_node_get(const Kubeconfig *kc, const char *node, uint64_t deadline, bool *ret_unschedulable, char **reterr) {
        cleanup_free char *path = strprintf("/api/v1/nodes/%s", node), *what = strprintf("Node %s", node);
        yaml_document_t doc;
        yaml_node_t *spec;
        int r;

        if (!path || !what)
                return -ENOMEM;
        r = call(kc, &(KubeRequest) { .path = path, .deadline_usec = deadline }, what, &doc, reterr);
        if (r <= 0)
                return r == -EIO || r == -EACCES ? -EHOSTUNREACH : r;
        spec = yaml_map_get(&doc, yaml_document_get_root_node(&doc), "spec");
        *ret_unschedulable = streq_ptr(yaml_scalar_of(yaml_map_get(&doc, spec, "unschedulable")), "true");
        yaml_document_delete(&doc);
        return 1;
}

int drain_node_cordon(const Kubeconfig *kc, const char *node, uint64_t deadline, char **reterr) {
        cleanup_free char *path = strprintf("/api/v1/nodes/%s", node), *what = strprintf("cordon Node %s", node);

        if (!path || !what)
                return -ENOMEM;
        return call(kc,
                    &(KubeRequest) { .method = "PATCH",
                                     .path = path,
                                     .body = "{\"spec\":{\"unschedulable\":true}}",
                                     .content_type = "application/strategic-merge-patch+json",
                                     .deadline_usec = deadline },
                    what, NULL, reterr);
}

/* The item of a sequence node, in order. */
#define YAML_SEQ_FOREACH(doc, seq, it)                                                                            \
        for (yaml_node_item_t *it = (seq) && (seq)->type == YAML_SEQUENCE_NODE ? (seq)->data.sequence.items.start \
                                                                               : NULL;                            \
             it && it < (seq)->data.sequence.items.top; it++)

/* metadata.ownerReferences' entry with controller: true (metav1.GetControllerOf). */
static int controller_of(yaml_document_t *doc, yaml_node_t *meta, const char **ret_kind, char **ret_owner) {
        yaml_node_t *refs = yaml_map_get(doc, meta, "ownerReferences");

        YAML_SEQ_FOREACH(doc, refs, it) {
                yaml_node_t *ref = yaml_document_get_node(doc, *it);
                const char *kind = yaml_scalar_of(yaml_map_get(doc, ref, "kind"));

                if (!streq_ptr(yaml_scalar_of(yaml_map_get(doc, ref, "controller")), "true") || !kind)
                        continue;
                *ret_kind = kind;
                *ret_owner = strprintf("%s/%s", kind, yaml_scalar_of(yaml_map_get(doc, ref, "name")) ?: "?");
                return *ret_owner ? 1 : -ENOMEM;
        }
        return 0;
}

static bool has_emptydir(yaml_document_t *doc, yaml_node_t *spec) {
        YAML_SEQ_FOREACH(doc, yaml_map_get(doc, spec, "volumes"), it)
        if (yaml_map_get(doc, yaml_document_get_node(doc, *it), "emptyDir"))
                return true;
        return false;
}

/* filters.go's order: a DaemonSet's pod is skipped unless it has finished; a mirror pod is skipped;
 * emptyDir data goes (--delete-emptydir-data); then a running pod without a controller is refused. */
static int pod_read(yaml_document_t *doc, yaml_node_t *item, DrainPod *p) {
        yaml_node_t *meta = yaml_map_get(doc, item, "metadata");
        const char *phase = yaml_scalar_of(yaml_map_get(doc, yaml_map_get(doc, item, "status"), "phase"));
        const char *kind = NULL;
        int r;

        p->ns = strdup(yaml_scalar_of(yaml_map_get(doc, meta, "namespace")) ?: "default");
        p->name = strdup(yaml_scalar_of(yaml_map_get(doc, meta, "name")) ?: "");
        p->uid = strdup(yaml_scalar_of(yaml_map_get(doc, meta, "uid")) ?: "");
        if (!p->ns || !p->name || !p->uid)
                return -ENOMEM;
        if (!*p->name)
                return -EBADMSG;
        r = controller_of(doc, meta, &kind, &p->owner);
        if (r < 0)
                return r;
        p->finished = streq_ptr(phase, "Succeeded") || streq_ptr(phase, "Failed");
        p->emptydir = has_emptydir(doc, yaml_map_get(doc, item, "spec"));
        if (streq_ptr(kind, "DaemonSet") && !p->finished)
                p->class = DRAIN_DAEMONSET;
        else if (yaml_map_get(doc, yaml_map_get(doc, meta, "annotations"), MIRROR_ANNOTATION))
                p->class = DRAIN_MIRROR;
        else if (!kind && !p->finished)
                p->class = DRAIN_UNMANAGED;
        else
                p->class = DRAIN_EVICT;
        return 0;
}

static int pods_read(yaml_document_t *doc, DrainPodList *l) {
        yaml_node_t *items = yaml_map_get(doc, yaml_document_get_root_node(doc), "items");
        size_t n = 0;
        int r;

        YAML_SEQ_FOREACH(doc, items, it)
        n++;
        l->pods = calloc(n ?: 1, sizeof *l->pods);
        if (!l->pods)
                return -ENOMEM;
        YAML_SEQ_FOREACH(doc, items, it) {
                r = pod_read(doc, yaml_document_get_node(doc, *it), &l->pods[l->n++]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* filters.go's daemonSetFilter asks for the DaemonSet: one that is gone recreates nothing, and its pod
 * is then one no controller manages (refused unless --drain-force). Any other answer keeps it skipped. */
static int check_daemonsets(const Kubeconfig *kc, DrainPodList *l, uint64_t deadline) {
        for (size_t i = 0; i < l->n; i++) {
                DrainPod *p = &l->pods[i];
                cleanup_free char *path = NULL;
                HttpResult res;
                int r;

                if (p->class != DRAIN_DAEMONSET)
                        continue;
                path = strprintf("/apis/apps/v1/namespaces/%s/daemonsets/%s", p->ns, p->owner + strlen("DaemonSet/"));
                if (!path)
                        return -ENOMEM;
                r = kube_api_request(kc, &(KubeRequest) { .path = path, .deadline_usec = deadline }, &res);
                if (r >= 0 && kube_api_answered(&res) && res.status == 404) {
                        p->class = DRAIN_UNMANAGED;
                        p->owner_gone = true;
                }
                http_result_done(&res);
                if (r == -ENOMEM)
                        return r;
        }
        return 0;
}

int drain_pods_parse(const char *text, size_t size, DrainPodList *ret) {
        yaml_document_t doc;
        yaml_parser_t p;
        int r;

        *ret = (DrainPodList) {};
        if (!yaml_parser_initialize(&p))
                return -ENOMEM;
        yaml_parser_set_input_string(&p, (const unsigned char *) text, size);
        r = yaml_parser_load(&p, &doc) ? 0 : -EBADMSG;
        yaml_parser_delete(&p);
        if (r < 0)
                return r;
        r = yaml_document_get_root_node(&doc) ? pods_read(&doc, ret) : -EBADMSG;
        yaml_document_delete(&doc);
        if (r < 0)
                drain_pod_list_done(ret);
        return r;
}

int drain_pods_list(const Kubeconfig *kc, const char *node, uint64_t deadline, DrainPodList *ret, char **reterr) {
        cleanup_free char *path = strprintf("/api/v1/pods?fieldSelector=spec.nodeName%%3D%s", node);
        cleanup_free char *what = strprintf("list the pods on %s", node);
        HttpResult res;
        int r;

        *ret = (DrainPodList) {};
        if (!path || !what)
                return -ENOMEM;
        r = kube_api_request(kc, &(KubeRequest) { .path = path, .deadline_usec = deadline }, &res);
        if (r < 0)
                r = set_errmsg(reterr, r, "%s: %s", what, res.error[0] ? res.error : strerror(-r));
        else if ((r = judge(kc, &res, what, reterr)) == 0)
                r = set_errmsg(reterr, -EIO, "%s: the API server has no pods resource (HTTP 404)", what);
        else if (r > 0)
                r = res.truncated ? -EFBIG : drain_pods_parse(res.body ?: "", res.body_size, ret);
        http_result_done(&res);
        if (r >= 0)
                r = check_daemonsets(kc, ret, deadline);
        if (r < 0) {
                drain_pod_list_done(ret);
                return set_errmsg(reterr, r, "%s: %s", what,
                                  r == -EBADMSG ? "the answer is no list of named pods" : strerror(-r));
        }
        return 0;
}

int drain_eviction_version(const Kubeconfig *kc, uint64_t deadline, char **ret, char **reterr) {
        const char *what = "ask for the policy API group (the Eviction API)";
        yaml_document_t doc;
        const char *gv;
        int r;

        r = call(kc, &(KubeRequest) { .path = "/apis/policy", .deadline_usec = deadline }, what, &doc, reterr);
        if (r == 0)
                return set_errmsg(reterr, -EOPNOTSUPP, "the API server offers no policy group: no Eviction API");
        if (r < 0)
                return r;
        gv = yaml_scalar_of(yaml_map_get(
                &doc, yaml_map_get(&doc, yaml_document_get_root_node(&doc), "preferredVersion"), "groupVersion"));
        if (!gv || !startswith(gv, "policy/"))
                r = set_errmsg(reterr, -EOPNOTSUPP, "the policy group names no preferred version");
        else
                r = (*ret = strdup(gv)) ? 0 : -ENOMEM;
        yaml_document_delete(&doc);
        return r;
}

int drain_pod_evict(const Kubeconfig *kc, const char *version, const DrainPod *p, uint64_t deadline, char **reterr) {
        cleanup_free char *path = strprintf("/api/v1/namespaces/%s/pods/%s/eviction", p->ns, p->name);
        cleanup_free char *what = strprintf("evict %s/%s", p->ns, p->name);
        cleanup_free char *body = strprintf("{\"apiVersion\":\"%s\",\"kind\":\"Eviction\","
                                            "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"}}",
                                            version, p->name, p->ns);

        if (!path || !what || !body)
                return -ENOMEM;
        return call(kc, &(KubeRequest) { .method = "POST", .path = path, .body = body, .deadline_usec = deadline },
                    what, NULL, reterr);
}
