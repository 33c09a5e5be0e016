/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Will the backup fit: the plan's word on room. */
#pragma once

#include "agent/engine/context.h"

/* What the backup would write (the sources as they are, a block per directory and link, the run's
 * directories, the member's backend for its snapshot: data_dir, NULL without a member) against what
 * is free where it goes, as the tail of the plan's detail ("; about N KiB to write, M KiB free ...",
 * "; NO ROOM: ..."). 0 and *ret; -ENOMEM. */
int backup_room(const Context *ctx, const char *data_dir, char **ret);
