/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The installers' table: one row per installer, each fact with the installer's own source beside it.
 * Adding an installer is one row here plus its profile text (docs/HACKING.md). */

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/base/path.h"
#include "agent/config/installers.h"
#include "chase.h"
#include "macro.h"
#include "string-util.h"

/* kubeadm: kubernetes/kubernetes cmd/kubeadm/app/constants/constants.go (KubernetesDir, the kubeconfig
 * and PKI file names), cmd/kubeadm/app/cmd/phases/reset/cleanupnode.go, app/phases/kubelet/flags.go
 * (kubeadm-flags.env) @v1.20. kubespray and kubekey drive kubeadm: these files are on their nodes too,
 * and kubeadm is what remains when no other installer's own files are seen. */
static const InstallerInfo kubeadm = {
        .id = INSTALLER_KUBEADM,
        .name = "kubeadm",
        .marks = {
                { KUBEADM_FLAGS_ENV, "kubelet flags written by kubeadm init/join" },
                { "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", "kubeadm's kubelet drop-in" },
                { "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf", "kubeadm's kubelet drop-in" },
                { "/lib/systemd/system/kubelet.service.d/10-kubeadm.conf", "kubeadm's kubelet drop-in" },
                { KUBEADM_KUBELET_CONF, "kubeadm's kubelet kubeconfig" },
        },
        .etcd = { KUBEADM_ETCD_MANIFEST },
        .etcd_kind = "static-pod",
        .etcd_what = "kubeadm's etcd static pod",
        .backup = {
                KUBEADM_PKI, /* pki/etcd too */
                KUBEADM_ADMIN_CONF,
                KUBEADM_DIR "/super-admin.conf",
                KUBEADM_KUBELET_CONF,
                KUBEADM_BOOTSTRAP_KUBELET_CONF,
                KUBEADM_DIR "/controller-manager.conf",
                KUBEADM_DIR "/scheduler.conf",
                KUBEADM_CONFIG,
                KUBEADM_MANIFESTS,
                KUBELET_CONFIG,
                KUBEADM_FLAGS_ENV,
                "/var/lib/kubelet/pki", /* kubelet's client and serving certificates */
        },
        /* The control plane's CAs (a rebuilt control plane reuses them: "kubeadm init phase certs" signs
         * with the ones it finds) and the service-account key pair every token was signed with. */
        .irreplaceable = {
                { KUBEADM_PKI "/ca.key" },
                { KUBEADM_CA_CRT, KUBEADM_PKI "/ca.key" },
                { KUBEADM_PKI "/front-proxy-ca.key" },
                { KUBEADM_PKI "/front-proxy-ca.crt", KUBEADM_PKI "/front-proxy-ca.key" },
                { KUBEADM_PKI "/etcd/ca.key" },
                { KUBEADM_PKI "/etcd/ca.crt", KUBEADM_PKI "/etcd/ca.key" },
                { KUBEADM_PKI "/sa.key" },
                { KUBEADM_PKI "/sa.pub", KUBEADM_PKI "/sa.key" },
        },
};

/* kubespray: kubernetes-sigs/kubespray roles/reset/tasks/main.yml @1734fece (what its reset removes),
 * roles/kubespray_defaults/defaults/main/main.yml (kube_cert_dir /etc/kubernetes/ssl, etcd_cert_dir
 * /etc/ssl/etcd/ssl, etcd_backup_prefix /var/backups), roles/etcd/tasks/backup.yml (etcd-<timestamp>
 * directories), roles/kubernetes/control-plane/tasks/encrypt-at-rest.yml (secrets_encryption.yaml in
 * kube_cert_dir). */
static const InstallerInfo kubespray = {
        .id = INSTALLER_KUBESPRAY,
        .name = "kubespray",
        .marks = {
                { KUBESPRAY_KUBELET_ENV, "kubespray's kubelet environment file" },
                { KUBESPRAY_KUBEADM_CLIENT, "kubespray's kubeadm join configuration" },
                { "/usr/local/bin/kubernetes-scripts", "kubespray's scripts directory" },
                { "/usr/local/bin/etcd-scripts", "kubespray's etcd scripts" },
                { "/etc/systemd/resolved.conf.d/kubespray.conf", "kubespray's host DNS setting" },
                { "/etc/modules-load.d/kubespray-br_netfilter.conf", "kubespray's module list" },
        },
        .snapshot_dirs = { "/var/backups/etcd-*" },
        .etcd = { SYSTEMD_ETCD_ENV },
        .etcd_kind = "systemd",
        .etcd_what = "etcd run by systemd (kubespray, kubekey)",
        .backup = {
                KUBEADM_DIR "/ssl", /* kubespray's PKI directory */
                KUBESPRAY_KUBELET_CONFIG,
                KUBESPRAY_KUBELET_ENV,
                SYSTEMD_ETCD_ENV,
                "/etc/ssl/etcd", /* its etcd PKI (etcd_cert_dir) */
        },
        .irreplaceable = {
                { KUBEADM_DIR "/ssl/ca.key" },
                { KUBEADM_DIR "/ssl/ca.crt", KUBEADM_DIR "/ssl/ca.key" },
                { KUBEADM_DIR "/ssl/front-proxy-ca.key" },
                { KUBEADM_DIR "/ssl/front-proxy-ca.crt", KUBEADM_DIR "/ssl/front-proxy-ca.key" },
                { KUBEADM_DIR "/ssl/sa.key" },
                { KUBEADM_DIR "/ssl/sa.pub", KUBEADM_DIR "/ssl/sa.key" },
                { "/etc/ssl/etcd/ssl/ca-key.pem" },
                { "/etc/ssl/etcd/ssl/ca.pem", "/etc/ssl/etcd/ssl/ca-key.pem" },
        },
        .encryption = { KUBEADM_DIR "/ssl/secrets_encryption.yaml" },
};

/* kubekey: kubesphere/kubekey v3 cmd/kk/pkg/bootstrap/os/tasks.go @2f86acf5 (etcdFiles, clusterFiles),
 * cmd/kk/pkg/etcd/templates (etcd.env, backup-etcd.timer, the backups in /var/backups/kube_etcd). */
static const InstallerInfo kubekey = {
        .id = INSTALLER_KUBEKEY,
        .name = "kubekey",
        .marks = {
                { "/usr/local/bin/kube-scripts", "kubekey v3's scripts directory" },
                { "/etc/systemd/system/backup-etcd.timer", "kubekey v3's etcd backup timer" },
                { "/etc/kubekey", "kubekey's work directory" },
        },
        /* Data that outlives a reinstall is no evidence of the current one: not a mark. */
        .snapshot_dirs = { "/var/backups/kube_etcd" },
        .etcd = { SYSTEMD_ETCD_ENV },
        .etcd_kind = "systemd",
        .etcd_what = "etcd run by systemd (kubespray, kubekey)",
        .backup = { SYSTEMD_ETCD_ENV, "/etc/ssl/etcd" },
        .irreplaceable = {
                { "/etc/ssl/etcd/ssl/ca-key.pem" },
                { "/etc/ssl/etcd/ssl/ca.pem", "/etc/ssl/etcd/ssl/ca-key.pem" },
        },
};

/* The k3s and rke2 rows share their state's layout beneath the data directory: k3s
 * pkg/daemons/control/deps/deps.go @73047b24 (server/tls: the server, client and request-header CAs,
 * service.key, etcd's server and peer CAs; server/cred: passwords, kubeconfigs and
 * encryption-config.json; server/token, which node-token links to: the passphrase the datastore's
 * copy of the CAs is encrypted with, without which a snapshot does not restore). */
#define RANCHER_BACKUP                                                                          \
        "server/tls", "server/token", "server/node-token", "server/agent-token", "server/cred", \
                "server/db/etcd/config", "server/db/etcd/name"
#define RANCHER_IRREPLACEABLE                                                                                          \
        { "server/token" }, { "server/tls/server-ca.crt", "server/tls/server-ca.key" },                                \
                { "server/tls/server-ca.key" }, { "server/tls/client-ca.crt", "server/tls/client-ca.key" },            \
                { "server/tls/client-ca.key" },                                                                        \
                { "server/tls/request-header-ca.crt", "server/tls/request-header-ca.key" },                            \
                { "server/tls/request-header-ca.key" }, { "server/tls/service.key" },                                  \
                { "server/tls/etcd/server-ca.crt", "server/tls/etcd/server-ca.key" },                                  \
                { "server/tls/etcd/server-ca.key" }, { "server/tls/etcd/peer-ca.crt", "server/tls/etcd/peer-ca.key" }, \
        {                                                                                                              \
                "server/tls/etcd/peer-ca.key"                                                                          \
        }

/* k3s: k3s-io/k3s install.sh @0136cf25 (setup_env, create_symlinks: kubectl, crictl and ctr linked to
 * k3s; create_uninstall: removes those links when they are symlinks, the units, /etc/rancher/k3s and
 * the data directory), cmd/k3s/main.go @0208f16b (findDataDir; extract: data/<hash>, data/current,
 * data/previous, data/.lock), pkg/etcd/etcd.go @2614da01 (snapshotDir: <server dir>/db/snapshots),
 * k3s-io/kine pkg/drivers/sqlite/sqlite.go @27bd5e74 (./db/state.db in WAL mode, run in the server
 * dir), the local-path provisioner's default storage/ (manifests/local-storage.yaml). */
static const InstallerInfo k3s = {
        .id = INSTALLER_K3S,
        .name = "k3s",
        .program = "k3s",
        .marks = {
                { "/usr/local/bin/k3s", "the k3s binary" },
                { "/usr/local/bin/k3s-uninstall.sh", "k3s's uninstall script (server)" },
                { "/usr/local/bin/k3s-agent-uninstall.sh", "k3s's uninstall script (agent)" },
                { K3S_ETC, "k3s's configuration" },
                { "/var/lib/rancher/k3s", "k3s's data directory" },
        },
        .data = {
                .dir = "/var/lib/rancher/k3s",
                .env_key = "K3S_DATA_DIR",
                .config_env_key = "K3S_CONFIG_FILE",
                .config = K3S_CONFIG,
                .units = { "/etc/systemd/system/k3s.service", "/etc/systemd/system/k3s-agent.service" },
                .env_files = { "/etc/systemd/system/k3s.service.env", "/etc/systemd/system/k3s-agent.service.env",
                               "/etc/default/k3s", "/etc/default/k3s-agent", "/etc/sysconfig/k3s",
                               "/etc/sysconfig/k3s-agent" },
        },
        /* storage/, the local-path provisioner's volumes, is k3s's too, but workloads' data: protected
         * (profile:safety), never an entry that goes. */
        .entries = { "agent", "server", "data" },
        .datastores = { "server/db/state.db" },
        .snapshot_dirs = { "server/db/snapshots" },
        .etcd = { "server/db/etcd" },
        .etcd_kind = "embedded",
        .etcd_what = "k3s's embedded etcd",
        .cni_conf_dirs = { "agent/etc/cni/net.d" },
        .binary = "/usr/local/bin/k3s",
        .uninstall_links = { "/usr/local/bin/kubectl", "/usr/local/bin/crictl", "/usr/local/bin/ctr" },
        .backup = { RANCHER_BACKUP, K3S_CONFIG, K3S_CONFIG ".d",
                    K3S_ETC "/registries.yaml" },
        .irreplaceable = { RANCHER_IRREPLACEABLE },
        .encryption = { "server/cred/encryption-config.json" },
};

/* rke2: rancher/rke2 bundle/bin/rke2-uninstall.sh @006048d8 (the units in $INSTALL_RKE2_ROOT/lib/systemd/
 * system and /etc/systemd/system, /usr/local, /usr or /opt/rke2), pkg/bootstrap/bootstrap.go @03106fb2
 * (data/<version>/bin and charts, the bin symlink, runtime-* staging directories, server/manifests,
 * agent/images), k3s's layout beneath the data directory otherwise (rke2 runs k3s's server). */
static const InstallerInfo rke2 = {
        .id = INSTALLER_RKE2,
        .name = "rke2",
        .program = "rke2",
        .marks = {
                { "/usr/local/bin/rke2", "the rke2 binary" },
                { "/usr/bin/rke2", "the rke2 binary (RPM)" },
                { "/usr/local/bin/rke2-uninstall.sh", "rke2's uninstall script" },
                { RKE2_ETC, "rke2's configuration" },
                { "/var/lib/rancher/rke2", "rke2's data directory" },
        },
        .data = {
                .dir = "/var/lib/rancher/rke2",
                .env_key = "RKE2_DATA_DIR",
                .config_env_key = "RKE2_CONFIG_FILE",
                .config = RKE2_CONFIG,
                .units = { "/etc/systemd/system/rke2-server.service", "/etc/systemd/system/rke2-agent.service",
                           "/usr/local/lib/systemd/system/rke2-server.service",
                           "/usr/local/lib/systemd/system/rke2-agent.service",
                           "/usr/lib/systemd/system/rke2-server.service", "/usr/lib/systemd/system/rke2-agent.service",
                           "/opt/rke2/lib/systemd/system/rke2-server.service",
                           "/opt/rke2/lib/systemd/system/rke2-agent.service" },
                .env_files = { "/usr/local/lib/systemd/system/rke2-server.env",
                               "/usr/local/lib/systemd/system/rke2-agent.env",
                               "/usr/lib/systemd/system/rke2-server.env", "/usr/lib/systemd/system/rke2-agent.env",
                               "/opt/rke2/lib/systemd/system/rke2-server.env",
                               "/opt/rke2/lib/systemd/system/rke2-agent.env", "/etc/default/rke2-server",
                               "/etc/default/rke2-agent", "/etc/sysconfig/rke2-server", "/etc/sysconfig/rke2-agent" },
        },
        .entries = { "agent", "server", "data", "bin", "runtime-*" },
        .snapshot_dirs = { "server/db/snapshots" },
        .etcd = { "server/db/etcd" },
        .etcd_kind = "embedded",
        .etcd_what = "rke2's embedded etcd",
        .cni_conf_dirs = { "agent/etc/cni/net.d" },
        .binary = "/usr/local/bin/rke2",
        .backup = { RANCHER_BACKUP, RKE2_CONFIG, RKE2_CONFIG ".d",
                    RKE2_ETC "/registries.yaml" },
        .irreplaceable = { RANCHER_IRREPLACEABLE },
        .encryption = { "server/cred/encryption-config.json" },
};

static const InstallerInfo *const installers[_INSTALLER_MAX] = {
        [INSTALLER_KUBEADM] = &kubeadm, [INSTALLER_KUBESPRAY] = &kubespray, [INSTALLER_KUBEKEY] = &kubekey,
        [INSTALLER_K3S] = &k3s,         [INSTALLER_RKE2] = &rke2,
};

const InstallerInfo *installer_info(Installer i) {
        return i > INSTALLER_NONE && i < _INSTALLER_MAX ? installers[i] : NULL;
}

const InstallerInfo *installer_info_by_program(const char *name) {
        INSTALLER_FOREACH(info)
                if (info->program && streq_ptr(info->program, name))
                        return info;
        return NULL;
}

const char *installer_to_string(Installer i) {
        if (i == INSTALLER_NONE)
                return "none";
        return installer_info(i) ? installer_info(i)->name : NULL;
}

Installer installer_from_string(const char *s) {
        for (Installer i = INSTALLER_NONE; s && i < _INSTALLER_MAX; i++)
                if (streq(installer_to_string(i), s))
                        return i;
        return _INSTALLER_INVALID;
}

char *installer_path(const InstallerInfo *info, const char *data_dir, const char *path) {
        if (path[0] == '/')
                return strdup(path);
        data_dir = data_dir ?: info->data.dir;
        return data_dir ? strprintf("%s/%s", streq(data_dir, "/") ? "" : data_dir, path) : NULL;
}

/* Where the link at path leads, as a node path ("k3s" beside it: its directory's k3s). */
static char *link_target(int root_fd, const char *path) {
        cleanup_close int parent = -EBADF;
        char target[PATH_MAX], *t;
        const char *last;
        ssize_t n;

        parent = chaseat(root_fd, path, CHASE_NO_SYMLINKS | CHASE_PARENT, O_PATH, &last, NULL);
        if (parent < 0 || (n = readlinkat(parent, last, target, sizeof target - 1)) < 0)
                return NULL;
        target[n] = '\0';
        t = target[0] == '/' ? strdup(target) : strprintf("%.*s/%s", (int) (last - path - 1), path, target);
        return t ? path_simplify(t) : NULL;
}

bool installer_uninstall_removes(int root_fd, Installer i, const char *path) {
        const InstallerInfo *info = installer_info(i);
        cleanup_free char *target = NULL;

        if (!info || !info->binary)
                return false;
        INSTALLER_LIST_FOREACH(l, info->uninstall_links)
                if (streq(*l, path))
                        return (target = link_target(root_fd, path)) && streq(target, info->binary);
        return false;
}
