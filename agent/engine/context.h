/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state every phase sees while planning and executing. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/config/manifest.h"
#include "agent/node/mountinfo.h"
#include "time-util.h"

typedef struct Context {
        const char *root; /* "/" or the absolute, resolved --root directory */
        int root_fd;      /* O_PATH|O_DIRECTORY fd of root */
        const Manifest *manifest;
        MountTable *mounts;             /* read once when the plan is built, refreshed by phases that change it */
        usec_t deadline_usec;           /* CLOCK_MONOTONIC; 0 = none */
        bool lazy_unmount;              /* allow MNT_DETACH when a plain unmount says EBUSY */
        bool executing;                 /* false while planning/verifying, true while applying */
        bool link_group_delete;         /* network: delete links with one IFLA_GROUP call (default true) */
        usec_t xtables_wait_usec;       /* firewall: how long to wait for /run/xtables.lock */
        const char *cri_endpoint;       /* pods: --cri-endpoint, before the manifest's; NULL = those, else probe */
        unsigned concurrency;           /* pods: CRI calls in flight at once (0 = the phase's default) */
        usec_t pods_budget_usec;        /* pods: a bound on the whole phase (0 = the phase's default) */
        usec_t kill_grace_usec;         /* processes: from SIGTERM to SIGKILL (0 = at once) */
        struct ServiceManager *systemd; /* services: how systemd is reached, found by the first phase that asks */
        usec_t unit_timeout_usec;       /* services: how long to wait for one unit's stop job; 0 = default */
        usec_t etcd_timeout_usec;   /* etcd: a bound on the phase's calls, each time it observes or acts (0 = 30 s) */
        char **etcd_endpoints;      /* etcd: the other members' client URLs, learned while the local one answered */
        char *etcd_keep_data_dir;   /* etcd: the last member's data directory (node path): files keeps it */
        bool no_backup;             /* backup: --no-backup */
        char *backup_dir;           /* backup: the node path of this run's backup, once chosen */
        bool delete_node;           /* node-object: --delete-node */
        const char *api_kubeconfig; /* node-object: --kubeconfig, the operator's credentials; NULL = the node's */
        const char *node_name;      /* node-object: --node-name; NULL = from the kubelet's certificate */
        void *node_api;             /* node-object: the credentials and name found, kept for verify */
} Context;
