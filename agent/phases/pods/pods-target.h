/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's runtime: one CRI endpoint, its client, what is known of the runtime behind it, the
 * budget and the rescue ladder's state, shared (counted) by the rows planned for it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/engine/context.h"
#include "agent/engine/plan.h"
#include "agent/os/runtime-info.h"
#include "agent/phases/pods/pods-teardown.h"
#include "cri/cri.h"
#include "macro.h"
#include "time-util.h"

/* A runtime that does not say its version within this is hung, not busy. */
#define PODS_PROBE_TIMEOUT_USEC (5 * USEC_PER_SEC)

/* One CRI endpoint the phase works on: its client, what is known of the runtime behind it and the
 * ladder state, shared (counted) by the actions planned for it. */
typedef struct PodsTarget {
        unsigned n_ref;
        char *socket_path;
        CriClient *client;
        CriVersion version;
        RuntimeInfo info;
        int probe_error; /* Version's failure at plan time; 0 when it answered */
        char *probe_message;
        unsigned concurrency;
        uint64_t budget_usec;
        uint64_t deadline;      /* CLOCK_MONOTONIC, from the first action executed */
        uint64_t plan_deadline; /* CLOCK_MONOTONIC: no planning call runs past it */
        bool hung;              /* a call ran into its deadline: no more calls, rung 3 */
        bool needs_rung3;       /* the CRI could not finish, even with rung 2 */
        char *rung3_reason;
        unsigned rescued;  /* stops and removes that rung 2 made possible */
        char *rescue_path; /* the loopback-only conflist while it stands in: from the first call
                            * that needs it (rung 2) or from the cni-teardown row (a teardown this
                            * run makes pointless) to the end of the pod-network remove batch */
        bool standin;      /* rescue_path stands in by plan (TEARDOWN_CHEAP), not as rung 2 */
        bool restart;      /* the plan restarts the runtime with its pods' tasks cleared before the calls */
        int stopped;       /* ladder_runtime_stop()'s result: 1 stopped, -ETIME still stopping, else not */
        PodsTeardown teardown;
        char **keep_ids; /* sandboxes whose processes the kill pass leaves to their CRI call */
} PodsTarget;

PodsTarget *pods_target_unref(PodsTarget *pt);
PodsTarget *pods_target_ref(PodsTarget *pt);
/* An action's data that is its target (free_data of the rows that are the runtime's, not a pod's). */
void pods_target_data_free(void *p);

/* The phase budget starts when the first action of this runtime runs. */
void pods_budget_start(PodsTarget *pt, const Context *ctx);
uint64_t pods_budget_left(const PodsTarget *pt);
/* usleep(), never past the budget. */
void pods_sleep_in_budget(const PodsTarget *pt, uint64_t usec);
/* The CRI cannot finish: rung 3 follows, for the first reason given. */
void pods_need_rung3(PodsTarget *pt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A row of the pods phase: its detail, present or not, skipped when skip says why. */
int pods_add_row(Plan *plan, const ActionOps *ops, const char *target, void *data, bool present, const char *skip,
                 const char *detail_fmt, ...) __attribute__((format(printf, 7, 8)));
