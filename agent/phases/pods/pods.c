/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase: stop and remove every pod sandbox and container through the CRI socket, without the
 * API server, in a bounded time, climbing a rescue ladder when the CNI plugin or the runtime fails:
 * (1) retry with backoff, (2) a loopback-only CNI conflist while pods stop, (3) stop the runtime, kill
 * its shims and unmount what they left. This file finds the runtimes and plans each; the rows are in
 * pods-prepare.c and pods-restart.c (before the CRI calls), pods-batch.c (the calls: rungs 1 and 2) and
 * pods-runtime.c (rung 3), sharing the runtime of pods-target.c; pods-ladder.c holds what rungs 2 and 3
 * do to the node. */

#include <sys/stat.h>

#include "agent/phases/phases.h"
#include "agent/node/phase-options.h"
#include "agent/engine/cmdline.h"
#include "agent/engine/libraries.h"
#include "agent/base/log.h"
#include "agent/engine/phase.h"
#include "agent/phases/pods/pods-docker.h"
#include "agent/phases/pods/pods-batch.h"
#include "agent/phases/pods/pods-ladder.h"
#include "agent/phases/pods/pods-rescue.h"
#include "agent/phases/pods/pods-prepare.h"
#include "agent/phases/pods/pods-runtime.h"
#include "agent/phases/pods/pods-target.h"
#include "agent/os/proc.h"
#include "agent/os/runtime-info.h"
#include "cri/cri.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

#define PODS_BUDGET_DEFAULT_USEC (120 * USEC_PER_SEC)
#define LIST_TIMEOUT_USEC (15 * USEC_PER_SEC)

static unsigned arg_concurrency;      /* --concurrency; 0: pods_concurrency() */
static unsigned arg_pods_timeout_sec; /* --pods-timeout; 0: PODS_BUDGET_DEFAULT_USEC */

static usec_t pods_budget(void) {
        return (usec_t) arg_pods_timeout_sec * USEC_PER_SEC;
}

static inline void target_unrefp(PodsTarget **pt) {
        pods_target_unref(*pt);
}

/* --- Small rows: a stale rescue conflist, kubelet, no runtime --------------------------------- */

static int stale_apply(Action *a, Context *ctx, char **ret_msg) {
        return cni_rescue_remove_stale(a->target, ret_msg);
}

static int stale_check(Action *a, Context *ctx, char **ret_msg) {
        return access(a->target, F_OK) >= 0;
}

static const ActionOps stale_rescue_ops = {
        .kind = "cni-rescue",
        .apply = stale_apply,
        .check = stale_check,
};

static int kubelet_apply(Action *a, Context *ctx, char **ret_msg) {
        pid_t pid = 0;

        if (proc_find_exe_name("kubelet", &pid) <= 0)
                return set_errmsg(ret_msg, 0, "not running any more");
        log_warning("kubelet (PID %d) still runs while the pods phase removes pods: it recreates them.", (int) pid);
        return set_errmsg(ret_msg, 0, "warning: still running (PID %d); pods it recreates are left behind", (int) pid);
}

static const ActionOps kubelet_ops = {
        .kind = "kubelet",
        .apply = kubelet_apply,
};

static int nothing_apply(Action *a, Context *ctx, char **ret_msg) {
        return 0;
}

static const ActionOps no_runtime_ops = {
        .kind = "runtime",
        .apply = nothing_apply,
};

/* --- Planning ---------------------------------------------------------------------------- */

static int plan_kubelet(Context *ctx, Plan *plan) {
        const ProcTable *procs;
        const ProcInfo *p;
        char target[64];
        pid_t pid;

        if (phase_procs(ctx, &procs) < 0 || !(p = proc_table_find_exe_name(procs, "kubelet")))
                return 0;
        pid = p->pid;
        log_warning("kubelet is running (PID %d): it must be stopped before the pods phase, or it recreates pods.",
                    (int) pid);
        snprintf(target, sizeof target, "kubelet (PID %d)", (int) pid);
        return pods_add_row(plan, &kubelet_ops, target, NULL, false, NULL,
                            "running: it must be stopped before this phase (the services phase does), or it recreates "
                            "the pods");
}

static int plan_stale_rescue(Plan *plan, const PodsTarget *pt) {
        cleanup_strv char **stale = NULL;
        int r;

        if (!pt->info.cni_conf_dir)
                return 0;
        r = cni_rescue_find_stale(pt->info.cni_conf_dir, &stale);
        STRV_FOREACH(p, stale)
                if (r >= 0)
                        r = pods_add_row(plan, &stale_rescue_ops, *p, NULL, true, NULL,
                                         "a rescue conflist left by an interrupted run: it hides the real CNI config");
        return r;
}

/* PodSandboxStatus of every sandbox at once: its network namespace mode tells host network pods. */
static int sandbox_network_modes(PodsTarget *pt, SandboxView *v, size_t n) {
        cleanup_free CriOp *ops = calloc(n ? n : 1, sizeof(CriOp));
        int r;

        if (!ops)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                ops[i] = (CriOp) { .kind = CRI_OP_SANDBOX_STATUS, .id = v[i].s->id };
        r = cri_run_ops(pt->client, pt->plan_deadline, ops, n, pt->concurrency);
        for (size_t i = 0; i < n; i++) {
                if (r >= 0 && ops[i].result >= 0) {
                        v[i].status_known = true;
                        v[i].host_network = ops[i].status.network_mode == CRI_NAMESPACE_NODE;
                } else
                        log_debug("PodSandboxStatus %s: %s; taken as a pod network pod", v[i].s->id,
                                  strna(ops[i].message));
                cri_op_done(&ops[i]);
        }
        return r;
}

/* A planning call that ran out of time says which bound cut it, so the report blames the budget the
 * operator set and not only the runtime. */
static void note_cut(const Context *ctx, const PodsTarget *pt, int r, char **msg) {
        const char *bound;
        char *m;

        if ((r != -ETIMEDOUT && r != -ETIME) || pt->plan_deadline == 0 || now(CLOCK_MONOTONIC) < pt->plan_deadline)
                return;
        bound = ctx->deadline_usec > 0 && pt->plan_deadline >= ctx->deadline_usec ? "the run's --timeout"
                                                                                  : "the pods budget (--pods-timeout)";
        m = strprintf("%s, cut by %s", strna(*msg), bound);
        if (!m)
                return;
        free(*msg);
        *msg = m;
}

/* Every pod and container of an answering runtime, in the order they go. */
static int plan_pods(Context *ctx, Plan *plan, PodsTarget *pt) {
        cleanup_free SandboxView *v = NULL;
        cleanup_free char *err = NULL;
        CriSandbox *s = NULL;
        CriContainer *c = NULL;
        size_t ns = 0, nc = 0, n_host = 0;
        int r;

        cri_client_set_timeout(pt->client, LIST_TIMEOUT_USEC);
        r = cri_list_sandboxes(pt->client, pt->plan_deadline, &s, &ns, &err);
        if (r >= 0)
                r = cri_list_containers(pt->client, pt->plan_deadline, &c, &nc, &err);
        if (r >= 0 && !(v = calloc(ns ? ns : 1, sizeof(SandboxView))))
                r = -ENOMEM;
        if (r < 0) {
                note_cut(ctx, pt, r, &err);
                pt->probe_error = r;
                pt->probe_message = TAKE_PTR(err);
                if (r != -ENOMEM)
                        r = pods_runtime_row(plan, pt, true, "answers Version but not the listing: %s",
                                             strna(pt->probe_message));
                goto finish;
        }
        for (size_t i = 0; i < ns; i++) {
                char id[PODS_ID_SHORT + 1];

                pods_short_id(s[i].id, id);
                v[i].s = &s[i];
                snprintf(v[i].target, sizeof v[i].target, "%s/%s %s", strna(s[i].namespace), strna(s[i].name), id);
        }
        for (size_t i = 0; i < nc; i++) {
                SandboxView *sb = (SandboxView *) pods_find_sandbox(v, ns, c[i].pod_sandbox_id);

                if (sb)
                        sb->containers++;
        }
        r = sandbox_network_modes(pt, v, ns);
        for (size_t i = 0; i < ns; i++)
                n_host += v[i].host_network;
        if (r >= 0)
                r = pods_teardown_decide(ctx, &pt->info, &pt->teardown);
        if (r >= 0 && ns > 0)
                r = pods_prepare_plan(ctx, plan, pt, v, ns, arg_concurrency > 0);
        if (r >= 0)
                r = pods_batch_plan(plan, pt, c, nc, v, ns);
        if (r >= 0)
                r = pods_runtime_row(plan, pt, false,
                                     "%s %s answers (%s): %zu pods, %zu on the host network, %zu containers",
                                     strna(pt->version.runtime_name), strna(pt->version.runtime_version),
                                     cri_client_service(pt->client), ns, n_host, nc);
finish:
        cri_sandboxes_free(s, ns);
        cri_containers_free(c, nc);
        return r;
}

static int target_new(const Context *ctx, const char *path, PodsTarget **ret) {
        PodsTarget *pt;
        int r;

        pt = calloc(1, sizeof *pt);
        if (!pt)
                return -ENOMEM;
        pt->n_ref = 1;
        /* Until the plan knows the pods and the CNI (pods_prepare_plan()): the status reads. */
        pt->concurrency = arg_concurrency ?: 8;
        pt->budget_usec = pods_budget() ?: PODS_BUDGET_DEFAULT_USEC;
        pt->socket_path = strdup(path);
        if (!pt->socket_path) {
                pods_target_unref(pt);
                return -ENOMEM;
        }
        r = cri_client_new(path, &pt->client);
        if (r < 0) {
                pods_target_unref(pt);
                return r;
        }
        *ret = pt;
        return 0;
}

static int plan_target(Context *ctx, Plan *plan, const char *path, uint64_t deadline, bool *ret_cri_dockerd,
                       char **reterr) {
        CLEANUP(target_unrefp) PodsTarget *pt = NULL;
        int r;

        r = target_new(ctx, path, &pt);
        if (r < 0)
                return set_errmsg(reterr, r, "pods: cannot create a CRI client for %s: %s", path, strerror(-r));
        pt->plan_deadline = deadline;
        cri_client_set_timeout(pt->client, PODS_PROBE_TIMEOUT_USEC);
        pt->probe_error = cri_version(pt->client, deadline, &pt->version, &pt->probe_message);
        note_cut(ctx, pt, pt->probe_error, &pt->probe_message);
        r = runtime_info_probe(path, pt->version.runtime_name, &pt->info);
        if (r >= 0)
                r = plan_stale_rescue(plan, pt);
        if (r >= 0)
                r = pt->probe_error < 0 ? pods_runtime_plan_unanswered(plan, pt) : plan_pods(ctx, plan, pt);
        if (r < 0)
                return set_errmsg(reterr, r, "pods: cannot plan for %s: %s", path, strerror(-r));
        if (pt->info.kind == RUNTIME_CRI_DOCKERD && pt->probe_error >= 0)
                *ret_cri_dockerd = true;
        return 0;
}

static bool is_socket(const char *path) {
        struct stat st;

        return stat(path, &st) >= 0 && S_ISSOCK(st.st_mode);
}

/* --cri-endpoint, else the manifest's cri-endpoint lines, else the known sockets. */
static int endpoints(const Context *ctx, char ***ret, bool *ret_explicit) {
        size_t n = 0, known = 0;
        char **l;

        while (pods_known_sockets[known])
                known++;
        l = calloc(ctx->manifest->n_entries + known + 2, sizeof(char *));
        if (!l)
                return -ENOMEM;
        *ret_explicit = true;
        if (phase_option_cri_endpoint())
                l[n++] = strdup(phase_option_cri_endpoint());
        else
                MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_CRI_ENDPOINT)
                        l[n++] = strdup(e->args[0]);
        if (n == 0) {
                *ret_explicit = false;
                for (const char *const *s = pods_known_sockets; *s; s++)
                        l[n++] = strdup(*s);
        }
        for (size_t i = 0; i < n; i++)
                if (!l[i]) {
                        for (size_t j = 0; j < n; j++)
                                free(l[j]);
                        free(l);
                        return -ENOMEM;
                }
        *ret = l;
        return 0;
}

/* The same socket twice (a symlinked /var/run, a manifest naming it again) is one runtime. */
static bool seen_before(char **paths, size_t i) {
        struct stat a, b;

        if (stat(paths[i], &a) < 0)
                return false;
        for (size_t j = 0; j < i; j++)
                if (paths[j] && stat(paths[j], &b) >= 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
                        return true;
        return false;
}

static int plan_no_runtime(Plan *plan, char **eps) {
        cleanup_free char *list = NULL;

        STRV_FOREACH(e, eps) {
                char *t;

                if (asprintf(&t, "%s%s%s", strempty(list), list ? ", " : "", *e) < 0)
                        return -ENOMEM;
                free(list);
                list = t;
        }
        return pods_add_row(plan, &no_runtime_ops, "cri", NULL, false, "no container runtime", "no CRI socket at %s",
                            strna(list));
}

/* The planning calls get the pods budget too, from the start of the phase's planning, and never run
 * past the run's --timeout: a runtime that answers Version and then hangs cannot hold the run. */
static uint64_t plan_deadline(const Context *ctx) {
        uint64_t d = now(CLOCK_MONOTONIC) + (pods_budget() ?: PODS_BUDGET_DEFAULT_USEC);

        return ctx->deadline_usec > 0 ? u64_min(d, ctx->deadline_usec) : d;
}

/* The CRI sockets: the runtimes kubelet talks to through the CRI. */
static int plan_cri(Context *ctx, Plan *plan, bool *ret_cri_dockerd, char **reterr) {
        cleanup_strv char **eps = NULL, **paths = NULL;
        uint64_t deadline = plan_deadline(ctx);
        size_t n = 0, found = 0;
        bool explicit;
        int r;

        r = endpoints(ctx, &eps, &explicit);
        if (r < 0)
                return r;
        if (!streq(ctx->root, "/") && !explicit)
                return pods_add_row(plan, &no_runtime_ops, "cri", NULL, false,
                                    "--root acts on file system state only; --cri-endpoint names a runtime to reset",
                                    "no runtime probed beneath --root");
        r = plan_kubelet(ctx, plan);
        STRV_FOREACH(e, eps)
                n++;
        paths = calloc(n + 1, sizeof(char *));
        if (!paths)
                return -ENOMEM;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                r = cri_endpoint_to_path(eps[i], &paths[i]);
                if (r < 0)
                        return set_errmsg(reterr, r, "pods: invalid CRI endpoint '%s'", eps[i]);
                if (!is_socket(paths[i]) || seen_before(paths, i))
                        continue;
                found++;
                /* The first CRI call: libcurl is loaded here, not when the phase was chosen. */
                if (found == 1 && (r = libraries_plan_missing(plan, "pods", DLIB_LIBCURL, "the pods phase")) != 0)
                        return r < 0 ? r : 0;
                r = plan_target(ctx, plan, paths[i], deadline, ret_cri_dockerd, reterr);
        }
        if (r < 0)
                return r;
        if (found == 0)
                return plan_no_runtime(plan, eps);
        return 0;
}

/* The CRI sockets, then Docker's Engine API where Docker is kubelet's runtime (docker-endpoint lines):
 * dockershim died with kubelet, and a cri-dockerd that does not answer removes nothing. */
int phase_pods_plan(Context *ctx, Plan *plan, char **reterr) {
        bool cri_dockerd = false;
        int r;

        r = plan_cri(ctx, plan, &cri_dockerd, reterr);
        if (r < 0)
                return r;
        return pods_docker_plan(ctx, plan, cri_dockerd);
}

static int parse_concurrency(const char *arg, char **reterr) {
        if (cmdline_parse_count(arg, &arg_concurrency) < 0 || arg_concurrency == 0 || arg_concurrency > 256)
                return set_errmsg(reterr, -EINVAL, "invalid --concurrency '%s': expected a number from 1 to 256", arg);
        return 0;
}

static int parse_pods_timeout(const char *arg, char **reterr) {
        return cmdline_parse_duration("pods-timeout", arg, 1, CMDLINE_DURATION_MAX, &arg_pods_timeout_sec, reterr);
}

const PhaseOption phase_pods_options[] = {
        { "cri-endpoint", PHASE_OPTION_REQUIRED_ARG, "URI", "The CRI socket (unix:///PATH), instead of probing",
          phase_option_cri_endpoint_parse },
        { "concurrency", PHASE_OPTION_REQUIRED_ARG, "N",
          "CRI calls in flight at once in the pods phase\n(default: from the cores and the CNI's IPAM lock)",
          parse_concurrency },
        { "pods-timeout", PHASE_OPTION_REQUIRED_ARG, "DURATION",
          "Bound the pods phase, its rescue ladder included (120s)", parse_pods_timeout },
        {},
};
