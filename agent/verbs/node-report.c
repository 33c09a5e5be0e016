/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The report plan, run and status write: what the setup found (root, host name, manifests,
 * detection, profile) beside the plan and the residue, on stdout and to --report-url. */

#include <time.h>

#include "agent/base/log.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/node-report.h"
#include "agent/verbs/usage.h"
#include "errno-util.h"
#include "time-util.h"

static void report_info_fill(const Setup *s, ReportInfo *info) {
        info->root = s->root;
        info->hostname = s->hostname;
        info->manifests = s->config.manifest->files;
        info->detection = &s->config.detection;
        info->profile = s->config.profile;
        info->profile_why = s->config.profile_why;
}

void node_report_emit(const Setup *s, const ProgramOptions *o, ReportInfo *info, const Plan *plan,
                      const Plan *residue) {
        Emitter e;

        report_info_fill(s, info);
        if (info->finished_usec == 0)
                info->finished_usec = now(CLOCK_REALTIME);
        emitter_init(&e, stdout, o->output, color_wanted(stdout));
        e.all_actions = o->all_actions;
        report_emit(&e, info, plan, residue);
}

int node_report_url_open(const ProgramOptions *o, ReportUrl **ret) {
        cleanup_free char *err = NULL;

        *ret = NULL;
        if (!o->report_url) {
                if (o->report_headers || o->report_header_file || o->report_cacert)
                        return usage_error(
                                       "--report-header, --report-header-file and --report-cacert need --report-url"),
                               EXIT_USAGE;
                return 0;
        }
        if (report_url_new(o->report_url, o->report_headers, o->report_header_file, o->report_cacert, o->proxy, ret,
                           &err) < 0)
                return log_error("%s", err ?: "Out of memory."), EXIT_USAGE;
        return 0;
}

void node_report_post_final(const Setup *s, ReportInfo *info, ReportUrl *u, const Plan *plan, const Plan *residue) {
        if (!u)
                return;
        report_info_fill(s, info);
        info->finished_usec = now(CLOCK_REALTIME);
        report_url_post_final(u, info, plan, residue);
}
