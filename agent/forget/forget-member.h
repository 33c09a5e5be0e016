/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A gone node's etcd member, found from a surviving control plane, and whether it may be removed. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/node/etcd.h"

/* The node to forget, as the API server and kubeadm's record describe it. */
typedef struct ForgetTarget {
        const char *node;
        char *const *addresses;  /* its Node's addresses and kubeadm's advertiseAddress */
        const char *member_name; /* k3s's and rke2's annotation: the member their etcd controller removes
                                  * when the Node goes (NULL: none) */
} ForgetTarget;

typedef struct ForgetMember {
        bool found; /* a member is NODE's, confirmed by its name and a peer URL */
        uint64_t id;
        char *name;
        char *peer_urls;  /* its peer URLs, ", "-separated: what confirmed it is NODE's */
        char *refusal;    /* why it must stay; NULL when it may go */
        char *note;       /* when none is found: a member on NODE's addresses under another name */
        size_t voters;    /* voting members now */
        size_t answering; /* of the voters that stay, how many answer */
        char *endpoint;   /* the client URL whose member list this is */
} ForgetMember;

void forget_member_done(ForgetMember *m);

/* Find the target's member in the cluster local (this node's member) belongs to: named after the
 * node (k3s and rke2 name it NODE-XXXXXXXX) AND with a peer URL on one of its addresses; a name alone,
 * or an address alone (a dead node's address may be a live one's now), never. Decide: never this
 * node's own member (node_etcd_identify()), never one that answers on any of its client URLs, never
 * one whose removal a quorum of the voting members cannot commit now. 0 (ret->found false when there
 * is none), -errno when no member answers, with the words in *reterr. */
int forget_member_observe(const NodeEtcd *local, const ForgetTarget *t, uint64_t deadline, ForgetMember *ret,
                          char **reterr);

/* Observe and decide again, then remove: 1 removed, 0 none was there, -EPERM refused, -errno. */
int forget_member_remove(const NodeEtcd *local, const ForgetTarget *t, uint64_t deadline, char **ret_msg);
