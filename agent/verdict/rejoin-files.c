/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The files and directories kubeadm join (1.20) wants absent: FileAvailableCheck of the kubelet's
 * kubeconfigs and the CA, DirAvailableCheck of the static pods' and the local etcd's directories
 * (cmd/kubeadm/app/preflight/checks.go). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "agent/config/etcd-owner.h"
#include "agent/config/installers.h"
#include "agent/node/etcd.h"
#include "agent/os/remote-fs.h"
#include "agent/phases/phases.h"
#include "agent/verdict/rejoin-files.h"
#include "chase.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

/* Entries of a directory beneath the root: 0 absent or empty, else how many; the first name in *ret_first. */
static int dir_entries(int root_fd, const char *path, char **ret_first) {
        cleanup_close int fd = -EBADF;
        struct dirent *de;
        DIR *d;
        int n = 0;

        n = remote_fs_check(root_fd, path, NULL); /* -EHOSTDOWN: on a mount that does not answer */
        if (n < 0)
                return n;
        fd = chaseat(root_fd, path, 0, O_RDONLY | O_DIRECTORY, NULL, NULL);
        if (fd < 0)
                return fd == -ENOENT ? 0 : fd;
        d = fdopendir(TAKE_FD(fd));
        if (!d)
                return negative_errno();
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, "..") && n++ == 0 && ret_first)
                        *ret_first = strdup(de->d_name);
        closedir(d);
        return n;
}

/* DirAvailableCheck /etc/kubernetes/manifests (RunJoinNodeChecks): absent or empty. */
int rejoin_check_manifests(Context *ctx, Rejoin *r, char **ret_msg) {
        cleanup_free char *first = NULL;
        int n = dir_entries(ctx->root_fd, KUBEADM_MANIFESTS, &first);

        if (n < 0)
                return set_errmsg(ret_msg, REJOIN_FAILED, "cannot read /etc/kubernetes/manifests: %s", strerror(-n));
        if (n > 0)
                return set_errmsg(ret_msg, REJOIN_FAILED, KUBEADM_MANIFESTS " holds %d entr%s (%s)", n,
                                  n == 1 ? "y" : "ies", strna(first));
        return set_errmsg(ret_msg, REJOIN_OK, KUBEADM_MANIFESTS " absent or empty");
}

/* FileAvailableCheck (os.Stat succeeds: it exists, whatever it is; a dangling symlink does not). */
static int file_available(Context *ctx, const char *path, char **ret_msg) {
        cleanup_close int fd = chaseat(ctx->root_fd, path, 0, O_PATH, NULL, NULL);

        if (fd >= 0)
                return set_errmsg(ret_msg, REJOIN_FAILED, "%s exists: kubeadm join refuses it", path);
        if (fd != -ENOENT)
                return set_errmsg(ret_msg, REJOIN_UNKNOWN, "%s cannot be looked at: %s", path, strerror(-fd));
        return set_errmsg(ret_msg, REJOIN_OK, "no %s", path);
}

/* RunJoinNodeChecks: FileAvailableCheck kubelet.conf, bootstrap-kubelet.conf and (a worker's join,
 * JoinConfiguration.CACertPath's default) pki/ca.crt. */
int rejoin_check_kubeconfig(Context *ctx, Rejoin *r, char **ret_msg) {
        return file_available(ctx, KUBEADM_KUBELET_CONF, ret_msg);
}

int rejoin_check_bootstrap_kubeconfig(Context *ctx, Rejoin *r, char **ret_msg) {
        return file_available(ctx, KUBEADM_BOOTSTRAP_KUBELET_CONF, ret_msg);
}

int rejoin_check_ca(Context *ctx, Rejoin *r, char **ret_msg) {
        return file_available(ctx, KUBEADM_CA_CRT, ret_msg);
}

/* DirAvailableCheck of the local etcd's data directory: RunInitNodeChecks, run by a control-plane
 * join only. */
int rejoin_check_etcd(Context *ctx, Rejoin *r, char **ret_msg) {
        const char *dirs[] = { KUBEADM_ETCD_DATA_DIR, node_etcd_data_dir(ctx) };
        const EtcdScope *scope;
        int q;

        /* kubeadm's preflight asks for an empty data directory only for a local etcd
         * (DirAvailable--var-lib-etcd, when ClusterConfiguration.etcd.local is set). */
        q = node_etcd_scope(ctx, &scope);
        if (q < 0)
                return q;
        if (scope->owner == ETCD_OWNER_FOREIGN)
                return set_errmsg(ret_msg, REJOIN_OK, "the etcd is out of scope (%s): its data is kept", scope->source);

        if (!r->control_plane)
                return set_errmsg(ret_msg, REJOIN_UNCHECKED, "a worker's join does not check it (not a control plane)");

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                cleanup_free char *first = NULL;
                int n;

                if (!dirs[i])
                        continue;
                n = dir_entries(ctx->root_fd, dirs[i], &first);
                if (n == -EHOSTDOWN)
                        return set_errmsg(ret_msg, REJOIN_UNKNOWN,
                                          "%s lies on a network or FUSE file system that does not answer", dirs[i]);
                if (n != 0)
                        return set_errmsg(ret_msg, REJOIN_FAILED, "%s %s%s%s", dirs[i],
                                          n < 0 ? "unreadable: " : "holds ", n < 0 ? strerror(-n) : strna(first),
                                          n > 1 ? ", ..." : "");
        }
        return set_errmsg(ret_msg, REJOIN_OK, "the etcd data directory is absent or empty");
}
