/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a phase is to the engine: a row of the table the program registers (agent/phases/phases.c). */
#pragma once

#include <stdbool.h>

#include "agent/engine/context.h"
#include "agent/engine/plan.h"

/* A command-line option a phase takes: declared next to the code that reads it, so that main.c
 * names none of them; agent/engine/cmdline.c hands them to getopt_long() and prints their help. */
typedef enum PhaseOptionArg {
        PHASE_OPTION_NO_ARG,       /* --name */
        PHASE_OPTION_REQUIRED_ARG, /* --name=VALUE or --name VALUE */
} PhaseOptionArg;

typedef struct PhaseOption {
        const char *name; /* the long name, without "--" */
        PhaseOptionArg arg;
        const char *metavar; /* the value's name in --help ("SECONDS"); NULL without an argument */
        const char *help;    /* --help's description; each '\n' goes on at the description's column */
        /* The value, kept by the phase that declared it; arg is NULL without an argument. A bad value
         * is -EINVAL with *reterr the one line the operator reads ("invalid --NAME 'VALUE': ..."). */
        int (*parse)(const char *arg, char **reterr);
} PhaseOption;

typedef struct Phase {
        const char *name;
        const char *summary;
        /* Acts on the file-system tree, so --root applies. The others act on the running system
         * (its systemd, processes, CRI socket, network namespace): with --root they run only when
         * --phases names them, since in a rescue system the running system is not the node. */
        bool tree;
        /* Observe the node read-only and append this phase's actions to the plan. A failure to
         * observe is returned as -errno with a message; the engine then refuses to execute. */
        int (*plan)(Context *ctx, Plan *plan, char **reterr);
        /* DLIB_MASK()s of the optional libraries it cannot work without: when one is not on the node
         * (looked up, not loaded), the engine plans one skipped row naming it instead of calling
         * plan(). The phase loads a library at its first call of it. */
        unsigned needs;
        /* Optional: free what the phase kept for the run (verify included). */
        void (*done)(Context *ctx);
        /* Optional: the options it takes, ended by an entry without a name. An option several phases
         * read is declared once, by the phase that owns it, and read through that phase's header. */
        const PhaseOption *options;
        /* Optional: a failed action of this phase quits every later phase; the words that say why
         * ("the backup failed, and nothing is deleted without one"). */
        const char *gate;
        /* Optional, with gate: a failure that leaves the gate open (true for its error), such as a
         * backup that had no room to be written (phase-backup.h). */
        bool (*gate_passes)(int error);
} Phase;

/* The table of phases in their order, registered once by the program (reset_phases_register()); the
 * engine plans, selects and finishes phases only through it. */
void phase_table_register(const Phase *table, size_t n);
const Phase *phase_table(size_t *ret_n);
const Phase *phase_find(const char *name);
/* Each phase's done() hook, then the facts the phases shared (ctx->facts, every context_state()), at
 * the end of the run. */
void phase_table_done(Context *ctx);
/* The facts alone, for a verb that asks them without running phases (forget). */
void phase_facts_done(Context *ctx);

/* systemd as this run reaches it, the one way every phase and verdict asks for it: connected by the
 * first that asks (beneath ctx->root), kept in ctx->facts.systemd, then shared, so every phase sees the
 * same manager and its cached unit state. 0 and *ret when it answers; -EHOSTDOWN when it is out of
 * reach, *ret_why saying why (services_manager_why_absent()); another -errno (-ENOMEM) when no
 * manager could be set up, *ret_why its strerror(). *ret_why (NULL on success) lives as long as the
 * run's facts; ret_why may be NULL. */
int phase_systemd_running(Context *ctx, struct ServiceManager **ret, const char **ret_why);

/* /proc for this planning pass: read by the first phase that asks, then shared (ctx->facts.procs);
 * phase_procs_drop() at the pass's start and end. -errno when /proc cannot be read. */
int phase_procs(Context *ctx, const ProcTable **ret);
void phase_procs_drop(Context *ctx);
/* Whether the phase called name is planned in this run (false outside engine_plan()'s selection). */
bool phase_selected(const Context *ctx, const char *name);
/* Does a "unit" line of the manifest stop this unit (its pattern names it, its actions say stop)? */
bool phase_manifest_stops_unit(const Manifest *m, const char *unit);
