/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The forget verb: from a surviving control plane, remove what a node gone for good left in its
 * cluster (its etcd member, its Node object, kubeadm's record of its API endpoint). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/base/output.h"

typedef struct ForgetOptions {
        const char *root;       /* the surviving node's tree; NULL: "/" */
        const char *kubeconfig; /* --kubeconfig; NULL: the node's administrator kubeconfig */
        bool force;             /* remove a member that still answers */
        bool plan_only;         /* --plan: the dry run */
        bool yes;
        bool all_actions; /* -v */
        OutputMode output;
        uint64_t deadline_usec; /* --timeout, CLOCK_MONOTONIC; 0: none */
} ForgetOptions;

/* argv: "forget", NODE. Returns the exit status (node-reset(8)): 0, 1, 2 usage, 3 refused. */
int verb_forget(const ForgetOptions *o, int argc, char *argv[]);
