/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What each installer (kubeadm, kubespray, kubekey, k3s, rke2) makes and where: one static const row
 * per installer, read by every detector, profile line, backup source and verdict. No other file of
 * agent/ spells an installer's path (tests/integration/test-tables.sh). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum Installer {
        INSTALLER_NONE,
        INSTALLER_KUBEADM,
        INSTALLER_KUBESPRAY,
        INSTALLER_KUBEKEY,
        INSTALLER_K3S,
        INSTALLER_RKE2,
        _INSTALLER_MAX,
        _INSTALLER_INVALID = -1,
} Installer;

/* kubeadm's files, named here once for the readers that read each as what it is (kubespray and kubekey
 * drive kubeadm, so they are on their nodes too). kubernetes cmd/kubeadm/app/constants/constants.go:
 * KubernetesDir, ManifestsSubDirName, KubeletKubeConfigFileName, AdminKubeConfigFileName, ... */
#define KUBEADM_DIR "/etc/kubernetes"
#define KUBEADM_MANIFESTS KUBEADM_DIR "/manifests"
#define KUBEADM_PKI KUBEADM_DIR "/pki"
#define KUBEADM_ETCD_MANIFEST KUBEADM_MANIFESTS "/etcd.yaml"
#define KUBEADM_APISERVER_MANIFEST KUBEADM_MANIFESTS "/kube-apiserver.yaml"
#define KUBEADM_CONTROLLER_MANAGER_MANIFEST KUBEADM_MANIFESTS "/kube-controller-manager.yaml"
#define KUBEADM_KUBELET_CONF KUBEADM_DIR "/kubelet.conf"
#define KUBEADM_BOOTSTRAP_KUBELET_CONF KUBEADM_DIR "/bootstrap-kubelet.conf"
#define KUBEADM_ADMIN_CONF KUBEADM_DIR "/admin.conf"
#define KUBEADM_CA_CRT KUBEADM_PKI "/ca.crt"
/* Not kubeadm's own file: kubespray and kubekey write their ClusterConfiguration here (kubeadm.yaml
 * is the name the kubeadm docs use). */
#define KUBEADM_CONFIG KUBEADM_DIR "/kubeadm-config.yaml"
#define KUBEADM_CONFIG_ALT KUBEADM_DIR "/kubeadm.yaml"
#define KUBEADM_ETCD_DATA_DIR "/var/lib/etcd"
/* kubeadm's etcd client certificates (certs/certlist.go: KubeadmCertEtcdAPIClient, EtcdHealthcheck). */
#define KUBEADM_ETCD_CLIENT_CRT KUBEADM_PKI "/apiserver-etcd-client.crt"
#define KUBEADM_ETCD_CLIENT_KEY KUBEADM_PKI "/apiserver-etcd-client.key"
#define KUBEADM_ETCD_HEALTHCHECK_CRT KUBEADM_PKI "/etcd/healthcheck-client.crt"
#define KUBEADM_ETCD_HEALTHCHECK_KEY KUBEADM_PKI "/etcd/healthcheck-client.key"
/* kubelet's configuration file as kubeadm writes it (app/constants: KubeletConfigurationFileName in
 * KubeletRunDirectory). */
#define KUBELET_CONFIG "/var/lib/kubelet/config.yaml"
/* kubeadm init/join write kubelet's flags; kubespray writes its own environment file and join
 * configuration instead (roles/kubernetes/node/templates/kubelet.env.v1beta1.j2, kubeadm-client.conf). */
#define KUBEADM_FLAGS_ENV "/var/lib/kubelet/kubeadm-flags.env"
#define KUBESPRAY_KUBELET_ENV KUBEADM_DIR "/kubelet.env"
#define KUBESPRAY_KUBELET_CONFIG KUBEADM_DIR "/kubelet-config.yaml"
#define KUBESPRAY_KUBEADM_CLIENT KUBEADM_DIR "/kubeadm-client.conf"
/* etcd as a systemd unit with its environment file: kubespray roles/etcd/templates/etcd.env.j2 and
 * kubekey's etcd.env template both write it. */
#define SYSTEMD_ETCD_ENV "/etc/etcd.env"

/* k3s's and rke2's configuration directories, config files and the kubeconfigs they write (k3s
 * pkg/cli/cmds: DefaultConfig /etc/rancher/k3s/config.yaml, write-kubeconfig /etc/rancher/k3s/k3s.yaml;
 * rke2 the same under /etc/rancher/rke2). Their rows below use them; readers that parse the config
 * file itself (runtime endpoint, kube-proxy mode) name it through them. */
#define K3S_ETC "/etc/rancher/k3s"
#define K3S_CONFIG K3S_ETC "/config.yaml"
#define K3S_KUBECONFIG K3S_ETC "/k3s.yaml"
#define RKE2_ETC "/etc/rancher/rke2"
#define RKE2_CONFIG RKE2_ETC "/config.yaml"
#define RKE2_KUBECONFIG RKE2_ETC "/rke2.yaml"

/* A file or directory that tells which installer set the node up: only it writes one. */
typedef struct InstallerMark {
        const char *path;
        const char *what;
} InstallerMark;

/* A key that has no other copy once removed. A certificate is irreplaceable only with its key beside
 * it (key set): a worker's public ca.crt is handed out by every control plane. */
typedef struct InstallerKey {
        const char *path;
        const char *key; /* NULL: path is irreplaceable by itself */
} InstallerKey;

/* Where a program keeps its state when it has a data directory of its own (k3s, rke2): the default,
 * and every place its own binary reads another one from (rancher-datadir.h reads them, in k3s's
 * precedence). Units are read with their drop-ins (systemctl edit). */
typedef struct InstallerDataDir {
        const char *dir;            /* the default; NULL: no data directory of its own */
        const char *env_key;        /* K3S_DATA_DIR */
        const char *config_env_key; /* K3S_CONFIG_FILE */
        const char *config;         /* the config file; its .d drop-ins beside it */
        const char *units[9];       /* the units its install writes, each with its drop-ins */
        const char *env_files[11];  /* the environment files those units read */
} InstallerDataDir;

/* The kinds a path in a row may be, for "where" answers: a path without a leading '/' is beneath the
 * installer's data directory (data.dir, or the one detection found). */
#define INSTALLER_LIST_MAX 24

typedef struct InstallerInfo {
        Installer id;
        const char *name;    /* its name and its built-in profile's */
        const char *program; /* the program whose data directory data.dir is, or NULL */
        const InstallerMark marks[12];
        InstallerDataDir data;
        /* What it creates beneath its data directory: a moved data directory (data-dir: /data) may be
         * shared, and only these go, never the directory itself. */
        const char *entries[8];
        /* Datastores that hold a whole cluster: copied into the backup (SQLite through its online
         * backup API), else kept. */
        const char *datastores[2];
        /* Snapshot and backup directories it writes: protected in place (the profiles' protect lines;
         * the unit test checks they agree). */
        const char *snapshot_dirs[3];
        /* Its own etcd's evidence: a data directory (embedded) or a file that runs it. */
        const char *etcd[2];
        const char *etcd_kind;
        const char *etcd_what;
        /* The CNI configuration directories it makes its runtime read, beside /etc/cni/net.d. */
        const char *cni_conf_dirs[2];
        /* Its binary, and the links in PATH its install makes to it, which its own uninstall removes
         * again: the rejoin verdict does not count them as the run's doing. */
        const char *binary;
        const char *uninstall_links[4];
        /* What the backup saves, what has no other copy, and the encryption-at-rest configurations
         * (both saved and irreplaceable: the datastore cannot be read without them). */
        const char *backup[INSTALLER_LIST_MAX];
        const InstallerKey irreplaceable[INSTALLER_LIST_MAX];
        const char *encryption[2];
} InstallerInfo;

/* The row of installer i; NULL for NONE and out of range. */
const InstallerInfo *installer_info(Installer i);
/* The row whose program (k3s, rke2) is name, or NULL. */
const InstallerInfo *installer_info_by_program(const char *name);

#define INSTALLER_FOREACH(var) \
        for (const InstallerInfo *var = installer_info(INSTALLER_KUBEADM); var; var = installer_info(var->id + 1))

/* Each entry of a NULL-terminated fixed list of a row (fixed arrays end at their first NULL). */
#define INSTALLER_LIST_FOREACH(var, list) \
        for (const char *const *var = (list); var < (list) + ELEMENTSOF(list) && *var; var++)

const char *installer_to_string(Installer i);
Installer installer_from_string(const char *s);

/* A row's path as a node path: one without a leading '/' is joined to data_dir (the data directory
 * found; NULL: the row's default). malloc'd; NULL on ENOMEM or when the row has no data directory. */
char *installer_path(const InstallerInfo *info, const char *data_dir, const char *path);

/* Is path (a node path beneath root_fd) a link installer i's install made to its binary, which its own
 * uninstall removes again (k3s's /usr/local/bin/crictl -> k3s)? A file of that name that is no such
 * link (a cri-tools crictl, which install.sh leaves alone) is not. */
bool installer_uninstall_removes(int root_fd, Installer i, const char *path);
