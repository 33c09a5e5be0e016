/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state every phase sees while planning and executing. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/config/manifest.h"
#include "agent/os/mountinfo.h"
#include "time-util.h"

/* What the backup and etcd phases established at act time about this node's etcd member: the
 * facts agent/phases/etcd-datadir.c decides its data directory's fate from. */
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

typedef struct Context {
        const char *root; /* "/" or the absolute, resolved --root directory */
        int root_fd;      /* O_PATH|O_DIRECTORY fd of root */
        const Manifest *manifest;
        MountTable *mounts;             /* read once when the plan is built, refreshed by phases that change it */
        usec_t deadline_usec;           /* CLOCK_MONOTONIC; 0 = none */
        bool lazy_unmount;              /* allow MNT_DETACH when a plain unmount says EBUSY */
        bool executing;                 /* false while planning/verifying, true while applying */
        struct ServiceManager *systemd; /* services: how systemd is reached, found by the first phase that asks */
        char **etcd_endpoints;          /* etcd: the other members' client URLs, learned while the local one answered */
        char *etcd_data_dir;            /* etcd: this node's member's data directory (node path), once found */
        NodeEtcdFacts etcd_facts;       /* etcd: what decides that data directory's fate (etcd-datadir.h) */
        char *backup_dir;               /* backup: the node path of this run's backup, once chosen */
        void *node_api;                 /* node-object: the credentials and name found, kept for verify */
} Context;
