/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The backup phase: before anything is deleted, copy the node's PKI, kubeconfigs (the users' ones the
 * files phase edits too), kubelet's config and client certificates, the static pod manifests and the
 * etcd env files (k3s's and rke2's CAs, token and configuration too), and an etcd snapshot
 * when this node's member answers, into BACKUP_DIR/<UTC timestamp>/ beneath --root. Directories
 * 0700, files 0600, every file created fresh (O_EXCL), every source opened with O_NOFOLLOW (a
 * symlink is saved as a symlink), never across a mount. No profile removes the backups: the files
 * phase refuses to (see backup-kept.h). What it saves is backup-sources.c's, how backup-copy.c's, the
 * room it needs backup-room.c's, the snapshot the etcd module's (node_etcd_snapshot()). */

#include <inttypes.h>
#include <unistd.h>

#include "agent/base/log.h"
#include "agent/engine/cmdline.h"
#include "agent/engine/phase.h"
#include "agent/node/backup-kept.h"
#include "agent/node/etcd.h"
#include "agent/os/remove.h"
#include "agent/phases/backup/backup-copy.h"
#include "agent/phases/backup/backup-prune.h"
#include "agent/phases/backup/backup-room.h"
#include "agent/phases/backup/backup-sources.h"
#include "agent/phases/phases.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define SNAPSHOT_NAME "etcd-snapshot.db"
#define DB_COPY_MAX_DEFAULT (8ULL << 30) /* --etcd-db-copy-max */
#define NOTHING_WITHOUT "nothing will be deleted without a backup (--no-backup to go on without one)"

/* The options: configuration, set once by the command line before any run. */
static uint64_t arg_etcd_db_copy_max; /* --etcd-db-copy-max, bytes; 0: DB_COPY_MAX_DEFAULT */
static bool arg_no_backup;

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
                if (backup_path_exists(ctx, *s)) {
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

/* The backup could not be written (no room, a quota, a read-only file system): its partial directory
 * goes (it would only take the room the next run needs), the run goes on without the rows that have
 * no other copy (backup_unsaved_rows()), and one line says what was not saved. */
static int backup_unwritten(Context *ctx, const char *dir, int r, char **reterr_msg) {
        cleanup_free char *list = NULL, *member = NULL, *why = TAKE_PTR(*reterr_msg), *unsaved = NULL;
        RemoveOptions o = { .deadline_usec = ctx->deadline_usec };
        cleanup_strv char **kept = NULL;
        RemoveStats st = {};

        if (dir)
                (void) remove_tree(ctx->root_fd, dir, &o, &st);
        remove_stats_done(&st);
        (void) backup_observe(ctx, &list, &member, NULL);
        if (backup_paths(ctx, BACKUP_IRREPLACEABLE, &kept) < 0)
                return -ENOMEM; /* its only other failure: it read the same files just now */
        unsaved = strprintf("%s%s%s", strempty(list), member ? (list ? ", " : "") : "",
                            member ? "the etcd snapshot" : "");
        if (!unsaved)
                return -ENOMEM;
        r = set_errmsg(reterr_msg, r,
                       "the backup could not be written (%s): not saved: %s; kept without it: the control plane's "
                       "CAs and the etcd data directory (unless its member left its cluster); everything else is reset",
                       strna(why), unsaved);
        if (backup_kept_unwritten(ctx, TAKE_PTR(unsaved), TAKE_PTR(kept)) < 0)
                return -ENOMEM;
        log_error("%s", *reterr_msg);
        return r;
}

/* Datastores the written backup could not copy stay, with their log and index: the files phase keeps
 * them as it keeps what an unwritten backup did not save. */
static int backup_keep_uncopied(Context *ctx, const BackupRun *b) {
        cleanup_strv char **rows = NULL;

        STRV_FOREACH(u, b->uncopied)
                if (strv_extend(&rows, *u) < 0 || strv_consume(&rows, strprintf("%s-wal", *u)) < 0 ||
                    strv_consume(&rows, strprintf("%s-shm", *u)) < 0)
                        return -ENOMEM;
        return backup_kept_uncopied(ctx, TAKE_PTR(rows));
}

/* The snapshot is asked of this node's own member only (node_etcd_snapshot()). A member that does not
 * answer is noted, not a failure: its member/snap/db is copied instead; a snapshot that cannot be
 * written is one. */
static int save_snapshot(Context *ctx, int dst_fd, BackupRun *b) {
        NodeEtcdSnapshot s;
        int r;

        r = node_etcd_snapshot(ctx, dst_fd, SNAPSHOT_NAME, &s);
        b->snapshot = TAKE_PTR(s.msg);
        if (r >= 0 && s.silent)
                r = backup_save_member_db(ctx, dst_fd, s.data_dir, b);
        node_etcd_snapshot_done(&s);
        return r;
}

/* The sources, the datastores and the snapshot into dst (dir): the first failure stops it, with
 * the words in *reterr_msg. */
static int save_all(Context *ctx, char *const *sources, int dst, const char *dir, BackupRun *b, char **reterr_msg) {
        int r = 0;

        for (char *const *s = sources; r >= 0 && s && *s; s++) {
                uint64_t before = b->files;

                r = backup_save_source(ctx, dst, *s, b);
                if (r >= 0 && b->files > before)
                        r = strv_extend(&b->saved, *s);
                if (r < 0)
                        return set_errmsg(reterr_msg, r, "cannot save %s into %s: %s; " NOTHING_WITHOUT, *s, dir,
                                          strerror(-r));
        }
        if (r < 0)
                return r;
        r = backup_save_datastores(ctx, dst, b);
        if (r < 0)
                return set_errmsg(reterr_msg, r, "%s into %s; " NOTHING_WITHOUT,
                                  b->stores ? b->stores[strv_length(b->stores) - 1] : "a datastore could not be saved",
                                  dir);
        r = save_snapshot(ctx, dst, b);
        if (r < 0)
                return set_errmsg(reterr_msg, r, "%s into %s; " NOTHING_WITHOUT, strna(b->snapshot), dir);
        if (fsync(dst) < 0)
                return set_errmsg(reterr_msg, negative_errno(), "cannot sync %s: %m", dir);
        return 0;
}

static int backup_apply(Action *a, Context *ctx, char **reterr_msg) {
        cleanup_close int dst = -EBADF;
        cleanup_free char *dir = NULL;
        cleanup_strv char **sources = NULL;
        BackupRun b = { .db_copy_max = arg_etcd_db_copy_max ?: DB_COPY_MAX_DEFAULT };
        int r;

        /* Nothing left to save (a node already reset): no empty backup directory either. */
        r = backup_observe(ctx, NULL, NULL, NULL);
        if (r <= 0)
                return r < 0 ? r : set_errmsg(reterr_msg, 0, "nothing to back up");
        r = backup_paths(ctx, BACKUP_SOURCES, &sources);
        if (r < 0)
                return r;
        r = backup_dir_open(ctx, &dst, &dir);
        if (r < 0)
                (void) set_errmsg(reterr_msg, r, "cannot create a backup directory beneath %s: %s; " NOTHING_WITHOUT,
                                  BACKUP_DIR, strerror(-r));
        else
                r = save_all(ctx, sources, dst, dir, &b, reterr_msg);
        /* Sources that are left but hold no file (kubeadm's emptied pki and manifests after a
         * reset): nothing was saved, and a second run on a clean node changes nothing. */
        if (r >= 0 && b.files == 0 && !b.snapshot) {
                r = remove_tree(ctx->root_fd, dir, NULL, NULL);
                r = r < 0 ? set_errmsg(reterr_msg, r, "cannot remove the empty %s: %s", dir, strerror(-r))
                          : set_errmsg(reterr_msg, 0, "nothing to back up: the sources left hold no file");
        } else if (r >= 0) {
                *reterr_msg = describe_saved(&b, dir);
                a->backup_path = strdup(dir);
                a->backup_bytes = b.bytes;
                a->backup_files = b.files;
                r = !a->backup_path || backup_prune_written(ctx, strrchr(dir, '/') + 1) < 0
                            ? -ENOMEM
                            : backup_keep_uncopied(ctx, &b) ?: 1;
        } else if (backup_failure_goes_on(r)) {
                *reterr_msg = mfree(*reterr_msg);
                (void) set_errmsg(reterr_msg, 0, "%s", strerror(-r));
                r = backup_unwritten(ctx, dir, r, reterr_msg);
        }
        backup_run_done(&b);
        return r;
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
        if (arg_no_backup) {
                r = action_set_skip(a, "--no-backup");
                return r < 0 ? r : backup_prune_plan(ctx, plan, false);
        }
        r = backup_observe(ctx, &list, &member, &data_dir);
        if (r < 0)
                return r;
        a->present = r > 0;
        if (a->present && backup_room(ctx, data_dir, &room) == -ENOMEM)
                return -ENOMEM;
        r = action_set_detail(a, "%s%s%s%s%s", list ? "copy " : "nothing to copy", strempty(list),
                              member ? "; an etcd snapshot of member " : "", strempty(member), strempty(room));
        return r < 0 ? r : backup_prune_plan(ctx, plan, a->present);
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
        { "backup-keep", PHASE_OPTION_REQUIRED_ARG, "N",
          "Keep at most N backups in " BACKUP_DIR ", the newest\n"
          "(this run's among them); older ones are removed (5;\n"
          "0 keeps every one)",
          backup_prune_parse_keep },
        {},
};
