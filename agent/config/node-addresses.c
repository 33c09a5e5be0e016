/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The node's own addresses as its configuration names them: kubelet's --node-ip, the API server's advertise address. */

/* The network phase never deletes an address the node is known by, whatever a manifest says: a
 * kube-vip manifest whose "address" is the node IP would otherwise take the node off the network.
 * Each file is read as what it is (env files as systemd reads EnvironmentFile=, their values as
 * argument vectors; static pods and kubeadm's configuration as YAML); a file that does not parse
 * names no address. */

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "agent/config/installers.h"
#include "agent/config/envfile.h"
#include "agent/config/etcd-flags.h"
#include "agent/config/yaml-util.h"
#include "agent/os/fileio.h"
#include "agent/config/node-addresses.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define NODE_FILE_MAX (256U * 1024U)
#define APISERVER_POD KUBEADM_APISERVER_MANIFEST

static int add_address(NodeAddresses *l, const char *text, const char *what, const char *path) {
        NodeAddress a = {};
        NodeAddress *v;

        a.family = strchr(text, ':') ? AF_INET6 : AF_INET;
        if (inet_pton(a.family, text, a.bytes) != 1)
                return 0;
        a.source = strprintf("%s (%s)", what, path);
        v = a.source ? reallocarray(l->v, l->n + 1, sizeof *v) : NULL;
        if (!v) {
                free(a.source);
                return -ENOMEM;
        }
        l->v = v;
        l->v[l->n++] = a;
        return 0;
}

/* Each entry of a comma list ("10.0.0.5,fd00::5": kubelet's dual-stack --node-ip). */
static int add_list(NodeAddresses *l, const char *list, const char *what, const char *path) {
        cleanup_free char *copy = strdup(list);
        char *save = NULL;
        int r = 0;

        if (!copy)
                return -ENOMEM;
        for (char *t = strtok_r(copy, ",", &save); t && r >= 0; t = strtok_r(NULL, ",", &save))
                r = add_address(l, t, what, path);
        return r;
}

const char *const node_kubelet_env_files[] = { KUBEADM_FLAGS_ENV, "/etc/default/kubelet", "/etc/sysconfig/kubelet",
                                               KUBESPRAY_KUBELET_ENV, NULL };

/* kubelet's flags from an environment file its unit reads: each KUBELET_*ARGS value split at blanks,
 * as systemd expands an unbraced $VAR in ExecStart=, in the order kubeadm's drop-in names them. */
int node_kubelet_argv(int root_fd, const char *path, char ***ret) {
        static const char *const names[] = { "KUBELET_KUBEADM_ARGS", "KUBELET_EXTRA_ARGS", "KUBELET_ARGS",
                                             "KUBELET_ADDRESS" };
        cleanup_free char *text = NULL;
        cleanup_strv char **pairs = NULL, **argv = NULL;
        size_t size;

        *ret = NULL;
        if (fileio_read_beneath(root_fd, path, NODE_FILE_MAX, &text, &size) < 0 ||
            env_file_parse(text, size, &pairs, NULL) < 0)
                return 0; /* no file, or not an environment file: it names nothing */
        if (strv_extend(&argv, "kubelet") < 0)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                cleanup_strv char **words = NULL;
                const char *v = env_get(pairs, names[i]);

                if (!v)
                        continue;
                if (argv_split_blanks(v, &words) < 0)
                        return -ENOMEM;
                STRV_FOREACH(w, words)
                        if (strv_extend(&argv, *w) < 0)
                                return -ENOMEM;
        }
        *ret = TAKE_PTR(argv);
        return 1;
}

static int read_kubelet_env(int root_fd, const char *path, NodeAddresses *l) {
        cleanup_strv char **argv = NULL;
        const char *ip;
        int r;

        r = node_kubelet_argv(root_fd, path, &argv);
        if (r <= 0)
                return r;
        ip = argv_flag(argv, "node-ip");
        return ip ? add_list(l, ip, "kubelet's --node-ip", path) : 0;
}

/* The API server's command line from its static pod: 1 with it, 0 when there is none or the file is
 * no pod spec. */
static int apiserver_argv(int root_fd, char ***ret) {
        cleanup_free char *text = NULL;
        size_t size;
        int r;

        if (fileio_read_beneath(root_fd, APISERVER_POD, NODE_FILE_MAX, &text, &size) < 0)
                return 0;
        r = pod_container_argv(text, size, "kube-apiserver", ret);
        return r == -ENOMEM ? r : r > 0;
}

/* kubeadm's InitConfiguration / JoinConfiguration (controlPlane.localAPIEndpoint). */
static int kubeadm_advertise(yaml_document_t *doc, const char *path, void *userdata) {
        NodeAddresses *l = userdata;
        yaml_node_t *root = yaml_document_get_root_node(doc);
        yaml_node_t *eps[] = { yaml_map_get(doc, root, "localAPIEndpoint"),
                               yaml_map_get(doc, yaml_map_get(doc, root, "controlPlane"), "localAPIEndpoint") };

        for (size_t i = 0; i < ELEMENTSOF(eps); i++) {
                const char *ip = yaml_scalar_of(yaml_map_get(doc, eps[i], "advertiseAddress"));

                if (ip && add_address(l, ip, "kubeadm's advertiseAddress", path) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Every document of a YAML file, each given to fn; a file that does not parse gives nothing more. */
static int read_yaml(int root_fd, const char *path, void *userdata,
                     int (*fn)(yaml_document_t *, const char *, void *)) {
        cleanup_free char *text = NULL;
        size_t size;
        int r;

        if (fileio_read_beneath(root_fd, path, NODE_FILE_MAX, &text, &size) < 0)
                return 0;
        r = yaml_each_document(text, size, path, fn, userdata, NULL);
        return r == -EBADMSG ? 0 : r;
}

int node_apiserver_flag(int root_fd, const char *flag, char **ret) {
        cleanup_strv char **argv = NULL;
        const char *v;
        int r;

        *ret = NULL;
        r = apiserver_argv(root_fd, &argv);
        if (r <= 0 || !(v = argv_flag(argv, flag)))
                return r < 0 ? r : 0;
        *ret = strdup(v);
        return *ret ? 0 : -ENOMEM;
}

/* --advertise-address of the API server's static pod. */
static int read_apiserver(int root_fd, NodeAddresses *l) {
        cleanup_strv char **argv = NULL;
        const char *ip;
        int r;

        r = apiserver_argv(root_fd, &argv);
        if (r <= 0 || !(ip = argv_flag(argv, "advertise-address")))
                return r < 0 ? r : 0;
        return add_address(l, ip, "the API server's --advertise-address", APISERVER_POD);
}

int node_addresses_read(int root_fd, NodeAddresses *ret) {
        static const char *const kubeadm_files[] = { KUBEADM_CONFIG, KUBEADM_CONFIG_ALT };
        NodeAddresses l = {};
        int r = 0;

        for (size_t i = 0; node_kubelet_env_files[i] && r >= 0; i++)
                r = read_kubelet_env(root_fd, node_kubelet_env_files[i], &l);
        if (r >= 0)
                r = read_apiserver(root_fd, &l);
        for (size_t i = 0; i < ELEMENTSOF(kubeadm_files) && r >= 0; i++)
                r = read_yaml(root_fd, kubeadm_files[i], &l, kubeadm_advertise);
        if (r < 0) {
                node_addresses_done(&l);
                return r;
        }
        *ret = l;
        return 0;
}

void node_addresses_done(NodeAddresses *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i].source);
        free(l->v);
        *l = (NodeAddresses) {};
}

const char *node_addresses_find(const NodeAddresses *l, int family, const uint8_t *addr) {
        for (size_t i = 0; i < l->n; i++)
                if (l->v[i].family == family && memcmp(l->v[i].bytes, addr, family == AF_INET ? 4 : 16) == 0)
                        return l->v[i].source;
        return NULL;
}
