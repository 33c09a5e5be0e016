/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A consistent copy of a SQLite database (k3s's datastore) by SQLite's own online backup API. */
#pragma once

#include <stdint.h>

/* Copy the database src_name in the directory src_dir (with its -wal: the copy is one transaction's
 * state, whoever writes it meanwhile) into a new file dst_name (0600, O_EXCL) in dst_dir, synced.
 * At most max bytes (the database and its -wal together: -EFBIG). deadline_usec (CLOCK_MONOTONIC, 0
 * none) bounds the wait for a writer's lock (-ETIME). -EOPNOTSUPP without libsqlite3; -ENOENT without
 * the database; -ENOSPC/-EDQUOT/-EIO when the copy cannot be written; -EBADMSG when SQLite refuses it.
 * *reterr_msg says why. Nothing is left at dst_name on failure. 1 copied, with its size in *ret_size. */
int sqlite_copy(int src_dir, const char *src_name, int dst_dir, const char *dst_name, uint64_t max,
                uint64_t deadline_usec, uint64_t *ret_size, char **reterr_msg);
