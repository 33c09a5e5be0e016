/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The forget verb: from a surviving control plane, remove what a node gone for good left in its
 * cluster (its etcd member, its Node object, kubeadm's record of its API endpoint): agent/forget/. */
#pragma once

#include "agent/forget/forget.h"

/* argv: "forget", NODE. Returns the exit status (node-reset(8)): 0, 1 (something could not be
 * observed or done; --plan too), 2 usage, 3 refused. */
int verb_forget(const ForgetOptions *o, int argc, char *argv[]);
