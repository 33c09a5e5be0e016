/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Forgetting a node gone for good, from a surviving control plane: the proofs that it is gone (never
 * the node this runs on, a Node and Lease silent for --stale-for, a control plane's member checked),
 * and the plan of three rows that removes what it left in its cluster (its etcd member, kubeadm's
 * record of its API endpoint, its Node object), each proving it again before it acts. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/base/output.h"
#include "agent/kube/kube-api.h"
#include "agent/engine/context.h"
#include "agent/engine/plan.h"
#include "agent/node/etcd.h"

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

typedef struct Forget {
        const ForgetOptions *o;
        const char *node;
        Context ctx;
        char *root;
        char *hostname; /* the node forget runs on, for the report; NULL: unknown */
        KubeIdentity id;
        char *id_error;   /* why there are no credentials; NULL when there are */
        char *self_error; /* why this node's own Node name (id.node) is unknown; NULL when known */
        NodeEtcd local;
        int local_found; /* node_etcd_find_here(): 1, 0 none, < 0 */
        char *local_error;
        char **addresses; /* the Node's and ClusterStatus's: gathered by each observation, kept */
        bool refused;     /* the plan refused */
        bool failed;      /* the plan could not observe something: it exits 1, and nothing is run */
        Plan *running;    /* the plan being executed */
} Forget;

/* Set up to forget node from the tree root (taken; root_fd its O_PATH fd, taken too): the name of the
 * node this runs on, the credentials, this node's own etcd member. -ENOMEM only: what is missing is
 * said by the plan. forget_done() either way. */
int forget_setup(Forget *f, const ForgetOptions *o, const char *node, char *root, int root_fd);
void forget_done(Forget *f);

/* Observe the node, prove it gone and plan its rows (f->refused, f->failed say how the plan ended;
 * the first row's skip reason says why it was refused). -ENOMEM. */
int forget_plan(Forget *f, Plan *plan);

/* Run the plan's rows (each proves the node gone again first), then observe again: the rows that
 * still find something to do in *ret_residue, NULL when the cluster could not be observed again. */
int forget_execute(Forget *f, Plan *plan, Plan **ret_residue);
