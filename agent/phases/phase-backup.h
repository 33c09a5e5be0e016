/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where node-reset keeps what it saved before deleting: never removed by any manifest. */
#pragma once

#include <stdbool.h>

#define BACKUP_DIR "/var/backups/node-reset"

/* Does removing node path "path" reach the backups: it is BACKUP_DIR or beneath it
 * (*ret_contains false), or an ancestor of it (*ret_contains true)? */
bool backup_dir_protects(const char *path, bool *ret_contains);
