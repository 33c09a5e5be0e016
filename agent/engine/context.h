/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state every phase sees while planning and executing. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/config/installers.h"
#include "agent/config/manifest.h"
#include "agent/os/mountinfo.h"
#include "agent/os/proc.h"
#include "time-util.h"

/* What a module keeps for one run (the etcd member's facts, the node-object phase's credentials): a
 * static const of the module's describes it and is the key it is found by (context_state()). */
typedef struct ContextStateType {
        const char *name;          /* for a reader of a core dump */
        size_t size;               /* zeroed at the first ask */
        void (*done)(void *state); /* frees what the state holds (not the state itself); may be NULL */
} ContextStateType;

#define CONTEXT_STATES_MAX 16

/* What the phases share for one run: the engine's own (systemd, /proc), and each module's or phase's
 * state (what the etcd member's facts are, what a phase found for verify). A phase's options stay in
 * its own file: configuration, set once by the command line. The engine frees these at the end of
 * the run (phase_table_done()). */
typedef struct PhaseFacts {
        /* services-early and -late stop units, processes and the pods' rescue ladder stop or ask about
         * units, files restarts the runtime, reload reloads, the rejoin verdict asks whether systemd
         * runs: one connection and one cache of unit state for all of them (phase_systemd_running()). */
        struct ServiceManager *systemd;
        /* /proc as one planning pass saw it: read by the first phase that asks (phase_procs()): the
         * pods phase looks for kubelet, processes matches its lines, network names who is inside a
         * namespace. Dropped when the pass ends: acting and verifying read /proc anew. */
        ProcTable *procs;
        /* What the modules below the phases (agent/node/) and the phases themselves keep for the run,
         * each in its own state (context_state()): the engine knows none of them. */
        struct {
                const ContextStateType *type;
                void *state;
        } states[CONTEXT_STATES_MAX];
} PhaseFacts;

/* Which of the engine's passes is running: what a phase may conclude from what it observes. */
typedef enum EnginePass {
        /* Observing a node this run has not changed: the plan, and status (which acts on nothing). */
        ENGINE_PASS_PLAN,
        ENGINE_PASS_EXECUTE, /* applying the plan (engine_execute()) */
        /* Observing again after this run executed its plan (engine_verify()): what the run did is
         * there to be seen (a Node the node-object phase deleted, an API server the reset stopped). */
        ENGINE_PASS_VERIFY,
} EnginePass;

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
        EnginePass pass;      /* which pass runs: what a phase may conclude from what it observes */
        bool executed;        /* engine_execute() ran on this context: a later observation is verify's */
        /* What the verb hands the phases beyond each phase's own options (setup_node(), the drain
         * verb): the program's --kubeconfig and --node-name (NULL: the node's own credentials and
         * name, or the node the drain verb names), and the drain verb's ask that the drain phase
         * drain without --drain. */
        const char *kubeconfig;
        const char *node_name;
        bool drain;
        /* The phases this run plans (engine_plan()): one phase may leave to a later one what that one
         * removes anyway (phase_selected()). */
        const struct PhaseSelection *selection;
        /* While executing: the plan, and where a row found only then goes (engine_add_row()). */
        struct Plan *plan;
        size_t insert_at;
        PhaseFacts facts;
} Context;

/* The state of type for this run: created zeroed at the first ask and kept until the run's end
 * (phase_facts_done()), when type->done frees what it holds. NULL on OOM, or when the context holds
 * CONTEXT_STATES_MAX states already (a programming error: raise it). */
void *context_state(Context *ctx, const ContextStateType *type);
/* The same without creating it: NULL when nothing asked for it yet. */
const void *context_state_peek(const Context *ctx, const ContextStateType *type);
/* Free every state (type->done, then the state), leaving none. */
void context_states_done(Context *ctx);
