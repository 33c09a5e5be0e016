/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The report: the plan (dry run) or the results of a run, and the residue, as text or JSON. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent/config/detect.h"
#include "agent/base/output.h"
#include "agent/engine/plan.h"

/* The outcome of one POST, retries included. */
typedef struct ReportUrlPost {
        bool attempted;
        bool ok; /* a 2xx answer */
        unsigned attempts;
        long http_status; /* of the last attempt, 0 when none arrived */
        char *error;      /* why it failed; NULL when ok */
} ReportUrlPost;

/* What --report-url delivered, for the report: report-url.c fills it in, the report shows it. */
typedef struct ReportUrlOutcome {
        char *redacted; /* the URL without user info, query and fragment */
        ReportUrlPost start, final;
} ReportUrlOutcome;

typedef struct ReportInfo {
        const char *command; /* "plan", "run", "status" */
        const char *root;
        const char *hostname;                 /* the node's, the tree's under --root; NULL: unknown */
        char *const *manifests;               /* files the manifest came from */
        uint64_t started_usec, finished_usec; /* CLOCK_REALTIME */
        bool executed;                        /* results, not a plan */
        bool verified;                        /* residue was looked for */
        const Plan *unobserved;               /* verified: what could not be observed (NULL = nothing) */
        int exit_status;
        const ReportUrlOutcome *report_url; /* NULL when --report-url is not given */
        const Detection *detection;         /* what the node looks like: installer, runtime, ...; NULL = not looked */
        const char *profile, *profile_why;  /* the built-in profile in use and why; NULL with a manifest */
        const struct Rejoin *rejoin;        /* the verdict after verify; NULL when not made */
} ReportInfo;

/* The verdict of a verification: "residue" when something is left, else "unknown" when something
 * could not be observed, else "clean"; NULL when nothing was verified (residue NULL). */
const char *report_verdict(const Plan *residue, const Plan *unobserved);

/* plan may be NULL (status); residue may be NULL (nothing verified). */
void report_emit(Emitter *e, const ReportInfo *info, const Plan *plan, const Plan *residue);

/* The plan as people read it before they confirm. */
void report_plan_text(Emitter *e, const Plan *plan);

/* The "report_url" member of the report: {"url", "start", "final"}, each POST {"ok", "attempts",
 * "http_status", "error"} or null when not sent (yet). */
void report_url_outcome_emit(Emitter *e, const ReportUrlOutcome *u);
