/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The orphan-check verb: exit 0 when this worker's control plane has been gone --for long. */
#pragma once

#include "agent/verbs/options.h"

/* argv: "orphan-check". Returns EXIT_ORPHANED, EXIT_NOT_ORPHANED or EXIT_ORPHAN_ERROR (exit-status.h). */
int verb_orphan_check(const ProgramOptions *o, int argc, char *argv[]);
