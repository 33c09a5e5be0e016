/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The drain verb: run where the cluster's administrator credentials already are (a control plane
 * that stays, as kubespray's remove-node drains from its first control plane: roles/remove-node/
 * pre-remove), it drains another node through the API with the drain phase's rows (cordon, the drain,
 * a row per pod), printed, confirmed, run, observed again and reported like a reset. A Node that is
 * not Ready is refused: its kubelet would end no evicted pod, and such a node is forget's. */

#include <stdio.h>
#include <time.h>

#include "agent/base/log.h"
#include "agent/kube/kube-api.h"
#include "agent/config/node-name.h"
#include "agent/engine/console.h"
#include "agent/engine/engine.h"
#include "agent/phases/phases.h"
#include "agent/report/report.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/root.h"
#include "agent/verbs/usage.h"
#include "agent/verbs/verb.h"
#include "errno-util.h"
#include "string-util.h"
#include "time-util.h"

typedef struct DrainVerb {
        const ProgramOptions *o;
        const char *node;
        Context ctx;
        PhaseSelection sel;
        char *root;
        Plan *plan, *residue, *unobserved;
} DrainVerb;

static void drain_verb_done(DrainVerb *d) {
        plan_free(d->plan);
        plan_free(d->residue);
        plan_free(d->unobserved);
        phase_table_done(&d->ctx);
        (void) close_nointr(d->ctx.root_fd);
        free(d->root);
}

/* Every row of the plan skipped with code and why: the drain is refused before anything is asked,
 * and the report says so row by row ("error": code). */
static int refuse_all(Plan *plan, const char *code, const char *why) {
        int r = 0;

        PLAN_FOREACH(a, plan) {
                if (r >= 0)
                        r = action_set_skip_code(a, code, "%s", why);
                a->result = ACTION_SKIPPED;
                free(a->message);
                a->message = strdup(why);
        }
        return r;
}

/* The Node as the node lifecycle controller keeps it: one that is not there is kubectl drain's
 * NotFound (exit 1, never "nothing to drain"); one that is not Ready is refused (exit 3). Either way
 * every row is skipped with the code ("not-found", "not-ready") a playbook reads. 0 to go on, else the
 * exit status. */
static int node_ready_or_refuse(DrainVerb *d) {
        cleanup_free char *err = NULL, *why = NULL;
        KubeIdentity id = {};
        KubeNodeReady ready = {};
        int r;

        r = kube_identity_open(d->ctx.root_fd, streq(d->root, "/"), d->o->kubeconfig, d->node, false, &id, &err);
        if (r < 0)
                return 0; /* the drain phase's plan says why there are no credentials, and its run fails */
        r = kube_api_node_ready(id.kc, d->node, d->ctx.deadline_usec, &ready, &err);
        kube_identity_done(&id);
        if (r == -ENOENT) {
                why = strprintf("no Node %s: kubectl drain fails so (NotFound)", d->node);
                r = why ? refuse_all(d->plan, "not-found", why) : -ENOMEM;
                log_error("Cannot drain %s: %s", d->node, strna(err));
                return r < 0 ? log_oom(), EXIT_RESIDUE : EXIT_RESIDUE;
        }
        if (r < 0 || streq_ptr(ready.status, "True")) {
                kube_node_ready_done(&ready);
                return 0; /* an API that does not answer: the plan's rows say so */
        }
        why = strprintf("Node %s is not Ready (%s%s%s, since %s): its kubelet would end no evicted pod; a node that "
                        "is gone is forget's (node-reset forget %s)",
                        d->node, ready.status ?: "no Ready condition", ready.reason ? ", " : "", strempty(ready.reason),
                        ready.since ?: "?", d->node);
        kube_node_ready_done(&ready);
        if (!why || refuse_all(d->plan, "not-ready", why) < 0)
                return log_oom(), EXIT_RESIDUE;
        log_error("Refusing to drain %s: %s", d->node, why);
        return EXIT_REFUSED;
}

static int drain_setup(DrainVerb *d) {
        cleanup_free char *err = NULL;

        if (root_open(d->o->root, &d->root, &d->ctx.root_fd) < 0)
                return EXIT_USAGE;
        d->ctx.root = d->root;
        d->ctx.deadline_usec = program_deadline_usec(d->o);
        if (phase_selection_parse(&d->sel, "drain,verify", NULL, false, &err) < 0) {
                log_error("%s", strna(err));
                return EXIT_USAGE;
        }
        /* The drain phase plans for the node named, without --drain; never --delete-node: the node is
         * not reset here. */
        d->ctx.kubeconfig = d->o->kubeconfig;
        d->ctx.node_name = d->node;
        d->ctx.drain = true;
        return 0;
}

static void drain_emit(const DrainVerb *d, ReportInfo *info) {
        Emitter e;

        info->root = d->root;
        info->finished_usec = now(CLOCK_REALTIME);
        info->verified = d->residue != NULL;
        info->unobserved = d->unobserved;
        emitter_init(&e, stdout, d->o->output, color_wanted(stdout));
        e.all_actions = d->o->all_actions;
        report_emit(&e, info, d->plan, d->residue);
}

static bool drain_confirmed(const DrainVerb *d) {
        cleanup_free char *what = strprintf("drain node %s", d->node);
        FILE *out = d->o->output == OUTPUT_JSON ? stderr : stdout;
        Emitter e;

        emitter_init(&e, out, OUTPUT_TEXT, color_wanted(out));
        e.all_actions = d->o->all_actions;
        report_plan_text(&e, d->plan);
        fflush(out);
        return what && console_confirm(stdin, stderr, what);
}

static int drain_execute(DrainVerb *d, ReportInfo *info) {
        cleanup_free char *err = NULL;

        info->executed = true;
        (void) engine_execute(&d->ctx, d->plan, NULL);
        if (engine_verify(&d->ctx, &d->sel, &d->residue, &d->unobserved, &err) < 0)
                log_error("Cannot observe the node again: %s", err ?: "out of memory");
        info->exit_status = exit_status_of(d->plan, d->residue, d->unobserved);
        if (!d->residue)
                info->exit_status = EXIT_RESIDUE;
        drain_emit(d, info);
        return info->exit_status;
}

static int run_drain(const ProgramOptions *o, int argc, char *argv[]) {
        ReportInfo info = { .command = "drain", .started_usec = now(CLOCK_REALTIME) };
        cleanup_free char *err = NULL;
        DrainVerb d = { .o = o, .ctx.root_fd = -EBADF };
        int r;

        if (argc != 2 || !node_name_is_valid(argv[1]))
                return usage_error("'drain' takes one NODE, a node name%s", argc == 2 ? ": not a valid one" : ""),
                       EXIT_USAGE;
        d.node = argv[1];
        r = drain_setup(&d);
        if (r == 0 && (!(d.plan = plan_new()) || engine_plan(&d.ctx, &d.sel, d.plan, &err) < 0)) {
                log_error("Cannot build the plan, nothing was changed: %s", err ?: "out of memory");
                r = EXIT_RESIDUE;
        }
        if (r == 0 && (r = node_ready_or_refuse(&d)) != 0) {
                /* Run, and every row skipped: the report says so row by row. */
                info.exit_status = r;
                info.executed = true;
                drain_emit(&d, &info);
        } else if (r == 0 && o->plan_only)
                drain_emit(&d, &info);
        else if (r == 0 && !o->yes && !drain_confirmed(&d))
                r = EXIT_REFUSED;
        else if (r == 0)
                r = drain_execute(&d, &info);
        drain_verb_done(&d);
        return r;
}

static const CmdlineOption *const drain_options[] = {
        OPTIONS_COMMON, &option_output, &option_root,    &option_kubeconfig,
        &option_yes,    &option_plan,   &option_timeout, NULL,
};

/* The drain phase's, but --drain itself: this verb is the drain. */
static const char *const drain_phase_options[] = { "drain-force", "drain-delete-emptydir-data", "drain-timeout", NULL };

const Verb drain_verb = {
        .name = "drain",
        .operands = "NODE",
        .summary = "From a control plane: cordon NODE and evict its pods, as kubectl drain",
        .options = drain_options,
        .phase_options = drain_phase_options,
        .run = run_drain,
};
