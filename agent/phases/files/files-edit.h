/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The files phase's edits: a marked block cut out of a file the host owns ("remove-block"). */
#pragma once

#include "agent/engine/context.h"
#include "agent/config/manifest.h"
#include "agent/engine/plan.h"
#include "agent/node/cni-keep.h"

/* Plan one "edit" action for a remove-block line (observed read-only; keep: the directories kept
 * runtimes watch). -ENOMEM only: what the file is or holds becomes the action's detail, skip or
 * failure to come. */
int files_edit_plan(Context *ctx, Plan *plan, const ManifestEntry *e, const CniKeepSet *keep);
