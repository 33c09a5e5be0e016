/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operator's side of a run: per-phase questions (--step) and progress, on stderr. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "agent/engine.h"

typedef struct Console {
        FILE *in;               /* answers come from here (a terminal when step is set) */
        FILE *out;              /* questions and progress go here: stderr, never the report */
        bool tty;               /* out is a terminal: progress is redrawn in place */
        bool color;
        bool step;              /* ask before each phase */
        bool quit;              /* the operator said quit */
} Console;

void console_init(Console *c, FILE *in, FILE *out, bool step);
ExecuteHooks console_hooks(Console *c);

/* Parse an answer to the per-phase question; -EINVAL for anything else. */
int phase_decision_from_string(const char *s, PhaseDecision *ret);
