/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a verb that observes the node (plan, run, status) sets up first, and frees last. */
#pragma once

#include "agent/config/node-config.h"
#include "agent/engine/engine.h"
#include "agent/verbs/options.h"

typedef struct Setup {
        Context ctx;
        PhaseSelection sel;
        char *root;
        char *hostname; /* node_host_name(): the tree's under --root, NULL when unknown */
        NodeConfig config;
} Setup;

/* What plan, run and status take (run a few more): the common options and the output, the node's tree
 * and configuration, the phases' selection, the deadline, the credentials --delete-node and --drain
 * use. They take every phase's options too. */
#define SETUP_OPTIONS                                                                                           \
        OPTIONS_COMMON, &option_output, &option_root, &option_manifest, &option_profile, &option_with_runtime,  \
                &option_phases, &option_skip_phases, &option_timeout, &option_lazy_unmount, &option_kubeconfig, \
                &option_node_name
extern const CmdlineOption *const setup_options[];

/* The privileges, the phases selected, the root opened, then node_config_load(). Returns 0, or the
 * exit status > 0 the verb ends with (its reason said); setup_done() either way. */
int setup_node(Setup *s, const ProgramOptions *o);
void setup_done(Setup *s);
