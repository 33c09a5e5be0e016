/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kubeconfigs of this cluster in every user's home: the homes from the tree's /etc/passwd, each
 * ~/.kube file read as a kubeconfig and its clusters compared with this cluster's server and CA. A
 * home is the users' to lay out (a symlink to a data disk, an NFS or autofs mount): each is read
 * where the read can be given up (remote-fs.h). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/base/log.h"
#include "agent/config/installers.h"
#include "agent/config/home-kubeconfigs.h"
#include "agent/config/kubeconfig.h"
#include "agent/os/fileio.h"
#include "agent/os/remote-fs.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define PASSWD_MAX (4U * 1024U * 1024U)
#define KUBECONFIG_MAX (1024U * 1024U)

/* Where this node's cluster is named: kubeadm's kubelet and admin kubeconfigs, k3s's and rke2's
 * admin kubeconfigs (write-kubeconfig default). */
static const char *const cluster_sources[] = {
        KUBEADM_KUBELET_CONF,
        KUBEADM_ADMIN_CONF,
        K3S_KUBECONFIG,
        RKE2_KUBECONFIG,
};

/* A kubeconfig's server and CA (its file read beneath the root); 0 when it is none to compare. */
static int cluster_id_load(int root_fd, const char *path, KubeClusterId *ret) {
        cleanup_free char *err = NULL;
        Kubeconfig *k = NULL;

        *ret = (KubeClusterId) {};
        if (kubeconfig_load(root_fd, path, &k, &err) < 0 || !k->server) {
                kubeconfig_free(k);
                return 0;
        }
        err = mfree(err);
        (void) kubeconfig_read_files(k, root_fd, &err); /* the client's files need not be there */
        ret->server = TAKE_PTR(k->server);
        ret->ca = TAKE_PTR(k->ca.data);
        ret->ca_size = k->ca.size;
        kubeconfig_free(k);
        return ret->server ? 1 : -ENOMEM;
}

void home_cluster_ids_free(KubeClusterId *ids, size_t n) {
        for (size_t i = 0; i < n; i++)
                kube_cluster_id_done(&ids[i]);
        free(ids);
}

int home_cluster_ids(int root_fd, KubeClusterId **ret, size_t *ret_n) {
        KubeClusterId *ids = calloc(ELEMENTSOF(cluster_sources), sizeof *ids);
        size_t n = 0;
        int r = 0;

        if (!ids)
                return -ENOMEM;
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(cluster_sources); i++)
                if ((r = cluster_id_load(root_fd, cluster_sources[i], &ids[n])) > 0)
                        n++;
        if (r < 0) {
                home_cluster_ids_free(ids, n);
                return r;
        }
        *ret = ids;
        *ret_n = n;
        return 0;
}

/* The home directories of /etc/passwd (the sixth field), root's first, once each, as named there;
 * "/" and relative ones are no home to look in. */
static int homes_list(int root_fd, char ***ret) {
        cleanup_free char *text = NULL;
        cleanup_strv char **homes = NULL;
        size_t size;
        char *line, *save = NULL;

        if (strv_extend(&homes, "/root") < 0)
                return -ENOMEM;
        if (fileio_read_beneath(root_fd, "/etc/passwd", PASSWD_MAX, &text, &size) >= 0)
                for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                        const char *f = line;

                        for (int i = 0; i < 5 && f; i++)
                                f = strchr(f, ':') ? strchr(f, ':') + 1 : NULL;
                        if (!f || line[0] == '#' || f[0] != '/' || streq(f, "/"))
                                continue;
                        if (strv_consume_unique(&homes, strndup(f, strcspn(f, ":"))) < 0)
                                return -ENOMEM;
                }
        *ret = TAKE_PTR(homes);
        return 0;
}

typedef struct HomeScan {
        int root_fd;
        char **homes;
        const KubeClusterId *ids;
        size_t n_ids;
} HomeScan;

/* One home (resolved beneath the root: a symlink to a data disk is followed inside the tree): the
 * files of its .kube that hold one of the clusters, each written to out with its NUL. */
static int scan_home(size_t i, void *userdata, FILE *out) {
        const HomeScan *s = userdata;
        cleanup_free char *home = NULL, *dir = NULL;
        cleanup_strv char **names = NULL;
        int r;

        r = fileio_resolve_beneath(s->root_fd, s->homes[i], &home);
        if (r <= 0 || streq(home, "/"))
                return r;
        dir = strprintf("%s/.kube", home);
        if (!dir || fileio_list_beneath(s->root_fd, dir, "*", &names) < 0)
                return -ENOMEM;
        STRV_FOREACH(n, names) {
                cleanup_free char *path = strprintf("%s/%s", dir, *n), *text = NULL, *err = NULL;
                KubeconfigPrune p;
                size_t size;

                if (!path)
                        return -ENOMEM;
                if (fileio_read_beneath(s->root_fd, path, KUBECONFIG_MAX, &text, &size) < 0)
                        continue; /* a directory (kubectl's cache), or unreadable: kept */
                r = kubeconfig_prune(path, text, size, s->root_fd, s->ids, s->n_ids, false, &p, &err);
                kubeconfig_prune_done(&p);
                if (r == -ENOMEM)
                        return r;
                if (r > 0 && fwrite(path, 1, strlen(path) + 1, out) != strlen(path) + 1)
                        return -ENOMEM;
        }
        return 0;
}

/* What each home's scan wrote, the homes not read logged. */
static int collect(RemoteFsItem *items, size_t n, char ***paths) {
        for (size_t i = 0; i < n; i++) {
                if (items[i].result == -ETIME || items[i].result == -EHOSTDOWN || items[i].result == -EIO)
                        log_warning("The kubeconfigs of the home %s were not read: %s", items[i].path,
                                    strna(items[i].why));
                else if (items[i].result == -ENOMEM)
                        return -ENOMEM;
                for (const char *p = items[i].out; p && p < items[i].out + items[i].size; p += strlen(p) + 1)
                        if (strv_extend_unique(paths, p) < 0)
                                return -ENOMEM;
        }
        return 0;
}

static int scan_homes(int root_fd, const KubeClusterId *ids, size_t n_ids, char ***paths) {
        cleanup_strv char **homes = NULL;
        cleanup_free RemoteFsItem *items = NULL;
        HomeScan s = { .root_fd = root_fd, .ids = ids, .n_ids = n_ids };
        size_t n;
        int r;

        r = homes_list(root_fd, &homes);
        if (r < 0)
                return r;
        n = strv_length(homes);
        items = calloc(n, sizeof *items);
        if (!items)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                items[i].path = homes[i];
        s.homes = homes;
        r = remote_fs_each(root_fd, items, n, scan_home, &s);
        if (r >= 0)
                r = collect(items, n, paths);
        remote_fs_items_done(items, n);
        return r;
}

int home_kubeconfigs_find(int root_fd, char **ret_server, char ***ret_paths) {
        cleanup_strv char **paths = NULL;
        KubeClusterId *ids = NULL;
        size_t n = 0;
        int r;

        *ret_server = NULL;
        *ret_paths = NULL;
        r = home_cluster_ids(root_fd, &ids, &n);
        if (r >= 0 && n > 0)
                r = scan_homes(root_fd, ids, n, &paths);
        if (r >= 0 && n > 0 && !(*ret_server = strdup(ids[0].server)))
                r = -ENOMEM;
        home_cluster_ids_free(ids, n);
        if (r < 0)
                return r;
        *ret_paths = TAKE_PTR(paths);
        return 0;
}
