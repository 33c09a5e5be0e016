/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The report: the plan (dry run) or the results of a run, and the residue, as text or JSON. */

#include <time.h>

#include "agent/engine/libraries.h"
#include "agent/verdict/rejoin-check.h"
#include "agent/report/report.h"
#include "macro.h"
#include "string-util.h"

static const Color result_colors[_ACTION_RESULT_MAX] = {
        [ACTION_PENDING] = COLOR_NONE, [ACTION_UNCHANGED] = COLOR_GREY, [ACTION_CHANGED] = COLOR_GREEN,
        [ACTION_FAILED] = COLOR_RED,   [ACTION_SKIPPED] = COLOR_YELLOW,
};

static void format_time(uint64_t usec, char *buf, size_t size) {
        time_t t = (time_t) (usec / 1000000ULL);
        struct tm tm;

        if (!gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                snprintf(buf, size, "%llu", (unsigned long long) usec);
}

static void emit_action(Emitter *e, const Action *a, bool executed) {
        emit_open_object(e, NULL);
        emit_string(e, COLOR_NONE, "phase", NULL, a->phase);
        if (executed)
                emit_string(e, result_colors[a->result], "result", "  %-10s", action_result_to_string(a->result));
        else
                emit_string(e, COLOR_NONE, "result", NULL, action_result_to_string(a->result));
        emit_string(e, COLOR_BOLD, "kind", "  %-9s", a->ops->kind);
        emit_string(e, COLOR_NONE, "target", " %s", a->target);
        emit_string(e, COLOR_GREY, "detail", executed ? NULL : "  (%s)", a->detail);
        emit_string(e, COLOR_GREY, "reason", NULL, a->reason);
        /* Executed, a skip's reason is its message: said once. */
        if (!executed)
                emit_string(e, COLOR_YELLOW, "skip_reason", a->skip_reason ? "  [will skip: %s]" : NULL,
                            a->skip_reason);
        emit_string(e, COLOR_NONE, "message", executed && a->message ? ": %s" : NULL, a->message);
        emit_string(e, COLOR_NONE, "error", NULL, action_error_code(a));
        emit_uint(e, COLOR_GREY, "duration_ms", executed && a->duration_usec >= 1000 ? " (%llu ms)" : NULL,
                  (unsigned long long) (a->duration_usec / 1000));
        if (a->cri_api)
                emit_string(e, COLOR_GREY, "cri_api", NULL, a->cri_api);
        if (executed && a->backup_path) {
                emit_string(e, COLOR_GREY, "backup_path", NULL, a->backup_path);
                emit_uint(e, COLOR_GREY, "backup_bytes", NULL, (unsigned long long) a->backup_bytes);
                emit_uint(e, COLOR_GREY, "backup_files", NULL, (unsigned long long) a->backup_files);
        }
        if (executed && a->pods_gone_known)
                emit_uint(e, COLOR_GREY, "pods_gone_ms", NULL, (unsigned long long) (a->pods_gone_usec / 1000));
        emit_text(e, COLOR_NONE, "\n");
        emit_close_object(e);
}

static void emit_counts(Emitter *e, const Plan *plan, const char *phase, bool executed) {
        emit_open_object(e, "counts");
        emit_uint(e, COLOR_NONE, "actions", " (%llu actions", (unsigned long long) plan_count(plan, phase, -1));
        for (int r = executed ? ACTION_UNCHANGED : _ACTION_RESULT_MAX; r < _ACTION_RESULT_MAX; r++) {
                size_t n = plan_count(plan, phase, r);

                emit_uint(e, COLOR_NONE, action_result_to_string(r), n ? ", %llu " : NULL, (unsigned long long) n);
                if (n)
                        emit_text(e, COLOR_NONE, "%s", action_result_to_string(r));
        }
        emit_text(e, COLOR_NONE, ")\n");
        emit_close_object(e);
}

/* An action the text leaves out unless -v: a line that matched nothing or found its target clean
 * (planned), or that changed nothing (run). What changes, fails, is refused or could not be
 * observed is always listed; JSON lists everything. */
static bool action_quiet(const Emitter *e, const Action *a, bool executed) {
        if (e->mode != OUTPUT_TEXT || e->all_actions)
                return false;
        if (executed)
                return a->result == ACTION_UNCHANGED;
        return !a->present && !a->skip_reason;
}

/* Actions are grouped by phase in the plan's order; a phase is a run of equal phase names. */
static void emit_phases(Emitter *e, const Plan *plan, bool executed) {
        emit_open_array(e, "phases");
        for (size_t i = 0; i < plan->n_actions;) {
                const char *phase = plan->actions[i]->phase;
                size_t quiet = 0;

                emit_open_object(e, NULL);
                emit_string(e, COLOR_BOLD, "name", "\n%s", phase);
                emit_counts(e, plan, phase, executed);
                emit_open_array(e, "actions");
                for (; i < plan->n_actions && streq(plan->actions[i]->phase, phase); i++) {
                        if (action_quiet(e, plan->actions[i], executed))
                                quiet++;
                        else
                                emit_action(e, plan->actions[i], executed);
                }
                if (quiet > 0)
                        emit_text(e, COLOR_GREY, "  %s: %zu %s (-v lists %s)\n", phase, quiet,
                                  executed ? "unchanged" : "with nothing to do", quiet == 1 ? "it" : "them");
                emit_close_array(e);
                emit_close_object(e);
        }
        emit_close_array(e);
}

const char *report_verdict(const Plan *residue, const Plan *unobserved) {
        if (!residue)
                return NULL;
        if (residue->n_actions > 0)
                return "residue";
        return unobserved && unobserved->n_actions > 0 ? "unknown" : "clean";
}

static void emit_rows(Emitter *e, const char *key, const Plan *rows) {
        emit_open_array(e, key);
        PLAN_FOREACH(a, rows) {
                const char *msg = a->message ?: a->skip_reason ?: a->detail;

                emit_open_object(e, NULL);
                emit_string(e, COLOR_NONE, "phase", "  %s", a->phase);
                emit_string(e, COLOR_BOLD, "kind", " %s", a->ops->kind);
                emit_string(e, COLOR_NONE, "target", " %s", a->target);
                emit_string(e, COLOR_GREY, "message", a->message || a->skip_reason ? ": %s" : NULL, msg);
                emit_string(e, COLOR_GREY, "reason", NULL, a->reason);
                emit_text(e, COLOR_NONE, "\n");
                emit_close_object(e);
        }
        emit_close_array(e);
}

/* Residue first; then what could not be observed, which keeps "none" from meaning "clean". */
static void emit_residue(Emitter *e, const Plan *residue, const Plan *unobserved) {
        const char *verdict = report_verdict(residue, unobserved);
        bool unknown = unobserved && unobserved->n_actions > 0;

        emit_text(e,
                  residue->n_actions ? COLOR_RED
                  : unknown          ? COLOR_YELLOW
                                     : COLOR_GREEN,
                  "\nresidue: %s\n",
                  residue->n_actions ? ""
                  : unknown          ? "none seen, but not every phase could observe the node"
                                     : "none, the node is clean");
        emit_rows(e, "residue", residue);
        if (unknown)
                emit_text(e, COLOR_YELLOW, "not observed:\n");
        if (unobserved)
                emit_rows(e, "unobserved", unobserved);
        else
                emit_null(e, "unobserved");
        emit_string(e, streq(verdict, "clean") ? COLOR_GREEN : COLOR_RED, "verdict",
                    streq(verdict, "clean") ? NULL : "verdict: %s\n", verdict);
}

static void emit_header(Emitter *e, const ReportInfo *info) {
        char started[64], finished[64];

        format_time(info->started_usec, started, sizeof started);
        format_time(info->finished_usec, finished, sizeof finished);
        emit_string(e, COLOR_NONE, "tool", NULL, "node-reset");
        emit_uint(e, COLOR_NONE, "schema_version", NULL, REPORT_SCHEMA_VERSION);
        emit_string(e, COLOR_NONE, "version", NULL, NODE_RESET_VERSION);
        emit_string(e, COLOR_BOLD, "command", "node-reset %s", info->command);
        if (info->hostname)
                emit_string(e, COLOR_NONE, "hostname", " on %s", info->hostname);
        else {
                /* Under --root a tree without /etc/hostname: the running system's name is not the node's. */
                emit_null(e, "hostname");
                emit_text(e, COLOR_NONE, " on a host of unknown name");
        }
        emit_string(e, COLOR_NONE, "root", " (root %s)", info->root);
        emit_string(e, COLOR_NONE, "started", NULL, started);
        emit_string(e, COLOR_NONE, "finished", NULL, finished);
        emit_bool(e, "dry_run", NULL, !info->executed);
        emit_open_array(e, "manifests");
        emit_text(e, COLOR_NONE, "\nmanifest:");
        for (char *const *m = info->manifests; m && *m; m++)
                emit_string(e, COLOR_NONE, NULL, " %s", *m);
        emit_text(e, COLOR_NONE, "\n");
        emit_close_array(e);
}

/* The whole plan's counts, null for status (nothing planned): in JSON a phase's "counts" for the
 * node, in text the closing line. A fleet's controller reads a node's outcome here without
 * walking its actions. */
static void emit_total_counts(Emitter *e, const Plan *plan, bool executed) {
        Color c;

        if (!plan) {
                emit_null(e, "counts");
                return;
        }
        emit_open_object(e, "counts");
        if (executed) {
                c = plan_count(plan, NULL, ACTION_FAILED) > 0 ? COLOR_RED : COLOR_NONE;
                emit_uint(e, c, "actions", NULL, (unsigned long long) plan->n_actions);
                emit_uint(e, c, "changed", "\nsummary: %llu changed",
                          (unsigned long long) plan_count(plan, NULL, ACTION_CHANGED));
                emit_uint(e, c, "unchanged", ", %llu unchanged",
                          (unsigned long long) plan_count(plan, NULL, ACTION_UNCHANGED));
                emit_uint(e, c, "failed", ", %llu failed", (unsigned long long) plan_count(plan, NULL, ACTION_FAILED));
                emit_uint(e, c, "skipped", ", %llu skipped\n",
                          (unsigned long long) plan_count(plan, NULL, ACTION_SKIPPED));
        } else {
                emit_uint(e, COLOR_NONE, "actions", "\nplan: %llu actions", (unsigned long long) plan->n_actions);
                emit_text(e, COLOR_NONE, ", %zu with something to do (dry run, nothing changed)\n",
                          plan_count_present(plan));
        }
        emit_close_object(e);
}

static void emit_summary(Emitter *e, const ReportInfo *info, const Plan *plan, const Plan *residue) {
        size_t changed = plan ? plan_count(plan, NULL, ACTION_CHANGED) : 0;
        size_t failed = plan ? plan_count(plan, NULL, ACTION_FAILED) : 0;

        emit_bool(e, "changed", NULL, changed > 0);
        emit_bool(e, "failed", NULL,
                  failed > 0 || (residue && !streq(report_verdict(residue, info->unobserved), "clean")) ||
                          (info->rejoin && !rejoin_is_rejoinable(info->rejoin)));
        emit_total_counts(e, plan, info->executed);
        emit_uint(e, COLOR_NONE, "exit_status", NULL, (unsigned long long) info->exit_status);
}

void report_emit(Emitter *e, const ReportInfo *info, const Plan *plan, const Plan *residue) {
        emit_open_object(e, NULL);
        emit_header(e, info);
        if (info->detection)
                detection_emit(e, info->detection, info->profile, info->profile_why);
        if (plan)
                emit_phases(e, plan, info->executed);
        if (residue)
                emit_residue(e, residue, info->unobserved);
        else {
                emit_null(e, "residue");
                emit_null(e, "unobserved");
                emit_null(e, "verdict");
        }
        if (info->rejoin)
                rejoin_emit(e, info->rejoin);
        if (info->report_url)
                report_url_outcome_emit(e, info->report_url);
        /* What this node cannot do for lack of a library: plan, run and status say so alike. */
        libraries_emit_unavailable(e);
        emit_summary(e, info, plan, residue);
        emit_close_object(e);
        fflush(e->f);
}

void report_plan_text(Emitter *e, const Plan *plan) {
        emit_phases(e, plan, false);
        emit_text(e, COLOR_NONE, "\n%zu actions, %zu with something to do\n", plan->n_actions,
                  plan_count_present(plan));
}

static void emit_post(Emitter *e, const char *key, const ReportUrlPost *p, bool last) {
        if (!p->attempted) {
                emit_null(e, key);
                emit_text(e, COLOR_NONE, " %s not sent%s", key, last ? "\n" : ",");
                return;
        }
        emit_open_object(e, key);
        emit_bool(e, "ok", NULL, p->ok);
        emit_text(e, p->ok ? COLOR_NONE : COLOR_RED, " %s %s", key, p->ok ? "ok" : "failed");
        emit_uint(e, COLOR_NONE, "attempts", p->attempts > 1 ? " after %llu attempts" : NULL,
                  (unsigned long long) p->attempts);
        if (p->http_status > 0)
                emit_uint(e, COLOR_NONE, "http_status", p->ok ? " (HTTP %llu)" : NULL,
                          (unsigned long long) p->http_status);
        else
                emit_null(e, "http_status");
        emit_string(e, COLOR_NONE, "error", p->error ? ": %s" : NULL, p->error);
        emit_text(e, COLOR_NONE, "%s", last ? "\n" : ",");
        emit_close_object(e);
}

void report_url_outcome_emit(Emitter *e, const ReportUrlOutcome *u) {
        emit_open_object(e, "report_url");
        emit_string(e, COLOR_NONE, "url", "\nreport-url %s:", u->redacted);
        emit_post(e, "start", &u->start, false);
        emit_post(e, "final", &u->final, true);
        emit_close_object(e);
}
