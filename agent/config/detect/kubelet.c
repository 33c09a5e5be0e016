/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubelet's directory when it is a symlink, and the kubeconfigs of this cluster in the homes. */

#include <fcntl.h>
#include <sys/stat.h>

#include "agent/config/detect.h"
#include "agent/config/detect/detectors.h"
#include "agent/config/home-kubeconfigs.h"
#include "agent/os/fileio.h"
#include "agent/os/remote-fs.h"

/* A symlinked /var/lib/kubelet (a data disk): the node path it resolves to, inside the root. */
int detect_kubelet_dir(int root_fd, Detection *d) {
        struct stat st;

        /* Asked first: a stat of a mount point that does not answer would wait for it. */
        if (remote_fs_check(root_fd, "/var/lib/kubelet", NULL) < 0 ||
            fstatat(root_fd, "var/lib/kubelet", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
                return 0;
        return fileio_resolve_beneath(root_fd, "/var/lib/kubelet", &d->kubelet_dir_target);
}

/* This cluster's server, and the kubeconfigs of every home that name it (and only those). */
int detect_kubeconfigs(int root_fd, Detection *d) {
        return home_kubeconfigs_find(root_fd, &d->cluster_server, &d->home_kubeconfigs);
}
