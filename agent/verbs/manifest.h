/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manifest verb: "manifest check FILE…" validates files, "manifest print" shows the effective one. */
#pragma once

#include "agent/verbs/options.h"

/* argv: "manifest", SUBCOMMAND, .... Returns the exit status (node-reset(8)). */
int verb_manifest(const ProgramOptions *o, int argc, char *argv[]);
