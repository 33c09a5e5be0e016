/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where node-reset keeps what it saved before deleting: never removed by any manifest. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "agent/engine/context.h"

#define BACKUP_DIR "/var/backups/node-reset"

/* After a backup that could not be written: the rows that have no other copy (node paths: the CA
 * keys, the service-account key), n in *ret_n, which the files phase keeps (phase-files-protect.h).
 * None when the backup was written or not asked for. */
const char *const *backup_unsaved_rows(const Context *ctx, size_t *ret_n);

/* Those rows (node paths) that exist at or beneath target (a path or a pattern), for the report:
 * NULL when none. -ENOMEM. */
int backup_unsaved_kept_beneath(const Context *ctx, const char *target, char ***ret);
