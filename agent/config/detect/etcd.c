/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which etcd the node runs (static pod, systemd, embedded, external) and its data directory. */

#include <stdlib.h>
#include <string.h>

#include "agent/config/detect.h"
#include "agent/config/detect/detectors.h"
#include "agent/config/detect/finding.h"
#include "agent/config/envfile.h"
#include "agent/config/etcd-flags.h"
#include "agent/config/etcd-owner.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

static int etcd_mark(Detection *d, const char *path, const char *kind, const char *what) {
        int r = evidence_add(&d->etcd.evidence, path, "%s", what);

        return r < 0 ? r : finding_set(&d->etcd, kind);
}

/* --data-dir as etcd reads it: from the etcd container's command line, or ETCD_DATA_DIR as systemd
 * passes it. A file that does not parse names no directory, and says so. */
static int etcd_data_dir(Detection *d, const char *path, const char *text, bool pod) {
        cleanup_strv char **argv = NULL;
        const char *dir;
        int r;

        r = pod ? pod_container_argv(text, strlen(text), "etcd", &argv)
                : etcd_env_argv(text, strlen(text), &argv, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || (pod && r == 0))
                return evidence_add(&d->etcd.evidence, path, "%s", "does not parse: no data directory read from it");
        dir = argv_flag(argv, "data-dir");
        if (!dir || streq(dir, KUBEADM_ETCD_DATA_DIR) || d->etcd_data_dir)
                return 0;
        d->etcd_data_dir = strdup(dir);
        if (!d->etcd_data_dir)
                return -ENOMEM;
        return evidence_add(&d->etcd.evidence, "data directory", "%s", d->etcd_data_dir);
}

/* An installer's embedded etcd (k3s, rke2): its data directory beneath the data directory found. */
static int etcd_embedded(int root_fd, const InstallerInfo *info, Detection *d) {
        cleanup_free char *dir = installer_path(info, d->data_dir[info->id], info->etcd[0]);

        if (!dir)
                return -ENOMEM;
        return node_exists(root_fd, dir) ? etcd_mark(d, dir, info->etcd_kind, info->etcd_what) : 0;
}

int detect_etcd(int root_fd, Detection *d) {
        cleanup_free char *pod = node_read(root_fd, KUBEADM_ETCD_MANIFEST);
        cleanup_free char *env = node_read(root_fd, SYSTEMD_ETCD_ENV);
        CLEANUP(etcd_scope_done) EtcdScope scope = {};
        int r;

        /* "external" is the one decision every phase follows (etcd-owner.h). */
        r = etcd_scope_decide(root_fd, d->installer, &scope);
        if (r < 0)
                return r;

        /* An out-of-scope etcd's static pod or etcd.env is its, never a local one's: one answer. */
        if (scope.owner == ETCD_OWNER_FOREIGN)
                r = etcd_mark(d, scope.source, "external", scope.why);
        else if (pod && (r = etcd_mark(d, KUBEADM_ETCD_MANIFEST, installer_info(INSTALLER_KUBEADM)->etcd_kind,
                                       installer_info(INSTALLER_KUBEADM)->etcd_what)) >= 0)
                r = etcd_data_dir(d, KUBEADM_ETCD_MANIFEST, pod, true);
        if (r >= 0 && env && scope.owner != ETCD_OWNER_FOREIGN &&
            (r = etcd_mark(d, SYSTEMD_ETCD_ENV, installer_info(INSTALLER_KUBESPRAY)->etcd_kind,
                           installer_info(INSTALLER_KUBESPRAY)->etcd_what)) >= 0)
                r = etcd_data_dir(d, SYSTEMD_ETCD_ENV, env, false);
        INSTALLER_FOREACH(info)
                if (r >= 0 && streq_ptr(info->etcd_kind, "embedded"))
                        r = etcd_embedded(root_fd, info, d);
        if (r >= 0 && !d->etcd.value && !d->etcd.evidence)
                r = finding_set(&d->etcd, "none");
        finding_settle(&d->etcd);
        return r;
}
