/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where node-reset keeps what it saved before deleting: never removed by any manifest. */
#pragma once

#include <stdbool.h>

#include "agent/engine/context.h"

#define BACKUP_DIR "/var/backups/node-reset"

/* Does removing node path "path" reach the backups: it is BACKUP_DIR or beneath it
 * (*ret_contains false), or an ancestor of it (*ret_contains true)? */
bool backup_dir_protects(const char *path, bool *ret_contains);

/* After a backup that could not be written: does removing node path "path" reach a row that has no
 * other copy (a CA key, the service-account key): it is one (*ret_contains false), or holds one
 * (*ret_contains true)? Always false when the backup was written or not asked for. */
bool backup_unsaved_keeps(const Context *ctx, const char *path, bool *ret_contains);

/* Those rows (node paths) that exist at or beneath target (a path or a pattern), for the report:
 * NULL when none. -ENOMEM. */
int backup_unsaved_kept_beneath(const Context *ctx, const char *target, char ***ret);
