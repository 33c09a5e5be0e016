/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The forget verb: from a surviving control plane, remove what a node gone for good left in its
 * cluster (its etcd member, its Node object, kubeadm's record of its API endpoint). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/base/output.h"

/* --stale-for's default: the Node's Ready heartbeat and its Lease older than this. kubelet renews its
 * Lease every 10 s and reports Ready at least every 5 minutes. */
#define FORGET_STALE_FOR_DEFAULT_SEC (5 * 60)

typedef struct ForgetOptions {
        const char *root;       /* the surviving node's tree; NULL: "/" */
        const char *kubeconfig; /* --kubeconfig; NULL: the node's administrator kubeconfig */
        const char *node_name;  /* --node-name: the node forget runs on; NULL: its kubelet's, or the host name */
        uint64_t stale_for_sec; /* --stale-for; 0: FORGET_STALE_FOR_DEFAULT_SEC */
        bool force;             /* --force: do not wait for the Node to be stale */
        bool etcd_gone;         /* --etcd-gone: no local etcd, and the node's member is known gone */
        bool plan_only;         /* --plan: the dry run */
        bool yes;
        bool all_actions; /* -v */
        OutputMode output;
        uint64_t deadline_usec; /* --timeout, CLOCK_MONOTONIC; 0: none */
} ForgetOptions;

/* argv: "forget", NODE. Returns the exit status (node-reset(8)): 0, 1 (something could not be
 * observed or done; --plan too), 2 usage, 3 refused. */
int verb_forget(const ForgetOptions *o, int argc, char *argv[]);
