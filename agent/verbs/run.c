/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The run verb: plan, confirm (or --yes, or --step phase by phase), take the lock, execute with the
 * phases' gates, verify, make the rejoin verdict, and report on stdout and to --report-url. */

#include <errno.h>
#include <time.h>

#include "agent/base/log.h"
#include "agent/engine/console.h"
#include "agent/engine/gate.h"
#include "agent/verbs/confirm.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/node-lock.h"
#include "agent/verbs/node-report.h"
#include "agent/verbs/setup.h"
#include "agent/verbs/verb.h"
#include "errno-util.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

typedef struct Run {
        Plan *plan, *residue, *unobserved;
        ReportUrl *report_url;
        Rejoin rejoin;
        bool prepared; /* rejoin_prepare() read the node before the run */
} Run;

static void log_run_result(const Setup *s, const Run *run, int status) {
        const char *verdict = report_verdict(run->residue, run->unobserved);
        const Plan *plan = run->plan;

        log_event(status == EXIT_CLEAN ? LOG_NOTICE : LOG_ERR, LOG_MESSAGE_RUN_RESULT,
                  "Reset of %s finished: %zu changed, %zu unchanged, %zu failed, %zu skipped, %s; exit status %d.",
                  s->root, plan_count(plan, NULL, ACTION_CHANGED), plan_count(plan, NULL, ACTION_UNCHANGED),
                  plan_count(plan, NULL, ACTION_FAILED), plan_count(plan, NULL, ACTION_SKIPPED),
                  !verdict                    ? "not verified"
                  : streq(verdict, "residue") ? "residue remains"
                  : streq(verdict, "unknown") ? "no residue seen, but a phase could not observe (verdict unknown)"
                                              : "no residue",
                  status);
}

/* Execute the confirmed plan with the console watching and the gates closing, then verify. */
static void run_execute(Setup *s, const ProgramOptions *o, Run *run) {
        cleanup_free char *err = NULL;
        ExecuteHooks hooks;
        GateHooks gates;
        Console console;

        /* What the run removes (the pod ranges, the runtimes it keeps) is read before it does. */
        run->prepared = s->sel.verify && rejoin_prepare(&s->ctx, &run->rejoin) >= 0;
        console_init(&console, stdin, stderr, o->step);
        hooks = gate_hooks(&gates, console_hooks(&console));
        report_url_post_start(run->report_url);
        log_event(LOG_NOTICE, LOG_MESSAGE_RUN_START, "Reset of %s started: %zu actions, %zu with something to do.",
                  s->root, run->plan->n_actions, plan_count_present(run->plan));
        (void) engine_execute(&s->ctx, run->plan, &hooks);
        if (gates.failed)
                gate_explain(run->plan, gates.failed);
        console_done(&console);
        if (s->sel.verify && engine_verify(&s->ctx, &s->sel, &run->residue, &run->unobserved, &err) < 0)
                log_error("Cannot verify the result: %s", err ?: "out of memory");
}

/* The exit status from the results, the residue and the rejoin verdict; then the report. */
static int run_finish(Setup *s, const ProgramOptions *o, Run *run, ReportInfo *info) {
        int r;

        info->verified = run->residue != NULL;
        info->unobserved = run->unobserved;
        r = exit_status_of(run->plan, run->residue, run->unobserved);
        if (s->sel.verify && !run->residue)
                r = EXIT_RESIDUE;
        if (run->residue)
                r = exit_status_rejoin(&s->ctx, &s->sel, &run->rejoin, run->prepared, info, r);
        info->exit_status = r;
        log_run_result(s, run, r);
        node_report_post_final(s, info, run->report_url, run->plan, run->residue);
        node_report_emit(s, o, info, run->plan, run->residue);
        return r;
}

/* Plan, then ask: 0 to go on, else the exit status (nothing was changed). */
static int run_plan_confirmed(Setup *s, const ProgramOptions *o, Run *run) {
        cleanup_free char *err = NULL;

        run->plan = plan_new();
        if (!run->plan || engine_plan(&s->ctx, &s->sel, run->plan, &err) < 0) {
                log_error("Cannot build the plan, nothing was changed: %s", err ?: "out of memory");
                report_url_post_final(run->report_url, NULL, NULL, NULL);
                return EXIT_RESIDUE;
        }
        /* --step confirms phase by phase instead of once. */
        if (o->step ? !confirm_step_possible(s, o, run->plan) : !o->yes && !confirm_reset(s, o, run->plan))
                return EXIT_REFUSED;
        return 0;
}

static int run_run(const ProgramOptions *o, int argc, char *argv[]) {
        ReportInfo info = { .command = "run", .started_usec = now(CLOCK_REALTIME), .executed = true };
        cleanup_close int lock_fd = -EBADF;
        Run run = {};
        Setup s;
        int r;

        r = setup_node(&s, o);
        if (r == 0)
                r = node_report_url_open(o, &run.report_url);
        if (r == 0) {
                info.report_url = run.report_url ? &run.report_url->outcome : NULL;
                if (run.report_url)
                        run.report_url->hostname = s.hostname;
                r = node_lock_take(&s, &lock_fd);
        }
        if (r == 0)
                r = run_plan_confirmed(&s, o, &run);
        if (r == 0) {
                run_execute(&s, o, &run);
                r = run_finish(&s, o, &run, &info);
        }
        rejoin_done(&run.rejoin);
        plan_free(run.plan);
        plan_free(run.residue);
        plan_free(run.unobserved);
        report_url_free(run.report_url);
        setup_done(&s);
        return r;
}

static const CmdlineOption option_step = {
        .name = "step",
        .help = "Ask before each phase: yes, skip or quit (needs a terminal)",
        .flag = &program_options.step,
};

static const CmdlineOption option_report_url = {
        .name = "report-url",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "URL",
        .help = "POST the status and the report to URL (start and end)",
        .string = &program_options.report_url,
};

static int parse_report_header(const char *v, char **reterr) {
        if (strv_extend(&program_options.report_headers, v) < 0)
                return -ENOMEM;
        program_options.n_report_headers++;
        return 0;
}

static const CmdlineOption option_report_header = {
        .name = "report-header",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "'NAME: VALUE'",
        .help = "... with this header (repeatable)",
        .parse = parse_report_header,
};

static const CmdlineOption option_report_header_file = {
        .name = "report-header-file",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "FILE",
        .help = "... with the headers in FILE, one per line",
        .string = &program_options.report_header_file,
        .complete = CMDLINE_COMPLETE_FILE,
};

static const CmdlineOption option_report_cacert = {
        .name = "report-cacert",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "FILE",
        .help = "... trusting the CA certificates in FILE",
        .string = &program_options.report_cacert,
        .complete = CMDLINE_COMPLETE_FILE,
};

static const CmdlineOption *const run_options[] = {
        SETUP_OPTIONS,
        &option_yes,
        &option_step,
        &option_proxy,
        &option_report_url,
        &option_report_header,
        &option_report_header_file,
        &option_report_cacert,
        NULL,
};

const Verb run_verb = {
        .name = "run",
        .summary = "Plan, confirm, reset, then verify",
        .options = run_options,
        .all_phase_options = true,
        .run = run_run,
};
