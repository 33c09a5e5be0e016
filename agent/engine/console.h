/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operator's side of a run: per-phase questions (--step) and progress, on stderr. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "agent/engine/engine.h"

typedef struct Console {
        FILE *in;  /* answers come from here (a terminal when step is set) */
        FILE *out; /* questions and progress go here: stderr, never the report */
        bool tty;  /* out is a terminal: progress is redrawn in place */
        bool color;
        bool step; /* ask before each phase */
        bool quit; /* the operator said quit */

        /* Without a terminal, a phase that runs long logs a line every heartbeat_usec (a pods phase
         * can take minutes inside one batch, when no action completes to report). */
        uint64_t heartbeat_usec;
        pthread_t heartbeat;
        pthread_mutex_t lock;
        pthread_cond_t wake;
        bool beating;      /* the heartbeat thread runs */
        const char *phase; /* the phase running, under lock */
        size_t done, n;    /* its actions done so far and in all, under lock */
        uint64_t phase_start_usec;
} Console;

#define CONSOLE_HEARTBEAT_USEC (10ULL * 1000000ULL)

void console_init(Console *c, FILE *in, FILE *out, bool step);
ExecuteHooks console_hooks(Console *c);
/* Stops the heartbeat thread, if one runs. */
void console_done(Console *c);

/* Without --yes a person types "yes" on a terminal to go on ("reset this node"); anything else, or no
 * terminal, refuses (said on the log). */
bool console_confirm(FILE *in, FILE *out, const char *what);

/* Parse an answer to the per-phase question; -EINVAL for anything else. */
int phase_decision_from_string(const char *s, PhaseDecision *ret);
