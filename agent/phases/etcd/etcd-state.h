/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What an earlier run knew about this node's etcd member: which member ID left which cluster, kept in
 * /var/lib/node-reset/etcd.state beneath --root so that a rerun can say so when nobody can be asked. */
#pragma once

#include <stdint.h>

#include "agent/engine/context.h"

#define ETCD_STATE_DIR "/var/lib/node-reset"
#define ETCD_STATE_NAME "etcd.state"

typedef struct NodeEtcdLeft {
        uint64_t cluster_id;
        uint64_t member_id;
        char name[256];
} NodeEtcdLeft;

/* Remember that member_id (named name) left cluster_id. */
int node_etcd_state_record_left(const Context *ctx, uint64_t cluster_id, uint64_t member_id, const char *name);
/* The newest record for cluster_id (0: any cluster) whose name is name: 1 and *ret, 0 none, -errno. */
int node_etcd_state_find_left(const Context *ctx, uint64_t cluster_id, const char *name, NodeEtcdLeft *ret);
