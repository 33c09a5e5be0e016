/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the rejoin verdict holds: each check's state and reason, the warnings, and what the run learned
 * before it acted (rejoin-check.h asks; the checks of rejoin-*.c fill it). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "agent/config/cluster-cidrs.h"
#include "agent/config/installers.h"
#include "agent/node/cni-keep.h"

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
