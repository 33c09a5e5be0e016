/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The drain verb: from where the cluster's administrator credentials already are (a control plane
 * that stays), cordon another node and evict its pods, as kubectl drain NODE does. */
#pragma once

#include "agent/verbs/options.h"

/* argv: "drain", NODE. Returns the exit status (node-reset(8)): 0 drained, 1 the drain failed (a pod
 * refused it, a budget past --drain-timeout, no such Node), 2 usage, 3 refused (the Node is not
 * Ready: nothing would end its pods; or not confirmed). */
int verb_drain(const ProgramOptions *o, int argc, char *argv[]);
