/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The verdict after verify: can this node join a cluster again as it is? The checks kubeadm join
 * (1.20) refuses on, made natively; what it does not check is a warning, never a failure. */
#pragma once

#include <stdbool.h>

#include "agent/engine/context.h"
#include "agent/engine/engine.h"
#include "agent/config/cluster-cidrs.h"
#include "agent/node/cni-keep.h"
#include "agent/base/output.h"
#include "agent/verdict/rejoin-state.h"

/* Before the run: the pod ranges, the kept runtimes, whether this is a control-plane node. */
int rejoin_prepare(const Context *ctx, Rejoin *ret);
/* After verify: every check, each OK, FAILED, UNCHECKED or UNKNOWN with its reason, and the
 * warnings. -ENOMEM only. */
int rejoin_check(Context *ctx, const PhaseSelection *sel, Rejoin *r);
/* No check failed (an unknown or unchecked one does not count, nor does a warning). */
bool rejoin_is_rejoinable(const Rejoin *r);
void rejoin_done(Rejoin *r);

/* "rejoin": {"rejoinable", "checks": [{"name", "state", "message"}], "warnings": [{"name", "message"}]},
 * and "rejoinable: yes|no" with the reasons and warnings in text. */
void rejoin_emit(Emitter *e, const Rejoin *r);
