/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where node-reset keeps what it saved before deleting (never removed by any manifest), and what this
 * run's backup could not save: the rows the files phase then keeps. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "agent/engine/context.h"

#define BACKUP_DIR "/var/backups/node-reset"

/* The backup could not be written (no room): unsaved says what was not saved (for the report), kept
 * the rows with no other copy (node paths: the CA keys, the service-account key, the encryption
 * configurations, the datastores, k3s's and rke2's under their data directories included). Both are
 * taken. -ENOMEM. */
int backup_kept_unwritten(Context *ctx, char *unsaved, char **kept);
/* The backup was written, but could not copy these datastores (node paths, each with its -wal and
 * -shm): taken. -ENOMEM. */
int backup_kept_uncopied(Context *ctx, char **uncopied);

/* After a backup that could not be written: the rows that have no other copy, n in *ret_n, which the
 * files phase keeps (files-protect.h); after one that was written, the datastores it could not copy.
 * None when everything was saved or no backup was asked for. */
const char *const *backup_unsaved_rows(const Context *ctx, size_t *ret_n);

/* Why those rows were not saved: "the backup could not be written" (no room) or "the backup could
 * not copy it" (a datastore without libsqlite3, or too big: then only the datastores are kept). */
const char *backup_unsaved_why(const Context *ctx);

/* Those rows (node paths) that exist at or beneath target (a path or a pattern), for the report:
 * NULL when none. -ENOMEM. */
int backup_unsaved_kept_beneath(const Context *ctx, const char *target, char ***ret);
