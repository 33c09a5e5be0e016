/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which network teardown the pods phase still asks of the CNI plugin, and how many CRI calls it keeps
 * in flight: decided from the CNI configuration the runtime loaded, the phases of this run and the
 * machine's cores. */
#pragma once

#include <stdbool.h>

#include "agent/engine/context.h"
#include "agent/os/runtime-info.h"

typedef enum PodsTeardownKind {
        TEARDOWN_NONE,  /* the runtime loaded no CNI configuration: nothing to tear down */
        TEARDOWN_FULL,  /* the plugin's own DEL, every pod */
        TEARDOWN_CHEAP, /* a loopback-only conflist stands in: what the plugins made goes with later phases */
} PodsTeardownKind;

typedef struct PodsTeardown {
        PodsTeardownKind kind;
        char *config;      /* the CNI configuration the runtime loaded (node path), or NULL */
        char *types;       /* its plugins' and IPAMs' types, comma separated */
        char *why;         /* one sentence for the plan */
        bool ipam_lock;    /* a full DEL serialises on the IPAM plugin's node-wide lock */
        bool agent_needed; /* a full DEL may need a host-network pod alive (the CNI's agent) */
} PodsTeardown;

void pods_teardown_done(PodsTeardown *t);
/* Decide for the runtime described by info. -ENOMEM only. */
int pods_teardown_decide(const Context *ctx, const RuntimeInfo *info, PodsTeardown *ret);

/* Whether every plugin type of a comma-separated list only makes node state a reset removes anyway
 * (links, netns, routes, CNI- chains, /var/lib/cni): bridge, host-local, portmap, loopback, flannel,
 * ... *ret_first_other (may be NULL) is the first type that does not. */
bool pods_teardown_node_local(const char *types, const char **ret_first_other, size_t *ret_len);

/* CRI calls in flight at once for n pods: a CNI with a node-wide IPAM lock serialises every DEL, so
 * more calls than can work while one holds the lock only queue inside the runtime and eat their own
 * deadlines; without a DEL to wait for, the runtime's work is CPU: a few calls per core keep every
 * core busy. *ret_why says which bound chose it. */
unsigned pods_concurrency(const PodsTeardown *t, size_t n, unsigned cores, const char **ret_why);
