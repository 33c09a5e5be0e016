/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The report of a verb that observed the node: to stdout, and with --report-url to a server. */
#pragma once

#include "agent/report/report-url.h"
#include "agent/report/report.h"
#include "agent/verbs/options.h"
#include "agent/verbs/setup.h"

/* The report on stdout, as --output asks; info gets what the setup knows (root, manifests, ...). */
void node_report_emit(const Setup *s, const ProgramOptions *o, ReportInfo *info, const Plan *plan, const Plan *residue);
/* --report-url checked (its files read) before anything is locked or changed: *ret NULL without it.
 * Returns 0, or EXIT_USAGE with the reason said. */
int node_report_url_open(const ProgramOptions *o, ReportUrl **ret);
/* The final POST carries the report as stdout gets it, finished at the same instant; u may be NULL. */
void node_report_post_final(const Setup *s, ReportInfo *info, ReportUrl *u, const Plan *plan, const Plan *residue);
