/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The older backups beneath BACKUP_DIR pruned to --backup-keep, never the one this run wrote. */
#pragma once

#include "agent/engine/phase.h"

/* The backup row's run: the directory it wrote (its name beneath BACKUP_DIR), which the prune row
 * never removes. name is copied; -ENOMEM. */
int backup_prune_written(Context *ctx, const char *name);

/* The prune row, after the backup row: will_write says whether the backup row is planned to write a
 * backup (something to save, no --no-backup). -ENOMEM. */
int backup_prune_plan(Context *ctx, Plan *plan, bool will_write);

/* --backup-keep=N: 0, or -EINVAL with *reterr saying what it takes. */
int backup_prune_parse_keep(const char *arg, char **reterr);
