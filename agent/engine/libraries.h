/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What each optional library is for, as the agent tells it: a skipped row in the plan, the
 * "unavailable" part of every report, the list --version prints. Loading itself is dlib/'s. */
#pragma once

#include <stdio.h>

#include "agent/base/output.h"
#include "agent/engine/plan.h"
#include "dlib/dlopen.h"

#define DLIB_MASK(lib) (1u << (lib))

/* Is lib loadable? Loads it: for the moment of its first call. 0 yes; else -EOPNOTSUPP and
 * *ret_why (static) says why. */
int libraries_check(DlibLib lib, const char **ret_why);

/* Is lib on this node? Looks its sonames up without loading it (dlib_find()): for what is said
 * before any call (a phase's first row, the "unavailable" list, --version). */
int libraries_find(DlibLib lib, const char **ret_why);

/* For a phase (or a part of one, what = "ipset lines"): when lib does not load, add one skipped
 * "library" row naming it ("libipset.so.13 not found: ipset lines skipped") and return 1; 0 when
 * it loads; -ENOMEM. */
int libraries_plan_missing(Plan *plan, const char *phase, DlibLib lib, const char *what);

/* The first library in the mask that is not on this node, with its skip row added (1), or 0. Looks
 * up, loads nothing: a phase that calls a library checks it at that call (libraries_plan_missing). */
int libraries_plan_phase(Plan *plan, const char *phase, unsigned needs);

/* After a phase's planning failed: when one of the libraries in needs was found but does not load
 * (a missing symbol or dependency, met at the phase's first call), the phase could not observe, which
 * is no reason to refuse the whole run: its skip row is added (1). 0 when every one loads. */
int libraries_plan_failed(Plan *plan, const char *phase, unsigned needs);

/* The "unavailable" list of a report: every library not on this node or that failed to load. */
void libraries_emit_unavailable(Emitter *e);

/* --version: one line per library, the soname found (not loaded) or why none is. */
void libraries_print(FILE *f);
