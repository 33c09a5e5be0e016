/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which installer built this node, which runtime, CNI, kube-proxy mode and etcd it has: read from the
 * tree beneath a root fd (so it works under --root and in a rescue shell), each answer with the
 * evidence it came from. */
#pragma once

#include <stdbool.h>

#include "agent/base/output.h"
#include "agent/config/installers.h"

/* One detected property: a value (NULL when unknown), the evidence ("PATH: what it says"), and
 * whether the evidence disagreed (then value is NULL and evidence lists each side). */
typedef struct Finding {
        char *value;
        char **evidence;
        bool ambiguous;
} Finding;

typedef struct Detection {
        Installer installer; /* INSTALLER_NONE when undetected or ambiguous */
        char **installer_evidence;
        char **installer_candidates; /* every installer with evidence of its own, when ambiguous */
        bool installer_ambiguous;
        Finding runtime;          /* "containerd", "crio", "docker"; k3s/rke2 embed containerd */
        char *runtime_endpoint;   /* unix:///... as kubelet is configured, when said */
        bool docker_cohosted;     /* Docker is installed but is not kubelet's runtime */
        Finding cni;              /* value: the plugin types, comma separated, of the first config libcni
                                   * loads; without one, the CNI whose own state is on the node */
        char *cni_config;         /* node path of that first config; NULL when decided by state */
        char *cni_loaded;         /* node path of the config the runtime loads, whose ranges are the
                                   * pods': cni_config, or NULL when the runtime loads none (containerd
                                   * stops at a first file that does not load; CRI-O skips it) */
        Finding kube_proxy_mode;  /* "iptables", "ipvs", "nftables" */
        Finding etcd;             /* "none", "static-pod", "systemd", "external", "embedded" */
        char *etcd_data_dir;      /* a local etcd's data directory when it is not /var/lib/etcd */
        char *kubelet_dir_target; /* node path /var/lib/kubelet resolves to, when it is a symlink */
        char *cluster_server;     /* the API server kubelet talks to (/etc/kubernetes/kubelet.conf) */
        char **home_kubeconfigs;  /* ~/.kube files of every home naming this cluster (home-kubeconfigs.h) */
        /* Each installer's data directory that is not its default one (k3s's and rke2's, configured
         * elsewhere or the default a symlink: rancher-datadir.h), as it resolves beneath the root;
         * data_dir_link the spelled directory when it is itself a symlink to it. NULL: the default. */
        char *data_dir[_INSTALLER_MAX];
        char *data_dir_link[_INSTALLER_MAX];
        char *data_dir_refused; /* a configured data directory no line can carry, and why: refused */
} Detection;

/* Look at the tree beneath root_fd. live: the tree is the running system's "/", so /proc and /sys
 * may add evidence (kube-proxy's IPVS state). Never fails for missing or unreadable files: those are
 * evidence too. -ENOMEM only. */
int detect_node(int root_fd, bool live, Detection *ret);
void detection_done(Detection *d);
/* The installer alone, as detect_node() finds it (INSTALLER_NONE when none or more than one); -ENOMEM. */
int detect_node_installer(int root_fd, Installer *ret);

/* The node paths where kubelet projects kube-proxy's ConfigMap (config.conf) into each pod's volume
 * beneath root_fd: kubeadm's and kubespray's kube-proxy configuration on the node's disk. Whether a
 * path exists is the reader's to find. NULL when there is no pod; -ENOMEM. */
int detect_kube_proxy_configmaps(int root_fd, char ***ret);

/* Does a containerd shim's command line (NUL-separated, as /proc/PID/cmdline) serve the k8s.io
 * namespace, the one the CRI plugin (and so kubelet) uses? Docker's shims serve "moby". */
bool detect_shim_cmdline_is_kubernetes(const char *cmdline, size_t size);

/* The "detection" member of the report, and the text block plan shows. profile: the profile in use
 * and why (NULL when a manifest was given instead). */
void detection_emit(Emitter *e, const Detection *d, const char *profile, const char *profile_why);
