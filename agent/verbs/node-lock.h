/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The run's lock on the node (<root>/run/node-reset.lock), taken before anything changes. */
#pragma once

#include "agent/verbs/setup.h"

/* The lock's fd in *ret_fd and 0; EXIT_REFUSED, said with who holds it, when it cannot be taken. */
int node_lock_take(const Setup *s, int *ret_fd);
