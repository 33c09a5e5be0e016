/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Units stopped, restarted, started or reloaded through systemd's jobs (services-jobs.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct ServiceManager ServiceManager;

typedef enum UnitJob {
        UNIT_JOB_STOP,
        UNIT_JOB_RESTART, /* RestartUnit: the unit runs again once its job is done */
        UNIT_JOB_RELOAD,  /* ReloadUnit: systemd runs the unit's ExecReload= */
        UNIT_JOB_START,   /* StartUnit */
} UnitJob;

typedef struct UnitStop {
        const char *unit;
        UnitJob job;   /* StopUnit unless told otherwise */
        int result;    /* out: 0 was not running, 1 stopped, -errno failed */
        char *message; /* out, malloc'd: what happened, the job result of a failure */
} UnitStop;

/* Stop units concurrently: StopUnit(unit, "replace") for every one (RestartUnit or ReloadUnit as its
 * job says), then wait for each job's JobRemoved signal, each with its own deadline of timeout_usec
 * (0: the default) from when its job was queued, and never past deadline_usec (CLOCK_MONOTONIC, 0:
 * none). systemd orders the jobs by the units' dependencies. A unit that does not exist or does not
 * run is result 0 (for a stop); a job that ends "done" is 1; any other job result (canceled,
 * timeout, failed, dependency) fails. */
void services_stop_many(ServiceManager *m, UnitStop *stops, size_t n, uint64_t timeout_usec, uint64_t deadline_usec);

/* RestartUnit(unit, "replace") and wait for its job, as services_stop_many() does: 1 restarted,
 * -errno with the job's result in *ret_msg. */
int services_restart(ServiceManager *m, const char *unit, uint64_t timeout_usec, uint64_t deadline_usec,
                     char **ret_msg);

/* StartUnit(unit, "replace") and wait for its job, as services_restart() does: 1 started. */
int services_start(ServiceManager *m, const char *unit, uint64_t timeout_usec, uint64_t deadline_usec, char **ret_msg);

/* ReloadUnit(unit, "replace") and wait for its job, as services_restart() does: systemd runs the
 * unit's ExecReload= in the node's own namespaces. 1 reloaded, -errno with the job's result. */
int services_reload_unit(ServiceManager *m, const char *unit, uint64_t timeout_usec, uint64_t deadline_usec,
                         char **ret_msg);
