/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The run verb: plan, confirm, reset under the lock, verify, and report (also to --report-url). */
#pragma once

#include "agent/verbs/options.h"

/* argv: "run". Returns the exit status (node-reset(8)). */
int verb_run(const ProgramOptions *o, int argc, char *argv[]);
