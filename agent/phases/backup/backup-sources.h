/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The backup's lists of node paths: what it saves as files, what has no other copy, the datastores. */
#pragma once

#include <stdbool.h>

#include "agent/engine/context.h"

/* The etcd data directory is the other row with no other copy: its own rule keeps it without a
 * snapshot or a copy of its member/snap/db (node_etcd_data_dir_fate()). */
typedef enum BackupList {
        BACKUP_SOURCES,       /* saved as files */
        BACKUP_IRREPLACEABLE, /* kept when the backup could not be written */
        BACKUP_DATASTORES,    /* copied as databases (SQLite's online backup) */
} BackupList;

/* The node paths of one list, every installer's, each once, appended to *l. -ENOMEM, or a data
 * directory that cannot be read. */
int backup_paths(const Context *ctx, BackupList which, char ***l);

/* Is the node path there (not followed if a symlink), on a mount that answers? */
bool backup_path_exists(const Context *ctx, const char *path);
