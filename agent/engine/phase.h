/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fixed order of reset phases. Adding a phase is one row in phases[] plus its module. */
#pragma once

#include <stdbool.h>

#include "agent/engine/context.h"
#include "agent/engine/plan.h"

typedef struct Phase {
        const char *name;
        const char *summary;
        /* Acts on the file-system tree, so --root applies. The others act on the running system
         * (its systemd, processes, CRI socket, network namespace): with --root they run only when
         * --phases names them, since in a rescue system the running system is not the node. */
        bool tree;
        /* Observe the node read-only and append this phase's actions to the plan. A failure to
         * observe is returned as -errno with a message; the engine then refuses to execute. */
        int (*plan)(Context *ctx, Plan *plan, char **reterr);
        /* DLIB_MASK()s of the optional libraries it cannot work without: when one is not on the node
         * (looked up, not loaded), the engine plans one skipped row naming it instead of calling
         * plan(). The phase loads a library at its first call of it. */
        unsigned needs;
} Phase;

/* Every phase module exports one planning function. */
int phase_mounts_plan(Context *ctx, Plan *plan, char **reterr);
int phase_files_plan(Context *ctx, Plan *plan, char **reterr);
int phase_network_plan(Context *ctx, Plan *plan, char **reterr);
int phase_firewall_plan(Context *ctx, Plan *plan, char **reterr);
int phase_pods_plan(Context *ctx, Plan *plan, char **reterr);
int phase_etcd_plan(Context *ctx, Plan *plan, char **reterr);
int phase_backup_plan(Context *ctx, Plan *plan, char **reterr);
int phase_services_early_plan(Context *ctx, Plan *plan, char **reterr);
int phase_services_late_plan(Context *ctx, Plan *plan, char **reterr);
int phase_processes_plan(Context *ctx, Plan *plan, char **reterr);
int phase_reload_plan(Context *ctx, Plan *plan, char **reterr);
int phase_node_object_plan(Context *ctx, Plan *plan, char **reterr);
/* Free what the node-object phase kept in ctx for the run. */
void phase_node_object_done(Context *ctx);

const Phase *phase_table(size_t *ret_n);
const Phase *phase_find(const char *name);

/* systemd as this run reaches it: opened by the first phase that asks (beneath ctx->root), then
 * shared, so every phase sees the same manager and its cached unit state. */
int phase_systemd(Context *ctx, struct ServiceManager **ret);
