/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Copying the node's files into this run's backup directory, or (dry) counting what that would write. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/engine/context.h"

typedef struct BackupRun {
        bool dry;             /* only measure: what the copy would write, in blocks of block bytes */
        uint64_t block;       /* the backup file system's block size (dry) */
        uint64_t db_copy_max; /* --etcd-db-copy-max: the largest member/snap/db copied */
        uint64_t files, bytes, written;
        char **saved;    /* the sources saved */
        char *snapshot;  /* what happened to the snapshot */
        char *db_copy;   /* what happened to the copy of member/snap/db, when there is no snapshot */
        char **stores;   /* what happened to each datastore */
        char **uncopied; /* datastores (node paths) not copied: kept */
} BackupRun;

void backup_run_done(BackupRun *b);

/* BACKUP_DIR (0700, however it was made) and this run's directory in it, named for the UTC time
 * (".1", ".2", ... for runs within the same second): its fd and its node path. */
int backup_dir_open(Context *ctx, int *ret_fd, char **ret_node_path);

/* One source, saved beneath dst_fd at its own node path; on a network or FUSE mount, where a mount
 * that stops answering cannot hang the backup (one that does not answer is not saved, and said). */
int backup_save_source(const Context *ctx, int dst_fd, const char *path, BackupRun *b);

/* Every datastore (BACKUP_DATASTORES) copied as a database into dst_fd at its own node path; one not
 * copied is kept on the node and said (b->uncopied), one the disk cannot take fails the backup. */
int backup_save_datastores(const Context *ctx, int dst_fd, BackupRun *b);

/* No member answered: its member/snap/db (which "etcdctl snapshot restore" accepts with
 * --skip-hash-check), up to b->db_copy_max, is the copy the data directory's fate then depends on
 * (the fact db_copied). */
int backup_save_member_db(Context *ctx, int dst_fd, const char *data_dir, BackupRun *b);
