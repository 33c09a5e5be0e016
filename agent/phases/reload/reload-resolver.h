/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* After the run changed the host's resolver configuration, have systemd-resolved and NetworkManager
 * take it up. */
#pragma once

#include "agent/engine/context.h"
#include "agent/engine/plan.h"

/* Rows of the reload phase, when the plan so far changes resolver configuration (a resolved drop-in,
 * NetworkManager's conf.d, resolv.conf or dhclient.conf, the nodelocaldns link). */
int resolver_reload_plan(Context *ctx, Plan *plan);
