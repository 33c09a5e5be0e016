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

typedef enum RejoinState {
        REJOIN_OK,
        REJOIN_FAILED,
        REJOIN_UNCHECKED, /* the run did not act on what the check looks at (--phases, no --delete-node) */
        REJOIN_UNKNOWN,   /* it cannot be told from here: beneath --root the running system's ports, swap
                           * and sysctls are not the node's; an API server or systemd that does not answer */
} RejoinState;

typedef struct RejoinCheck {
        const char *name;
        RejoinState state;
        char *message;
} RejoinCheck;

/* A condition kubeadm join does not refuse (or only warns about) that the operator should know. */
typedef struct RejoinWarning {
        const char *name;
        char *message;
} RejoinWarning;

#define REJOIN_CHECKS_MAX 16
#define REJOIN_WARNINGS_MAX 8

typedef struct Rejoin {
        /* What the run removes, learned before it: */
        ClusterCidrs cidrs;
        CniKeepSet keep;
        bool control_plane;
        unsigned programs_before;    /* bit i: kubeadm's mandatory program i was in PATH before the run */
        unsigned programs_installer; /* ... as a link the detected installer's uninstall removes */
        Installer installer;         /* the detected installer */
        bool netns;                  /* the run acted on this network namespace: its links are the node's */
        RejoinCheck checks[REJOIN_CHECKS_MAX];
        size_t n_checks;
        RejoinWarning warnings[REJOIN_WARNINGS_MAX];
        size_t n_warnings;
} Rejoin;

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
