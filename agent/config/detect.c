/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Installer, runtime, CNI, kube-proxy mode and etcd detection from the files each installer leaves:
 * read beneath a root fd only (plus /proc and /sys when live), so --root and a rescue shell with
 * nothing running see the same answers. Each answer keeps its evidence; disagreeing evidence is
 * reported as ambiguous, never resolved by a guess. One file per thing detected in agent/config/detect/;
 * this one runs them in turn. */

#include <stdbool.h>

#include "agent/config/detect.h"
#include "agent/config/detect/detectors.h"
#include "agent/config/detect/finding.h"
#include "macro.h"

int detect_node(int root_fd, bool live, Detection *ret) {
        Detection d = {};
        int r;

        r = detect_installer(root_fd, &d);
        if (r >= 0)
                r = detect_rancher_data_dirs(root_fd, &d);
        if (r >= 0)
                r = detect_runtime(root_fd, &d);
        if (r >= 0)
                r = detect_cni(root_fd, live, &d);
        if (r >= 0)
                r = detect_kube_proxy(root_fd, live, &d);
        if (r >= 0)
                r = detect_etcd(root_fd, &d);
        if (r >= 0)
                r = detect_kubelet_dir(root_fd, &d);
        if (r >= 0)
                r = detect_kubeconfigs(root_fd, &d);
        if (r < 0) {
                detection_done(&d);
                return r;
        }
        *ret = d;
        return 0;
}

int detect_node_installer(int root_fd, Installer *ret) {
        Detection d = {};
        int r = detect_installer(root_fd, &d);

        *ret = d.installer;
        detection_done(&d);
        return r;
}

void detection_done(Detection *d) {
        d->installer_evidence = strv_free(d->installer_evidence);
        d->installer_candidates = strv_free(d->installer_candidates);
        finding_done(&d->runtime);
        finding_done(&d->cni);
        d->cni_config = mfree(d->cni_config);
        d->cni_loaded = mfree(d->cni_loaded);
        finding_done(&d->kube_proxy_mode);
        finding_done(&d->etcd);
        d->runtime_endpoint = mfree(d->runtime_endpoint);
        d->etcd_data_dir = mfree(d->etcd_data_dir);
        for (Installer i = 0; i < _INSTALLER_MAX; i++) {
                d->data_dir[i] = mfree(d->data_dir[i]);
                d->data_dir_link[i] = mfree(d->data_dir_link[i]);
        }
        d->data_dir_refused = mfree(d->data_dir_refused);
        d->kubelet_dir_target = mfree(d->kubelet_dir_target);
        d->cluster_server = mfree(d->cluster_server);
        d->home_kubeconfigs = strv_free(d->home_kubeconfigs);
}
