/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The processes phase: kill the process trees that outlive their services (containerd's shims keep
 * their containers running after containerd stops), found by /proc/PID/exe against the manifest's
 * "process" paths. SIGTERM, then SIGKILL after a grace period, through pidfds. */

#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "agent/phases/phases.h"
#include "agent/config/detect.h"
#include "agent/config/etcd-owner.h"
#include "agent/engine/phase.h"
#include "agent/node/etcd.h"
#include "agent/os/proc.h"
#include "agent/os/services.h"
#include "agent/engine/cmdline.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

static unsigned arg_kill_grace_sec = 5; /* --kill-grace: from SIGTERM to SIGKILL (0 = at once) */

/* How long SIGTERM gets before SIGKILL, and how long SIGKILL gets before giving up. */
#define KILL_WAIT_USEC (5ULL * 1000000ULL)

typedef struct KillData {
        pid_t pid;
        uint64_t starttime; /* with pid, names the process seen when planning */
} KillData;

/* Is the process seen when planning still there (and not a zombie)? */
static bool kill_target_alive(const KillData *d) {
        return proc_is(d->pid, d->starttime);
}

typedef struct Victim {
        Action *action;
        KillData *data;
        int pidfd; /* -EBADF without pidfd support: then /proc is polled */
        bool done;
} Victim;

static void victim_settle(Victim *v, int r, const char *fmt, ...) _printf_(3, 4);
static void victim_settle(Victim *v, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        action_recordv(v->action, r, fmt, ap);
        va_end(ap);
        if (v->pidfd >= 0)
                (void) close_nointr(v->pidfd);
        v->pidfd = -EBADF;
        v->done = true;
}

/* Pin the process planned (proc_pin(): without pidfds, signalled by PID right after the check). */
static void victim_pin(Victim *v) {
        if (proc_pin(v->data->pid, v->data->starttime, &v->pidfd) <= 0)
                return victim_settle(v, 0, "already gone");
}

static void victim_signal(Victim *v, int sig) {
        int r;

        if (v->done)
                return;
        r = proc_signal(v->pidfd, v->data->pid, sig);
        if (r == -ESRCH)
                return victim_settle(v, 0, "already gone");
        if (r < 0)
                return victim_settle(v, r, "cannot send %s: %s", sigabbrev_np(sig), strerror(-r));
}

/* Wait until every victim has exited or the time is up; returns how many are left. */
static size_t victims_wait(Victim *vs, size_t n, uint64_t until_usec, const char *how) {
        cleanup_free struct pollfd *fds = calloc(n, sizeof(struct pollfd));
        size_t left;

        if (!fds)
                return n;
        for (;;) {
                usec_t t = now(CLOCK_MONOTONIC);

                left = 0;
                for (size_t i = 0; i < n; i++) {
                        Victim *v = vs + i;

                        fds[i] = (struct pollfd) { .fd = v->done ? -1 : v->pidfd, .events = POLLIN };
                        if (!v->done && v->pidfd < 0 && !kill_target_alive(v->data))
                                victim_settle(v, 1, "%s", how);
                        left += !v->done;
                }
                if (left == 0 || t >= until_usec)
                        return left;
                /* A pidfd polls readable once its process has exited; /proc is looked at every 50 ms. */
                if (poll(fds, n, (until_usec - t) / 1000 + 1 < 50 ? (int) ((until_usec - t) / 1000 + 1) : 50) > 0)
                        for (size_t i = 0; i < n; i++)
                                if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP)))
                                        victim_settle(vs + i, 1, "%s", how);
        }
}

static void kill_apply_batch(Action **actions, size_t n, Context *ctx) {
        cleanup_free Victim *vs = calloc(n, sizeof(Victim));
        uint64_t grace_end = now(CLOCK_MONOTONIC) + (usec_t) arg_kill_grace_sec * USEC_PER_SEC;

        if (!vs) {
                for (size_t i = 0; i < n; i++)
                        action_record(actions[i], -ENOMEM, NULL);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                vs[i] = (Victim) { .action = actions[i], .data = actions[i]->data, .pidfd = -EBADF };
                if (!vs[i].data)
                        victim_settle(vs + i, 0, "nothing runs it");
                else
                        victim_pin(vs + i);
        }
        /* Every tree gets SIGTERM at once, so one grace period serves them all; the run's
         * --timeout shortens it. */
        if (ctx->deadline_usec > 0 && ctx->deadline_usec < grace_end)
                grace_end = ctx->deadline_usec;
        for (size_t i = 0; i < n; i++)
                victim_signal(vs + i, SIGTERM);
        if (victims_wait(vs, n, grace_end, "exited on SIGTERM") > 0) {
                for (size_t i = 0; i < n; i++)
                        victim_signal(vs + i, SIGKILL);
                (void) victims_wait(vs, n, now(CLOCK_MONOTONIC) + KILL_WAIT_USEC,
                                    "killed with SIGKILL after the grace period");
        }
        for (size_t i = 0; i < n; i++)
                if (!vs[i].done)
                        victim_settle(vs + i, -ETIME, "still running %.0f s after SIGKILL (uninterruptible sleep?)",
                                      (double) KILL_WAIT_USEC / 1e6);
}

static int kill_apply(Action *a, Context *ctx, char **ret_msg) {
        kill_apply_batch(&a, 1, ctx);
        if (a->result == ACTION_FAILED)
                return a->error;
        return a->result == ACTION_CHANGED;
}

/* Residue: the process seen when planning still runs. */
static int kill_check(Action *a, Context *ctx, char **ret_msg) {
        const KillData *d = a->data;

        if (!d || !kill_target_alive(d))
                return 0;
        return set_errmsg(ret_msg, 1, "PID %d still running", (int) d->pid);
}

static const ActionOps kill_ops = {
        .kind = "kill",
        .apply = kill_apply,
        .apply_batch = kill_apply_batch,
        .check = kill_check,
        .free_data = free,
};

typedef struct ProcScan {
        const ProcTable *table; /* the planning pass's /proc (phase_procs()) */
        pid_t *untouchable;
        pid_t *planned; /* 0-terminated: every PID that already has a row */
        size_t n_planned, allocated_planned;
        const char *no_systemd; /* why systemd is out of reach, or NULL */
        const char *root;       /* ctx->root */
        struct stat root_st;    /* its identity: a process whose root directory it is belongs to the node */
        const EtcdScope *etcd;  /* who owns this node's etcd */
} ProcScan;

/* The executable as the node sees it, for a process that belongs to the node (its root directory is
 * --root: "/" on a node; a chroot into the tree otherwise), else NULL. A rescue system with a node's
 * disk at --root so signals none of its own processes. */
static const char *node_exe(const ProcScan *s, const ProcInfo *p) {
        const char *rest;

        if (!p->exe || !p->root_known || p->root_dev != s->root_st.st_dev || p->root_ino != s->root_st.st_ino)
                return NULL;
        if (streq(s->root, "/"))
                return p->exe;
        rest = startswith(p->exe, s->root);
        return rest && rest[0] == '/' ? rest : NULL;
}

/* How a row names a process: the node's path when it has one, else what /proc says. */
static const char *display_exe(const ProcScan *s, const ProcInfo *p) {
        return node_exe(s, p) ?: p->exe ?: "?";
}

static void proc_scan_done(ProcScan *s) {
        free(s->untouchable);
        free(s->planned);
}

static int add_kill(Plan *plan, ProcScan *s, const ProcInfo *p, const char *reason, const ProcInfo *root) {
        cleanup_free char *target = NULL;
        KillData *d;
        Action *a;

        if (asprintf(&target, "%s[%d]", display_exe(s, p), (int) p->pid) < 0)
                return -ENOMEM;
        d = malloc(sizeof *d);
        if (!d)
                return -ENOMEM;
        *d = (KillData) { .pid = p->pid, .starttime = p->starttime };
        a = plan_add(plan, &kill_ops, "processes", target, reason, d);
        if (!a || pid_list_add(&s->planned, &s->n_planned, &s->allocated_planned, p->pid) < 0)
                return -ENOMEM;
        if (root != p)
                return action_set_detail(a, "in the tree of %s[%d]", display_exe(s, root), (int) root->pid);
        return action_set_detail(a, "%s%s", p->exe_deleted ? "its binary was deleted; " : "",
                                 s->no_systemd ? "no systemd: killed here instead of stopped"
                                               : "SIGTERM, then SIGKILL after 5 s, with its children");
}

/* A matching process and every descendant, each a row of its own: the report lists every PID. */
static int add_tree(Plan *plan, ProcScan *s, const ProcInfo *root, const char *reason) {
        cleanup_free pid_t *kids = NULL;
        size_t n;
        int r;

        r = add_kill(plan, s, root, reason, root);
        if (r >= 0)
                r = proc_descendants(s->table, root->pid, s->untouchable, &kids, &n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const ProcInfo *c = proc_table_find(s->table, kids[i]);

                if (c && !proc_pid_in(s->planned, c->pid))
                        r = add_kill(plan, s, c, reason, root);
        }
        return r;
}

static int add_guarded(Plan *plan, const ProcScan *s, const ProcInfo *p, const char *reason) {
        cleanup_free char *target = NULL;
        Action *a;

        if (asprintf(&target, "%s[%d]", display_exe(s, p), (int) p->pid) < 0)
                return -ENOMEM;
        a = plan_add(plan, &kill_ops, "processes", target, reason, NULL);
        if (!a)
                return -ENOMEM;
        a->present = false;
        return action_set_skip(a, "%s",
                               p->pid == 1          ? "PID 1 is never signalled"
                               : p->pid == getpid() ? "node-reset itself"
                                                    : "an ancestor of node-reset: never signalled");
}

/* A containerd shim serves one containerd namespace: only k8s.io's are Kubernetes' (Docker's are
 * "moby", other tenants' their own). Any other executable passes. */
static bool shim_is_kubernetes(const ProcInfo *p) {
        cleanup_free char *cmdline = NULL;
        const char *base = strrchr(p->exe, '/');
        size_t size;

        if (!base || !startswith(base + 1, "containerd-shim"))
                return true;
        if (proc_cmdline_read(p->pid, &cmdline, &size) < 0)
                return false;
        return detect_shim_cmdline_is_kubernetes(cmdline, size);
}

static bool names_etcd(const char *program) {
        const char *slash = strrchr(program, '/');

        return streq(slash ? slash + 1 : program, "etcd");
}

static int plan_line(Plan *plan, ProcScan *s, const ManifestEntry *e) {
        cleanup_free char *reason = NULL;
        bool matched = false;
        Action *a;
        int r = 0;

        reason = manifest_entry_reason(e);
        if (!reason)
                return -ENOMEM;
        /* An etcd no installer of this node made is not told from another by its executable. */
        if (s->etcd->owner == ETCD_OWNER_FOREIGN && names_etcd(e->args[0])) {
                a = plan_add(plan, &kill_ops, "processes", e->args[0], reason, NULL);
                if (!a)
                        return -ENOMEM;
                a->present = false;
                return action_set_skip_code(a, "out-of-scope", "%s", s->etcd->why);
        }
        for (size_t i = 0; r >= 0 && i < s->table->n; i++) {
                const ProcInfo *p = s->table->procs + i;

                if (!proc_exe_matches(e->args[0], node_exe(s, p)) || proc_pid_in(s->planned, p->pid) ||
                    !shim_is_kubernetes(p))
                        continue;
                matched = true;
                r = proc_pid_in(s->untouchable, p->pid) ? add_guarded(plan, s, p, reason)
                                                        : add_tree(plan, s, p, reason);
        }
        if (r < 0 || matched)
                return r;
        a = plan_add(plan, &kill_ops, "processes", e->args[0], reason, NULL);
        if (!a)
                return -ENOMEM;
        a->present = false;
        return action_set_detail(a, "nothing runs it");
}

/* /proc of another PID namespace would make every PID name a stranger: plan nothing to signal. */
static int plan_refused(Plan *plan, const char *why) {
        Action *a = plan_add(plan, &kill_ops, "processes", "/proc", NULL, NULL);

        if (!a)
                return -ENOMEM;
        a->present = false;
        return action_set_skip(a, "%s", why);
}

int phase_processes_plan(Context *ctx, Plan *plan, char **reterr) {
        ProcScan s = { .root = ctx->root };
        ServiceManager *m;
        bool any = false;
        int r;

        MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_PROCESS)
                any = true;
        if (!any)
                return 0;
        if (!proc_view_is_ours())
                return plan_refused(plan, "/proc shows another PID namespace than node-reset's: no PID is signalled");
        r = phase_systemd_running(ctx, &m, &s.no_systemd);
        if (r < 0 && r != -EHOSTDOWN)
                return r;
        if (fstat(ctx->root_fd, &s.root_st) < 0)
                return set_errmsg(reterr, negative_errno(), "cannot stat %s: %m", ctx->root);
        r = phase_procs(ctx, &s.table);
        if (r < 0)
                return set_errmsg(reterr, r, "cannot read /proc: %s", strerror(-r));
        r = node_etcd_scope(ctx, &s.etcd);
        if (r < 0)
                return set_errmsg(reterr, r, "cannot tell who owns this node's etcd: %s", strerror(-r));
        r = proc_untouchable(s.table, getpid(), &s.untouchable);
        MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_PROCESS)
                if (r >= 0)
                        r = plan_line(plan, &s, e);
        proc_scan_done(&s);
        return r;
}

static int parse_kill_grace(const char *arg, char **reterr) {
        return cmdline_parse_duration("kill-grace", arg, 0, 3600, &arg_kill_grace_sec, reterr);
}

const PhaseOption phase_processes_options[] = {
        { "kill-grace", PHASE_OPTION_REQUIRED_ARG, "DURATION", "From SIGTERM to SIGKILL in the processes phase (5s)",
          parse_kill_grace },
        {},
};
