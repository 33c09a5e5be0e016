/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The forget verb: the node named on the command line, forgotten by agent/forget/'s plan, printed,
 * confirmed, run, observed again and reported like a reset. */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/base/log.h"
#include "agent/config/node-name.h"
#include "agent/engine/console.h"
#include "agent/report/report.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/forget.h"
#include "agent/verbs/root.h"
#include "errno-util.h"
#include "string-util.h"
#include "time-util.h"

static void forget_emit(const Forget *f, ReportInfo *info, const Plan *plan, const Plan *residue) {
        Emitter e;

        info->root = f->root;
        info->finished_usec = now(CLOCK_REALTIME);
        emitter_init(&e, stdout, f->o->output, color_wanted(stdout));
        e.all_actions = f->o->all_actions;
        report_emit(&e, info, plan, residue);
}

static bool forget_confirmed(const Forget *f, const Plan *plan) {
        cleanup_free char *what = strprintf("forget node %s", f->node);
        FILE *out = f->o->output == OUTPUT_JSON ? stderr : stdout;
        Emitter e;

        emitter_init(&e, out, OUTPUT_TEXT, color_wanted(out));
        e.all_actions = f->o->all_actions;
        report_plan_text(&e, plan);
        fflush(out);
        return what && console_confirm(stdin, stderr, what);
}

static int forget_run(Forget *f, Plan *plan, ReportInfo *info) {
        Plan *residue = NULL;

        info->executed = true;
        (void) forget_execute(f, plan, &residue);
        info->verified = residue != NULL;
        info->exit_status = plan_count(plan, NULL, ACTION_FAILED) > 0 || !residue || residue->n_actions > 0
                                    ? EXIT_RESIDUE
                                    : EXIT_CLEAN;
        forget_emit(f, info, plan, residue);
        plan_free(residue);
        return info->exit_status;
}

static bool usage_ok(const ForgetOptions *o, int argc, char *argv[]) {
        if (argc != 2 || !node_name_is_valid(argv[1])) {
                fprintf(stderr, "node-reset: 'forget' takes one NODE, a node name%s\nTry 'node-reset --help'.\n",
                        argc == 2 ? ": not a valid one" : "");
                return false;
        }
        if (o->node_name && !node_name_is_valid(o->node_name)) {
                fprintf(stderr, "node-reset: invalid --node-name '%s': not a node name\nTry 'node-reset --help'.\n",
                        o->node_name);
                return false;
        }
        return true;
}

/* The plan made: the dry run, a refusal, or the run, as the operator asked. */
static int forget_planned(Forget *f, const ForgetOptions *o, Plan *plan, ReportInfo *info) {
        info->hostname = f->hostname;
        /* The dry run exits as the run would: 1 when something cannot be observed, 3 when refused. */
        info->exit_status = f->failed ? EXIT_RESIDUE : f->refused ? EXIT_REFUSED : EXIT_CLEAN;
        if (f->failed)
                log_error("Cannot forget %s: what it left cannot all be observed; nothing was changed.", f->node);
        else if (f->refused)
                log_error("Refusing to forget %s: %s", f->node, plan->actions[0]->skip_reason);
        if (o->plan_only || f->refused || f->failed) {
                forget_emit(f, info, plan, NULL);
                return info->exit_status;
        }
        if (!o->yes && !forget_confirmed(f, plan))
                return EXIT_REFUSED;
        return forget_run(f, plan, info);
}

int verb_forget(const ForgetOptions *o, int argc, char *argv[]) {
        ReportInfo info = { .command = "forget", .started_usec = now(CLOCK_REALTIME) };
        char *root = NULL;
        Plan *plan = NULL;
        int root_fd = -EBADF, r;
        Forget f;

        if (!usage_ok(o, argc, argv))
                return EXIT_USAGE;
        if (root_open(o->root, &root, &root_fd) < 0) {
                free(root);
                return EXIT_USAGE;
        }
        r = forget_setup(&f, o, argv[1], root, root_fd);
        if (r >= 0 && !(plan = plan_new()))
                r = -ENOMEM;
        if (r < 0) {
                (void) log_oom();
                r = EXIT_RESIDUE;
        } else if ((r = forget_plan(&f, plan)) < 0) {
                log_error("Cannot build the plan, nothing was changed: %s", strerror(-r));
                r = EXIT_RESIDUE;
        } else
                r = forget_planned(&f, o, plan, &info);
        plan_free(plan);
        forget_done(&f);
        return r;
}
