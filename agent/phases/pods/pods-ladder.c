/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's rescue ladder below the CRI, rung 3: the runtime stopped through systemd, the shim
 * kill and the unmount of what the shims left. Rung 2, the rescue conflist, is pods-rescue.c. */

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "agent/os/fileio.h"
#include "agent/base/log.h"
#include "agent/os/mount-util.h"
#include "agent/os/mountinfo.h"
#include "agent/engine/phase.h"
#include "agent/phases/pods/pods-ladder.h"
#include "agent/os/proc.h"
#include "agent/os/remove.h"
#include "agent/os/services.h"
#include "cri/cri.h"
#include "dirent-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

#define SHIM_PREFIX "containerd-shim"
#define SHIM_WAIT_USEC (3 * USEC_PER_SEC)
#define RUNTIME_STOP_TIMEOUT_USEC (60 * USEC_PER_SEC)
/* The containerd namespace the CRI plugin keeps Kubernetes' containers in. */
#define CRI_NAMESPACE "k8s.io"
/* The restart: each Status call, and how often it is asked until the CRI answers. */
#define RESTART_CALL_TIMEOUT_USEC (2 * USEC_PER_SEC)
#define RESTART_POLL_USEC (20 * USEC_PER_MSEC)

typedef struct ShimKill {
        unsigned shims;     /* containerd-shim* processes of the namespace */
        unsigned processes; /* everything killed, shims and their descendants */
        unsigned survivors; /* still there after SIGKILL and the wait */
} ShimKill;

/* The process table, just what the shim kill needs. */
typedef struct Proc {
        pid_t pid, ppid;
        uint64_t starttime; /* with pid, the process the scan saw */
        bool shim;
        bool doomed;
        int pidfd; /* once pinned for the kill: -EBADF when gone, or without pidfds */
} Proc;

/* A containerd-shim* of the namespace (and, unless address is NULL, of that runtime's socket), by
 * its command line: "-namespace NS -address PATH [-id ID]". */
static bool cmdline_is_shim(pid_t pid, const char *namespace, const char *address, char **ret_id) {
        cleanup_free char *cmdline = NULL;
        const char *base, *id;
        size_t len = 0;

        if (proc_cmdline_read(pid, &cmdline, &len) < 0 || len == 0)
                return false;
        base = strrchr(cmdline, '/');
        if (!startswith(base ? base + 1 : cmdline, SHIM_PREFIX) ||
            !streq_ptr(proc_cmdline_option(cmdline, len, "-namespace", NULL), namespace))
                return false;
        if (address && !streq_ptr(proc_cmdline_option(cmdline, len, "-address", NULL), address))
                return false;
        if (ret_id) {
                id = proc_cmdline_option(cmdline, len, "-id", NULL);
                *ret_id = id ? strdup(id) : NULL;
        }
        return true;
}

bool ladder_is_shim(pid_t pid, const char *socket_path, char **ret_id) {
        return cmdline_is_shim(pid, CRI_NAMESPACE, socket_path, ret_id);
}

/* A containerd-shim* serving socket_path in another namespace than k8s.io (Docker's "moby", ...). */
static bool cmdline_is_foreign_shim(pid_t pid, const char *socket_path) {
        cleanup_free char *cmdline = NULL;
        const char *base, *ns;
        size_t len = 0;

        if (proc_cmdline_read(pid, &cmdline, &len) < 0 || len == 0)
                return false;
        base = strrchr(cmdline, '/');
        ns = proc_cmdline_option(cmdline, len, "-namespace", NULL);
        return startswith(base ? base + 1 : cmdline, SHIM_PREFIX) && ns && !streq(ns, CRI_NAMESPACE) &&
               streq_ptr(proc_cmdline_option(cmdline, len, "-address", NULL), socket_path);
}

int ladder_foreign_shims(const char *socket_path, unsigned *ret) {
        ProcTable t = {};
        int r;

        r = proc_table_read(&t);
        if (r < 0)
                return r;
        *ret = 0;
        for (size_t i = 0; i < t.n; i++)
                *ret += t.procs[i].state != 'Z' && cmdline_is_foreign_shim(t.procs[i].pid, socket_path);
        proc_table_done(&t);
        return 0;
}

/* The live processes (zombies are gone for our purposes), each marked whether it is a shim. */
static int proc_scan(const char *namespace, const char *address, Proc **ret, size_t *ret_n) {
        ProcTable t = {};
        size_t n = 0;
        Proc *l;
        int r;

        r = proc_table_read(&t);
        if (r < 0)
                return r;
        l = calloc(t.n ?: 1, sizeof(Proc));
        if (!l) {
                proc_table_done(&t);
                return -ENOMEM;
        }
        for (size_t i = 0; i < t.n; i++) {
                const ProcInfo *p = t.procs + i;

                if (p->state == 'Z' || p->state == 'X')
                        continue;
                l[n++] = (Proc) { .pid = p->pid,
                                  .ppid = p->ppid,
                                  .starttime = p->starttime,
                                  .shim = cmdline_is_shim(p->pid, namespace, address, NULL),
                                  .pidfd = -EBADF };
        }
        proc_table_done(&t);
        *ret = l;
        *ret_n = n;
        return 0;
}

/* Mark the shims and, until nothing changes, every child of a marked process. */
static unsigned mark_doomed(Proc *l, size_t n, unsigned *ret_shims) {
        unsigned total = 0, shims = 0;
        bool changed = true;

        for (size_t i = 0; i < n; i++)
                if (l[i].shim && l[i].pid > 1 && l[i].pid != getpid()) {
                        l[i].doomed = true;
                        shims++;
                        total++;
                }
        while (changed) {
                changed = false;
                for (size_t i = 0; i < n; i++) {
                        if (l[i].doomed || l[i].pid <= 1 || l[i].pid == getpid())
                                continue;
                        for (size_t j = 0; j < n; j++)
                                if (l[j].doomed && l[j].pid == l[i].ppid) {
                                        l[i].doomed = changed = true;
                                        total++;
                                        break;
                                }
                }
        }
        *ret_shims = shims;
        return total;
}

static int shims_count(const char *namespace, const char *address, unsigned *ret) {
        Proc *l = NULL;
        size_t n = 0;
        int r;

        r = proc_scan(namespace, address, &l, &n);
        if (r < 0)
                return r;
        *ret = 0;
        for (size_t i = 0; i < n; i++)
                *ret += l[i].shim;
        free(l);
        return 0;
}

static int shims_kill(const char *namespace, const char *address, ShimKill *ret) {
        Proc *l = NULL;
        size_t n = 0;
        usec_t until;
        int r;

        *ret = (ShimKill) {};
        r = proc_scan(namespace, address, &l, &n);
        if (r < 0)
                return r;
        ret->processes = mark_doomed(l, n, &ret->shims);
        /* Each pinned before any is signalled: a PID the scan saw may be another process's by now. */
        for (size_t i = 0; i < n; i++)
                if (l[i].doomed && proc_pin(l[i].pid, l[i].starttime, &l[i].pidfd) == 0)
                        l[i].doomed = false; /* gone already */
        /* Descendants first, so that nothing is reparented past the list. */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < n; i++)
                        if (l[i].doomed && l[i].shim == (pass == 1))
                                (void) proc_signal(l[i].pidfd, l[i].pid, SIGKILL);
        until = now(CLOCK_MONOTONIC) + SHIM_WAIT_USEC;
        for (size_t i = 0; i < n; i++) {
                if (!l[i].doomed)
                        continue;
                while (proc_is(l[i].pid, l[i].starttime) && now(CLOCK_MONOTONIC) < until)
                        (void) usleep(20 * 1000);
                ret->survivors += proc_is(l[i].pid, l[i].starttime);
                closep(&l[i].pidfd);
        }
        free(l);
        return 0;
}

/* Unmount one leftover the mount table just listed, reached from "/" without following a symlink and
 * checked by its mount id: a name in a shim's state directory can be swapped like any other. */
static int unmount_leftover(int root_fd, const MountEntry *m) {
        cleanup_free char *msg = NULL;
        MountSeen seen;
        int r;

        mount_seen_observe(root_fd, m->mount_point, m, &seen);
        r = mount_unmount_seen(root_fd, m->mount_point, &seen, 0, &msg);
        if (r < 0 && r != -EBUSY)
                log_warning("Leftover mount %s not unmounted: %s", m->mount_point, msg ?: strerror(-r));
        return r;
}

/* Unmount (or count) every mount beneath prefix that keep() accepts; deepest first. */
static int unmount_beneath(int root_fd, const MountTable *t, const char *prefix, bool (*keep)(const MountEntry *m),
                           bool dry_run, unsigned *count, unsigned *busy) {
        cleanup_free const MountEntry **l = NULL;
        char real[PATH_MAX];
        size_t n = 0;
        int r;

        /* mountinfo shows real paths: /var/run/netns is /run/netns there. */
        if (!realpath(prefix, real))
                return 0;
        r = mount_table_beneath(t, real, &l, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                if (keep && !keep(l[i]))
                        continue;
                if (dry_run || unmount_leftover(root_fd, l[i]) >= 0)
                        (*count)++;
                else
                        (*busy)++; /* busy, or no longer what the table said: left mounted */
        }
        return 0;
}

static bool is_cni_netns(const MountEntry *m) {
        const char *base = strrchr(m->mount_point, '/');

        return streq(m->fstype, "nsfs") && base && startswith(base + 1, "cni-");
}

static bool same_dir(const char *a, const char *b) {
        struct stat sa, sb;

        if (stat(b, &sb) < 0)
                return true; /* nothing there to scan */
        if (stat(a, &sa) < 0)
                return false;
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int leftovers_unmount(const char *state_dir, const char *namespace, bool dry_run, LeftoverUnmount *ret) {
        cleanup_free char *tasks = NULL, *sandboxes = NULL;
        cleanup_close int root_fd = -EBADF;
        MountTable *t = NULL;
        int r;

        *ret = (LeftoverUnmount) {};
        root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return negative_errno();
        r = mount_table_read(&t);
        if (r < 0)
                return r;
        if (state_dir) {
                /* asprintf() leaves the pointer undefined on failure. */
                if (asprintf(&tasks, "%s/io.containerd.runtime.v2.task/%s", state_dir, namespace) < 0)
                        tasks = NULL;
                if (asprintf(&sandboxes, "%s/io.containerd.grpc.v1.cri/sandboxes", state_dir) < 0)
                        sandboxes = NULL;
                if (!tasks || !sandboxes)
                        r = -ENOMEM;
        }
        if (r >= 0 && tasks)
                r = unmount_beneath(root_fd, t, tasks, NULL, dry_run, &ret->rootfs, &ret->busy);
        if (r >= 0 && sandboxes)
                r = unmount_beneath(root_fd, t, sandboxes, NULL, dry_run, &ret->shm, &ret->busy);
        if (r >= 0)
                r = unmount_beneath(root_fd, t, "/run/netns", is_cni_netns, dry_run, &ret->netns, &ret->busy);
        if (r >= 0 && !same_dir("/run/netns", "/var/run/netns"))
                r = unmount_beneath(root_fd, t, "/var/run/netns", is_cni_netns, dry_run, &ret->netns, &ret->busy);
        mount_table_free(t);
        return r;
}

void ladder_residue(const char *socket_path, const RuntimeInfo *info, unsigned *ret_shims, LeftoverUnmount *ret) {
        *ret_shims = 0;
        *ret = (LeftoverUnmount) {};
        if (info->kind != RUNTIME_CONTAINERD)
                return;
        (void) shims_count(CRI_NAMESPACE, socket_path, ret_shims);
        (void) leftovers_unmount(info->state_dir, CRI_NAMESPACE, true, ret);
}

/* StopUnit through the systemd this run reaches (phase_systemd_running()), waiting for the job. */
static int stop_unit(Context *ctx, const char *unit, usec_t timeout_usec, char **reterr_msg) {
        UnitStop stop = { .unit = unit };
        ServiceManager *m;
        const char *why;
        int r;

        r = phase_systemd_running(ctx, &m, &why);
        if (r < 0)
                return set_errmsg(reterr_msg, r, "systemd not running: %s", why);
        services_stop_many(m, &stop, 1, timeout_usec, 0);
        if (reterr_msg && !*reterr_msg)
                *reterr_msg = TAKE_PTR(stop.message);
        free(stop.message);
        return stop.result;
}

/* Stop the runtime's unit through systemd; without systemd, say what the operator must do. */
static int runtime_stop(Context *ctx, const RuntimeInfo *info, char **ret_msg) {
        usec_t wait = RUNTIME_STOP_TIMEOUT_USEC, t = now(CLOCK_MONOTONIC);
        cleanup_free char *err = NULL;
        int r;

        if (!info->unit && info->pid > 0)
                return set_errmsg(ret_msg, -EOPNOTSUPP,
                                  "no systemd unit known for this runtime: stop it (PID %d), then rerun",
                                  (int) info->pid);
        if (!info->unit)
                return set_errmsg(ret_msg, -EOPNOTSUPP, "no systemd unit known for this runtime: stop it, then rerun");
        /* The stop job is waited for within the run's --timeout too. */
        if (ctx->deadline_usec > 0) {
                usec_t left = ctx->deadline_usec > t ? ctx->deadline_usec - t : 0;

                wait = left < wait ? left : wait;
        }
        r = stop_unit(ctx, info->unit, wait ?: 1, &err);
        if (r == -EHOSTDOWN)
                return set_errmsg(ret_msg, r, "systemd is not running: stop %s (PID %d) by hand, then rerun",
                                  info->unit, (int) info->pid);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot stop %s (%s): stop it, then rerun", info->unit, strna(err));
        return set_errmsg(ret_msg, r, r > 0 ? "stopped %s" : "%s was not running", info->unit);
}

int ladder_rung3(Context *ctx, const char *socket_path, const RuntimeInfo *info, bool answered, const char *why,
                 char **ret_msg) {
        cleanup_free char *stop = NULL, *leftover = NULL;
        LeftoverUnmount lu = {};
        ShimKill sk = {};
        pid_t pid = 0;
        int r, k = 0, u = 0;

        /* A runtime nobody listens for any more (it died) needs no stopping, only its leftovers gone. */
        if (proc_socket_listener(socket_path, &pid) == 0 && !answered) {
                stop = strdup("the runtime is not running");
                r = 0;
        } else
                r = runtime_stop(ctx, info, &stop);
        if (info->kind == RUNTIME_CONTAINERD) {
                k = shims_kill(CRI_NAMESPACE, socket_path, &sk);
                u = leftovers_unmount(info->state_dir, CRI_NAMESPACE, false, &lu);
        }
        if (info->state_dir || info->root_dir)
                leftover = strprintf("; left for the files phase: %s%s%s", strempty(info->state_dir),
                                     info->state_dir && info->root_dir ? ", " : "", strempty(info->root_dir));
        *ret_msg = strprintf("rung 3 (%s): %s; killed %u shim%s with %u processes%s%s; unmounted %u rootfs, %u shm, "
                             "%u netns%s%s%s",
                             why, strna(stop), sk.shims, sk.shims == 1 ? "" : "s", sk.processes,
                             sk.survivors ? ", some survived" : "", k < 0 ? " (could not scan /proc)" : "", lu.rootfs,
                             lu.shm, lu.netns, lu.busy ? ", some busy" : "",
                             u < 0 ? " (could not read the mounts)" : "", strempty(leftover));
        log_warning("Pods phase, rung 3 on %s: %s", socket_path, strna(*ret_msg));
        if (r < 0)
                return r;
        if (k < 0 || u < 0)
                return k < 0 ? k : u;
        return sk.survivors || lu.busy ? -EBUSY : 1;
}

/* Empty a directory of the runtime's task state (the bundles of k8s.io's tasks, runc's state of
 * them): the walk never crosses a mount (a rootfs still mounted stays, and is counted). */
static int state_empty(int root_fd, const char *state_dir, const char *sub, unsigned *ret_entries) {
        cleanup_free char *path = strprintf("%s/%s/%s", state_dir, sub, CRI_NAMESPACE);
        RemoveOptions o = { .keep_top = true };
        RemoveStats st = {};
        int r;

        if (!path)
                return -ENOMEM;
        r = remove_tree(root_fd, path, &o, &st);
        *ret_entries += st.dirs + st.files;
        remove_stats_done(&st);
        return r;
}

int ladder_runtime_stop(Context *ctx, const RuntimeInfo *info, usec_t wait_usec, char **ret_msg) {
        cleanup_free char *msg = NULL;
        int r;

        r = stop_unit(ctx, info->unit, wait_usec, &msg);
        if (r == -ETIME)
                return set_errmsg(ret_msg, r, "%s still stopping after %" PRIu64 " ms: the kill pass goes on",
                                  info->unit, wait_usec / USEC_PER_MSEC);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot stop %s: %s; the pods go through the running runtime", info->unit,
                                  strna(msg));
        return set_errmsg(ret_msg, 1, "stopped %s (its shims stay)", info->unit);
}

/* What the clearing did, for its row. */
typedef struct RestartClear {
        ShimKill sk;
        LeftoverUnmount lu;
        unsigned state_entries;
        int cleared; /* 1 the task state went, else why it was left to the runtime (-errno) */
} RestartClear;

/* With the runtime stopped: nothing of k8s.io's tasks may outlive this, or their state stays. */
static void restart_clear(int root_fd, const char *socket_path, const RuntimeInfo *info, RestartClear *rc) {
        int k, u, r;

        k = shims_kill(CRI_NAMESPACE, socket_path, &rc->sk);
        u = leftovers_unmount(info->state_dir, CRI_NAMESPACE, false, &rc->lu);
        if (k < 0 || u < 0 || rc->sk.survivors > 0 || rc->lu.busy > 0) {
                rc->cleared = k < 0 ? k : u < 0 ? u : -EBUSY;
                return;
        }
        r = state_empty(root_fd, info->state_dir, "io.containerd.runtime.v2.task", &rc->state_entries);
        if (r >= 0)
                r = state_empty(root_fd, info->state_dir, "runc", &rc->state_entries);
        rc->cleared = r < 0 ? r : 1;
}

/* Until nobody listens on the socket any more: the stop job may still run. */
static bool runtime_gone(const char *socket_path, usec_t deadline) {
        pid_t pid = 0;

        while (proc_socket_listener(socket_path, &pid) > 0) {
                if (now(CLOCK_MONOTONIC) + RESTART_POLL_USEC >= deadline)
                        return false;
                (void) usleep(RESTART_POLL_USEC);
        }
        return true;
}

int ladder_runtime_clear_start(Context *ctx, const char *socket_path, const RuntimeInfo *info, usec_t deadline,
                               char **ret_msg) {
        cleanup_free char *start = NULL, *err = NULL;
        ServiceManager *m = NULL;
        RestartClear rc = { .cleared = -EBUSY };
        usec_t t0 = now(CLOCK_MONOTONIC), t1, t2;
        const char *why;
        int s;

        /* Only below a stopped runtime; a runtime still serving keeps its state, as it would anyway. */
        if (runtime_gone(socket_path, deadline))
                restart_clear(ctx->root_fd, socket_path, info, &rc);
        /* Whatever happened above, the kept runtime runs again. */
        t1 = now(CLOCK_MONOTONIC);
        s = phase_systemd_running(ctx, &m, &why);
        if (s < 0)
                start = strdup(why);
        else
                s = services_start(m, info->unit, usec_left(deadline), deadline, &start);
        t2 = now(CLOCK_MONOTONIC);
        if (s >= 0)
                s = cri_wait_status(socket_path, RESTART_CALL_TIMEOUT_USEC, deadline, RESTART_POLL_USEC, true, &err);
        if (s < 0)
                return set_errmsg(ret_msg, s, "%s does not run and answer again: %s", info->unit, strna(err ?: start));
        if (rc.cleared < 0)
                log_warning("Pods phase: the state of %s's tasks was left in place (%s): each pod's removal cleans "
                            "it up through the runtime.",
                            info->unit, strerror(-rc.cleared));
        *ret_msg = strprintf("%u shim%s with %u processes killed, %u rootfs, %u shm and %u netns mounts unmounted; %s "
                             "(%" PRIu64 " ms); %s started in %" PRIu64 " ms, its CRI answers %" PRIu64 " ms later",
                             rc.sk.shims, rc.sk.shims == 1 ? "" : "s", rc.sk.processes, rc.lu.rootfs, rc.lu.shm,
                             rc.lu.netns,
                             rc.cleared > 0 ? "the tasks' state removed" : "the tasks' state left to the runtime",
                             (t1 - t0) / USEC_PER_MSEC, info->unit, (t2 - t1) / USEC_PER_MSEC,
                             (now(CLOCK_MONOTONIC) - t2) / USEC_PER_MSEC);
        return 1;
}
