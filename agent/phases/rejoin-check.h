/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The verdict after verify: can this node join a cluster again as it is? The checks a join's
 * preflight would fail on, made natively. */
#pragma once

#include <stdbool.h>

#include "agent/engine/context.h"
#include "agent/engine/engine.h"
#include "agent/phases/cluster-cidrs.h"
#include "agent/phases/cni-keep.h"
#include "agent/base/output.h"

typedef enum RejoinState {
        REJOIN_OK,
        REJOIN_FAILED,
        REJOIN_UNCHECKED, /* the run did not act on what the check looks at (--phases, --root) */
} RejoinState;

typedef struct RejoinCheck {
        const char *name;
        RejoinState state;
        char *message;
} RejoinCheck;

#define REJOIN_CHECKS_MAX 8

typedef struct Rejoin {
        /* What the run removes, learned before it: */
        ClusterCidrs cidrs;
        CniKeepSet keep;
        bool control_plane;
        bool netns; /* the run acted on this network namespace: its links are the node's */
        RejoinCheck checks[REJOIN_CHECKS_MAX];
        size_t n_checks;
} Rejoin;

/* Before the run: the pod ranges, the kept runtimes, whether this is a control-plane node. */
int rejoin_prepare(const Context *ctx, Rejoin *ret);
/* After verify: every check, each OK, FAILED or UNCHECKED with its reason. -ENOMEM only. */
int rejoin_check(Context *ctx, const PhaseSelection *sel, Rejoin *r);
/* No check failed. */
bool rejoin_is_rejoinable(const Rejoin *r);
void rejoin_done(Rejoin *r);

/* "rejoin": {"rejoinable", "checks": [{"name", "state", "message"}]}, and "rejoinable: yes|no" with the
 * reasons in text. */
void rejoin_emit(Emitter *e, const Rejoin *r);
