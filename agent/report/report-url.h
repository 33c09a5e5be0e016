/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --report-url: POST the run's status and report to a status store, at the start and at the end. */
#pragma once

#include <stdbool.h>

#include "agent/base/output.h"
#include "agent/engine/plan.h"
#include "agent/report/report.h"

#define REPORT_URL_ATTEMPTS 3
#define REPORT_URL_CONNECT_TIMEOUT_MS 5000
#define REPORT_URL_TIMEOUT_MS 10000

typedef struct ReportUrl {
        char *url;
        char **headers; /* "Name: value"; never logged or reported */
        char *ca;       /* --report-cacert's PEM, NULL: the system's trust store */
        size_t ca_size;
        const char *proxy;        /* NULL: none */
        unsigned backoff_ms;      /* before the 2nd attempt; doubles after each */
        ReportUrlOutcome outcome; /* what the report shows */
        const char *hostname;     /* the node's, the tree's under --root (ReportInfo's); NULL: unknown */
} ReportUrl;

/* headers are "Name: value" strings; header_file holds one per line ('#' comments, blank lines),
 * so that tokens stay out of ps; cacert is a PEM file. Everything is read and checked now, before
 * the reset starts: -EINVAL/-errno with *reterr (which never quotes a header's value). */
int report_url_new(const char *url, char *const *headers, const char *header_file, const char *cacert,
                   const char *proxy, ReportUrl **ret, char **reterr);
ReportUrl *report_url_free(ReportUrl *u);

/* Parse a header file's text into *headers (appended); exposed for the tests. */
int report_url_parse_headers(const char *text, const char *name, char ***headers, char **reterr);

/* POST {"status": "deleting", "hostname": ..., "time": ..., "report": null}. Failures are logged
 * and recorded in u->start; they never change the run's outcome. */
void report_url_post_start(ReportUrl *u);

/* POST {"status": "deleted" (exit status 0) or "failed", ..., "report": {the report}}; the report
 * is rendered as --output=json prints it, except that its own outcome cannot be in it. plan and
 * info may be NULL (the run failed before it had a plan: "report" is null). */
void report_url_post_final(ReportUrl *u, const ReportInfo *info, const Plan *plan, const Plan *residue);
