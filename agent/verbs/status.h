/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The status verb: observe the node and report what is left (residue) and whether it can rejoin. */
#pragma once

#include "agent/verbs/options.h"

/* argv: "status". Returns the exit status (node-reset(8)). */
int verb_status(const ProgramOptions *o, int argc, char *argv[]);
