/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The plan/act engine: a Plan is a list of Actions, each an instance of a kind from an ops table. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Context Context;
typedef struct Action Action;

typedef enum ActionResult {
        ACTION_PENDING,   /* planned, not executed */
        ACTION_UNCHANGED, /* already clean (apply returned 0) */
        ACTION_CHANGED,   /* apply returned 1 */
        ACTION_FAILED,    /* apply returned -errno */
        ACTION_SKIPPED,   /* not executed: skip_reason says why */
        _ACTION_RESULT_MAX,
} ActionResult;

/* One row per action kind, like iproute2's link_util or systemctl's verbs[]. */
typedef struct ActionOps {
        const char *kind;
        /* Execute. 0 already clean, 1 changed, -errno failed; *ret_msg may carry the detail
         * (malloc'd) for a failure, or a note for success. */
        int (*apply)(Action *a, Context *ctx, char **ret_msg);
        /* Optional: execute a run of consecutive actions of this kind in one go (one netlink
         * group delete, one nf_tables transaction). Must set result/error/message on each action
         * via action_record(). When set, the engine always calls it (a lone action is a batch of
         * one) and apply may be NULL. */
        void (*apply_batch)(Action **actions, size_t n, Context *ctx);
        /* Observe again, read-only, for verify/status: >0 residue remains (message in *ret_msg),
         * 0 clean, -errno could not tell. */
        int (*check)(Action *a, Context *ctx, char **ret_msg);
        void (*free_data)(void *data);
} ActionOps;

struct Action {
        const ActionOps *ops;
        const char *phase; /* static: the phase name */
        char *target;      /* what it acts on, as the node sees it */
        char *detail;      /* what the plan says will happen ("dir, 12 entries") */
        char *reason;      /* why: the manifest line that asked for it */
        bool present;      /* observed: there is something to do */
        char *skip_reason; /* set at plan time: executing records "skipped" with this */
        const char *code;  /* static: the report's machine-readable "error" of a skip (default
                            * "refused") or of a failure whose errno says too little */
        bool unobserved;   /* with skip_reason, or present (then it fails when run): what it stands for
                            * could not be looked at (a library that does not load, an API server or
                            * a Docker that does not answer); verify counts it as unobserved, so the
                            * verdict is never "clean" */
        /* Set by the phase that plans it: it changes a unit file (a disable, a mask, a file removed
         * beneath a unit directory), so the reload phase reloads systemd after it. */
        bool changes_unit_files;
        void *data;

        ActionResult result;
        int error; /* -errno of a failure */
        char *message;
        uint64_t duration_usec;
        /* The pods phase's kill pass: from its SIGKILL until no pod process was alive, as sampled;
         * the report's "pods_gone_ms". */
        bool pods_gone_known;
        uint64_t pods_gone_usec;
        /* static: the pods phase's runtime row of a runtime that answered Version: the CRI version
         * the run speaks to it ("v1", "v1alpha2"); the report's "cri_api". */
        const char *cri_api;
        /* The backup row, once it wrote a backup: its directory (node path) and what it holds; the
         * report's "backup_path", "backup_bytes" and "backup_files". */
        char *backup_path;
        uint64_t backup_bytes, backup_files;
};

typedef struct Plan {
        Action **actions;
        size_t n_actions;
        size_t allocated;
} Plan;

Plan *plan_new(void);
Plan *plan_free(Plan *p);

/* Append an action; the plan takes ownership of data (freed with ops->free_data). Strings are
 * copied; detail and reason may be NULL. Returns the action (owned by the plan) or NULL on OOM. */
Action *plan_add(Plan *p, const ActionOps *ops, const char *phase, const char *target, const char *reason, void *data);

/* Drop (free) every action from index n on: a phase's rows when it turns out not to have observed. */
void plan_truncate(Plan *p, size_t n);

/* Move an existing action (e.g. out of another plan) into p. */
int plan_append(Plan *p, Action *a);

int action_set_detail(Action *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int action_set_skip(Action *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with the short code the JSON report gives as "error" ("protected", "unsupported", ...). */
int action_set_skip_code(Action *a, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The report's "error" of an action: NULL unless it failed or was skipped; a failure's errno name
 * (EBUSY) unless its code says more, a skip's code. */
const char *action_error_code(const Action *a);

const char *action_result_to_string(ActionResult r);

/* Record the outcome of apply-style result r (0, 1, -errno) and an optional message (taken). */
void action_record(Action *a, int r, char *message);
/* The same with a formatted message. */
void action_recordf(Action *a, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void action_recordv(Action *a, int r, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* Count actions of a phase (phase == NULL: all) with a given result (or any when r < 0). */
size_t plan_count(const Plan *p, const char *phase, int r);

/* Actions that observed something to do and are not to be skipped. */
size_t plan_count_present(const Plan *p);

#define PLAN_FOREACH(a, p) \
        for (Action **_i_##a = (p)->actions, *a; _i_##a < (p)->actions + (p)->n_actions && ((a = *_i_##a), 1); _i_##a++)
