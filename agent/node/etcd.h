/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* This node's etcd member, the one module the backup, etcd and files phases and forget share: who owns
 * it, the member as its own files describe it (kubeadm's static pod manifest, kubespray's and
 * kubekey's /etc/etcd.env, k3s's and rke2's server/db/etcd/config), how to reach its cluster, the
 * snapshot the backup takes, and the rule for its data directory's fate; what a run learns of it is
 * kept in the run's Context (node_etcd_run()). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/config/etcd-owner.h"
#include "agent/engine/context.h"
#include "agent/engine/phase.h"
#include "etcd/etcd.h"
#include "time-util.h"

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

/* What the backup and etcd phases establish at act time about this node's member: the facts its data
 * directory's fate is decided from (node_etcd_data_dir_fate()). */
typedef struct NodeEtcdFacts {
        bool observed;      /* the etcd phase asked the cluster in this run */
        bool left;          /* this member left: removed by this run, or the cluster says so by member ID */
        bool last_voter;    /* the last voting member of its cluster */
        bool none_answered; /* no member answered at all */
        bool own_silent;    /* backup: this node's own member did not answer for a snapshot */
        bool snapshot;      /* backup: a complete snapshot of this member's cluster */
        bool db_copied;     /* backup: the member's member/snap/db copied */
        char *why;          /* the etcd phase's word when this member's state is none of the above */
} NodeEtcdFacts;

/* What one run learns about this node's etcd, kept in its Context and freed with it. */
typedef struct NodeEtcdRun {
        /* Who owns it: decided by the first ask (node_etcd_scope()), from the files as they were before
         * anything was changed, and followed by every phase for the rest of the run. */
        EtcdScope *scope;
        /* The member's data directory (node path): found in its files by the etcd phase (or by the files
         * phase when etcd did not run), removed by the files phase once the member has left, checked by
         * the rejoin verdict. */
        char *data_dir;
        NodeEtcdFacts facts;
        /* The other members' client URLs learned while this member answered: later observations
         * (verify) ask them once this member has left and no longer does (node_etcd_learn()). */
        char **learned_endpoints;
} NodeEtcdRun;

/* This run's, created empty at the first ask; NULL on OOM. */
NodeEtcdRun *node_etcd_run(Context *ctx);
/* The facts established so far (all false when none was). */
const NodeEtcdFacts *node_etcd_facts(const Context *ctx);
/* The member's data directory as this run found it (node path), NULL when not found (yet). */
const char *node_etcd_data_dir(const Context *ctx);
/* Who owns this node's etcd, decided once per run (etcd-owner.h). -ENOMEM only. */
int node_etcd_scope(Context *ctx, const EtcdScope **ret);
/* The scope when some phase asked for it already, else NULL. */
const EtcdScope *node_etcd_scope_decided(const Context *ctx);

/* --etcd-timeout, which bounds each pass of the etcd phase and the backup's snapshot, or 0 when it was
 * not given (each caller has its own default). Set once by the command line (node_etcd_options). */
usec_t node_etcd_timeout(void);
extern const PhaseOption node_etcd_options[];

void node_etcd_done(NodeEtcd *l);
/* 1 and the member, 0 when the node's files name none or the etcd is out of scope (ret->external),
 * -errno. Follows the run's one decision of who owns the etcd (node_etcd_scope()). Under --root
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

/* A client for one endpoint with the member's TLS files, every call cut to deadline. */
int node_etcd_client(const NodeEtcd *l, const char *endpoint, uint64_t deadline, EtcdClient **ret);
/* Maintenance.Status from this member's own client URLs (the first l->n_own endpoints): who answers
 * there. Only node_etcd_identify() says whether that is this node's member. */
int node_etcd_status(const NodeEtcd *l, uint64_t deadline, EtcdStatus *ret, char **reterr);
/* MemberList from the first endpoint that answers, in l->endpoints' order: 0, the list and the
 * endpoint that answered, or the last failure with every endpoint's reason in *reterr. */
int node_etcd_member_list(const NodeEtcd *l, uint64_t deadline, EtcdMemberList *ret, char **ret_endpoint,
                          char **reterr);

/* What the snapshot of this node's member came to (node_etcd_snapshot()). */
typedef struct NodeEtcdSnapshot {
        char *member;   /* the member's name; NULL when this node has none in scope (nothing done) */
        char *data_dir; /* its data directory (node path) */
        bool silent;    /* it did not answer on any client URL of its own: no snapshot */
        char *msg;      /* what happened, in one line; NULL when the file could not even be created */
} NodeEtcdSnapshot;

void node_etcd_snapshot_done(NodeEtcdSnapshot *s);
/* Take a snapshot of this node's own member (a snapshot is of what it holds: no other member is asked)
 * into name beneath dir_fd (created with O_EXCL, 0600, synced), within --etcd-timeout (two minutes
 * when not given: a large backend takes time) and the run's deadline, and record the facts it
 * establishes (snapshot, own_silent). 0 and ret->msg: no member (ret->member NULL), a snapshot taken,
 * or none because the member did not answer (ret->silent; no file is left). -errno when it could not
 * be written (the disk's fault: no file is left, ret->msg says why). */
int node_etcd_snapshot(Context *ctx, int dir_fd, const char *name, NodeEtcdSnapshot *ret);

/* 1: remove it, 0: keep it (residue); *ret_reason (malloc'd) says why either way. Removed only when
 * this member left (removed by this run, or its cluster says by member ID it is not a member); when
 * it is the last voting member and the backup holds a complete snapshot (the whole cluster is being
 * deleted, as kubeadm and kubekey do); when no member answered at all and the backup holds a copy of
 * its member/snap/db. */
int node_etcd_data_dir_fate(const NodeEtcdFacts *f, char **ret_reason);

/* This node's member's data directory (node path), from this run (the etcd phase found it) or from
 * the node's own files; NULL when no local member (or an external etcd) is named. -errno on failure. */
int node_etcd_data_dir_find(Context *ctx, const char **ret);
