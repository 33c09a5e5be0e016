/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Copying into the backup: the sources as files and symlinks (bounded, never across a mount, never
 * following a symlink, every file created fresh), the datastores through SQLite's online backup, the
 * member's member/snap/db when no member answered; dry, only what a copy would write is counted. */

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/base/log.h"
#include "agent/node/backup-kept.h"
#include "agent/node/etcd.h"
#include "agent/os/fileio.h"
#include "agent/os/remote-fs.h"
#include "agent/os/sqlite-copy.h"
#include "agent/phases/backup/backup-copy.h"
#include "agent/phases/backup/backup-sources.h"
#include "chase.h"
#include "errno-util.h"
#include "macro.h"
#include "mountid-util.h"
#include "string-util.h"
#include "strv.h"

/* Bounds: what a node's configuration is, by a wide margin; past them the backup fails rather than
 * fill the disk it shares with the node. */
#define BACKUP_FILE_MAX (16U << 20)
#define BACKUP_TOTAL_MAX (256ULL << 20)
#define BACKUP_FILES_MAX 20000U
#define BACKUP_DEPTH_MAX 16
#define DB_COPY_NAME "etcd-member-snap-db"
#define DATASTORE_MAX (8ULL << 30) /* as a snapshot: etcd's largest backend quota */

void backup_run_done(BackupRun *b) {
        strv_free(b->saved);
        free(b->snapshot);
        free(b->db_copy);
        strv_free(b->stores);
        strv_free(b->uncopied);
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
int backup_save_source(const Context *ctx, int dst_fd, const char *path, BackupRun *b) {
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
int backup_dir_open(Context *ctx, int *ret_fd, char **ret_node_path) {
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
int backup_save_member_db(Context *ctx, int dst_fd, const char *data_dir, BackupRun *b) {
        cleanup_free char *path = strprintf("%s/member/snap/db", data_dir);
        cleanup_close int parent = -EBADF, in = -EBADF, out = -EBADF;
        NodeEtcdRun *run = node_etcd_run(ctx);
        uint64_t max = b->db_copy_max;
        const char *name;
        struct stat st;
        int r;

        if (!path || !run)
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
        run->facts.db_copied = true;
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

int backup_save_datastores(const Context *ctx, int dst_fd, BackupRun *b) {
        cleanup_strv char **stores = NULL;
        int r;

        r = backup_paths(ctx, BACKUP_DATASTORES, &stores);
        for (char **s = stores; r >= 0 && s && *s; s++)
                r = save_datastore(ctx, dst_fd, *s, b);
        return r;
}
