/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kubeconfigs of this cluster in every user's home: the homes from the tree's /etc/passwd, each
 * ~/.kube file parsed and compared with the cluster's server and CA. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/installers.h"
#include "agent/config/home-kubeconfigs.h"
#include "agent/config/kubeconfig.h"
#include "agent/os/fileio.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define PASSWD_MAX (4U * 1024U * 1024U)

/* Where this node's cluster is named: kubeadm's kubelet and admin kubeconfigs, k3s's and rke2's
 * admin kubeconfigs (write-kubeconfig default). */
static const char *const cluster_sources[] = {
        KUBEADM_KUBELET_CONF,
        KUBEADM_ADMIN_CONF,
        K3S_KUBECONFIG,
        RKE2_KUBECONFIG,
};

typedef struct ClusterId {
        char *server;
        char *ca; /* the CA's PEM, NULL when the source names none that can be read */
        size_t ca_size;
} ClusterId;

static void cluster_id_done(ClusterId *c) {
        free(c->server);
        free(c->ca);
        *c = (ClusterId) {};
}

/* A kubeconfig's server and CA (its file read beneath the root); 0 when it is none to compare. */
static int cluster_id_load(int root_fd, const char *path, ClusterId *ret) {
        cleanup_free char *err = NULL;
        Kubeconfig *k = NULL;

        *ret = (ClusterId) {};
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

/* The same server, and the same CA when the cluster's source names one. */
static bool cluster_id_same(const ClusterId *cluster, const ClusterId *c) {
        if (!streq(cluster->server, c->server))
                return false;
        if (!cluster->ca)
                return true;
        return c->ca && c->ca_size == cluster->ca_size && memcmp(c->ca, cluster->ca, c->ca_size) == 0;
}

/* The home directories of /etc/passwd (the sixth field), root's first, each resolved beneath the
 * root, once; "/" and relative ones are no home to look in. */
static int homes_list(int root_fd, char ***ret) {
        cleanup_free char *text = NULL;
        cleanup_strv char **homes = NULL;
        size_t size;
        char *line, *save = NULL;
        int r;

        r = fileio_resolve_beneath(root_fd, "/root", &line);
        if (r > 0 && strv_consume(&homes, line) < 0)
                return -ENOMEM;
        if (fileio_read_beneath(root_fd, "/etc/passwd", PASSWD_MAX, &text, &size) >= 0)
                for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                        const char *f = line;
                        char *home, *resolved = NULL;

                        for (int i = 0; i < 5 && f; i++)
                                f = strchr(f, ':') ? strchr(f, ':') + 1 : NULL;
                        if (!f || line[0] == '#' || f[0] != '/' || streq(f, "/"))
                                continue;
                        home = strndup(f, strcspn(f, ":"));
                        r = home ? fileio_resolve_beneath(root_fd, home, &resolved) : -ENOMEM;
                        free(home);
                        if (r < 0 || (r > 0 && strv_consume_unique(&homes, resolved) < 0))
                                return -ENOMEM;
                }
        *ret = TAKE_PTR(homes);
        return 0;
}

/* The files of home/.kube whose server and CA are one of the cluster's. */
static int home_matches(int root_fd, const char *home, const ClusterId *ids, size_t n_ids, char ***paths) {
        cleanup_free char *dir = strprintf("%s/.kube", streq(home, "/") ? "" : home);
        cleanup_strv char **names = NULL;
        int r;

        if (!dir)
                return -ENOMEM;
        r = fileio_list_beneath(root_fd, dir, "*", &names);
        STRV_FOREACH(n, names) {
                cleanup_free char *path = strprintf("%s/%s", dir, *n);
                ClusterId c;

                if (!path || r < 0)
                        return -ENOMEM;
                if (cluster_id_load(root_fd, path, &c) <= 0)
                        continue; /* unparsable, or no kubeconfig: kept */
                for (size_t i = 0; i < n_ids; i++)
                        if (cluster_id_same(&ids[i], &c)) {
                                r = strv_extend(paths, path);
                                break;
                        }
                cluster_id_done(&c);
        }
        return r;
}

int home_kubeconfigs_find(int root_fd, char **ret_server, char ***ret_paths) {
        ClusterId ids[ELEMENTSOF(cluster_sources)] = {};
        cleanup_strv char **homes = NULL, **paths = NULL;
        size_t n = 0;
        int r = 0;

        *ret_server = NULL;
        *ret_paths = NULL;
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(cluster_sources); i++)
                if ((r = cluster_id_load(root_fd, cluster_sources[i], &ids[n])) > 0)
                        n++;
        if (r >= 0 && n > 0)
                r = homes_list(root_fd, &homes);
        STRV_FOREACH(h, homes)
                if (r >= 0)
                        r = home_matches(root_fd, *h, ids, n, &paths);
        if (r >= 0 && n > 0 && !(*ret_server = strdup(ids[0].server)))
                r = -ENOMEM;
        for (size_t i = 0; i < n; i++)
                cluster_id_done(&ids[i]);
        if (r < 0)
                return r;
        *ret_paths = TAKE_PTR(paths);
        return 0;
}
