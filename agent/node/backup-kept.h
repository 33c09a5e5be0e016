/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where node-reset keeps what it saved before deleting: never removed by any manifest. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "agent/engine/context.h"

#define BACKUP_DIR "/var/backups/node-reset"

/* After a backup that could not be written: the rows that have no other copy (node paths: the CA
 * keys, the service-account key, the encryption configurations, the datastores), n in *ret_n, which
 * the files phase keeps (files-protect.h); after one that was written, the datastores it could not
 * copy. None when everything was saved or no backup was asked for. */
const char *const *backup_unsaved_rows(const Context *ctx, size_t *ret_n);

/* Why those rows were not saved: "the backup could not be written" (no room) or "the backup could
 * not copy it" (a datastore without libsqlite3, or too big: then only the datastores are kept). */
const char *backup_unsaved_why(const Context *ctx);

/* Those rows (node paths) that exist at or beneath target (a path or a pattern), for the report:
 * NULL when none. -ENOMEM. */
int backup_unsaved_kept_beneath(const Context *ctx, const char *target, char ***ret);
