/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reload phase, after the files phase: one systemd Reload when a unit file changed during the
 * run, then ResetFailed on the units the manifest names that are failed; and the host resolver's
 * reload (resolver-reload.c) when the run changed its configuration. */

#include "agent/phases/phases.h"
#include "agent/engine/phase.h"
#include "agent/node/phase-options.h"
#include "agent/os/services.h"
#include "agent/phases/reload/reload-resolver.h"
#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

/* ---- reload: once, when a unit file changed during the run; then reset-failed per unit ---- */

typedef struct ReloadData {
        Action **watch; /* this run's actions that change unit files (owned by the plan) */
        size_t n_watch, allocated_watch;
        char **units; /* every unit the manifest names that systemd knows */
} ReloadData;

static void reload_data_free(void *p) {
        ReloadData *d = p;

        free(d->watch);
        strv_free(d->units);
        free(d);
}

/* Why a reload is due, or NULL: a watched action changed something, or systemd says so itself. */
static char *reload_reason(Context *ctx, const ReloadData *d) {
        char *why = NULL;
        UnitStatus s;

        for (size_t i = 0; i < d->n_watch; i++)
                if (d->watch[i]->result == ACTION_CHANGED)
                        return asprintf(&why, "%s %s changed", d->watch[i]->ops->kind, d->watch[i]->target) < 0 ? NULL
                                                                                                                : why;
        STRV_FOREACH(u, d->units)
                if (services_unit_status(ctx->facts.systemd, *u, &s) >= 0 && s.need_daemon_reload)
                        return asprintf(&why, "%s changed on disk", *u) < 0 ? NULL : why;
        return NULL;
}

static int reload_apply(Action *a, Context *ctx, char **ret_msg) {
        cleanup_free char *why = reload_reason(ctx, a->data);
        int r;

        if (!why)
                return set_errmsg(ret_msg, 0, "no unit file changed");
        r = services_reload(ctx->facts.systemd, phase_option_unit_timeout(), ret_msg);
        if (r < 0)
                return r;
        return set_errmsg(ret_msg, 1, "reloaded: %s", why);
}

static int reload_check(Action *a, Context *ctx, char **ret_msg) {
        cleanup_free char *why = reload_reason(ctx, a->data);

        return why ? set_errmsg(ret_msg, 1, "systemd has not reloaded: %s", why) : 0;
}

static const ActionOps reload_ops = {
        .kind = "daemon-reload",
        .apply = reload_apply,
        .check = reload_check,
        .free_data = reload_data_free,
};

static int reset_failed_apply(Action *a, Context *ctx, char **ret_msg) {
        return services_reset_failed(ctx->facts.systemd, a->target, ret_msg);
}

static int reset_failed_check(Action *a, Context *ctx, char **ret_msg) {
        UnitStatus s;

        if (services_unit_status(ctx->facts.systemd, a->target, &s) < 0 || !streq(s.active_state, "failed"))
                return 0;
        return set_errmsg(ret_msg, 1, "still failed (%s)", s.sub_state);
}

static const ActionOps reset_failed_ops = {
        .kind = "reset-failed",
        .apply = reset_failed_apply,
        .check = reset_failed_check,
};

static int reload_watch(const Plan *plan, ReloadData *d) {
        PLAN_FOREACH(a, plan) {
                if (!a->changes_unit_files)
                        continue;
                if (GREEDY_REALLOC(d->watch, d->allocated_watch, d->n_watch + 1) < 0)
                        return -ENOMEM;
                d->watch[d->n_watch++] = a;
        }
        return 0;
}

/* Every unit the manifest names (globs expanded) that systemd has loaded or has a unit file for. */
static int known_units(Context *ctx, char ***ret) {
        cleanup_strv char **all = NULL;
        int r = 0;

        MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_UNIT) {
                cleanup_strv char **units = NULL;

                r = services_expand(ctx->facts.systemd, e->args[0], &units);
                for (char **u = units; r >= 0 && u && *u; u++) {
                        cleanup_free char *state = NULL;
                        UnitStatus s;

                        if (services_unit_is_protected(*u))
                                continue;
                        if (services_unit_status(ctx->facts.systemd, *u, &s) >= 0 ||
                            services_unit_file_state(ctx->facts.systemd, *u, &state) >= 0)
                                r = strv_extend_unique(&all, *u);
                }
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(all);
        return 0;
}

static int add_reload(Context *ctx, Plan *plan, char **reterr) {
        ReloadData *d = calloc(1, sizeof *d);
        cleanup_free char *why = NULL;
        size_t n_units = 0;
        Action *a;
        int r;

        if (!d)
                return -ENOMEM;
        r = reload_watch(plan, d);
        if (r >= 0)
                r = known_units(ctx, &d->units);
        if (r < 0) {
                reload_data_free(d);
                return set_errmsg(reterr, r, "cannot list the units to reload: %s", strerror(-r));
        }
        a = plan_add(plan, &reload_ops, "reload", "systemd", NULL, d);
        if (!a)
                return -ENOMEM;
        why = reload_reason(ctx, d);
        a->present = d->n_watch > 0 || why;
        STRV_FOREACH(u, d->units)
                n_units++;
        return action_set_detail(a, "once, if a unit file changed: %zu actions may change one, %zu units watched",
                                 d->n_watch, n_units);
}

int phase_reload_plan(Context *ctx, Plan *plan, char **reterr) {
        ServiceManager *m;
        const char *why;
        const ReloadData *d;
        Action *a;
        bool any = false;
        int r;

        r = resolver_reload_plan(ctx, plan);
        if (r < 0)
                return r;
        MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_UNIT)
                any = true;
        if (!any)
                return 0;
        r = phase_systemd_running(ctx, &m, &why);
        if (r == -EHOSTDOWN) {
                a = plan_add(plan, &reload_ops, "reload", "systemd", NULL, NULL);
                if (!a)
                        return -ENOMEM;
                a->present = false;
                return action_set_skip_code(a, "no-systemd", "systemd not running: %s", why);
        }
        if (r < 0)
                return set_errmsg(reterr, r, "cannot look for systemd: %s", why);
        r = add_reload(ctx, plan, reterr);
        if (r < 0)
                return r;
        d = plan->actions[plan->n_actions - 1]->data;
        STRV_FOREACH(u, d->units) {
                UnitStatus s;

                a = plan_add(plan, &reset_failed_ops, "reload", *u, NULL, NULL);
                if (!a)
                        return -ENOMEM;
                a->present = services_unit_status(m, *u, &s) >= 0 && streq(s.active_state, "failed");
                r = action_set_detail(a, "%s", a->present ? "failed" : "not failed now; after the stops, if it is");
                if (r < 0)
                        return r;
        }
        return 0;
}
