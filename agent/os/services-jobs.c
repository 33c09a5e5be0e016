/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Units stopped, restarted, started or reloaded over D-Bus: every job queued at once, then every
 * JobRemoved collected, each job with its own deadline. */

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>

#include "agent/base/log.h"
#include "agent/os/services-internal.h"
#include "agent/os/services-jobs.h"
#include "agent/os/services.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

typedef struct StopJob {
        UnitStop *stop;
        char *path;      /* the job's object path; NULL once settled */
        char result[32]; /* from JobRemoved; empty while waiting */
        uint64_t queued_usec, deadline_usec;
} StopJob;

typedef struct StopWait {
        StopJob *jobs;
        size_t n;
} StopWait;

static int on_job_removed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        StopWait *w = userdata;
        const char *path, *unit, *result;
        uint32_t id;

        if (sd_bus_message_read(msg, "uoss", &id, &path, &unit, &result) < 0)
                return 0;
        for (size_t i = 0; i < w->n; i++)
                if (w->jobs[i].path && streq(w->jobs[i].path, path))
                        snprintf(w->jobs[i].result, sizeof w->jobs[i].result, "%s", result);
        return 0;
}

static void stop_settle(StopJob *j, int r, const char *fmt, ...) _printf_(3, 4);
static void stop_settle(StopJob *j, int r, const char *fmt, ...) {
        va_list ap;

        j->stop->result = r;
        free(j->stop->message);
        va_start(ap, fmt);
        if (vasprintf(&j->stop->message, fmt, ap) < 0)
                j->stop->message = NULL;
        va_end(ap);
        j->path = mfree(j->path);
}

static int manager_subscribe(ServiceManager *m) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        if (m->subscribed)
                return 0;
        /* The API bus only carries the manager's signals while someone is subscribed; a private
         * connection gets them anyway, and Subscribe is harmless there. */
        r = sd_bus_call_method(m->bus, SD_DESTINATION, SD_PATH, SD_MANAGER, "Subscribe", &e, NULL, NULL);
        if (r < 0 && !sd_bus_error_has_name(&e, "org.freedesktop.systemd1.AlreadySubscribed"))
                return log_debug_errno(r, "Subscribe failed: %s", e.message ?: strerror(-r));
        m->subscribed = true;
        return 0;
}

/* Queue one stop job, or settle the unit at once when there is nothing to stop. */
static void stop_queue(ServiceManager *m, StopJob *j, uint64_t timeout_usec, uint64_t deadline_usec) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        cleanup_bus_message sd_bus_message *reply = NULL;
        static const char *const methods[] = {
                [UNIT_JOB_STOP] = "StopUnit",
                [UNIT_JOB_RESTART] = "RestartUnit",
                [UNIT_JOB_RELOAD] = "ReloadUnit",
                [UNIT_JOB_START] = "StartUnit",
        };
        const char *unit = j->stop->unit, *path, *method = methods[j->stop->job];
        bool stop = j->stop->job == UNIT_JOB_STOP;
        UnitStatus s;
        int r;

        r = services_unit_status(m, unit, &s);
        if (r == -ENOENT && stop)
                return stop_settle(j, 0, "not loaded, not running");
        if (r >= 0 && services_status_is_stopped(&s) && stop)
                return stop_settle(j, 0, "already %s", s.active_state);
        r = sd_bus_call_method(m->bus, SD_DESTINATION, SD_PATH, SD_MANAGER, method, &e, &reply, "ss", unit, "replace");
        if (r < 0 && services_bus_error_is_absent(&e) && stop)
                return stop_settle(j, 0, "no such unit");
        if (r >= 0)
                r = sd_bus_message_read(reply, "o", &path);
        if (r < 0) {
                r = sd_bus_error_get_errno(&e) > 0 ? -sd_bus_error_get_errno(&e) : r;
                return stop_settle(j, r, "%s: %s", method, e.message ?: strerror(-r));
        }
        j->path = strdup(path);
        if (!j->path)
                return stop_settle(j, -ENOMEM, "out of memory");
        j->queued_usec = now(CLOCK_MONOTONIC);
        j->deadline_usec = j->queued_usec + timeout_usec;
        if (deadline_usec > 0 && deadline_usec < j->deadline_usec)
                j->deadline_usec = deadline_usec;
}

static int job_result_to_errno(const char *result) {
        if (streq(result, "timeout"))
                return -ETIMEDOUT;
        if (streq(result, "canceled"))
                return -ECANCELED;
        return -EIO;
}

static void stop_finish(ServiceManager *m, StopJob *j) {
        UnitStatus s;

        if (j->stop->job != UNIT_JOB_STOP) {
                const char *verb = j->stop->job == UNIT_JOB_RESTART ? "restart"
                                   : j->stop->job == UNIT_JOB_START ? "start"
                                                                    : "reload";

                if (streq(j->result, "done"))
                        return stop_settle(j, 1, "%sed (job done)", verb);
                return stop_settle(j, job_result_to_errno(j->result), "%s job ended with result '%s'", verb, j->result);
        }

        if (streq(j->result, "skipped"))
                return stop_settle(j, 0, "nothing to stop (job skipped)");
        if (!streq(j->result, "done"))
                return stop_settle(j, job_result_to_errno(j->result), "stop job ended with result '%s'", j->result);
        /* Stopped; a unit whose stop went wrong (ExecStop failed, SIGKILL was needed) is "failed". */
        if (services_unit_status(m, j->stop->unit, &s) >= 0 && streq(s.active_state, "failed"))
                return stop_settle(j, 1, "stopped (job done), the unit is now failed (%s)", s.sub_state);
        stop_settle(j, 1, "stopped (job done)");
}

/* Settle what has an answer or is past its deadline; returns how many still wait and the next deadline. */
static size_t stop_sweep(ServiceManager *m, StopWait *w, uint64_t *ret_next) {
        usec_t t = now(CLOCK_MONOTONIC), next = UINT64_MAX;
        size_t waiting = 0;

        for (size_t i = 0; i < w->n; i++) {
                StopJob *j = w->jobs + i;

                if (!j->path)
                        continue;
                if (j->result[0])
                        stop_finish(m, j);
                else if (t >= j->deadline_usec)
                        stop_settle(j, -ETIME, "stop job %s still running after %.1f s; left to systemd", j->path,
                                    (double) (t - j->queued_usec) / 1e6);
                else {
                        waiting++;
                        if (j->deadline_usec < next)
                                next = j->deadline_usec;
                }
        }
        *ret_next = next;
        return waiting;
}

static void stop_fail_waiting(StopWait *w, int r) {
        for (size_t i = 0; i < w->n; i++)
                if (w->jobs[i].path)
                        stop_settle(w->jobs + i, r, "lost the connection to systemd while waiting: %s", strerror(-r));
}

static void stop_wait_all(ServiceManager *m, StopWait *w) {
        uint64_t next;
        int r;

        while (stop_sweep(m, w, &next) > 0) {
                r = sd_bus_process(m->bus, NULL);
                if (r > 0)
                        continue;
                if (r == 0) {
                        r = sd_bus_wait(m->bus, usec_left(next));
                }
                if (r < 0 && r != -EINTR) {
                        stop_fail_waiting(w, r);
                        return;
                }
        }
}

void services_stop_many(ServiceManager *m, UnitStop *stops, size_t n, uint64_t timeout_usec, uint64_t deadline_usec) {
        CLEANUP(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        cleanup_free StopJob *jobs = calloc(n, sizeof(StopJob));
        StopWait w = { .jobs = jobs, .n = n };
        int r;

        if (n == 0)
                return;
        if (timeout_usec == 0)
                timeout_usec = SERVICES_STOP_TIMEOUT_USEC;
        for (size_t i = 0; jobs && i < n; i++)
                jobs[i].stop = stops + i;
        /* The match comes first: a job may finish before StopUnit's reply has been read. */
        r = jobs ? sd_bus_match_signal(m->bus, &slot, m->direct ? NULL : SD_DESTINATION, SD_PATH, SD_MANAGER,
                                       "JobRemoved", on_job_removed, &w)
                 : -ENOMEM;
        if (r >= 0)
                r = manager_subscribe(m);
        for (size_t i = 0; i < n; i++)
                if (r < 0) {
                        stops[i].result = r;
                        free(stops[i].message);
                        stops[i].message = strdup("cannot watch systemd's jobs");
                } else
                        stop_queue(m, jobs + i, timeout_usec, deadline_usec);
        if (r >= 0)
                stop_wait_all(m, &w);
}

/* One unit's job, queued and waited for as services_stop_many() does. */
static int one_job(ServiceManager *m, const char *unit, UnitJob job, uint64_t timeout_usec, uint64_t deadline_usec,
                   char **ret_msg) {
        UnitStop u = { .unit = unit, .job = job };

        services_stop_many(m, &u, 1, timeout_usec, deadline_usec);
        *ret_msg = u.message;
        return u.result;
}

int services_restart(ServiceManager *m, const char *unit, uint64_t timeout_usec, uint64_t deadline_usec,
                     char **ret_msg) {
        return one_job(m, unit, UNIT_JOB_RESTART, timeout_usec, deadline_usec, ret_msg);
}

int services_start(ServiceManager *m, const char *unit, uint64_t timeout_usec, uint64_t deadline_usec, char **ret_msg) {
        return one_job(m, unit, UNIT_JOB_START, timeout_usec, deadline_usec, ret_msg);
}

int services_reload_unit(ServiceManager *m, const char *unit, uint64_t timeout_usec, uint64_t deadline_usec,
                         char **ret_msg) {
        return one_job(m, unit, UNIT_JOB_RELOAD, timeout_usec, deadline_usec, ret_msg);
}
