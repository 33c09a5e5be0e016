/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* node-reset's phases, in their order: each phase module's planning function, and the table the
 * program registers with the engine. Adding a phase is one row in phases.c plus its module. */
#pragma once

#include "agent/engine/phase.h"

int phase_backup_plan(Context *ctx, Plan *plan, char **reterr);
int phase_drain_plan(Context *ctx, Plan *plan, char **reterr);
int phase_etcd_plan(Context *ctx, Plan *plan, char **reterr);
int phase_services_early_plan(Context *ctx, Plan *plan, char **reterr);
int phase_node_object_plan(Context *ctx, Plan *plan, char **reterr);
int phase_pods_plan(Context *ctx, Plan *plan, char **reterr);
int phase_services_late_plan(Context *ctx, Plan *plan, char **reterr);
int phase_processes_plan(Context *ctx, Plan *plan, char **reterr);
int phase_cgroups_plan(Context *ctx, Plan *plan, char **reterr);
int phase_mounts_plan(Context *ctx, Plan *plan, char **reterr);
int phase_firewall_plan(Context *ctx, Plan *plan, char **reterr);
int phase_network_plan(Context *ctx, Plan *plan, char **reterr);
int phase_files_plan(Context *ctx, Plan *plan, char **reterr);
int phase_reload_plan(Context *ctx, Plan *plan, char **reterr);

/* The options each phase takes (PhaseOption), declared in the phase's file next to the code that
 * reads them; a phase without any has none here. An option several phases read is declared by the
 * module beneath them that keeps it (node_etcd_options, phase_unit_options, --cri-endpoint). */
extern const PhaseOption phase_backup_options[];
extern const PhaseOption phase_drain_options[];
extern const PhaseOption phase_node_object_options[];
extern const PhaseOption phase_pods_options[];
extern const PhaseOption phase_processes_options[];
extern const PhaseOption phase_firewall_options[];
extern const PhaseOption phase_network_options[]; /* network/links.c */

/* The rejoin verdict's question (kubeadm join's kubelet-start refuses a Node of this name that is
 * Ready), asked with the credentials the phase found: 1 Ready, 0 no such Node or not Ready; -ENODATA
 * without --delete-node or credentials, another -errno when the API server gives no answer about it.
 * *ret_msg says which. */
int phase_node_object_ready(Context *ctx, char **ret_msg);

/* Does a failed backup (its action's -errno) let the run go on: it could not be written (no room,
 * a quota, a read-only file system)? The rows with no other copy are then kept (backup-kept.h); any other
 * failure stops the run before anything is deleted. */
bool backup_failure_goes_on(int error);

/* Hand the table to the engine: once, before any phase is named or planned. */
void reset_phases_register(void);
