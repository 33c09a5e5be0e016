/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The plan verb: observe the node and print what a reset would do (the dry run). */
#pragma once

#include "agent/verbs/options.h"

/* argv: "plan". Returns the exit status (node-reset(8)). */
int verb_plan(const ProgramOptions *o, int argc, char *argv[]);
