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

/* Each installer's marks (installers.c): a file or directory only it writes. kubespray and kubekey drive
 * kubeadm, so kubeadm's own files are on their nodes too: kubeadm is what remains when no other one is
 * seen. */
int detect_installer(int root_fd, Detection *d) {
        char **own[_INSTALLER_MAX] = {};
        unsigned n_own = 0;
        Installer last = INSTALLER_NONE;
        int r = 0;

        INSTALLER_FOREACH(info)
                for (const InstallerMark *m = info->marks;
                     r >= 0 && m < info->marks + ELEMENTSOF(info->marks) && m->path; m++) {
                        if (!node_exists(root_fd, m->path))
                                continue;
                        r = evidence_add(&own[info->id], m->path, "%s", m->what);
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

/* k3s's and rke2's data dirs when configured elsewhere, or reached through a symlink: the profiles'
 * paths move with them. A value that cannot be used is refused, never replaced by the default. */
int detect_rancher_data_dirs(int root_fd, Detection *d) {
        int r = 0;

        INSTALLER_FOREACH(info) {
                CLEANUP(rancher_data_dir_done) RancherDataDir dd = {};

                if (!info->data.dir)
                        continue;
                r = rancher_data_dir_find(root_fd, info, &dd);
                if (r < 0)
                        return r;
                if (dd.refused && !d->data_dir_refused) {
                        d->data_dir_refused = strprintf("%s's data directory: %s", info->name, dd.refused);
                        if (!d->data_dir_refused || (r = strv_extend(&d->installer_evidence, dd.refused)) < 0)
                                return -ENOMEM;
                }
                if (streq(dd.dir, info->data.dir))
                        continue;
                if (dd.link && !(d->data_dir_link[info->id] = strdup(dd.spelled)))
                        return -ENOMEM;
                d->data_dir[info->id] = TAKE_PTR(dd.dir);
                r = dd.link ? strv_consume(&d->installer_evidence,
                                           strprintf("%s: a symlink to %s", dd.spelled, d->data_dir[info->id]))
                            : 0;
                if (r >= 0 && dd.evidence)
                        r = strv_consume(&d->installer_evidence, TAKE_PTR(dd.evidence));
                if (r < 0)
                        return r;
        }
        return 0;
}
