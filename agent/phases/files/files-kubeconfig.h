/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The files phase's kubeconfig rows: this cluster's entries out of a user's kubeconfig
 * ("prune-kubeconfig"), the file whole when nothing else is in it. */
#pragma once

#include "agent/config/manifest.h"
#include "agent/engine/context.h"
#include "agent/engine/plan.h"
#include "agent/node/cni-keep.h"

/* Plan one "kubeconfig" action for a prune-kubeconfig line (observed read-only; keep: the directories
 * kept runtimes watch). -ENOMEM only: what the file holds becomes the action's detail, skip or failure
 * to come. */
int files_kubeconfig_plan(Context *ctx, Plan *plan, const ManifestEntry *e, const CniKeepSet *keep);
