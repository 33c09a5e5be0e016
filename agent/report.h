/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The report: the plan (dry run) or the results of a run, and the residue, as text or JSON. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/output.h"
#include "agent/plan.h"

typedef struct ReportInfo {
        const char *command;    /* "plan", "run", "status" */
        const char *root;
        char *const *manifests; /* files the manifest came from */
        uint64_t started_usec, finished_usec; /* CLOCK_REALTIME */
        bool executed;          /* results, not a plan */
        bool verified;          /* residue was looked for */
        int exit_status;
        const struct ReportUrl *report_url; /* --report-url's outcomes, NULL when not given */
} ReportInfo;

/* plan may be NULL (status); residue may be NULL (nothing verified). */
void report_emit(Emitter *e, const ReportInfo *info, const Plan *plan, const Plan *residue);

/* The plan as people read it before they confirm. */
void report_plan_text(Emitter *e, const Plan *plan);
