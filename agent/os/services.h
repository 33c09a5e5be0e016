/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* systemd over D-Bus (sd-bus): find units by glob, stop them concurrently and wait for their jobs,
 * disable, mask, reload and reset-failed. The agent's only way to reach the service manager. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The default per-unit stop deadline: systemd's DefaultTimeoutStopSec, after which systemd itself
 * escalates to SIGKILL, plus a little for that to finish. */
#define SERVICES_STOP_TIMEOUT_USEC (100ULL * 1000000ULL)

typedef struct ServiceManager ServiceManager;

/* Find the systemd of the tree at root_fd (root its path, "/" on a node): the one whose sockets are in
 * ROOT/run. $DBUS_SYSTEM_BUS_ADDRESS when set; otherwise nothing unless ROOT/run/systemd/system exists
 * (sd_booted()'s test), then, as root, the manager's private socket ROOT/run/systemd/private as
 * systemctl does, else the system bus at ROOT/run/dbus/system_bus_socket. Every path is resolved
 * beneath root_fd with no symlink on the way (chaseat()) and connected to through the inode found,
 * so a tree whose run/systemd points at the running system's reaches nothing. A rescue system with a
 * node's disk at --root finds no systemd there, and stops none of its own units. Always returns a
 * manager (or -ENOMEM); services_manager_why_absent() says whether it is usable. */
int services_manager_open(int root_fd, const char *root, ServiceManager **ret);
ServiceManager *services_manager_free(ServiceManager *m);

/* NULL when connected, else why systemd is out of reach ("sd_booted() is false: ..."). */
const char *services_manager_why_absent(const ServiceManager *m);

/* The unit names a pattern names, sorted, unique: a plain name is itself; a glob is matched against
 * ListUnitsByPatterns() (loaded units) and ListUnitFilesByPatterns() (unit files on disk). */
int services_expand(ServiceManager *m, const char *pattern, char ***ret_units);

typedef struct UnitStatus {
        char active_state[32]; /* "active", "inactive", "failed", "deactivating", ... */
        char sub_state[32];
        uint32_t job_id; /* nonzero while a job is queued or running */
        bool need_daemon_reload;
} UnitStatus;

/* A loaded unit's state; -ENOENT when systemd has not loaded it (so it cannot be running). */
int services_unit_status(ServiceManager *m, const char *unit, UnitStatus *ret);
/* GetUnitFileState(): "enabled", "disabled", "static", "masked", ...; -ENOENT without a unit file. */
int services_unit_file_state(ServiceManager *m, const char *unit, char **ret_state);

/* A service's MainPID (0 when it has none running); -ENOENT when systemd has not loaded the unit. */
int services_unit_main_pid(ServiceManager *m, const char *unit, pid_t *ret);

/* Inactive or failed, with no job queued: there is nothing to stop. */
bool services_status_is_stopped(const UnitStatus *s);

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

/* org.freedesktop.NetworkManager.Reload(0): configuration, DNS configuration and the DNS plugin, over
 * the system bus (a direct connection to the manager reaches no other service: then the system bus
 * at ROOT/run/dbus/system_bus_socket, resolved as services_manager_open() resolves it, or
 * $DBUS_SYSTEM_BUS_ADDRESS). 1 reloaded, -errno with the bus error in *reterr_msg: -EACCES when
 * NetworkManager or the bus refused the caller (NetworkManager authorizes a caller by its PID, which
 * the bus cannot tell from another PID namespace). */
int services_networkmanager_reload(ServiceManager *m, char **reterr_msg);

/* DisableUnitFiles(runtime=false, and runtime=true for an "-runtime" state): 1 with the changes
 * ("removed /etc/systemd/system/multi-user.target.wants/kubelet.service") in *ret_msg, 0 when
 * nothing was enabled or there is no unit file. */
int services_disable(ServiceManager *m, const char *unit, char **ret_msg);
/* MaskUnitFiles(runtime=false, force=false): 0 when already masked. */
int services_mask(ServiceManager *m, const char *unit, char **ret_msg);
/* Reload(): waits until systemd has reloaded, at most timeout_usec (0: the default). */
int services_reload(ServiceManager *m, uint64_t timeout_usec, char **reterr_msg);
/* ResetFailedUnit() on a failed unit: 1; 0 when it is not loaded or not failed. */
int services_reset_failed(ServiceManager *m, const char *unit, char **ret_msg);

/* Does a manifest's unit pattern name this unit? A pattern without a suffix names a .service, as
 * systemctl reads "kubelet". */
bool services_unit_pattern_matches(const char *pattern, const char *unit);

/* Units no manifest may stop, disable or mask, even through a glob: what keeps the node reachable
 * and the service manager itself (dbus*, systemd-*, ssh*, init.scope, -.mount, -.slice, *.target). */
bool services_unit_is_protected(const char *unit);
