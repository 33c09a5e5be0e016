/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one rule for the fate of this node's etcd data directory, used by the etcd and files phases. */
#pragma once

#include <stdbool.h>

#include "agent/engine/context.h"

/* 1: remove it, 0: keep it (residue); *ret_reason (malloc'd) says why either way. Removed only when
 * this member left (removed by this run, or its cluster says by member ID it is not a member); when
 * it is the last voting member and the backup holds a complete snapshot (the whole cluster is being
 * deleted, as kubeadm and kubekey do); when no member answered at all and the backup holds a copy of
 * its member/snap/db. */
int node_etcd_data_dir_fate(const NodeEtcdFacts *f, char **ret_reason);

/* This node's member's data directory (node path), from ctx (the etcd phase found it) or from the
 * node's own files; NULL when no local member (or an external etcd) is named. -errno on failure. */
int node_etcd_data_dir_find(Context *ctx, const char **ret);

void node_etcd_facts_done(NodeEtcdFacts *f);
