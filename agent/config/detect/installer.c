/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which installer set the node up (kubeadm, kubespray, kubekey, k3s, rke2), by the files only it writes. */

#include <stddef.h>

#include "agent/config/detect.h"
#include "agent/config/detect/detectors.h"
#include "agent/config/detect/finding.h"
#include "agent/config/rancher-datadir.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

static const char *const installer_names[_INSTALLER_MAX] = {
        [INSTALLER_NONE] = "none",       [INSTALLER_KUBEADM] = "kubeadm", [INSTALLER_KUBESPRAY] = "kubespray",
        [INSTALLER_KUBEKEY] = "kubekey", [INSTALLER_K3S] = "k3s",         [INSTALLER_RKE2] = "rke2",
};

const char *installer_to_string(Installer i) {
        return i >= 0 && i < _INSTALLER_MAX ? installer_names[i] : NULL;
}

Installer installer_from_string(const char *s) {
        for (Installer i = 0; s && i < _INSTALLER_MAX; i++)
                if (streq(installer_names[i], s))
                        return i;
        return _INSTALLER_INVALID;
}

/* A file or directory an installer writes and nothing else does. kubespray and kubekey drive kubeadm,
 * so kubeadm's own files are on their nodes too: kubeadm is what remains when no other one is seen.
 * Data that outlives a reinstall (kubekey's /var/backups/kube_etcd) is no evidence of the current one. */
typedef struct InstallerMark {
        Installer installer;
        const char *path;
        const char *what;
} InstallerMark;

static const InstallerMark installer_marks[] = {
        { INSTALLER_KUBEADM, "/var/lib/kubelet/kubeadm-flags.env", "kubelet flags written by kubeadm init/join" },
        { INSTALLER_KUBEADM, "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", "kubeadm's kubelet drop-in" },
        { INSTALLER_KUBEADM, "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf", "kubeadm's kubelet drop-in" },
        { INSTALLER_KUBEADM, "/lib/systemd/system/kubelet.service.d/10-kubeadm.conf", "kubeadm's kubelet drop-in" },
        { INSTALLER_KUBEADM, "/etc/kubernetes/kubelet.conf", "kubeadm's kubelet kubeconfig" },
        { INSTALLER_KUBESPRAY, "/etc/kubernetes/kubelet.env", "kubespray's kubelet environment file" },
        { INSTALLER_KUBESPRAY, "/etc/kubernetes/kubeadm-client.conf", "kubespray's kubeadm join configuration" },
        { INSTALLER_KUBESPRAY, "/usr/local/bin/kubernetes-scripts", "kubespray's scripts directory" },
        { INSTALLER_KUBESPRAY, "/usr/local/bin/etcd-scripts", "kubespray's etcd scripts" },
        { INSTALLER_KUBESPRAY, "/etc/systemd/resolved.conf.d/kubespray.conf", "kubespray's host DNS setting" },
        { INSTALLER_KUBESPRAY, "/etc/modules-load.d/kubespray-br_netfilter.conf", "kubespray's module list" },
        { INSTALLER_KUBEKEY, "/usr/local/bin/kube-scripts", "kubekey v3's scripts directory" },
        { INSTALLER_KUBEKEY, "/etc/systemd/system/backup-etcd.timer", "kubekey v3's etcd backup timer" },
        { INSTALLER_KUBEKEY, "/etc/kubekey", "kubekey's work directory" },
        { INSTALLER_K3S, "/usr/local/bin/k3s", "the k3s binary" },
        { INSTALLER_K3S, "/usr/local/bin/k3s-uninstall.sh", "k3s's uninstall script (server)" },
        { INSTALLER_K3S, "/usr/local/bin/k3s-agent-uninstall.sh", "k3s's uninstall script (agent)" },
        { INSTALLER_K3S, "/etc/rancher/k3s", "k3s's configuration" },
        { INSTALLER_K3S, "/var/lib/rancher/k3s", "k3s's data directory" },
        { INSTALLER_RKE2, "/usr/local/bin/rke2", "the rke2 binary" },
        { INSTALLER_RKE2, "/usr/bin/rke2", "the rke2 binary (RPM)" },
        { INSTALLER_RKE2, "/usr/local/bin/rke2-uninstall.sh", "rke2's uninstall script" },
        { INSTALLER_RKE2, "/etc/rancher/rke2", "rke2's configuration" },
        { INSTALLER_RKE2, "/var/lib/rancher/rke2", "rke2's data directory" },
};

int detect_installer(int root_fd, Detection *d) {
        char **own[_INSTALLER_MAX] = {};
        unsigned n_own = 0;
        Installer last = INSTALLER_NONE;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(installer_marks); i++) {
                const InstallerMark *m = installer_marks + i;

                if (!node_exists(root_fd, m->path))
                        continue;
                r = evidence_add(&own[m->installer], m->path, "%s", m->what);
                if (r >= 0)
                        r = evidence_add(&d->installer_evidence, m->path, "%s", m->what);
        }
        for (Installer i = INSTALLER_KUBESPRAY; r >= 0 && i < _INSTALLER_MAX; i++)
                if (own[i]) {
                        n_own++;
                        last = i;
                        r = strv_extend(&d->installer_candidates, installer_to_string(i));
                }
        /* k3s and rke2 never run kubeadm: its files next to theirs are two installs, not one. */
        if (r >= 0 && n_own == 1 && (last == INSTALLER_K3S || last == INSTALLER_RKE2) && own[INSTALLER_KUBEADM]) {
                n_own++;
                r = strv_extend(&d->installer_candidates, "kubeadm");
        }
        if (n_own == 1)
                d->installer = last;
        else if (n_own == 0 && own[INSTALLER_KUBEADM])
                d->installer = INSTALLER_KUBEADM;
        d->installer_ambiguous = n_own > 1;
        if (!d->installer_ambiguous)
                d->installer_candidates = strv_free(d->installer_candidates);
        for (Installer i = 0; i < _INSTALLER_MAX; i++)
                strv_free(own[i]);
        return r;
}

/* k3s's and rke2's data dirs when configured elsewhere: the profiles' paths move with them. */
int detect_rancher_data_dirs(int root_fd, Detection *d) {
        char **dirs[] = { &d->k3s_data_dir, &d->rke2_data_dir };
        const char *programs[] = { "k3s", "rke2" };
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(programs); i++) {
                cleanup_free char *dir = NULL, *evidence = NULL;

                r = rancher_data_dir(root_fd, programs[i], &dir, &evidence);
                if (r > 0) {
                        *dirs[i] = TAKE_PTR(dir);
                        r = strv_consume(&d->installer_evidence, TAKE_PTR(evidence));
                }
        }
        return r;
}
