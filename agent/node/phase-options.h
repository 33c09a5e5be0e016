/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The options more than one phase reads, kept beneath the phases so that none reaches into another
 * for them: the row of the phase each is named for lists it (phases.c); their values are
 * configuration, set once by the command line before any run. --etcd-timeout is the etcd module's
 * (node_etcd_options). */
#pragma once

#include <stdbool.h>

#include "agent/engine/phase.h"
#include "time-util.h"

/* --cri-endpoint as given (unix:///PATH or /PATH), or NULL (the manifest's cri-endpoint lines, else the
 * known sockets): the pods phase removes pods through it, and the kept runtime's questions
 * (cni-keep.h: the files phase, the rejoin verdict) ask the same runtime. */
const char *phase_option_cri_endpoint(void);
int phase_option_cri_endpoint_parse(const char *arg, char **reterr); /* the pods phase's row */

/* --unit-timeout, or 0 when not given (services.h's default): how long each wait for a systemd job
 * lasts, the services phases' stops, the files phase's restarts, the reload phase's reloads. */
usec_t phase_option_unit_timeout(void);
extern const PhaseOption phase_unit_options[]; /* the services-early row's */

/* --delete-node, or --drain, which implies it: the node-object phase deletes the Node once the node
 * is reset. */
bool phase_option_delete_node(void);
int phase_option_delete_node_parse(const char *arg, char **reterr); /* the node-object phase's row, and --drain's */
