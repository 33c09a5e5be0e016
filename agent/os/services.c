/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* systemd over D-Bus (sd-bus): connect, find units, stop them concurrently, disable, mask, reload. */

#include <fnmatch.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>

#include "agent/base/log.h"
#include "agent/base/path.h"
#include "agent/os/fileio.h"
#include "agent/os/services.h"
#include "chase.h"
#include "dlib/dlopen.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

#define SD_DESTINATION "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
#define SD_UNIT "org.freedesktop.systemd1.Unit"
#define SD_SERVICE "org.freedesktop.systemd1.Service"

struct ServiceManager {
        sd_bus *bus;
        int root_fd; /* the tree whose sockets are reached (a dup of the run's root_fd) */
        char *root;  /* its path, for the messages */
        char *why_absent;
        char *description;
        bool direct; /* the private socket: no bus daemon, signals carry no sender */
        bool subscribed;
};

static void sd_bus_error_freep(sd_bus_error *e) {
        sd_bus_error_free(e);
}
#define cleanup_bus_error CLEANUP(sd_bus_error_freep)
#define cleanup_bus_message CLEANUP(sd_bus_message_unrefp)

/* The unit (or its unit file) is not there: "not found" is a state, not a failure. */
static bool bus_error_is_absent(const sd_bus_error *e) {
        return sd_bus_error_has_names(e, "org.freedesktop.systemd1.NoSuchUnit",
                                      "org.freedesktop.DBus.Error.UnknownObject") ||
               sd_bus_error_get_errno(e) == ENOENT;
}

/* A failed call as -errno, with the bus's own message in *reterr_msg. */
static int bus_fail(char **reterr_msg, int r, const sd_bus_error *e, const char *what) {
        if (sd_bus_error_is_set(e)) {
                r = sd_bus_error_get_errno(e) > 0 ? -sd_bus_error_get_errno(e) : r;
                return set_errmsg(reterr_msg, r, "%s: %s", what, e->message ?: e->name);
        }
        return set_errmsg(reterr_msg, r, "%s: %s", what, strerror(-r));
}

static int manager_absent(ServiceManager *m, const char *fmt, ...) _printf_(2, 3);
static int manager_absent(ServiceManager *m, const char *fmt, ...) {
        va_list ap;

        /* No bus, no call: a forwarder called even with NULL loads libsystemd. */
        if (m->bus)
                m->bus = sd_bus_flush_close_unref(m->bus);
        /* The private socket's reason is replaced by the system bus's when both are tried. */
        free(m->why_absent);
        va_start(ap, fmt);
        m->why_absent = vstrprintf(fmt, ap);
        va_end(ap);
        return m->why_absent ? 0 : -ENOMEM;
}

/* A connection to address: to a bus daemon (client), or straight to the manager. */
static int bus_open_address(const char *address, bool client, sd_bus **ret) {
        sd_bus *b = NULL;
        int r;

        r = sd_bus_new(&b);
        if (r >= 0)
                r = sd_bus_set_address(b, address);
        if (r >= 0)
                r = sd_bus_set_bus_client(b, client);
        if (r >= 0)
                r = sd_bus_start(b);
        if (r < 0) {
                sd_bus_unref(b);
                return r;
        }
        *ret = b;
        return 0;
}

/* Open one kind of connection and prove that systemd answers on it: 1 connected, 0 not (why in
 * m->why_absent), -ENOMEM. address is what sd-bus connects to, shown what the messages name. */
static int manager_try(ServiceManager *m, bool direct, const char *address, const char *shown) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        cleanup_free char *version = NULL;
        int r;

        m->bus = sd_bus_flush_close_unref(m->bus);
        m->why_absent = mfree(m->why_absent);
        m->direct = direct;
        r = bus_open_address(address, !direct, &m->bus);
        if (r < 0)
                return manager_absent(m, "cannot connect to the %s at %s: %s", direct ? "manager" : "system bus", shown,
                                      strerror(-r));
        r = sd_bus_get_property_string(m->bus, SD_DESTINATION, SD_PATH, SD_MANAGER, "Version", &e, &version);
        if (r < 0)
                return manager_absent(m, "no systemd answers on %s: %s", shown, e.message ?: strerror(-r));
        if (asprintf(&m->description, "systemd %s via %s", version, shown) < 0) {
                m->description = NULL;
                return -ENOMEM;
        }
        log_debug("Reaching %s.", m->description);
        return 1;
}

/* A socket of the tree (path beneath m->root_fd), reached by fileio_socket_beneath(): a symlink
 * anywhere on the way is refused, so a tree whose run/systemd points at /run/systemd reaches nothing
 * of the running system's. *ret_address: "unix:path=/proc/self/fd/N" for sd-bus; *ret_fd must stay
 * open until the connection is made. *ret_shown: "unix:path=ROOT/PATH", for the messages. */
static int tree_socket(const ServiceManager *m, const char *path, int *ret_fd, char **ret_address, char **ret_shown) {
        cleanup_free char *joined = path_join_root(m->root, path);
        cleanup_close int fd = -EBADF;
        char proc[FILEIO_PROC_FD_MAX];

        *ret_shown = joined ? strprintf("unix:path=%s", joined) : NULL;
        if (!*ret_shown)
                return -ENOMEM;
        fd = fileio_socket_beneath(m->root_fd, path, proc);
        if (fd < 0)
                return fd;
        *ret_address = strprintf("unix:path=%s", proc);
        if (!*ret_address)
                return -ENOMEM;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* manager_try() on the tree's socket at path. */
static int manager_try_tree(ServiceManager *m, bool direct, const char *path) {
        cleanup_free char *address = NULL, *shown = NULL;
        cleanup_close int fd = -EBADF;
        int r;

        r = tree_socket(m, path, &fd, &address, &shown);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return manager_absent(m, "cannot connect to the %s at %s: %s", direct ? "manager" : "system bus",
                                      strna(shown), fileio_socket_strerror(r));
        return manager_try(m, direct, address, shown);
}

/* sd_booted()'s test, made on the tree's /run through the resolver: 0 booted, or manager_absent(). */
static int manager_booted(ServiceManager *m) {
        cleanup_free char *marker = path_join_root(m->root, "/run/systemd/system");
        cleanup_close int fd = -EBADF;

        if (!marker)
                return -ENOMEM;
        fd = chaseat(m->root_fd, "/run/systemd/system", CHASE_NO_SYMLINKS | CHASE_MUST_BE_DIRECTORY, O_PATH, NULL,
                     NULL);
        if (fd == -ENOENT || fd == -ENOTDIR)
                return manager_absent(m, "not booted with systemd (no %s)", marker) ?: 1;
        if (fd < 0)
                return manager_absent(m, "not booted with systemd (%s: %s)", marker, fileio_socket_strerror(fd)) ?: 1;
        return 0;
}

/* Pick the connection (see services.h). */
static int manager_connect(ServiceManager *m) {
        const char *env = getenv("DBUS_SYSTEM_BUS_ADDRESS");
        int r;

        /* Without systemd in the tree, libsystemd is not loaded. */
        if (isempty(env)) {
                r = manager_booted(m);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        /* Without libsystemd nothing can be asked: the same as no systemd, with the reason. */
        if (dlib_load(DLIB_LIBSYSTEMD) < 0)
                return manager_absent(m, "%s", dlib_why(DLIB_LIBSYSTEMD));
        if (!isempty(env))
                return manager_try(m, false, env, env);
        /* As root, talk to PID 1 directly, as systemctl does: it works while dbus is down too. */
        if (geteuid() == 0) {
                r = manager_try_tree(m, true, "/run/systemd/private");
                if (r != 0)
                        return r;
                log_debug("%s; trying the system bus.", m->why_absent);
        }
        return manager_try_tree(m, false, "/run/dbus/system_bus_socket");
}

int services_manager_open(int root_fd, const char *root, ServiceManager **ret) {
        ServiceManager *m;
        int r;

        m = calloc(1, sizeof *m);
        if (!m)
                return -ENOMEM;
        m->root_fd = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
        m->root = strdup(root ?: "/");
        r = m->root_fd < 0 ? negative_errno() : !m->root ? -ENOMEM : manager_connect(m);
        if (r < 0) {
                services_manager_free(m);
                return r;
        }
        *ret = m;
        return 0;
}

ServiceManager *services_manager_free(ServiceManager *m) {
        if (!m)
                return NULL;
        if (m->bus)
                sd_bus_flush_close_unref(m->bus);
        if (m->root_fd >= 0)
                (void) close(m->root_fd);
        free(m->root);
        free(m->why_absent);
        free(m->description);
        return mfree(m);
}

const char *services_manager_why_absent(const ServiceManager *m) {
        return m->bus ? NULL : strna(m->why_absent);
}

bool services_unit_is_protected(const char *unit) {
        static const char *const protected[] = {
                "dbus*", "systemd-*", "ssh*", "init.scope", "-.mount", "-.slice", "*.target", "*.device",
        };

        for (size_t i = 0; i < ELEMENTSOF(protected); i++)
                if (fnmatch(protected[i], unit, FNM_NOESCAPE) == 0)
                        return true;
        return false;
}

bool services_unit_pattern_matches(const char *pattern, const char *unit) {
        size_t l = strlen(unit);
        char base[256];

        if (fnmatch(pattern, unit, FNM_NOESCAPE) == 0)
                return true;
        if (strchr(pattern, '.') || l <= 8 || l - 8 >= sizeof base || !streq(unit + l - 8, ".service"))
                return false;
        memcpy(base, unit, l - 8);
        base[l - 8] = '\0';
        return fnmatch(pattern, base, FNM_NOESCAPE) == 0;
}

static bool unit_pattern_is_glob(const char *p) {
        return strpbrk(p, "*?[") != NULL;
}

static int list_call(ServiceManager *m, const char *method, const char *pattern, sd_bus_message **ret) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        cleanup_bus_message sd_bus_message *req = NULL;
        int r;

        r = sd_bus_message_new_method_call(m->bus, &req, SD_DESTINATION, SD_PATH, SD_MANAGER, method);
        if (r >= 0 && pattern)
                r = sd_bus_message_append_strv(req, (char *[]) { NULL });
        if (r >= 0 && pattern)
                r = sd_bus_message_append_strv(req, (char *[]) { (char *) pattern, NULL });
        if (r >= 0)
                r = sd_bus_call(m->bus, req, 0, &e, ret);
        if (r < 0 && sd_bus_error_has_name(&e, SD_BUS_ERROR_UNKNOWN_METHOD))
                return -EOPNOTSUPP;
        if (r < 0)
                return log_debug_errno(r, "%s(%s) failed: %s", method, strempty(pattern), e.message ?: strerror(-r));
        return 0;
}

/* Call ListUnitsByPatterns or ListUnitFilesByPatterns: arrays of structs whose first member names a
 * unit, or is the path of its unit file. systemd before 230 has neither: then the whole list is
 * asked for (ListUnits, ListUnitFiles), and matched here, as it always is anyway. */
static int list_by_pattern(ServiceManager *m, const char *method, const char *fallback, const char *pattern,
                           char ***l) {
        cleanup_bus_message sd_bus_message *reply = NULL;
        const char *contents;
        int r;

        r = list_call(m, method, pattern, &reply);
        if (r == -EOPNOTSUPP)
                r = list_call(m, fallback, NULL, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', NULL);
        while (r >= 0 && (r = sd_bus_message_peek_type(reply, NULL, &contents)) > 0) {
                const char *s, *name;

                r = sd_bus_message_enter_container(reply, 'r', contents);
                if (r >= 0)
                        r = sd_bus_message_read_basic(reply, 's', &s);
                if (r < 0)
                        break;
                name = strrchr(s, '/') ? strrchr(s, '/') + 1 : s;
                if (fnmatch(pattern, name, FNM_NOESCAPE) == 0 && strv_extend_unique(l, name) < 0)
                        return -ENOMEM;
                r = sd_bus_message_skip(reply, contents + 1);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        return r < 0 ? r : 0;
}

int services_expand(ServiceManager *m, const char *pattern, char ***ret_units) {
        cleanup_strv char **l = NULL;
        int r;

        if (!unit_pattern_is_glob(pattern))
                r = strv_extend(&l, pattern);
        else {
                r = list_by_pattern(m, "ListUnitsByPatterns", "ListUnits", pattern, &l);
                if (r >= 0)
                        r = list_by_pattern(m, "ListUnitFilesByPatterns", "ListUnitFiles", pattern, &l);
        }
        if (r < 0)
                return r;
        if (!l) {
                l = calloc(1, sizeof(char *));
                if (!l)
                        return -ENOMEM;
        }
        strv_sort(l);
        *ret_units = TAKE_PTR(l);
        return 0;
}

static int unit_object(ServiceManager *m, const char *unit, char **ret_path) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        cleanup_bus_message sd_bus_message *reply = NULL;
        const char *path;
        int r;

        r = sd_bus_call_method(m->bus, SD_DESTINATION, SD_PATH, SD_MANAGER, "GetUnit", &e, &reply, "s", unit);
        if (r < 0)
                return bus_error_is_absent(&e) ? -ENOENT : r;
        r = sd_bus_message_read(reply, "o", &path);
        if (r < 0)
                return r;
        *ret_path = strdup(path);
        return *ret_path ? 0 : -ENOMEM;
}

static int get_string(ServiceManager *m, const char *path, const char *property, char *buf, size_t size) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        cleanup_free char *s = NULL;
        int r;

        r = sd_bus_get_property_string(m->bus, SD_DESTINATION, path, SD_UNIT, property, &e, &s);
        if (r < 0)
                return bus_error_is_absent(&e) ? -ENOENT : r;
        snprintf(buf, size, "%s", s);
        return 0;
}

int services_unit_status(ServiceManager *m, const char *unit, UnitStatus *ret) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        cleanup_bus_message sd_bus_message *reply = NULL;
        cleanup_free char *path = NULL;
        UnitStatus s = {};
        const char *job;
        int r, b;

        r = unit_object(m, unit, &path);
        if (r >= 0)
                r = get_string(m, path, "ActiveState", s.active_state, sizeof s.active_state);
        if (r >= 0)
                r = get_string(m, path, "SubState", s.sub_state, sizeof s.sub_state);
        if (r < 0)
                return r;
        r = sd_bus_get_property(m->bus, SD_DESTINATION, path, SD_UNIT, "Job", &e, &reply, "(uo)");
        if (r >= 0)
                r = sd_bus_message_read(reply, "(uo)", &s.job_id, &job);
        if (r >= 0)
                r = sd_bus_get_property_trivial(m->bus, SD_DESTINATION, path, SD_UNIT, "NeedDaemonReload", &e, 'b', &b);
        if (r < 0)
                return bus_error_is_absent(&e) ? -ENOENT : r;
        s.need_daemon_reload = b;
        *ret = s;
        return 0;
}

int services_unit_main_pid(ServiceManager *m, const char *unit, pid_t *ret) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        cleanup_free char *path = NULL;
        uint32_t pid = 0;
        int r;

        r = unit_object(m, unit, &path);
        if (r < 0)
                return r;
        r = sd_bus_get_property_trivial(m->bus, SD_DESTINATION, path, SD_SERVICE, "MainPID", &e, 'u', &pid);
        if (r < 0)
                return bus_error_is_absent(&e) ? -ENOENT : r;
        *ret = (pid_t) pid;
        return 0;
}

bool services_status_is_stopped(const UnitStatus *s) {
        return s->job_id == 0 && (streq(s->active_state, "inactive") || streq(s->active_state, "failed"));
}

int services_unit_file_state(ServiceManager *m, const char *unit, char **ret_state) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        cleanup_bus_message sd_bus_message *reply = NULL;
        const char *state;
        int r;

        r = sd_bus_call_method(m->bus, SD_DESTINATION, SD_PATH, SD_MANAGER, "GetUnitFileState", &e, &reply, "s", unit);
        if (r < 0)
                return bus_error_is_absent(&e) ? -ENOENT : r;
        r = sd_bus_message_read(reply, "s", &state);
        if (r < 0)
                return r;
        *ret_state = strdup(state);
        return *ret_state ? 0 : -ENOMEM;
}

/* ---- stopping: queue every job, then collect every JobRemoved ---- */

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
        if (r < 0 && bus_error_is_absent(&e) && stop)
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

int services_networkmanager_reload(ServiceManager *m, char **reterr_msg) {
        CLEANUP(sd_bus_flush_close_unrefp) sd_bus *own = NULL;
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        cleanup_free char *address = NULL, *shown = NULL;
        cleanup_close int fd = -EBADF;
        const char *env = getenv("DBUS_SYSTEM_BUS_ADDRESS");
        sd_bus *bus = m->bus;
        int r;

        if (m->direct) {
                /* The tree's system bus, through the resolver as the manager was (tree_socket()). */
                if (!isempty(env))
                        r = (address = strdup(env)) && (shown = strdup(env)) ? 0 : -ENOMEM;
                else
                        r = tree_socket(m, "/run/dbus/system_bus_socket", &fd, &address, &shown);
                if (r >= 0)
                        r = bus_open_address(address, true, &own);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return set_errmsg(reterr_msg, r, "cannot connect to the system bus at %s: %s", strna(shown),
                                          fileio_socket_strerror(r));
                bus = own;
        }
        r = sd_bus_call_method(bus, "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager",
                               "org.freedesktop.NetworkManager", "Reload", &e, NULL, "u", (uint32_t) 0);
        if (r < 0 && (sd_bus_error_has_name(&e, "org.freedesktop.NetworkManager.PermissionDenied") ||
                      sd_bus_error_has_name(&e, SD_BUS_ERROR_ACCESS_DENIED)))
                return set_errmsg(reterr_msg, -EACCES, "Reload: %s", e.message ?: e.name);
        if (r < 0)
                return bus_fail(reterr_msg, r, &e, "Reload");
        return 1;
}

/* ---- unit files ---- */

/* The a(sss) changes list of an install method, as "removed X; created Y -> Z". */
static int changes_describe(sd_bus_message *reply, char **ret, unsigned *ret_n) {
        cleanup_free char *buf = NULL;
        const char *type, *path, *source;
        unsigned n = 0;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "(sss)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(sss)", &type, &path, &source)) > 0) {
                char *t;

                if (streq(type, "unlink"))
                        r = asprintf(&t, "%s%sremoved %s", strempty(buf), buf ? "; " : "", path);
                else if (streq(type, "symlink"))
                        r = asprintf(&t, "%s%screated %s -> %s", strempty(buf), buf ? "; " : "", path, source);
                else
                        continue;
                if (r < 0)
                        return -ENOMEM;
                free(buf);
                buf = t;
                n++;
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        *ret_n = n;
        return 0;
}

/* Call DisableUnitFiles or MaskUnitFiles on one unit; 1 and the changes when there were any. */
static int unit_files_call(ServiceManager *m, const char *method, const char *unit, bool runtime, char **ret_msg) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        cleanup_bus_message sd_bus_message *req = NULL, *reply = NULL;
        cleanup_free char *changes = NULL;
        unsigned n = 0;
        int r;

        r = sd_bus_message_new_method_call(m->bus, &req, SD_DESTINATION, SD_PATH, SD_MANAGER, method);
        if (r >= 0)
                r = sd_bus_message_append_strv(req, (char *[]) { (char *) unit, NULL });
        if (r >= 0)
                r = sd_bus_message_append(req, "b", (int) runtime);
        if (r >= 0 && streq(method, "MaskUnitFiles"))
                r = sd_bus_message_append(req, "b", 0); /* force: never replace a real unit file */
        if (r >= 0)
                r = sd_bus_call(m->bus, req, 0, &e, &reply);
        if (r < 0 && bus_error_is_absent(&e))
                return set_errmsg(ret_msg, 0, "no unit file");
        if (r < 0)
                return bus_fail(ret_msg, r, &e, method);
        r = changes_describe(reply, &changes, &n);
        if (r < 0)
                return set_errmsg(ret_msg, r, "%s: cannot read the changes: %s", method, strerror(-r));
        if (n == 0)
                return 0;
        *ret_msg = TAKE_PTR(changes);
        return 1;
}

int services_disable(ServiceManager *m, const char *unit, char **ret_msg) {
        cleanup_free char *state = NULL, *more = NULL;
        int r, k;

        r = services_unit_file_state(m, unit, &state);
        if (r == -ENOENT)
                return set_errmsg(ret_msg, 0, "no unit file");
        if (r < 0)
                return set_errmsg(ret_msg, r, "GetUnitFileState: %s", strerror(-r));
        r = unit_files_call(m, "DisableUnitFiles", unit, false, ret_msg);
        if (r < 0 || !strstr(state, "-runtime"))
                goto finish;
        k = unit_files_call(m, "DisableUnitFiles", unit, true, &more);
        if (k < 0)
                r = k;
        if (k != 0 && more) {
                char *t;

                if (asprintf(&t, "%s%s%s", strempty(*ret_msg), *ret_msg ? "; " : "", more) < 0)
                        return -ENOMEM;
                free(*ret_msg);
                *ret_msg = t;
        }
        if (r >= 0 && k > 0)
                r = 1;
finish:
        if (r == 0 && !*ret_msg)
                (void) set_errmsg(ret_msg, 0, "not enabled (%s)", state);
        return r;
}

int services_mask(ServiceManager *m, const char *unit, char **ret_msg) {
        cleanup_free char *state = NULL;
        int r;

        r = services_unit_file_state(m, unit, &state);
        if (r < 0 && r != -ENOENT)
                return set_errmsg(ret_msg, r, "GetUnitFileState: %s", strerror(-r));
        if (r >= 0 && startswith(state, "masked"))
                return set_errmsg(ret_msg, 0, "already %s", state);
        r = unit_files_call(m, "MaskUnitFiles", unit, false, ret_msg);
        if (r == 0 && !*ret_msg)
                (void) set_errmsg(ret_msg, 0, "nothing to change");
        return r;
}

int services_reload(ServiceManager *m, uint64_t timeout_usec, char **reterr_msg) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        cleanup_bus_message sd_bus_message *req = NULL;
        int r;

        r = sd_bus_message_new_method_call(m->bus, &req, SD_DESTINATION, SD_PATH, SD_MANAGER, "Reload");
        if (r >= 0)
                r = sd_bus_call(m->bus, req, timeout_usec ?: SERVICES_STOP_TIMEOUT_USEC, &e, NULL);
        if (r < 0)
                return bus_fail(reterr_msg, r, &e, "Reload");
        return 1;
}

int services_reset_failed(ServiceManager *m, const char *unit, char **ret_msg) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        UnitStatus s;
        int r;

        r = services_unit_status(m, unit, &s);
        if (r == -ENOENT)
                return set_errmsg(ret_msg, 0, "not loaded");
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot read its state: %s", strerror(-r));
        if (!streq(s.active_state, "failed"))
                return set_errmsg(ret_msg, 0, "not failed (%s)", s.active_state);
        r = sd_bus_call_method(m->bus, SD_DESTINATION, SD_PATH, SD_MANAGER, "ResetFailedUnit", &e, NULL, "s", unit);
        if (r < 0 && bus_error_is_absent(&e))
                return set_errmsg(ret_msg, 0, "not loaded");
        if (r < 0)
                return bus_fail(ret_msg, r, &e, "ResetFailedUnit");
        return set_errmsg(ret_msg, 1, "failed state reset");
}
