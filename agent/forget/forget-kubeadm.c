/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubeadm 1.20 keeps every control plane's API endpoint in the kube-system/kubeadm-config ConfigMap,
 * as a ClusterStatus document under data.ClusterStatus ({apiEndpoints: {NODE: {advertiseAddress,
 * bindPort}}}; kubernetes cmd/kubeadm/app/apis/kubeadm/v1beta2/types.go, written by
 * cmd/kubeadm/app/phases/uploadconfig and removed by kubeadm reset's RemoveAPIEndpoint): a node
 * gone for good keeps its key unless someone removes it. The document is read and written as YAML. */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/base/json.h"
#include "agent/config/yaml-util.h"
#include "agent/forget/forget-kubeadm.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

#define KUBEADM_CONFIG_PATH "/api/v1/namespaces/kube-system/configmaps/kubeadm-config"
#define UPDATE_ATTEMPTS 3
/* kubeadm writes three levels. libyaml's emitter recurses once per level and indents each line by
 * its level, so a ConfigMap's megabyte nested 100000 deep would cost gigabytes, or the stack. */
#define CLUSTER_STATUS_DEPTH_MAX 32U

void kubeadm_endpoint_done(KubeadmEndpoint *e) {
        free(e->address);
        free(e->resource_version);
        free(e->status_without);
        *e = (KubeadmEndpoint) {};
}

/* Take node's pair out of apiEndpoints: 1 and its advertiseAddress, 0 when it has none. */
static int drop_key(yaml_document_t *doc, const char *node, char **ret_address) {
        yaml_node_t *eps = yaml_map_get(doc, yaml_document_get_root_node(doc), "apiEndpoints");

        if (!eps || eps->type != YAML_MAPPING_NODE)
                return 0;
        for (yaml_node_pair_t *p = eps->data.mapping.pairs.start; p < eps->data.mapping.pairs.top; p++) {
                if (!streq_ptr(yaml_scalar_of(yaml_document_get_node(doc, p->key)), node))
                        continue;
                const char *a =
                        yaml_scalar_of(yaml_map_get(doc, yaml_document_get_node(doc, p->value), "advertiseAddress"));

                if (a && !(*ret_address = strdup(a)))
                        return -ENOMEM;
                memmove(p, p + 1, (size_t) (eps->data.mapping.pairs.top - p - 1) * sizeof *p);
                eps->data.mapping.pairs.top--;
                return 1;
        }
        return 0;
}

int kubeadm_cluster_status_without(const char *text, const char *node, KubeadmEndpoint *e) {
        yaml_document_t doc;
        int r;

        r = yaml_load_first(text, strlen(text), "kubeadm's ClusterStatus", &doc, NULL);
        if (r < 0)
                return r;
        r = drop_key(&doc, node, &e->address);
        if (r > 0)
                r = yaml_document_check_depth(&doc, CLUSTER_STATUS_DEPTH_MAX) ?: 1;
        if (r <= 0) {
                yaml_document_delete(&doc);
                e->address = mfree(e->address);
                return r;
        }
        r = yaml_document_emit(&doc, &e->status_without);
        if (r < 0)
                e->address = mfree(e->address);
        return r < 0 ? r : 1;
}

static int read_config_map(const Kubeconfig *kc, uint64_t deadline, JsonValue **ret, char **reterr) {
        cleanup_free char *why = NULL;
        HttpResult res;
        int r;

        r = kube_api_request(kc,
                             &(KubeRequest) { .path = KUBEADM_CONFIG_PATH,
                                              .kind = "ConfigMap",
                                              .api_version = "v1",
                                              .deadline_usec = deadline },
                             &res);
        if (r >= 0 && kube_api_answered(&res) && res.status == 404)
                r = 0;
        else if (r >= 0 && kube_api_answered(&res) && res.status == 200)
                r = kube_api_json(&res, ret) < 0 ? set_errmsg(reterr, -EBADMSG, "kubeadm-config is no JSON") : 1;
        else if (r >= 0)
                r = set_errmsg(reterr, kube_api_answered(&res) ? -EIO : -EHOSTUNREACH, "cannot read kubeadm-config: %s",
                               (why = kube_api_describe(&res)) ?: "out of memory");
        http_result_done(&res);
        return r;
}

int kubeadm_endpoint_find(const Kubeconfig *kc, const char *node, uint64_t deadline, KubeadmEndpoint *ret,
                          char **reterr) {
        CLEANUP(json_freep) JsonValue *cm = NULL;
        const char *status, *rv;
        int r;

        *ret = (KubeadmEndpoint) {};
        r = read_config_map(kc, deadline, &cm, reterr);
        if (r <= 0)
                return r;
        /* The ConfigMap is JSON; the ClusterStatus it carries is YAML text, kubeadm's own. */
        status = json_string_of(json_get(json_get(cm, "data", false), "ClusterStatus", false));
        rv = json_string_of(json_get(json_get(cm, "metadata", false), "resourceVersion", false));
        r = status && rv ? kubeadm_cluster_status_without(status, node, ret) : 0;
        if (r > 0 && !(ret->resource_version = strdup(rv)))
                r = -ENOMEM;
        if (r <= 0)
                kubeadm_endpoint_done(ret);
        if (r == -EBADMSG)
                return set_errmsg(reterr, r,
                                  "kubeadm-config's ClusterStatus does not parse as YAML (or nests deeper than %u)",
                                  CLUSTER_STATUS_DEPTH_MAX);
        return r;
}

/* A merge patch that carries metadata.resourceVersion is applied only to that version (409 else). */
static char *update_body(const KubeadmEndpoint *e) {
        cleanup_free char *status = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&status, &size);

        if (!f)
                return NULL;
        json_write_string(f, e->status_without);
        if (fclose(f) != 0)
                return NULL;
        return strprintf("{\"metadata\":{\"resourceVersion\":\"%s\"},\"data\":{\"ClusterStatus\":%s}}",
                         e->resource_version, status);
}

static int update_once(const Kubeconfig *kc, const KubeadmEndpoint *e, uint64_t deadline, char **reterr) {
        cleanup_free char *body = update_body(e), *why = NULL;
        HttpResult res;
        int r;

        if (!body)
                return -ENOMEM;
        r = kube_api_request(kc,
                             &(KubeRequest) { .method = "PATCH",
                                              .kind = "ConfigMap",
                                              .api_version = "v1",
                                              .path = KUBEADM_CONFIG_PATH,
                                              .body = body,
                                              .content_type = "application/merge-patch+json",
                                              .deadline_usec = deadline },
                             &res);
        if (r >= 0 && kube_api_answered(&res) && res.status == 200)
                r = 1;
        else if (r >= 0 && kube_api_answered(&res) && res.status == 409)
                r = -EAGAIN;
        else if (r >= 0)
                r = set_errmsg(reterr, kube_api_answered(&res) ? -EIO : -EHOSTUNREACH,
                               "cannot update kubeadm-config: %s", (why = kube_api_describe(&res)) ?: "out of memory");
        http_result_done(&res);
        return r;
}

int kubeadm_endpoint_remove(const Kubeconfig *kc, const char *node, uint64_t deadline, char **reterr) {
        int r = -EAGAIN;

        for (unsigned i = 0; i < UPDATE_ATTEMPTS && r == -EAGAIN; i++) {
                KubeadmEndpoint e;

                r = kubeadm_endpoint_find(kc, node, deadline, &e, reterr);
                if (r > 0)
                        r = update_once(kc, &e, deadline, reterr);
                kubeadm_endpoint_done(&e);
        }
        if (r == -EAGAIN)
                return set_errmsg(reterr, -EBUSY, "kubeadm-config changed under each of %d updates (409)",
                                  UPDATE_ATTEMPTS);
        return r;
}
