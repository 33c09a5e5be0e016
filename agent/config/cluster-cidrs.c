/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cluster's pod and service ranges from the node's configuration files, each parsed as what it is
 * (YAML for the manifests and kubeadm's and kubelet's configurations, JSON for the CNI configuration):
 * what the conntrack flush and the rejoin check look for. */

#include <stdio.h>
#include <stdlib.h>
#include <yaml.h>

#include "agent/base/json.h"
#include "agent/config/installers.h"
#include "agent/config/detect.h"
#include "agent/config/envfile.h"
#include "agent/config/yaml-util.h"
#include "agent/os/fileio.h"
#include "agent/config/cluster-cidrs.h"
#include "agent/config/node-addresses.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define CONFIG_MAX (4U << 20)

typedef struct Reader {
        ClusterCidrs *out;
        const char *path;
        yaml_document_t *doc;
} Reader;

void cluster_cidrs_done(ClusterCidrs *c) {
        for (size_t i = 0; i < c->n; i++) {
                free(c->items[i].cidr);
                free(c->items[i].source);
        }
        free(c->items);
        *c = (ClusterCidrs) {};
}

const char *cidr_kind_to_string(CidrKind k) {
        return k == CIDR_POD ? "pod" : "service";
}

static int add_one(Reader *rd, CidrKind kind, const char *cidr, size_t len, const char *what) {
        cleanup_free char *c = strndup(cidr, len), *src = NULL;
        ClusterCidrs *o = rd->out;
        ClusterCidr *n;

        if (!c)
                return -ENOMEM;
        if (isempty(c))
                return 0;
        for (size_t i = 0; i < o->n; i++)
                if (streq(o->items[i].cidr, c))
                        return 0;
        src = strprintf("%s: %s", rd->path, what);
        n = reallocarray(o->items, o->n + 1, sizeof *n);
        if (!src || !n)
                return -ENOMEM;
        o->items = n;
        o->items[o->n++] = (ClusterCidr) { .kind = kind, .cidr = TAKE_PTR(c), .source = TAKE_PTR(src) };
        return 0;
}

/* A comma-separated list (dual stack: "10.244.0.0/16,fd00:10:244::/56"). */
static int add_list(Reader *rd, CidrKind kind, const char *list, const char *what) {
        int r = 0;

        for (const char *p = list; p && *p && r >= 0;) {
                size_t n = strcspn(p, ",");

                r = add_one(rd, kind, p, n, what);
                p += n;
                p += strspn(p, ",");
        }
        return r;
}

/* ---- YAML documents ---- */

typedef int (*DocFn)(Reader *rd, yaml_node_t *root);

typedef struct DocCall {
        ClusterCidrs *out;
        DocFn fn;
} DocCall;

static int doc_call(yaml_document_t *doc, const char *path, void *userdata) {
        DocCall *c = userdata;
        int r = c->fn(&(Reader) { .out = c->out, .path = path, .doc = doc }, yaml_document_get_root_node(doc));

        return r < 0 ? r : 0;
}

/* Parse every document of the file beneath the root and pass each root node to fn. A file that is no
 * YAML (or without libyaml, none) says nothing more: what came before stands. */
static int read_yaml(int root_fd, const char *path, ClusterCidrs *out, DocFn fn) {
        cleanup_free char *text = NULL;
        size_t size;
        int r;

        if (fileio_read_beneath(root_fd, path, CONFIG_MAX, &text, &size) < 0)
                return 0;
        r = yaml_each_document(text, size, path, doc_call, &(DocCall) { out, fn }, NULL);
        return r == -EBADMSG || r == -ELIBACC ? 0 : r;
}

static int flag_value(Reader *rd, const char *arg) {
        static const struct {
                const char *flag;
                CidrKind kind;
        } flags[] = {
                { "--cluster-cidr=", CIDR_POD },
                { "--service-cluster-ip-range=", CIDR_SERVICE },
        };

        for (size_t i = 0; arg && i < ELEMENTSOF(flags); i++)
                if (startswith(arg, flags[i].flag)) {
                        char what[64];

                        snprintf(what, sizeof what, "%.*s", (int) strlen(flags[i].flag) - 1, flags[i].flag);
                        return add_list(rd, flags[i].kind, arg + strlen(flags[i].flag), what);
                }
        return 0;
}

/* spec.containers[].command[] and .args[] of a static pod. */
static int static_pod(Reader *rd, yaml_node_t *root) {
        yaml_node_t *cs = yaml_map_get(rd->doc, yaml_map_get(rd->doc, root, "spec"), "containers");
        int r = 0;

        if (!cs || cs->type != YAML_SEQUENCE_NODE)
                return 0;
        for (yaml_node_item_t *c = cs->data.sequence.items.start; c < cs->data.sequence.items.top; c++)
                for (int k = 0; k < 2; k++) {
                        yaml_node_t *l =
                                yaml_map_get(rd->doc, yaml_document_get_node(rd->doc, *c), k == 0 ? "command" : "args");

                        if (!l || l->type != YAML_SEQUENCE_NODE)
                                continue;
                        for (yaml_node_item_t *a = l->data.sequence.items.start;
                             a < l->data.sequence.items.top && r >= 0; a++)
                                r = flag_value(rd, yaml_scalar_of(yaml_document_get_node(rd->doc, *a)));
                }
        return r;
}

static int kubeadm_config(Reader *rd, yaml_node_t *root) {
        yaml_node_t *net = yaml_map_get(rd->doc, root, "networking");
        const char *kind = yaml_scalar_of(yaml_map_get(rd->doc, root, "kind"));
        int r;

        if (!kind || !streq(kind, "ClusterConfiguration"))
                return 0;
        r = add_list(rd, CIDR_POD, yaml_scalar_of(yaml_map_get(rd->doc, net, "podSubnet")), "networking.podSubnet");
        if (r >= 0)
                r = add_list(rd, CIDR_SERVICE, yaml_scalar_of(yaml_map_get(rd->doc, net, "serviceSubnet")),
                             "networking.serviceSubnet");
        return r;
}

static int kubelet_config(Reader *rd, yaml_node_t *root) {
        yaml_node_t *dns = yaml_map_get(rd->doc, root, "clusterDNS");
        int r;

        r = add_list(rd, CIDR_POD, yaml_scalar_of(yaml_map_get(rd->doc, root, "podCIDR")), "podCIDR");
        if (r < 0 || !dns || dns->type != YAML_SEQUENCE_NODE)
                return r;
        for (yaml_node_item_t *a = dns->data.sequence.items.start; a < dns->data.sequence.items.top && r >= 0; a++)
                r = add_list(rd, CIDR_SERVICE, yaml_scalar_of(yaml_document_get_node(rd->doc, *a)), "clusterDNS");
        return r;
}

/* ---- the CNI configuration (JSON) ---- */

/* Every "subnet" beneath an "ipam" object, at any depth (host-local's subnet and ranges[][]). */
static int ipam_walk(Reader *rd, const JsonValue *v, bool in_ipam, unsigned depth) {
        int r = 0;

        if (!v || depth > 16 || (v->type != JSON_ARRAY && v->type != JSON_OBJECT))
                return 0;
        for (size_t i = 0; i < v->n && r >= 0; i++) {
                const JsonValue *m = v->items[i];
                bool named = v->type == JSON_OBJECT && strlen(m->key) == m->key_len;

                if (named && in_ipam && streq(m->key, "subnet") && json_string_of(m))
                        r = add_list(rd, CIDR_POD, json_string_of(m), "ipam subnet");
                else
                        r = ipam_walk(rd, m, in_ipam || (named && streq(m->key, "ipam")), depth + 1);
        }
        return r;
}

/* The configuration file the runtime loads: JSON, as libcni reads it (a file that is none says nothing). */
static int read_cni_config(int root_fd, const char *path, ClusterCidrs *out) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        cleanup_free char *text = NULL;
        size_t size;
        int r;

        if (fileio_read_beneath(root_fd, path, CONFIG_MAX, &text, &size) < 0)
                return 0;
        r = json_parse(text, size, &v);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        return ipam_walk(&(Reader) { .out = out, .path = path }, v, false, 0);
}

/* kube-proxy's own configuration: KubeProxyConfiguration's clusterCIDR ("" when kube-proxy is told
 * none), the range it treats as the pods'. */
static int kube_proxy_config(Reader *rd, yaml_node_t *root) {
        const char *kind = yaml_scalar_of(yaml_map_get(rd->doc, root, "kind"));

        if (!kind || !streq(kind, "KubeProxyConfiguration"))
                return 0;
        return add_list(rd, CIDR_POD, yaml_scalar_of(yaml_map_get(rd->doc, root, "clusterCIDR")), "clusterCIDR");
}

/* The ConfigMap kubeadm (and kubespray) give kube-proxy, as kubelet projects it into its pod's
 * volume: the one copy of kube-proxy's configuration on the node's disk. */
static int kube_proxy_pods(int root_fd, ClusterCidrs *out) {
        cleanup_strv char **paths = NULL;
        int r;

        r = detect_kube_proxy_configmaps(root_fd, &paths);
        STRV_FOREACH(p, paths)
                if (r >= 0)
                        r = read_yaml(root_fd, *p, out, kube_proxy_config);
        return r;
}

/* kubelet's --pod-cidr flag, from the environment files its units read (kubeadm-flags.env, ...). */
static int kubelet_flags(int root_fd, ClusterCidrs *out) {
        int r = 0;

        for (size_t i = 0; node_kubelet_env_files[i] && r >= 0; i++) {
                cleanup_strv char **argv = NULL;
                Reader rd = { .out = out, .path = node_kubelet_env_files[i] };

                r = node_kubelet_argv(root_fd, node_kubelet_env_files[i], &argv);
                if (r > 0)
                        r = add_list(&rd, CIDR_POD, argv_flag(argv, "pod-cidr"), "--pod-cidr");
        }
        return r;
}

int cluster_cidrs_read(int root_fd, const char *cni_config_path, ClusterCidrs *ret) {
        static const struct {
                const char *path;
                DocFn fn;
        } files[] = {
                { KUBEADM_CONTROLLER_MANAGER_MANIFEST, static_pod },
                { KUBEADM_APISERVER_MANIFEST, static_pod },
                { KUBEADM_CONFIG, kubeadm_config },
                { KUBELET_CONFIG, kubelet_config },
                { "/var/lib/kube-proxy/config.conf", kube_proxy_config },
                { "/var/lib/kube-proxy/kube-proxy-config.yaml", kube_proxy_config },
        };
        ClusterCidrs c = {};
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(files) && r >= 0; i++)
                r = read_yaml(root_fd, files[i].path, &c, files[i].fn);
        if (r >= 0)
                r = kubelet_flags(root_fd, &c);
        if (r >= 0)
                r = kube_proxy_pods(root_fd, &c);
        /* The one configuration the runtime loads, never every file of its directory: a second
         * file there (a macvlan network naming the host's LAN) is no pod's. */
        if (r >= 0 && cni_config_path)
                r = read_cni_config(root_fd, cni_config_path, &c);
        if (r < 0) {
                cluster_cidrs_done(&c);
                return r;
        }
        *ret = c;
        return 0;
}

int cluster_cidrs_prefixes(const ClusterCidrs *c, CtPrefix **ret, size_t *ret_n) {
        CtPrefix *v = calloc(c->n + 1, sizeof *v);
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < c->n; i++)
                if (ct_prefix_parse(c->items[i].cidr, &v[n]) >= 0)
                        n++;
        *ret = v;
        *ret_n = n;
        return 0;
}
