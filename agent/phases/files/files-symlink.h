/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The files phase's conditional unlink: a symlink that leads to a file the run removes ("remove-symlink-to"). */
#pragma once

#include "agent/engine/context.h"
#include "agent/config/manifest.h"
#include "agent/engine/plan.h"
#include "agent/node/cni-keep.h"

/* Plan one "unlink" action for a remove-symlink-to line (observed read-only; keep: the directories
 * kept runtimes watch). -ENOMEM only: what the path is, and where it leads, becomes the action's
 * detail or skip. */
int files_symlink_plan(Context *ctx, Plan *plan, const ManifestEntry *e, const CniKeepSet *keep);
