/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A gone node's etcd member, found from a surviving control plane, and whether it may be removed. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/phases/etcd/etcd-member.h"

typedef struct ForgetMember {
        bool found; /* a member is NODE's, confirmed by its peer URLs */
        uint64_t id;
        char *name;
        char *peer_urls;  /* its peer URLs, ", "-separated: what confirmed it is NODE's */
        char *refusal;    /* why it must stay; NULL when it may go */
        size_t voters;    /* voting members now */
        size_t answering; /* of the voters that stay, how many answer */
        char *endpoint;   /* the client URL whose member list this is */
} ForgetMember;

void forget_member_done(ForgetMember *m);

/* Find node's member in the cluster local (this node's member) belongs to: named node (k3s and
 * rke2 name it node-XXXXXXXX) or with a peer URL on one of addresses, and never found by a name
 * alone. Decide: never this node's own member, not while it answers (unless force), never one whose
 * removal leaves fewer answering voters than a quorum of those left. 0 (ret->found false when there
 * is none), -errno when no member answers, with the words in *reterr. */
int forget_member_observe(const NodeEtcd *local, const char *node, char *const *addresses, bool force,
                          uint64_t deadline, ForgetMember *ret, char **reterr);

/* Observe and decide again, then remove: 1 removed, 0 none was there, -EPERM refused, -errno. */
int forget_member_remove(const NodeEtcd *local, const char *node, char *const *addresses, bool force, uint64_t deadline,
                         char **ret_msg);
