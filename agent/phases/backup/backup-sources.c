/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the backup saves and what has no other copy: each installer's rows (installers.h), k3s's and
 * rke2's beneath the data directory each resolves on this node, kube-apiserver's encryption
 * configuration, the users' kubeconfigs the files phase edits. */

#include <fcntl.h>
#include <sys/stat.h>

#include "agent/base/path.h"
#include "agent/config/envfile.h"
#include "agent/config/etcd-flags.h"
#include "agent/config/installers.h"
#include "agent/config/rancher-datadir.h"
#include "agent/os/fileio.h"
#include "agent/os/remote-fs.h"
#include "agent/phases/backup/backup-sources.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

bool backup_path_exists(const Context *ctx, const char *path) {
        struct stat st;

        return remote_fs_check(ctx->root_fd, path, NULL) >= 0 &&
               fstatat(ctx->root_fd, path + 1, &st, AT_SYMLINK_NOFOLLOW) >= 0;
}

static int add_path(char ***l, const InstallerInfo *info, const char *data_dir, const char *path) {
        return strv_consume_unique(l, installer_path(info, data_dir, path));
}

/* The encryption-provider configuration kube-apiserver's static pod names (kubeadm's apiServer
 * extraArgs, anywhere on the node): what decrypts the datastore's secrets. NULL when none. */
static char *apiserver_encryption_config(const Context *ctx) {
        cleanup_strv char **argv = NULL;
        cleanup_free char *text = NULL;
        const char *v;
        size_t size;

        if (fileio_read_beneath(ctx->root_fd, KUBEADM_APISERVER_MANIFEST, 1U << 20, &text, &size) < 0 ||
            pod_container_argv(text, size, "kube-apiserver", &argv) <= 0)
                return NULL;
        v = argv_flag(argv, "encryption-provider-config");
        return v && v[0] == '/' && !path_is_glob(v) ? strdup(v) : NULL;
}

/* A key row is irreplaceable by itself; a certificate only with its key beside it (a worker's public
 * ca.crt is handed out again by every control plane). */
static int add_irreplaceable(const Context *ctx, char ***l, const InstallerInfo *info, const char *data_dir) {
        for (const InstallerKey *k = info->irreplaceable;
             k < info->irreplaceable + ELEMENTSOF(info->irreplaceable) && k->path; k++) {
                cleanup_free char *key = k->key ? installer_path(info, data_dir, k->key) : NULL;

                if (k->key && !key)
                        return -ENOMEM;
                if (key && !backup_path_exists(ctx, key))
                        continue;
                if (add_path(l, info, data_dir, k->path) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* A datastore with its write-ahead log and its shared-memory index: the three are one database. */
static int add_datastore(char ***l, const InstallerInfo *info, const char *data_dir, const char *path, bool with_log) {
        cleanup_free char *p = installer_path(info, data_dir, path);

        if (!p || strv_extend_unique(l, p) < 0)
                return -ENOMEM;
        if (with_log &&
            (strv_consume_unique(l, strprintf("%s-wal", p)) < 0 || strv_consume_unique(l, strprintf("%s-shm", p)) < 0))
                return -ENOMEM;
        return 0;
}

static int installer_backup_paths(const Context *ctx, const InstallerInfo *info, BackupList which, char ***l) {
        cleanup_free char *dir = NULL, *evidence = NULL;
        int r = 0;

        if (info->program && (r = rancher_data_dir(ctx->root_fd, info->program, &dir, &evidence)) < 0)
                return r;
        if (which == BACKUP_SOURCES)
                INSTALLER_LIST_FOREACH(p, info->backup)
                        if ((r = add_path(l, info, dir, *p)) < 0)
                                return r;
        if (which == BACKUP_IRREPLACEABLE && (r = add_irreplaceable(ctx, l, info, dir)) < 0)
                return r;
        /* The encryption configuration is saved and, unsaved, kept: the data it decrypts may be kept. */
        if (which != BACKUP_DATASTORES)
                INSTALLER_LIST_FOREACH(p, info->encryption)
                        if ((r = add_path(l, info, dir, *p)) < 0)
                                return r;
        if (which != BACKUP_SOURCES)
                INSTALLER_LIST_FOREACH(p, info->datastores)
                        if ((r = add_datastore(l, info, dir, *p, which == BACKUP_IRREPLACEABLE)) < 0)
                                return r;
        return 0;
}

int backup_paths(const Context *ctx, BackupList which, char ***l) {
        cleanup_free char *enc = NULL;
        int r = 0;

        INSTALLER_FOREACH(info)
                if ((r = installer_backup_paths(ctx, info, which, l)) < 0)
                        return r;
        if (which != BACKUP_DATASTORES && (enc = apiserver_encryption_config(ctx)) &&
            strv_consume_unique(l, TAKE_PTR(enc)) < 0)
                return -ENOMEM;
        /* The users' kubeconfigs the files phase takes this cluster's entries out of (or removes). */
        for (size_t i = 0; which == BACKUP_SOURCES && i < ctx->manifest->n_entries; i++)
                if (ctx->manifest->entries[i].type == DIRECTIVE_PRUNE_KUBECONFIG &&
                    strv_extend_unique(l, ctx->manifest->entries[i].args[0]) < 0)
                        return -ENOMEM;
        return 0;
}
