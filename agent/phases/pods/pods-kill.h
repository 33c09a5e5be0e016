/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's first step: every process of the pods' containers (the pause processes included)
 * killed in one pass, before any CRI call, so that nothing of the cluster runs any more whatever the
 * pod count; the runtime's own processes (containerd's shims) are never signalled: the CRI calls that
 * follow need them to tear the pods down. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/os/runtime-info.h"

typedef struct PodsKill {
        unsigned pods;      /* shims (one per pod on containerd's runc v2) whose processes were signalled */
        unsigned processes; /* processes signalled */
        unsigned survivors; /* still alive when the wait ended */
        uint64_t gone_usec; /* from the first signal until the last of them was seen gone (sampled) */
} PodsKill;

/* The processes a kill pass would signal for the runtime listening on socket_path: the descendants of
 * its containerd shims of the k8s.io namespace (never a shim itself), except those of the sandboxes in
 * keep_ids (NULL or a NULL-terminated list of sandbox ids: pods whose processes must live until their
 * own CRI call).
 * Counted only. Runtimes other than containerd: 0 (-EOPNOTSUPP). */
int pods_kill_count(const char *socket_path, const RuntimeInfo *info, char *const *keep_ids, unsigned *ret_pods,
                    unsigned *ret_processes);

/* The same processes, found again now, each pinned by a pidfd and checked to be the process the scan
 * saw, then SIGKILLed in one pass; waits until every one has exited or until wait_usec has passed.
 * 1 something was killed, 0 nothing to kill, -EBUSY when some survived, -errno. */
int pods_kill(const char *socket_path, const RuntimeInfo *info, char *const *keep_ids, uint64_t wait_usec,
              PodsKill *ret);
