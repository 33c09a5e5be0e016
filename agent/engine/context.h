/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state every phase sees while planning and executing. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/config/installers.h"
#include "agent/config/manifest.h"
#include "agent/os/mountinfo.h"
#include "agent/os/proc.h"
#include "time-util.h"

/* What the backup and etcd phases established at act time about this node's etcd member: the
 * facts agent/phases/etcd/etcd-datadir.c decides its data directory's fate from. */
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

/* What one phase learns while it runs and another phase needs later in the same run. Everything else
 * a phase keeps (its options, what it found for verify) stays in the phase's own file. The engine
 * frees these at the end of the run (phase_table_done()). */
typedef struct PhaseFacts {
        /* services-early and -late stop units, processes and the pods' rescue ladder stop or ask about
         * units, files restarts the runtime, reload reloads, the rejoin verdict asks whether systemd
         * runs: one connection and one cache of unit state for all of them (phase_systemd_running()). */
        struct ServiceManager *systemd;
        /* This node's member's data directory (node path): found in the member's files by the etcd
         * phase (or by the files phase when etcd did not run), removed by the files phase once the
         * member has left, checked by the rejoin verdict. */
        char *etcd_data_dir;
        /* Established by backup (snapshot, db copy) and etcd (left, last voter) at act time; the files
         * phase decides the data directory's fate from all of them (etcd-datadir.h). */
        NodeEtcdFacts etcd;
        /* backup: what could not be saved when the backup could not be written (no room): the files
         * phase then keeps the rows with no other copy (phase-backup.h). NULL when it was written. */
        char *backup_unsaved;
        /* backup: with backup_unsaved, those rows (node paths), k3s's and rke2's under their data
         * directories included. */
        char **backup_kept;
        /* backup, written: the datastores it could not copy (with their -wal and -shm), kept. */
        char **backup_uncopied;
        /* Who owns this node's etcd (etcd-owner.h): decided by the first phase that asks
         * (phase_etcd_scope()), from the files as they were before anything was changed, and
         * followed by every phase for the rest of the run. */
        struct EtcdScope *etcd_scope;
        /* /proc as one planning pass saw it: read by the first phase that asks (phase_procs()): the
         * pods phase looks for kubelet, processes matches its lines, network names who is inside a
         * namespace. Dropped when the pass ends: acting and verifying read /proc anew. */
        ProcTable *procs;
} PhaseFacts;

typedef struct Context {
        const char *root; /* "/" or the absolute, resolved --root directory */
        int root_fd;      /* O_PATH|O_DIRECTORY fd of root */
        const Manifest *manifest;
        /* Node path of the CNI configuration the runtime loads (detect.h's cni_loaded: the first of
         * its conf dir that libcni loads, and none on containerd when the first file does not load);
         * NULL when none. The one CNI file whose ranges are the pods'. */
        const char *cni_config;
        /* The installer detection found (installers.h); INSTALLER_NONE when none or more than one: who
         * owns the etcd is read in its light (etcd-owner.h), and the rejoin verdict does not count what
         * its own uninstall removes as the run's doing. */
        Installer installer;
        MountTable *mounts;   /* read once when the plan is built, refreshed by phases that change it */
        usec_t deadline_usec; /* CLOCK_MONOTONIC; 0 = none */
        bool lazy_unmount;    /* allow MNT_DETACH when a plain unmount says EBUSY */
        bool executing;       /* false while planning/verifying, true while applying */
        /* The phases this run plans (engine_plan()): one phase may leave to a later one what that one
         * removes anyway (phase_selected()). */
        const struct PhaseSelection *selection;
        /* While executing: the plan, and where a row found only then goes (engine_add_row()). */
        struct Plan *plan;
        size_t insert_at;
        PhaseFacts facts;
} Context;
