/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fixed order of reset phases. Adding a phase is one row in phases[] plus its module. */
#pragma once

#include <stdbool.h>

#include "agent/context.h"
#include "agent/plan.h"

typedef struct Phase {
        const char *name;
        const char *summary;
        /* Observe the node read-only and append this phase's actions to the plan. A failure to
         * observe is returned as -errno with a message; the engine then refuses to execute. */
        int (*plan)(Context *ctx, Plan *plan, char **reterr);
} Phase;

/* Every phase module exports one planning function. */
int phase_mounts_plan(Context *ctx, Plan *plan, char **reterr);
int phase_files_plan(Context *ctx, Plan *plan, char **reterr);
int phase_network_plan(Context *ctx, Plan *plan, char **reterr);
int phase_firewall_plan(Context *ctx, Plan *plan, char **reterr);

const Phase *phase_table(size_t *ret_n);
const Phase *phase_find(const char *name);
