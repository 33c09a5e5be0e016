/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kube-proxy's mode (iptables, ipvs, nftables), from its configuration, its pod, k3s/rke2, or the kernel. */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/config/detect.h"
#include "agent/config/detect/detectors.h"
#include "agent/config/detect/finding.h"
#include "agent/config/yaml-util.h"
#include "agent/os/fileio.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

/* kube-proxy's mode: the top-level "mode" of the document whose kind is KubeProxyConfiguration;
 * absent or "" is iptables on Linux. */
static int proxy_mode_from_file(int root_fd, const char *path, Detection *d) {
        YamlFile y;
        int r;

        r = node_read_yaml(root_fd, path, &d->kube_proxy_mode, &y);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        for (size_t i = 0; r >= 0 && i < y.n; i++) {
                yaml_node_t *root = yaml_document_get_root_node(&y.docs[i]);
                const char *mode;

                if (!streq_ptr(yaml_scalar_of(yaml_map_get(&y.docs[i], root, "kind")), "KubeProxyConfiguration"))
                        continue;
                mode = yaml_scalar_of(yaml_map_get(&y.docs[i], root, "mode"));
                mode = isempty(mode) ? "iptables" : mode;
                r = evidence_add(&d->kube_proxy_mode.evidence, path, "KubeProxyConfiguration mode %s", mode);
                if (r >= 0)
                        r = finding_set(&d->kube_proxy_mode, mode);
        }
        yaml_file_done(&y);
        return r;
}

int detect_kube_proxy_configmaps(int root_fd, char ***ret) {
        cleanup_strv char **pods = NULL, **l = NULL;
        int r;

        *ret = NULL;
        r = fileio_list_beneath(root_fd, "/var/lib/kubelet/pods", "*", &pods);
        STRV_FOREACH(p, pods)
                if (r >= 0)
                        r = strv_consume(&l, strprintf("/var/lib/kubelet/pods/%s/volumes/kubernetes.io~configmap/"
                                                       "kube-proxy/config.conf",
                                                       *p));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

/* The ConfigMap kubelet projected into the kube-proxy pod is on disk on every kubeadm-built node. */
static int proxy_mode_from_pods(int root_fd, Detection *d) {
        cleanup_strv char **paths = NULL;
        int r;

        r = detect_kube_proxy_configmaps(root_fd, &paths);
        STRV_FOREACH(p, paths)
                if (r >= 0)
                        r = proxy_mode_from_file(root_fd, *p, d);
        return r;
}

/* k3s's and rke2's kube-proxy-arg: a string or a list of them, "proxy-mode=X" (the last one wins). */
static const char *k3s_proxy_mode(yaml_document_t *doc) {
        yaml_node_t *args = yaml_map_get(doc, yaml_document_get_root_node(doc), "kube-proxy-arg");
        const char *mode = NULL, *a;

        if (args && args->type == YAML_SCALAR_NODE)
                return startswith(strempty(yaml_scalar_of(args)), "proxy-mode=");
        for (yaml_node_item_t *i = args && args->type == YAML_SEQUENCE_NODE ? args->data.sequence.items.start : NULL;
             i && i < args->data.sequence.items.top; i++)
                if ((a = startswith(strempty(yaml_scalar_of(yaml_document_get_node(doc, *i))), "proxy-mode=")))
                        mode = a;
        return mode;
}

static int proxy_mode_from_k3s(int root_fd, const char *path, Detection *d) {
        const char *mode;
        YamlFile y;
        int r;

        r = node_read_yaml(root_fd, path, &d->kube_proxy_mode, &y);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        mode = y.n > 0 ? k3s_proxy_mode(&y.docs[0]) : NULL;
        if (!isempty(mode)) {
                r = evidence_add(&d->kube_proxy_mode.evidence, path, "kube-proxy-arg proxy-mode=%s", mode);
                if (r >= 0)
                        r = finding_set(&d->kube_proxy_mode, mode);
        }
        yaml_file_done(&y);
        return r;
}

/* The running kernel's view, only for the live system: IPVS virtual services, the dummy link. */
static int proxy_mode_live(Detection *d) {
        cleanup_free char *ipvs = NULL;
        size_t size;
        int r = 0;

        if (fileio_read_file("/proc/net/ip_vs", DETECT_FILE_MAX, &ipvs, &size) >= 0 &&
            (strstr(ipvs, "\nTCP") || strstr(ipvs, "\nUDP")))
                r = evidence_add(&d->kube_proxy_mode.evidence, "/proc/net/ip_vs", "%s", "IPVS virtual services exist");
        else if (access("/sys/class/net/kube-ipvs0", F_OK) >= 0)
                r = evidence_add(&d->kube_proxy_mode.evidence, "/sys/class/net/kube-ipvs0", "%s",
                                 "kube-proxy's IPVS dummy link exists");
        else
                return 0;
        return r < 0 ? r : finding_set(&d->kube_proxy_mode, "ipvs");
}

int detect_kube_proxy(int root_fd, bool live, Detection *d) {
        int r;

        r = proxy_mode_from_file(root_fd, KUBEADM_CONFIG, d);
        if (r >= 0)
                r = proxy_mode_from_pods(root_fd, d);
        if (r >= 0)
                r = proxy_mode_from_k3s(root_fd, K3S_CONFIG, d);
        if (r >= 0)
                r = proxy_mode_from_k3s(root_fd, RKE2_CONFIG, d);
        if (r >= 0 && live)
                r = proxy_mode_live(d);
        finding_settle(&d->kube_proxy_mode);
        return r;
}
