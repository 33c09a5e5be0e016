/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The phases as the engine sees them: a table the program registers, and what the phases share. */

#include "agent/engine/phase.h"
#include "agent/os/services.h"
#include "macro.h"
#include "string-util.h"

/* The table the program registered (agent/phases/phases.c), once, before any run: the engine knows
 * no phase by name. */
static const Phase *registered;
static size_t n_registered;

void phase_table_register(const Phase *table, size_t n) {
        registered = table;
        n_registered = n;
}

const Phase *phase_table(size_t *ret_n) {
        *ret_n = n_registered;
        return registered;
}

const Phase *phase_find(const char *name) {
        for (size_t i = 0; i < n_registered; i++)
                if (streq(registered[i].name, name))
                        return &registered[i];
        return NULL;
}

void phase_table_done(Context *ctx) {
        for (size_t i = 0; i < n_registered; i++)
                if (registered[i].done)
                        registered[i].done(ctx);
        phase_facts_done(ctx);
}

void phase_facts_done(Context *ctx) {
        ctx->facts.systemd = services_manager_free(ctx->facts.systemd);
        context_states_done(ctx);
        phase_procs_drop(ctx);
}

int phase_procs(Context *ctx, const ProcTable **ret) {
        ProcTable *t;
        int r;

        if (!ctx->facts.procs) {
                t = calloc(1, sizeof(ProcTable));
                if (!t)
                        return -ENOMEM;
                r = proc_table_read(t);
                if (r < 0) {
                        free(t);
                        return r;
                }
                ctx->facts.procs = t;
        }
        *ret = ctx->facts.procs;
        return 0;
}

void phase_procs_drop(Context *ctx) {
        if (ctx->facts.procs)
                proc_table_done(ctx->facts.procs);
        ctx->facts.procs = mfree(ctx->facts.procs);
}

int phase_systemd_running(Context *ctx, ServiceManager **ret, const char **ret_why) {
        const char *why;
        int r;

        *ret = NULL;
        if (!ctx->facts.systemd) {
                r = services_manager_open(ctx->root_fd, ctx->root, &ctx->facts.systemd);
                if (r < 0) {
                        if (ret_why)
                                *ret_why = strerror(-r);
                        return r;
                }
        }
        why = services_manager_why_absent(ctx->facts.systemd);
        if (ret_why)
                *ret_why = why;
        if (why)
                return -EHOSTDOWN;
        *ret = ctx->facts.systemd;
        return 0;
}

bool phase_manifest_stops_unit(const Manifest *m, const char *unit) {
        MANIFEST_FOREACH(e, m, DIRECTIVE_UNIT)
                if (e->n_args >= 2 && services_unit_pattern_matches(e->args[0], unit) &&
                    comma_list_contains(e->args[1], "stop"))
                        return true;
        return false;
}
