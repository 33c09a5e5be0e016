/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* This node's etcd member as its own files describe it (kubeadm's static pod manifest, kubespray's
 * and kubekey's /etc/etcd.env, k3s's and rke2's server/db/etcd/config), and how to reach the cluster
 * it belongs to. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/config/etcd-owner.h"
#include "agent/engine/context.h"
#include "etcd/etcd.h"

typedef struct NodeEtcd {
        char *source; /* the node file that names the member */
        char *name;
        char **peer_urls;                     /* --initial-advertise-peer-urls */
        char **endpoints;                     /* client URLs: this member's first, then the others' the files name */
        size_t n_own;                         /* how many of them are this member's */
        char *data_dir;                       /* node path */
        char *ca_file, *cert_file, *key_file; /* host paths (beneath --root) */
        EtcdOwner owner;                      /* whose it is (etcd-owner.h) */
        char *why;                            /* the decision in one line */
        bool external;                        /* out of scope: never touched */
        /* --root: the tree is not the running machine. A URL of the tree's that leads here (loopback,
         * 0.0.0.0, an address of this machine's) reaches the running machine's etcd, never the
         * tree's member: it is never one of the n_own, and is asked for a member list last. */
        bool elsewhere;
        char **not_own;         /* this member's client URLs left out of the n_own, and why */
        char **initial_cluster; /* --initial-cluster's other members, "name=peer URL" */
} NodeEtcd;

void node_etcd_done(NodeEtcd *l);
/* 1 and the member, 0 when the node's files name none or the etcd is out of scope (ret->external),
 * -errno. Follows the run's one decision of who owns the etcd (phase_etcd_scope()). Under --root
 * the tree is elsewhere (ret->elsewhere). */
int node_etcd_find(Context *ctx, NodeEtcd *ret, char **reterr);
/* The same for a tree that runs here whatever --root says: forget's, run on the surviving control
 * plane whose files --root names (a toolbox container's /host). */
int node_etcd_find_here(Context *ctx, NodeEtcd *ret, char **reterr);

/* Is m this node's member: the same name and a peer URL in common? */
bool node_etcd_is(const NodeEtcd *l, const EtcdMember *m);
/* A member named like this node's whose peer URLs are others': never touched, but worth a word. */
bool node_etcd_name_clash(const NodeEtcd *l, const EtcdMember *m);

/* Which member of list is this node's, the one rule the etcd phase and forget share. With st (what
 * this member's own client URL answered): the member with st's ID, and only when its name and peer
 * URLs are this node's. Without: under --root (l->elsewhere), the one member with this node's name
 * and peer URLs; live, none (only an answer of its own names it). 1 and *ret; 0 when list has no
 * such member (with st: its ID is not listed); -EPERM the answer names another member's name or
 * peer URLs, -EEXIST more than one has them, -ENXIO live without st; the words in *reterr. */
int node_etcd_identify(const NodeEtcd *l, const EtcdMemberList *list, const EtcdStatus *st, const EtcdMember **ret,
                       char **reterr);
/* Is list this node's cluster by its files: does it list, by name and peer URL, another member this
 * member's --initial-cluster names? */
bool node_etcd_cluster_is_ours(const NodeEtcd *l, const EtcdMemberList *list);

/* Add the client URLs of every member but skip_id to l->endpoints (remembered for the run too, so
 * that a later node_etcd_find() asks them when this member no longer answers). */
int node_etcd_learn(Context *ctx, NodeEtcd *l, const EtcdMemberList *list, uint64_t skip_id);
/* Forget the client URLs node_etcd_learn() remembered: at the end of the run. */
void node_etcd_forget(void);

/* A client for one endpoint with the member's TLS files, every call cut to deadline. */
int node_etcd_client(const NodeEtcd *l, const char *endpoint, uint64_t deadline, EtcdClient **ret);
/* Maintenance.Status from this member's own client URLs (the first l->n_own endpoints): who answers
 * there. Only node_etcd_identify() says whether that is this node's member. */
int node_etcd_status(const NodeEtcd *l, uint64_t deadline, EtcdStatus *ret, char **reterr);
/* MemberList from the first endpoint that answers, in l->endpoints' order: 0, the list and the
 * endpoint that answered, or the last failure with every endpoint's reason in *reterr. */
int node_etcd_member_list(const NodeEtcd *l, uint64_t deadline, EtcdMemberList *ret, char **ret_endpoint,
                          char **reterr);
