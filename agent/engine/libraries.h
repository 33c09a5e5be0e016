/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What each optional library is for, as the agent tells it: a skipped row in the plan, the
 * "unavailable" part of every report, the list --version prints. Loading itself is shim/'s. */
#pragma once

#include <stdio.h>

#include "agent/report/output.h"
#include "agent/engine/plan.h"
#include "shim/dlopen.h"

#define SHIM_MASK(lib) (1u << (lib))

/* Is lib loadable? 0 yes; else -EOPNOTSUPP and *ret_why (static) says why. */
int libraries_check(ShimLib lib, const char **ret_why);

/* For a phase (or a part of one, what = "ipset lines"): when lib does not load, add one skipped
 * "library" row naming it ("libipset.so.13 not found: ipset lines skipped") and return 1; 0 when
 * it loads; -ENOMEM. */
int libraries_plan_missing(Plan *plan, const char *phase, ShimLib lib, const char *what);

/* The first library in the mask that does not load, with its skip row added (1), or 0. */
int libraries_plan_phase(Plan *plan, const char *phase, unsigned needs);

/* The "unavailable" list of a report: every library that does not load and what it costs. */
void libraries_emit_unavailable(Emitter *e);

/* --version: one line per library, the soname loaded or why none did. */
void libraries_print(FILE *f);
