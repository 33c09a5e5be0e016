/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The backup phase: before anything is deleted, copy the node's PKI, kubeconfigs (the users' ones the
 * files phase edits too), kubelet's config and client certificates, the static pod manifests and the
 * etcd env files (k3s's and rke2's CAs, token and configuration too), and an etcd snapshot
 * when this node's member answers, into BACKUP_DIR/<UTC timestamp>/ beneath --root. Directories
 * 0700, files 0600, every file created fresh (O_EXCL), every source opened with O_NOFOLLOW (a
 * symlink is saved as a symlink), never across a mount. No profile removes the backups: the files
 * phase refuses to (see backup.h). */

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "agent/phases/phases.h"
#include "agent/node/backup-kept.h"
#include "agent/phases/etcd/etcd.h"
#include "agent/engine/cmdline.h"
#include "agent/node/etcd.h"
#include "agent/node/etcd-datadir.h"
#include "agent/base/log.h"
#include "agent/base/path.h"
#include "agent/os/fileio.h"
#include "agent/os/remote-fs.h"
#include "agent/os/remove.h"
#include "agent/config/envfile.h"
#include "agent/config/etcd-flags.h"
#include "agent/config/installers.h"
#include "agent/config/rancher-datadir.h"
#include "agent/os/sqlite-copy.h"
#include "agent/engine/phase.h"
#include "chase.h"
#include "errno-util.h"
#include "macro.h"
#include "time-util.h"
#include "string-util.h"
#include "strv.h"

/* Bounds: what a node's configuration is, by a wide margin; past them the backup fails rather than
 * fill the disk it shares with the node. */
#define BACKUP_FILE_MAX (16U << 20)
#define BACKUP_TOTAL_MAX (256ULL << 20)
#define BACKUP_FILES_MAX 20000U
#define BACKUP_DEPTH_MAX 16
#define SNAPSHOT_MAX (8ULL << 30) /* etcd's largest backend quota */
#define SNAPSHOT_TIMEOUT_USEC (120ULL * 1000000ULL)
#define SNAPSHOT_NAME "etcd-snapshot.db"
#define DB_COPY_NAME "etcd-member-snap-db"

static uint64_t arg_etcd_db_copy_max; /* --etcd-db-copy-max, bytes; 0: DB_COPY_MAX_DEFAULT */
static bool arg_no_backup;
#define DB_COPY_MAX_DEFAULT (8ULL << 30) /* --etcd-db-copy-max */

/* What is saved, what has no other copy, the encryption-at-rest configurations and the datastores:
 * each installer's row (installers.h), k3s's and rke2's beneath the data directory each resolves on
 * this node. The etcd data directory is the other row with no other copy: its own rule keeps it
 * without a snapshot or a copy of its member/snap/db (etcd-datadir.h). */
typedef enum BackupList {
        BACKUP_SOURCES,       /* saved as files */
        BACKUP_IRREPLACEABLE, /* kept when the backup could not be written */
        BACKUP_DATASTORES,    /* copied as databases (SQLite's online backup) */
} BackupList;

#define DATASTORE_MAX (8ULL << 30) /* as a snapshot: etcd's largest backend quota */

typedef struct BackupRun {
        bool dry;       /* only measure: what the copy would write, in blocks of block bytes */
        uint64_t block; /* the backup file system's block size (dry) */
        uint64_t files, bytes, written;
        char **saved;    /* the sources saved */
        char *snapshot;  /* what happened to the snapshot */
        char *db_copy;   /* what happened to the copy of member/snap/db, when there is no snapshot */
        char **stores;   /* what happened to each datastore */
        char **uncopied; /* datastores (node paths) not copied: kept */
} BackupRun;

static bool node_path_exists(const Context *ctx, const char *path) {
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
                if (key && !node_path_exists(ctx, key))
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

/* The node paths of one list, every installer's, each once, appended to *l. */
static int backup_paths(const Context *ctx, BackupList which, char ***l) {
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

static int copy_file(int src_dir, const char *name, int dst_dir, BackupRun *b) {
        cleanup_close int fd = -EBADF;
        cleanup_free uint8_t *buf = NULL;
        struct stat st;
        size_t have = 0;

        fd = openat(src_dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_size > BACKUP_FILE_MAX)
                return -EFBIG;
        if (b->bytes + (uint64_t) st.st_size > BACKUP_TOTAL_MAX || b->files >= BACKUP_FILES_MAX)
                return -E2BIG;
        if (b->dry) {
                b->files++;
                b->bytes += (uint64_t) st.st_size;
                b->written += ((uint64_t) st.st_size + b->block - 1) / b->block * b->block;
                return 0;
        }
        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        while (have < (size_t) st.st_size) {
                ssize_t k = read(fd, buf + have, (size_t) st.st_size - have);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break;
                have += (size_t) k;
        }
        b->files++;
        b->bytes += have;
        return fileio_write_new(dst_dir, name, buf, have, 0600, &st);
}

static int copy_symlink(int src_dir, const char *name, int dst_dir, BackupRun *b) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(src_dir, name, target, sizeof target - 1);

        if (n >= 0 && b->dry) {
                b->files++;
                b->written += b->block;
                return 0;
        }
        if (n < 0)
                return negative_errno();
        target[n] = '\0';
        b->files++;
        return RET_NERRNO(symlinkat(target, dst_dir, name));
}

static int copy_tree(int src_dir, int dst_dir, const MountIdentity *top, unsigned depth, BackupRun *b);

/* One entry of a directory being saved: files and symlinks as they are, directories recursively
 * when they are on the mount the source is on (a bind mount of the same file system counts as
 * another: the mount id tells); devices, FIFOs and sockets are not configuration. */
static int copy_entry(int src_dir, const char *name, int dst_dir, const MountIdentity *top, unsigned depth,
                      BackupRun *b) {
        cleanup_close int sub = -EBADF, dsub = -EBADF;
        MountIdentity mi;
        int r;

        r = mount_identity_at(src_dir, name, 0, &mi);
        if (r < 0)
                return r;
        if (S_ISLNK(mi.mode))
                return copy_symlink(src_dir, name, dst_dir, b);
        if (S_ISREG(mi.mode))
                return copy_file(src_dir, name, dst_dir, b);
        if (!S_ISDIR(mi.mode) || (top && mount_identity_other_mount(top, &mi)))
                return 0; /* never across a mount */
        if (depth >= BACKUP_DEPTH_MAX)
                return -ELOOP;
        sub = openat(src_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0)
                return negative_errno();
        if (b->dry) {
                b->written += b->block;
                return copy_tree(sub, -EBADF, top ?: &mi, depth + 1, b);
        }
        if (mkdirat(dst_dir, name, 0700) < 0)
                return negative_errno();
        dsub = openat(dst_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dsub < 0)
                return negative_errno();
        return copy_tree(sub, dsub, top ?: &mi, depth + 1, b);
}

static int copy_tree(int src_dir, int dst_dir, const MountIdentity *top, unsigned depth, BackupRun *b) {
        int dfd = fcntl(src_dir, F_DUPFD_CLOEXEC, 3);
        DIR *d;
        int r = 0;

        if (dfd < 0)
                return negative_errno();
        d = fdopendir(dfd);
        if (!d) {
                (void) close(dfd);
                return negative_errno();
        }
        for (struct dirent *de; r >= 0 && (de = readdir(d));)
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        r = copy_entry(src_dir, de->d_name, dst_dir, top, depth, b);
        (void) closedir(d);
        return r;
}

/* One source, saved beneath dst_fd at its own node path. */
static int save_source(const Context *ctx, int dst_fd, const char *path, BackupRun *b) {
        cleanup_close int src_parent = -EBADF, dst_parent = -EBADF;
        cleanup_free char *parent = strdup(path + 1);
        const char *name;
        struct stat st;

        if (!parent)
                return -ENOMEM;
        src_parent = chaseat(ctx->root_fd, path, CHASE_NO_SYMLINKS | CHASE_PARENT, O_RDONLY, &name, NULL);
        if (src_parent < 0)
                /* cppcheck-suppress memleak ; cleanup_free (cppcheck does not know the attribute) */
                return src_parent == -ENOENT ? 0 : src_parent;
        /* The source itself may be a mount point (a dedicated /etc/kubernetes): its own mount is the
         * one the copy stays on, set by copy_entry() from what it finds there. */
        if (fstatat(src_parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                /* cppcheck-suppress memleak ; cleanup_free (cppcheck does not know the attribute) */
                return errno == ENOENT ? 0 : negative_errno();
        *strrchr(parent, '/') = '\0';
        dst_parent = b->dry ? -EBADF : fileio_mkdir_beneath(dst_fd, parent, 0700);
        if (dst_parent < 0 && !b->dry)
                return dst_parent;
        return copy_entry(src_parent, name, dst_parent, NULL, 0, b);
}

typedef struct SaveJob {
        const Context *ctx;
        int dst_fd;
        const char *path;
        BackupRun *b;
} SaveJob;

/* remote_fs_each()'s work: the source saved, and the counts as they are then. */
static int save_work(size_t i, void *userdata, FILE *out) {
        const SaveJob *j = userdata;
        int r = save_source(j->ctx, j->dst_fd, j->path, j->b);

        fprintf(out, "%" PRIu64 " %" PRIu64 " %" PRIu64, j->b->files, j->b->bytes, j->b->written);
        return r;
}

/* A source on a network or FUSE mount (a user's home) is saved where a mount that stops answering
 * cannot hang the backup; one that does not answer is not saved, and the files phase does not touch
 * it either (its row is unobserved). The copy follows no symlink and crosses no mount: the mounts
 * its path names are all it can step on. */
static int save_bounded(const Context *ctx, int dst_fd, const char *path, BackupRun *b) {
        RemoteFsItem item = { .path = path };
        SaveJob j = { .ctx = ctx, .dst_fd = dst_fd, .path = path, .b = b };
        int r;

        if (!remote_fs_on(ctx->root_fd, path))
                return save_source(ctx, dst_fd, path, b);
        r = remote_fs_each(ctx->root_fd, &item, 1, save_work, &j);
        if (r >= 0 && (item.result == -ETIME || item.result == -EHOSTDOWN || item.result == -EIO)) {
                log_warning("%s is not saved: %s", path, strna(item.why));
                r = 0;
        } else if (r >= 0 && item.out &&
                   sscanf(item.out, "%" SCNu64 " %" SCNu64 " %" SCNu64, &b->files, &b->bytes, &b->written) == 3)
                r = item.result;
        else if (r >= 0)
                r = -ENOMEM;
        remote_fs_items_done(&item, 1);
        return r;
}

/* A name no earlier run used: the time, then ".1", ".2", ... for runs within the same second. */
static int make_run_dir(int parent_fd, char **ret_name) {
        char stamp[32];
        struct tm tm;
        time_t t = time(NULL);

        if (!gmtime_r(&t, &tm) || strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm) == 0)
                return -EINVAL;
        for (unsigned i = 0; i < 100; i++) {
                char *name = i == 0 ? strdup(stamp) : strprintf("%s.%u", stamp, i);

                if (!name)
                        return -ENOMEM;
                if (mkdirat(parent_fd, name, 0700) >= 0) {
                        *ret_name = name;
                        return 0;
                }
                free(name);
                if (errno != EEXIST)
                        return negative_errno();
        }
        return -EEXIST;
}

/* BACKUP_DIR (0700, however it was made) and this run's directory in it. */
static int open_backup_dir(Context *ctx, int *ret_fd, char **ret_node_path) {
        cleanup_close int var = -EBADF, top = -EBADF;
        cleanup_free char *name = NULL;
        int fd, r;

        var = fileio_mkdir_beneath(ctx->root_fd, "/var/backups", 0755);
        if (var < 0)
                return var;
        if (mkdirat(var, "node-reset", 0700) < 0 && errno != EEXIST)
                return negative_errno();
        top = openat(var, "node-reset", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (top < 0)
                return negative_errno();
        if (fchmod(top, 0700) < 0)
                return negative_errno();
        r = make_run_dir(top, &name);
        if (r < 0)
                return r;
        fd = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        *ret_node_path = strprintf("%s/%s", BACKUP_DIR, name);
        if (!*ret_node_path) {
                (void) close(fd);
                return -ENOMEM;
        }
        *ret_fd = fd;
        return 0;
}

static int copy_stream(int in, int out, uint64_t size) {
        uint8_t buf[1U << 16];
        uint64_t done = 0;

        while (done < size) {
                ssize_t k = read(in, buf, sizeof buf);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        return -EBADMSG; /* shorter than fstat said: not a whole copy */
                if ((uint64_t) k > size - done)
                        k = (ssize_t) (size - done);
                for (ssize_t w = 0; w < k;) {
                        ssize_t n = write(out, buf + w, (size_t) (k - w));

                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0)
                                return negative_errno();
                        w += n;
                }
                done += (uint64_t) k;
        }
        return fsync(out) < 0 ? negative_errno() : 0;
}

/* No member answered: etcd's own backend file (member/snap/db, which "etcdctl snapshot restore"
 * accepts with --skip-hash-check) is the copy the data directory's fate then depends on. */
static int save_member_db(Context *ctx, int dst_fd, const char *data_dir, BackupRun *b) {
        cleanup_free char *path = strprintf("%s/member/snap/db", data_dir);
        cleanup_close int parent = -EBADF, in = -EBADF, out = -EBADF;
        uint64_t max = arg_etcd_db_copy_max ?: DB_COPY_MAX_DEFAULT;
        const char *name;
        struct stat st;
        int r;

        if (!path)
                return -ENOMEM;
        parent = remote_fs_check(ctx->root_fd, path, &b->db_copy);
        if (parent == -EHOSTDOWN)
                return 0; /* not copied: b->db_copy says why */
        parent = parent < 0 ? parent
                            : chaseat(ctx->root_fd, path, CHASE_NO_SYMLINKS | CHASE_PARENT, O_RDONLY, &name, NULL);
        in = parent < 0 ? parent : openat(parent, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
                return 0; /* nothing to copy */
        if ((uint64_t) st.st_size > max)
                return set_errmsg(&b->db_copy, 0,
                                  "%s is %" PRIu64 " bytes, over --etcd-db-copy-max (%" PRIu64 "): not copied", path,
                                  (uint64_t) st.st_size, max);
        out = openat(dst_fd, DB_COPY_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out < 0)
                return negative_errno();
        r = copy_stream(in, out, (uint64_t) st.st_size);
        if (r < 0) {
                (void) unlinkat(dst_fd, DB_COPY_NAME, 0);
                return set_errmsg(&b->db_copy, r, "%s could not be copied: %s", path, strerror(-r));
        }
        ctx->facts.etcd.db_copied = true;
        b->db_copy = strprintf("a copy of %s (%" PRIu64 " bytes) as %s", path, (uint64_t) st.st_size, DB_COPY_NAME);
        return b->db_copy ? 0 : -ENOMEM;
}

/* One datastore (node path) copied as a database into dst_fd at its own node path. Not copied (no
 * libsqlite3, too big, SQLite refuses it): kept on the node, and said. A copy the disk cannot take
 * fails the backup. Dry: only its size counted. */
static int save_datastore(const Context *ctx, int dst_fd, const char *path, BackupRun *b) {
        cleanup_close int src = -EBADF, dst = -EBADF;
        cleanup_free char *parent = strdup(path + 1), *msg = NULL;
        uint64_t size = 0;
        const char *name;
        struct stat st;
        int r;

        if (!parent)
                return -ENOMEM;
        src = chaseat(ctx->root_fd, path, CHASE_NO_SYMLINKS | CHASE_PARENT, O_RDONLY, &name, NULL);
        if (src < 0 || fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                return 0; /* not there: nothing to copy */
        if (b->dry) {
                b->written += ((uint64_t) st.st_size + b->block - 1) / b->block * b->block;
                return 0;
        }
        *strrchr(parent, '/') = '\0';
        dst = fileio_mkdir_beneath(dst_fd, parent, 0700);
        if (dst < 0)
                return strv_consume(&b->stores, strprintf("%s could not be copied: %s", path, strerror(-dst))) ?: dst;
        r = sqlite_copy(src, name, dst, name, DATASTORE_MAX, ctx->deadline_usec, &size, &msg);
        if (r > 0) {
                b->files++;
                b->bytes += size;
                return strv_consume(&b->stores,
                                    strprintf("%s copied by SQLite's online backup (%" PRIu64 " bytes)", path, size))
                               ?: strv_extend(&b->saved, path);
        }
        if (r == -ENOSPC || r == -EDQUOT || r == -EIO || r == -EROFS || r == -ENOMEM)
                return strv_consume(&b->stores, strprintf("%s could not be written: %s", path, strna(msg))) ?: r;
        return strv_consume(&b->stores, strprintf("%s not copied (%s): kept", path, strna(msg)))
                       ?: strv_extend(&b->uncopied, path);
}

static int save_datastores(const Context *ctx, int dst_fd, BackupRun *b) {
        cleanup_strv char **stores = NULL;
        int r;

        r = backup_paths(ctx, BACKUP_DATASTORES, &stores);
        for (char **s = stores; r >= 0 && s && *s; s++)
                r = save_datastore(ctx, dst_fd, *s, b);
        return r;
}

/* One snapshot from one endpoint into fd; deadline bounds every endpoint's call together. */
static int snapshot_from(const NodeEtcd *l, const char *endpoint, uint64_t budget, uint64_t deadline, int fd,
                         uint64_t *size, char **msg) {
        EtcdClient *c = NULL;
        int r;

        if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        r = node_etcd_client(l, endpoint, deadline, &c);
        if (r >= 0) {
                etcd_client_set_timeout(c, budget);
                r = etcd_snapshot(c, fd, SNAPSHOT_MAX, size, msg);
        }
        etcd_client_free(c);
        return r;
}

/* The snapshot is asked of this node's own member only: a snapshot is of what it holds. A member
 * that does not answer is noted, not a failure (its member/snap/db is copied instead); a snapshot
 * that cannot be written is one. */
static int save_snapshot(Context *ctx, int dst_fd, BackupRun *b) {
        cleanup_free char *msg = NULL;
        cleanup_close int fd = -EBADF;
        NodeEtcd l = {};
        /* Bounded like every etcd call (--etcd-timeout); without it, time for a large backend. */
        uint64_t size = 0, budget = phase_etcd_timeout() ?: SNAPSHOT_TIMEOUT_USEC;
        uint64_t deadline = now(CLOCK_MONOTONIC) + budget;
        int r;

        if (ctx->deadline_usec > 0 && ctx->deadline_usec < deadline)
                deadline = ctx->deadline_usec;
        r = node_etcd_find(ctx, &l, NULL);
        if (r <= 0 || l.external) {
                node_etcd_done(&l);
                return 0;
        }
        fd = openat(dst_fd, SNAPSHOT_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
                node_etcd_done(&l);
                return negative_errno();
        }
        r = -ENOENT;
        for (size_t i = 0; i < l.n_own && r < 0 && r != -ENOSPC && r != -ETIME; i++) {
                msg = mfree(msg);
                r = snapshot_from(&l, l.endpoints[i], budget, deadline, fd, &size, &msg);
                if (r >= 0)
                        b->snapshot = strprintf("etcd snapshot of member %s from %s, %" PRIu64 " bytes", l.name,
                                                l.endpoints[i], size);
        }
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r < 0)
                (void) unlinkat(dst_fd, SNAPSHOT_NAME, 0);
        ctx->facts.etcd.snapshot = r >= 0;
        /* A write that failed is the disk's fault, and fails the backup; a member that did not answer
         * leaves the backup without a snapshot. */
        if (r == -ENOSPC || r == -EDQUOT || r == -EIO || r == -EFBIG)
                r = set_errmsg(&b->snapshot, r, "etcd snapshot could not be written: %s", msg ?: strerror(-r));
        else if (r < 0) {
                ctx->facts.etcd.own_silent = true;
                r = set_errmsg(&b->snapshot, 0, "no etcd snapshot: member %s did not answer: %s", l.name,
                               msg
                                       ?: l.n_own == 0 ? "its files name no client URL of its own"
                                                       : strerror(-r));
                r = save_member_db(ctx, dst_fd, l.data_dir, b);
        }
        node_etcd_done(&l);
        return r;
}

static void backup_run_done(BackupRun *b) {
        strv_free(b->saved);
        free(b->snapshot);
        free(b->db_copy);
        strv_free(b->stores);
        strv_free(b->uncopied);
}

static char *describe_saved(const BackupRun *b, const char *dir) {
        cleanup_free char *list = NULL, *stores = b->stores ? strv_join(b->stores, "; ") : NULL;

        STRV_FOREACH(s, b->saved) {
                char *n = strprintf("%s%s%s", list ?: "", list ? ", " : "", *s);

                if (!n)
                        return NULL;
                free(list);
                list = n;
        }
        return strprintf("saved %" PRIu64 " files (%" PRIu64 " bytes) into %s: %s%s%s%s%s%s%s", b->files, b->bytes, dir,
                         list ?: "no configuration files", b->snapshot ? "; " : "", strempty(b->snapshot),
                         b->db_copy ? "; " : "", strempty(b->db_copy), stores ? "; " : "", strempty(stores));
}

/* The sources present on the node, as a list for the plan; 1 when there is something to save (an etcd
 * member counts: its snapshot). */
static int backup_observe(Context *ctx, char **ret_list, char **ret_member, char **ret_data_dir) {
        cleanup_free char *list = NULL;
        cleanup_strv char **sources = NULL;
        NodeEtcd l = {};
        int r;

        r = backup_paths(ctx, BACKUP_SOURCES, &sources);
        if (r >= 0)
                r = backup_paths(ctx, BACKUP_DATASTORES, &sources);
        if (r < 0)
                return r;
        STRV_FOREACH(s, sources)
                if (node_path_exists(ctx, *s)) {
                        char *n = strprintf("%s%s%s", list ?: "", list ? ", " : "", *s);

                        if (!n)
                                return -ENOMEM;
                        free(list);
                        list = n;
                }
        r = node_etcd_find(ctx, &l, NULL) > 0 && !l.external;
        if (r && ret_member)
                *ret_member = TAKE_PTR(l.name);
        if (r && ret_data_dir)
                *ret_data_dir = TAKE_PTR(l.data_dir);
        node_etcd_done(&l);
        r = list || r;
        if (ret_list)
                *ret_list = TAKE_PTR(list);
        return r;
}

bool backup_failure_goes_on(int error) {
        return error == -ENOSPC || error == -EDQUOT || error == -EROFS;
}

/* The free bytes and the block size of the file system the backup goes to: BACKUP_DIR's, or that of
 * its nearest ancestor there is (the run makes the rest). */
static int backup_fs_space(const Context *ctx, uint64_t *ret_free, uint64_t *ret_block) {
        static const char *const dirs[] = { BACKUP_DIR, "/var/backups", "/var", "/" };

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                cleanup_close int fd =
                        chaseat(ctx->root_fd, dirs[i], CHASE_NO_SYMLINKS, O_PATH | O_DIRECTORY, NULL, NULL);
                struct statvfs sv;

                if (fd == -ENOENT || fd == -ENOTDIR)
                        continue;
                if (fd < 0)
                        return fd;
                if (fstatvfs(fd, &sv) < 0)
                        return negative_errno();
                *ret_free = (uint64_t) sv.f_bavail * sv.f_frsize;
                *ret_block = sv.f_frsize ?: 4096;
                return 0;
        }
        return -ENOENT;
}

/* What the backup would write, counted in the backup file system's blocks: the sources as they are,
 * a block per directory and link, the run's directories, and the member's backend (member/snap/db)
 * for its snapshot (a snapshot is that size, give or take its free pages). */
static int backup_measure(const Context *ctx, const char *data_dir, uint64_t block, uint64_t *ret) {
        cleanup_free char *db = data_dir ? strprintf("%s/member/snap/db", data_dir) : NULL;
        cleanup_strv char **sources = NULL;
        BackupRun b = { .dry = true, .block = block };
        struct stat st;
        int r;

        r = backup_paths(ctx, BACKUP_SOURCES, &sources);
        for (char **s = sources; r >= 0 && s && *s; s++)
                r = save_bounded(ctx, -EBADF, *s, &b);
        if (r >= 0)
                r = save_datastores(ctx, -EBADF, &b);
        if (r < 0)
                return r;
        if (db && node_path_exists(ctx, db) && fstatat(ctx->root_fd, db + 1, &st, AT_SYMLINK_NOFOLLOW) >= 0 &&
            S_ISREG(st.st_mode))
                b.written += ((uint64_t) st.st_size + block - 1) / block * block;
        *ret = b.written + 4 * block;
        return 0;
}

/* The plan's word on room: what the backup would write against what is free where it goes. */
static int backup_room(const Context *ctx, const char *data_dir, char **ret) {
        uint64_t need = 0, avail = 0, block = 0;
        int r;

        r = backup_fs_space(ctx, &avail, &block);
        if (r >= 0)
                r = backup_measure(ctx, data_dir, block, &need);
        if (r < 0)
                return set_errmsg(ret, 0, "; the room it needs cannot be told: %s", strerror(-r));
        if (need <= avail)
                return set_errmsg(ret, 0, "; about %" PRIu64 " KiB to write, %" PRIu64 " KiB free where it goes",
                                  need >> 10, avail >> 10);
        return set_errmsg(
                ret, 0,
                "; NO ROOM: about %" PRIu64 " KiB to write, %" PRIu64 " KiB free where it goes: without "
                "the backup the control plane's CAs and the etcd data directory are kept, everything else is reset",
                need >> 10, avail >> 10);
}

/* The backup could not be written (no room, a quota, a read-only file system): its partial directory
 * goes (it would only take the room the next run needs), the run goes on without the rows that have
 * no other copy (backup_unsaved_rows()), and one line says what was not saved. */
static int backup_unwritten(Context *ctx, const char *dir, int r, char **reterr_msg) {
        cleanup_free char *list = NULL, *member = NULL, *why = TAKE_PTR(*reterr_msg);
        RemoveOptions o = { .deadline_usec = ctx->deadline_usec };
        RemoveStats st = {};

        if (dir)
                (void) remove_tree(ctx->root_fd, dir, &o, &st);
        remove_stats_done(&st);
        (void) backup_observe(ctx, &list, &member, NULL);
        ctx->facts.backup_kept = strv_free(ctx->facts.backup_kept);
        if (backup_paths(ctx, BACKUP_IRREPLACEABLE, &ctx->facts.backup_kept) < 0)
                return -ENOMEM; /* its only other failure: it read the same files just now */
        free(ctx->facts.backup_unsaved);
        ctx->facts.backup_unsaved = strprintf("%s%s%s", strempty(list), member ? (list ? ", " : "") : "",
                                              member ? "the etcd snapshot" : "");
        if (!ctx->facts.backup_unsaved)
                return -ENOMEM;
        r = set_errmsg(reterr_msg, r,
                       "the backup could not be written (%s): not saved: %s; kept without it: the control plane's "
                       "CAs and the etcd data directory (unless its member left its cluster); everything else is reset",
                       strna(why), ctx->facts.backup_unsaved);
        log_error("%s", *reterr_msg);
        return r;
}

/* Datastores the written backup could not copy stay, with their log and index: the files phase keeps
 * them as it keeps what an unwritten backup did not save. */
static int backup_keep_uncopied(Context *ctx, const BackupRun *b) {
        ctx->facts.backup_uncopied = strv_free(ctx->facts.backup_uncopied);
        STRV_FOREACH(u, b->uncopied)
                if (strv_extend(&ctx->facts.backup_uncopied, *u) < 0 ||
                    strv_consume(&ctx->facts.backup_uncopied, strprintf("%s-wal", *u)) < 0 ||
                    strv_consume(&ctx->facts.backup_uncopied, strprintf("%s-shm", *u)) < 0)
                        return -ENOMEM;
        return 0;
}

static int backup_apply(Action *a, Context *ctx, char **reterr_msg) {
        cleanup_close int dst = -EBADF;
        cleanup_free char *dir = NULL;
        cleanup_strv char **sources = NULL;
        BackupRun b = {};
        int r;

        /* Nothing left to save (a node already reset): no empty backup directory either. */
        r = backup_observe(ctx, NULL, NULL, NULL);
        if (r <= 0)
                return r < 0 ? r : set_errmsg(reterr_msg, 0, "nothing to back up");
        r = backup_paths(ctx, BACKUP_SOURCES, &sources);
        if (r < 0)
                return r;
        r = open_backup_dir(ctx, &dst, &dir);
        if (r < 0)
                (void) set_errmsg(reterr_msg, r,
                                  "cannot create a backup directory beneath %s: %s; nothing will "
                                  "be deleted without a backup (--no-backup to go on without one)",
                                  BACKUP_DIR, strerror(-r));
        for (char **s = sources; r >= 0 && *s; s++) {
                uint64_t before = b.files;

                r = save_bounded(ctx, dst, *s, &b);
                if (r >= 0 && b.files > before)
                        r = strv_extend(&b.saved, *s);
                if (r < 0)
                        (void) set_errmsg(reterr_msg, r,
                                          "cannot save %s into %s: %s; nothing will be deleted "
                                          "without a backup (--no-backup to go on without one)",
                                          *s, dir, strerror(-r));
        }
        if (r >= 0) {
                r = save_datastores(ctx, dst, &b);
                if (r < 0)
                        (void) set_errmsg(
                                reterr_msg, r,
                                "%s into %s; nothing will be deleted without a backup "
                                "(--no-backup to go on without one)",
                                b.stores ? b.stores[strv_length(b.stores) - 1] : "a datastore could not be saved", dir);
        }
        if (r >= 0) {
                r = save_snapshot(ctx, dst, &b);
                if (r < 0)
                        (void) set_errmsg(reterr_msg, r,
                                          "%s into %s; nothing will be deleted without a backup "
                                          "(--no-backup to go on without one)",
                                          strna(b.snapshot), dir);
        }
        if (r >= 0 && fsync(dst) < 0)
                r = set_errmsg(reterr_msg, negative_errno(), "cannot sync %s: %m", dir);
        /* Sources that are left but hold no file (kubeadm's emptied pki and manifests after a
         * reset): nothing was saved, and a second run on a clean node changes nothing. */
        if (r >= 0 && b.files == 0 && !b.snapshot) {
                r = remove_tree(ctx->root_fd, dir, NULL, NULL);
                r = r < 0 ? set_errmsg(reterr_msg, r, "cannot remove the empty %s: %s", dir, strerror(-r))
                          : set_errmsg(reterr_msg, 0, "nothing to back up: the sources left hold no file");
        } else if (r >= 0) {
                *reterr_msg = describe_saved(&b, dir);
                r = backup_keep_uncopied(ctx, &b) ?: 1;
        } else if (backup_failure_goes_on(r)) {
                *reterr_msg = mfree(*reterr_msg);
                (void) set_errmsg(reterr_msg, 0, "%s", strerror(-r));
                r = backup_unwritten(ctx, dir, r, reterr_msg);
        }
        backup_run_done(&b);
        return r;
}

const char *const *backup_unsaved_rows(const Context *ctx, size_t *ret_n) {
        char **rows = ctx->facts.backup_unsaved ? ctx->facts.backup_kept : ctx->facts.backup_uncopied;

        *ret_n = strv_length(rows);
        return (const char *const *) rows;
}

const char *backup_unsaved_why(const Context *ctx) {
        return ctx->facts.backup_unsaved ? "the backup could not be written" : "the backup could not copy it";
}

int backup_unsaved_kept_beneath(const Context *ctx, const char *target, char ***ret) {
        cleanup_strv char **l = NULL;
        const char *const *rows;
        size_t n;

        rows = backup_unsaved_rows(ctx, &n);
        for (size_t i = 0; i < n; i++)
                if ((path_startswith_dir(target, rows[i]) || path_startswith_dir(rows[i], target) ||
                     path_pattern_below(target, rows[i])) &&
                    node_path_exists(ctx, rows[i]) && strv_extend(&l, rows[i]) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

static int backup_check(Action *a, Context *ctx, char **ret_msg) {
        return 0; /* a backup is never residue */
}

static const ActionOps backup_ops = {
        .kind = "backup",
        .apply = backup_apply,
        .check = backup_check,
};

int phase_backup_plan(Context *ctx, Plan *plan, char **reterr) {
        cleanup_free char *list = NULL, *member = NULL, *data_dir = NULL, *room = NULL;
        Action *a;
        int r;

        a = plan_add(plan, &backup_ops, "backup", BACKUP_DIR,
                     "the node's PKI, kubeconfigs and configs, before "
                     "anything is deleted",
                     NULL);
        if (!a)
                return -ENOMEM;
        if (arg_no_backup)
                return action_set_skip(a, "--no-backup");
        r = backup_observe(ctx, &list, &member, &data_dir);
        if (r < 0)
                return r;
        a->present = r > 0;
        if (a->present && backup_room(ctx, data_dir, &room) == -ENOMEM)
                return -ENOMEM;
        return action_set_detail(a, "%s%s%s%s%s", list ? "copy " : "nothing to copy", strempty(list),
                                 member ? "; an etcd snapshot of member " : "", strempty(member), strempty(room));
}

static int parse_etcd_db_copy_max(const char *arg, char **reterr) {
        if (cmdline_parse_size(arg, &arg_etcd_db_copy_max) < 0 || arg_etcd_db_copy_max == 0)
                return set_errmsg(reterr, -EINVAL, "invalid --etcd-db-copy-max '%s': expected a size such as 8G", arg);
        return 0;
}

static int parse_no_backup(const char *arg, char **reterr) {
        arg_no_backup = true;
        return 0;
}

const PhaseOption phase_backup_options[] = {
        { "etcd-db-copy-max", PHASE_OPTION_REQUIRED_ARG, "SIZE",
          "When no etcd member answers, copy its member/snap/db\n"
          "into the backup up to SIZE (K, M, G suffixes; 8G)",
          parse_etcd_db_copy_max },
        { "no-backup", PHASE_OPTION_NO_ARG, NULL, "Do not save the PKI, configs and an etcd snapshot first",
          parse_no_backup },
        {},
};
