/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* node-reset's phases, in their order: each phase module's planning function, and the table the
 * program registers with the engine. Adding a phase is one row in phases.c plus its module. */
#pragma once

#include "agent/engine/phase.h"

int phase_backup_plan(Context *ctx, Plan *plan, char **reterr);
int phase_etcd_plan(Context *ctx, Plan *plan, char **reterr);
int phase_services_early_plan(Context *ctx, Plan *plan, char **reterr);
int phase_node_object_plan(Context *ctx, Plan *plan, char **reterr);
/* Free what the node-object phase kept in ctx for the run. */
void phase_node_object_done(Context *ctx);
int phase_pods_plan(Context *ctx, Plan *plan, char **reterr);
int phase_services_late_plan(Context *ctx, Plan *plan, char **reterr);
int phase_processes_plan(Context *ctx, Plan *plan, char **reterr);
int phase_mounts_plan(Context *ctx, Plan *plan, char **reterr);
int phase_firewall_plan(Context *ctx, Plan *plan, char **reterr);
int phase_network_plan(Context *ctx, Plan *plan, char **reterr);
int phase_files_plan(Context *ctx, Plan *plan, char **reterr);
int phase_reload_plan(Context *ctx, Plan *plan, char **reterr);

/* Hand the table to the engine: once, before any phase is named or planned. */
void reset_phases_register(void);
