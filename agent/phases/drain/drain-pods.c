/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods bound to a node, classified as kubectl drain's filters do (kubernetes 1.20
 * staging/src/k8s.io/kubectl/pkg/drain/filters.go: skipDeletedFilter, daemonSetFilter,
 * mirrorPodFilter, localStorageFilter, unreplicatedFilter, in that order), and the API calls that move
 * them off (drain.go: GetPodsForDeletion, CheckEvictionSupport, EvictPod; cordon.go). Every answer is
 * read as JSON, as client-go decodes it (case-sensitive member names). */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/base/json.h"
#include "agent/phases/drain/drain-pods.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

#define MIRROR_ANNOTATION "kubernetes.io/config.mirror"

void drain_pod_done(DrainPod *p) {
        free(p->ns);
        free(p->name);
        free(p->uid);
        free(p->owner_kind);
        free(p->owner_name);
        free(p->why);
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
        static const char *const names[_DRAIN_CLASS_MAX] = {
                [DRAIN_EVICT] = "evict",
                [DRAIN_DAEMONSET] = "daemonset",
                [DRAIN_MIRROR] = "mirror",
                [DRAIN_REFUSED] = "refused",
        };
        return c >= 0 && c < _DRAIN_CLASS_MAX ? names[c] : NULL;
}

const char *drain_refusal_to_string(DrainRefusal r) {
        static const char *const names[_DRAIN_REFUSAL_MAX] = {
                [DRAIN_REFUSAL_NONE] = "none",
                [DRAIN_REFUSAL_UNMANAGED] = "unmanaged",
                [DRAIN_REFUSAL_DAEMONSET_GONE] = "unmanaged",
                [DRAIN_REFUSAL_DAEMONSET_LOOKUP] = "daemonset-lookup",
                [DRAIN_REFUSAL_EMPTYDIR] = "emptydir",
        };
        return r >= 0 && r < _DRAIN_REFUSAL_MAX ? names[r] : NULL;
}

char *drain_refusal_describe(const DrainPod *p) {
        switch (p->refusal) {
        case DRAIN_REFUSAL_UNMANAGED:
                return strdup("no controller manages it, nothing would recreate it (--drain-force evicts it)");
        case DRAIN_REFUSAL_DAEMONSET_GONE:
                return strprintf("its DaemonSet %s is gone, nothing would recreate it (--drain-force evicts it)",
                                 strna(p->owner_name));
        case DRAIN_REFUSAL_DAEMONSET_LOOKUP:
                return strprintf("its DaemonSet %s cannot be asked for (%s): kubectl drain refuses so",
                                 strna(p->owner_name), strna(p->why));
        case DRAIN_REFUSAL_EMPTYDIR:
                return strdup("its emptyDir data would be lost (--drain-delete-emptydir-data evicts it)");
        default:
                return strdup("not refused");
        }
}

/* --- Reading a PodList ---------------------------------------------------------------------- */

static const JsonValue *member(const JsonValue *o, const char *key) {
        return json_get(o, key, false);
}

/* metadata.ownerReferences' first entry with controller: true (metav1.GetControllerOf). */
static int controller_of(const JsonValue *meta, DrainPod *p) {
        const JsonValue *refs = member(meta, "ownerReferences");

        for (size_t i = 0; refs && refs->type == JSON_ARRAY && i < refs->n; i++) {
                const JsonValue *ref = refs->items[i];

                if (!json_is_true(member(ref, "controller")))
                        continue;
                p->owner_kind = strdup(json_string_of(member(ref, "kind")) ?: "");
                p->owner_name = strdup(json_string_of(member(ref, "name")) ?: "");
                return p->owner_kind && p->owner_name ? 0 : -ENOMEM;
        }
        return 0;
}

/* A volume whose emptyDir is set (Go leaves the pointer nil for an absent member or null). */
static bool has_emptydir(const JsonValue *spec) {
        const JsonValue *vols = member(spec, "volumes");

        for (size_t i = 0; vols && vols->type == JSON_ARRAY && i < vols->n; i++) {
                const JsonValue *e = member(vols->items[i], "emptyDir");

                if (e && e->type != JSON_NULL)
                        return true;
        }
        return false;
}

static int pod_read(const JsonValue *item, DrainPod *p) {
        const JsonValue *meta = member(item, "metadata"), *del = member(meta, "deletionTimestamp");
        const JsonValue *annotations = member(meta, "annotations");
        const char *phase = json_string_of(member(member(item, "status"), "phase"));
        const char *ns = json_string_of(member(meta, "namespace")), *name = json_string_of(member(meta, "name"));
        const char *uid = json_string_of(member(meta, "uid"));

        if (item->type != JSON_OBJECT || !name || !uid)
                return -EBADMSG;
        p->ns = strdup(ns ?: "default");
        p->name = strdup(name);
        p->uid = strdup(uid);
        if (!p->ns || !p->name || !p->uid)
                return -ENOMEM;
        p->finished = streq_ptr(phase, "Succeeded") || streq_ptr(phase, "Failed");
        p->emptydir = has_emptydir(member(item, "spec"));
        p->mirror = annotations && annotations->type == JSON_OBJECT && member(annotations, MIRROR_ANNOTATION);
        p->deleting = del && del->type != JSON_NULL;
        return controller_of(meta, p);
}

int drain_pods_parse(const char *text, size_t size, DrainPodList *ret) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        const JsonValue *items;
        DrainPodList l = {};
        int r;

        *ret = (DrainPodList) {};
        r = json_parse(text, size, &v);
        if (r < 0)
                return r == -ENOMEM ? r : -EBADMSG;
        items = member(v, "items");
        if (!streq_ptr(json_string_of(member(v, "kind")), "PodList") ||
            (items && items->type != JSON_ARRAY && items->type != JSON_NULL))
                return -EBADMSG;
        l.pods = calloc(items && items->type == JSON_ARRAY && items->n > 0 ? items->n : 1, sizeof *l.pods);
        if (!l.pods)
                return -ENOMEM;
        for (size_t i = 0; items && items->type == JSON_ARRAY && i < items->n; i++) {
                r = pod_read(items->items[i], &l.pods[l.n++]);
                if (r < 0) {
                        drain_pod_list_done(&l);
                        return r;
                }
        }
        *ret = l;
        return 0;
}

/* --- kubectl's filters ------------------------------------------------------------------------ */

static void refuse(DrainPod *p, DrainRefusal why) {
        p->class = DRAIN_REFUSED;
        p->refusal = why;
}

/* daemonSetFilter: 1 when it decided (skipped or refused), 0 when the next filters decide. */
static int daemonset_filter(DrainPod *p, const DrainOptions *o, DrainDaemonSetLookup lookup, void *userdata) {
        cleanup_free char *err = NULL;
        int r;

        if (!streq_ptr(p->owner_kind, "DaemonSet") || p->finished)
                return 0;
        r = lookup(p->ns, p->owner_name, userdata, &err);
        if (r == -ENOMEM)
                return r;
        if (r > 0) {
                p->class = DRAIN_DAEMONSET;
                return 1;
        }
        if (r == 0 && o->force) {
                p->owner_gone = true; /* a warning, and the pod goes on to the other filters */
                return 0;
        }
        if (r == 0)
                refuse(p, DRAIN_REFUSAL_DAEMONSET_GONE);
        else {
                refuse(p, DRAIN_REFUSAL_DAEMONSET_LOOKUP);
                p->why = err ? TAKE_PTR(err) : strdup(strerror(-r));
                if (!p->why)
                        return -ENOMEM;
        }
        return 1;
}

int drain_pod_classify(DrainPod *p, const DrainOptions *o, DrainDaemonSetLookup lookup, void *userdata) {
        int r;

        p->class = DRAIN_EVICT;
        p->refusal = DRAIN_REFUSAL_NONE;
        p->owner_gone = false;
        p->why = mfree(p->why);
        r = daemonset_filter(p, o, lookup, userdata);
        if (r != 0)
                return r < 0 ? r : 0;
        if (p->mirror)
                p->class = DRAIN_MIRROR;
        else if (p->emptydir && !p->finished && !o->delete_emptydir)
                refuse(p, DRAIN_REFUSAL_EMPTYDIR);
        else if (!p->finished && !p->owner_kind && !o->force)
                refuse(p, DRAIN_REFUSAL_UNMANAGED);
        return 0;
}

/* --- Calls ------------------------------------------------------------------------------------ */

/* One call: 1 for a 2xx answer (its object in *ret_json when asked), -ENOENT for NotFound, -EBUSY
 * for 429, -EACCES for 401/403, -EIO for another status (the Status in *ret_json when asked),
 * -EHOSTUNREACH without an answer of the API; the words in *reterr. */
static int call(const Kubeconfig *kc, const KubeRequest *req, const char *what, JsonValue **ret_json, char **reterr) {
        cleanup_free char *why = NULL;
        HttpResult res;
        int r;

        r = kube_api_request(kc, req, &res);
        if (r < 0) {
                r = set_errmsg(reterr, r, "%s: %s", what, res.error[0] ? res.error : strerror(-r));
                http_result_done(&res);
                return r;
        }
        if (!kube_api_answered(&res)) {
                r = set_errmsg(reterr, -EHOSTUNREACH, "%s: the API server %s: %s", what, kc->server,
                               (why = kube_api_describe(&res)) ?: "out of memory");
                http_result_done(&res);
                return r;
        }
        r = res.status >= 200 && res.status < 300    ? 1
            : res.status == 404                      ? -ENOENT
            : res.status == 429                      ? -EBUSY
            : res.status == 401 || res.status == 403 ? -EACCES
                                                     : -EIO;
        if (r < 0)
                r = set_errmsg(reterr, r, "%s: %s (credentials of %s)", what,
                               (why = kube_api_describe(&res)) ?: "out of memory", kc->path);
        if (ret_json && kube_api_json(&res, ret_json) < 0)
                r = set_errmsg(reterr, -ENOMEM, "%s: out of memory", what);
        http_result_done(&res);
        return r;
}

int drain_node_get(const Kubeconfig *kc, const char *node, uint64_t deadline, bool *ret_unschedulable, char **reterr) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        cleanup_free char *path = NULL, *what = strprintf("get Node %s", node);
        int r;

        r = kube_api_path(&path, NULL, "api", "v1", "nodes", node, NULL);
        if (r < 0 || !what)
                return r < 0 ? set_errmsg(reterr, r, "'%s' is no node name", node) : -ENOMEM;
        r = call(kc, &(KubeRequest) { .path = path, .kind = "Node", .api_version = "v1", .deadline_usec = deadline },
                 what, &v, reterr);
        if (r > 0)
                *ret_unschedulable = json_is_true(member(member(v, "spec"), "unschedulable"));
        return r;
}

int drain_node_cordon(const Kubeconfig *kc, const char *node, uint64_t deadline, char **reterr) {
        cleanup_free char *path = NULL, *what = strprintf("cordon Node %s", node);
        int r;

        r = kube_api_path(&path, NULL, "api", "v1", "nodes", node, NULL);
        if (r < 0 || !what)
                return r < 0 ? set_errmsg(reterr, r, "'%s' is no node name", node) : -ENOMEM;
        return call(kc,
                    &(KubeRequest) { .method = "PATCH",
                                     .path = path,
                                     .body = "{\"spec\":{\"unschedulable\":true}}",
                                     .content_type = "application/strategic-merge-patch+json",
                                     .kind = "Node",
                                     .api_version = "v1",
                                     .deadline_usec = deadline },
                    what, NULL, reterr);
}

int drain_pods_list(const Kubeconfig *kc, const char *node, uint64_t deadline, DrainPodList *ret, char **reterr) {
        cleanup_free char *path = NULL, *query = NULL, *escaped = kube_api_escape(node);
        cleanup_free char *what = strprintf("list the pods on %s", node);
        HttpResult res;
        int r;

        *ret = (DrainPodList) {};
        query = escaped ? strprintf("fieldSelector=spec.nodeName%%3D%s", escaped) : NULL;
        if (!query || !what || kube_api_path(&path, query, "api", "v1", "pods", NULL) < 0)
                return -ENOMEM;
        r = kube_api_request(
                kc, &(KubeRequest) { .path = path, .kind = "PodList", .api_version = "v1", .deadline_usec = deadline },
                &res);
        if (r >= 0 && kube_api_answered(&res) && res.status == 200)
                r = drain_pods_parse(res.body ?: "", res.body_size, ret);
        else if (r >= 0) {
                cleanup_free char *why = kube_api_describe(&res);

                r = set_errmsg(reterr, kube_api_answered(&res) ? -EIO : -EHOSTUNREACH, "%s: %s", what,
                               why ?: "out of memory");
        } else
                r = set_errmsg(reterr, r, "%s: %s", what, res.error[0] ? res.error : strerror(-r));
        http_result_done(&res);
        if (r == -EBADMSG)
                return set_errmsg(reterr, r, "%s: the answer is no list of named pods", what);
        return r;
}

int drain_daemonset_exists(const Kubeconfig *kc, const char *ns, const char *name, uint64_t deadline, char **reterr) {
        cleanup_free char *path = NULL, *what = strprintf("get DaemonSet %s/%s", ns, name);
        int r;

        if (!what)
                return -ENOMEM;
        r = kube_api_path(&path, NULL, "apis", "apps", "v1", "namespaces", ns, "daemonsets", name, NULL);
        if (r < 0)
                return r == -ENOMEM ? r : set_errmsg(reterr, r, "%s: not a name the API takes in a path", what);
        r = call(kc,
                 &(KubeRequest) {
                         .path = path, .kind = "DaemonSet", .api_version = "apps/v1", .deadline_usec = deadline },
                 what, NULL, reterr);
        if (r == -ENOENT && reterr)
                *reterr = mfree(*reterr);
        return r == -ENOENT ? 0 : r;
}

/* /apis/policy's preferred version: what kubectl 1.20 took for the Eviction API. */
static int policy_preferred(const Kubeconfig *kc, uint64_t deadline, char **ret, char **reterr) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        const char *gv;
        int r;

        r = call(kc, &(KubeRequest) { .path = "/apis/policy", .kind = "APIGroup", .deadline_usec = deadline },
                 "ask for the policy API group", &v, reterr);
        if (r < 0)
                return r;
        gv = json_string_of(member(member(v, "preferredVersion"), "groupVersion"));
        if (!gv || !startswith(gv, "policy/"))
                return set_errmsg(reterr, -EOPNOTSUPP, "the policy API group names no preferred version");
        *ret = strdup(gv);
        return *ret ? 0 : -ENOMEM;
}

int drain_eviction_version(const Kubeconfig *kc, uint64_t deadline, char **ret, char **reterr) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        const JsonValue *l;
        int r;

        r = call(kc, &(KubeRequest) { .path = "/api/v1", .kind = "APIResourceList", .deadline_usec = deadline },
                 "ask for the core API's resources (the Eviction API)", &v, reterr);
        if (r < 0)
                return r;
        l = member(v, "resources");
        for (size_t i = 0; l && l->type == JSON_ARRAY && i < l->n; i++) {
                const JsonValue *e = l->items[i];
                const char *g = json_string_of(member(e, "group")), *ver = json_string_of(member(e, "version"));

                if (!streq_ptr(json_string_of(member(e, "name")), "pods/eviction") ||
                    !streq_ptr(json_string_of(member(e, "kind")), "Eviction"))
                        continue;
                if (!g || !ver)
                        return policy_preferred(kc, deadline, ret, reterr);
                *ret = strprintf("%s/%s", g, ver);
                return *ret ? 0 : -ENOMEM;
        }
        return set_errmsg(reterr, -EOPNOTSUPP, "the API server has no pods/eviction subresource: no Eviction API");
}

/* A Status whose details.causes name NamespaceTerminating (corev1.NamespaceTerminatingCause). */
static bool namespace_terminating(const JsonValue *status) {
        const JsonValue *causes = member(member(status, "details"), "causes");

        for (size_t i = 0; causes && causes->type == JSON_ARRAY && i < causes->n; i++)
                if (streq_ptr(json_string_of(member(causes->items[i], "type")), "NamespaceTerminating"))
                        return true;
        return false;
}

static char *eviction_body(const char *version, const DrainPod *p) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        fputs("{\"apiVersion\":", f);
        json_write_string(f, version);
        fputs(",\"kind\":\"Eviction\",\"metadata\":{\"name\":", f);
        json_write_string(f, p->name);
        fputs(",\"namespace\":", f);
        json_write_string(f, p->ns);
        fputs("},\"deleteOptions\":{}}", f);
        if (fclose(f) != 0)
                return mfree(buf);
        return buf;
}

int drain_pod_evict(const Kubeconfig *kc, const char *version, const DrainPod *p, uint64_t deadline, char **reterr) {
        CLEANUP(json_freep) JsonValue *status = NULL;
        cleanup_free char *path = NULL, *what = strprintf("evict %s/%s", p->ns, p->name);
        cleanup_free char *body = eviction_body(version, p);
        int r;

        if (!what || !body)
                return -ENOMEM;
        r = kube_api_path(&path, NULL, "api", "v1", "namespaces", p->ns, "pods", p->name, "eviction", NULL);
        if (r < 0)
                return r == -ENOMEM ? r : set_errmsg(reterr, r, "%s: not a name the API takes in a path", what);
        r = call(kc,
                 &(KubeRequest) { .method = "POST",
                                  .path = path,
                                  .body = body,
                                  .kind = "Eviction",
                                  .api_version = version,
                                  .deadline_usec = deadline },
                 what, &status, reterr);
        if (r == -ENOENT)
                return 0;
        if (r == -EACCES && namespace_terminating(status))
                return -EAGAIN;
        return r;
}
