/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The services phases: stop, disable and mask the manifest's units through systemd's D-Bus API,
 * "services-early" before the pods phase (kubelet) and "services-late" after it (the runtime, etcd);
 * and "reload" after the files phase: one Reload, then ResetFailed on the units touched. */

#include "agent/engine/phase.h"
#include "agent/os/services.h"
#include "agent/phases/resolver-reload.h"
#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

typedef enum UnitVerb {
        VERB_STOP,
        VERB_DISABLE,
        VERB_MASK,
        _VERB_MAX,
} UnitVerb;

static const char *const verb_names[_VERB_MAX] = { "stop", "disable", "mask" };

/* Where unit files live: a change beneath these makes systemd want a reload. */
static const char *const unit_dirs[] = {
        "/etc/systemd/system",     "/run/systemd/system",           "/lib/systemd/system",
        "/usr/lib/systemd/system", "/usr/local/lib/systemd/system",
};

/* ---- stop, disable, mask: a row per unit, data is the unit name (NULL: a glob matched nothing) ---- */

static void stop_apply_batch(Action **actions, size_t n, Context *ctx) {
        cleanup_free UnitStop *stops = calloc(n, sizeof(UnitStop));
        cleanup_free Action **of = calloc(n, sizeof(Action *));
        size_t k = 0;

        if (!stops || !of) {
                for (size_t i = 0; i < n; i++)
                        action_record(actions[i], -ENOMEM, NULL);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                if (!actions[i]->data) {
                        action_record(actions[i], 0, strdup("no unit matches"));
                        continue;
                }
                of[k] = actions[i];
                stops[k++].unit = actions[i]->data;
        }
        services_stop_many(ctx->systemd, stops, k, ctx->unit_timeout_usec, ctx->deadline_usec);
        for (size_t i = 0; i < k; i++)
                action_record(of[i], stops[i].result, stops[i].message);
}

static int stop_apply(Action *a, Context *ctx, char **ret_msg) {
        stop_apply_batch(&a, 1, ctx);
        return a->result == ACTION_FAILED ? a->error : a->result == ACTION_CHANGED;
}

static int stop_check(Action *a, Context *ctx, char **ret_msg) {
        UnitStatus s;
        int r;

        if (!a->data)
                return 0;
        r = services_unit_status(ctx->systemd, a->data, &s);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (services_status_is_stopped(&s))
                return 0;
        return set_errmsg(ret_msg, 1, "still %s (%s)", s.active_state, s.sub_state);
}

static int disable_apply(Action *a, Context *ctx, char **ret_msg) {
        if (!a->data)
                return set_errmsg(ret_msg, 0, "no unit matches");
        return services_disable(ctx->systemd, a->data, ret_msg);
}

static bool file_state_is_enabled(const char *state) {
        return startswith(state, "enabled") || startswith(state, "linked");
}

static int disable_check(Action *a, Context *ctx, char **ret_msg) {
        cleanup_free char *state = NULL;
        int r;

        if (!a->data)
                return 0;
        r = services_unit_file_state(ctx->systemd, a->data, &state);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return file_state_is_enabled(state) ? set_errmsg(ret_msg, 1, "still %s", state) : 0;
}

static int mask_apply(Action *a, Context *ctx, char **ret_msg) {
        if (!a->data)
                return set_errmsg(ret_msg, 0, "no unit matches");
        return services_mask(ctx->systemd, a->data, ret_msg);
}

static int mask_check(Action *a, Context *ctx, char **ret_msg) {
        cleanup_free char *state = NULL;
        int r;

        if (!a->data)
                return 0;
        r = services_unit_file_state(ctx->systemd, a->data, &state);
        if (r < 0 && r != -ENOENT)
                return r;
        return r >= 0 && startswith(state, "masked") ? 0 : set_errmsg(ret_msg, 1, "not masked");
}

static const ActionOps verb_ops[_VERB_MAX] = {
        [VERB_STOP] = {
                .kind = "stop",
                .apply = stop_apply,
                .apply_batch = stop_apply_batch,
                .check = stop_check,
                .free_data = free,
        },
        [VERB_DISABLE] = {
                .kind = "disable",
                .apply = disable_apply,
                .check = disable_check,
                .free_data = free,
        },
        [VERB_MASK] = {
                .kind = "mask",
                .apply = mask_apply,
                .check = mask_check,
                .free_data = free,
        },
};

/* What planning sees: is there something to do, and what is it? */
static int observe(ServiceManager *m, UnitVerb v, const char *unit, Action *a) {
        cleanup_free char *state = NULL;
        UnitStatus s;
        int r;

        if (v == VERB_STOP) {
                r = services_unit_status(m, unit, &s);
                a->present = r != -ENOENT && !(r >= 0 && services_status_is_stopped(&s));
                if (r == -ENOENT)
                        return action_set_detail(a, "not loaded");
                if (r < 0)
                        return action_set_detail(a, "cannot read its state: %s", strerror(-r));
                return action_set_detail(a, "%s (%s)%s", s.active_state, s.sub_state, s.job_id ? ", a job queued" : "");
        }
        r = services_unit_file_state(m, unit, &state);
        if (r == -ENOENT) {
                a->present = v == VERB_MASK;
                return action_set_detail(a, "no unit file");
        }
        if (r < 0) {
                a->present = true;
                return action_set_detail(a, "cannot read its unit file state: %s", strerror(-r));
        }
        a->present = v == VERB_DISABLE ? file_state_is_enabled(state) : !startswith(state, "masked");
        return action_set_detail(a, "%s", state);
}

static bool already_planned(const Plan *plan, const ActionOps *ops, const char *target) {
        PLAN_FOREACH(a, plan)
                if (a->ops == ops && streq(a->target, target))
                        return true;
        return false;
}

static int add_unit(Plan *plan, ServiceManager *m, const char *phase, UnitVerb v, const char *unit,
                    const char *reason) {
        char *data;
        Action *a;
        int r;

        if (already_planned(plan, &verb_ops[v], unit))
                return 0; /* two lines (or a name and a glob) name it: one row is enough */
        if (services_unit_is_protected(unit)) {
                a = plan_add(plan, &verb_ops[v], phase, unit, reason, NULL);
                if (!a)
                        return -ENOMEM;
                a->present = false;
                r = action_set_detail(a, "protected");
                return r < 0 ? r : action_set_skip_code(a, "protected", "protected: node-reset never acts on %s", unit);
        }
        data = strdup(unit);
        if (!data)
                return -ENOMEM;
        a = plan_add(plan, &verb_ops[v], phase, unit, reason, data);
        if (!a)
                return -ENOMEM;
        return observe(m, v, unit, a);
}

static int add_line(Context *ctx, Plan *plan, const char *phase, UnitVerb v, const ManifestEntry *e, char **reterr) {
        cleanup_free char *reason = NULL;
        cleanup_strv char **units = NULL;
        ServiceManager *m = ctx->systemd;
        Action *a;
        int r;

        reason = manifest_entry_reason(e);
        if (!reason)
                return -ENOMEM;
        r = services_expand(m, e->args[0], &units);
        if (r < 0)
                return set_errmsg(reterr, r, "%s:%u: cannot list the units matching %s: %s", e->file, e->line,
                                  e->args[0], strerror(-r));
        if (!units[0]) {
                a = plan_add(plan, &verb_ops[v], phase, e->args[0], reason, NULL);
                if (!a)
                        return -ENOMEM;
                a->present = false;
                return action_set_detail(a, "no unit matches");
        }
        for (char **u = units; *u; u++) {
                r = add_unit(plan, m, phase, v, *u, reason);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Without systemd nothing can be asked: one row per line says so (the processes phase is what
 * stops kubelet, the runtime and etcd then). */
static int unit_unreachable_apply(Action *a, Context *ctx, char **ret_msg) {
        return 0;
}

static const ActionOps unit_unreachable_ops = {
        .kind = "unit",
        .apply = unit_unreachable_apply,
};

static int add_unreachable(Context *ctx, Plan *plan, const char *phase, const char *when) {
        MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_UNIT) {
                cleanup_free char *reason = NULL;
                Action *a;
                int r;

                if (!streq(e->args[2], when))
                        continue;
                reason = manifest_entry_reason(e);
                if (!reason)
                        return -ENOMEM;
                a = plan_add(plan, &unit_unreachable_ops, phase, e->args[0], reason, NULL);
                if (!a)
                        return -ENOMEM;
                a->present = false;
                r = action_set_detail(a, "%s", e->args[1]);
                if (r >= 0)
                        r = action_set_skip_code(a, "no-systemd", "systemd not running: %s",
                                                 services_manager_why_absent(ctx->systemd));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* All stops first, so that they form one batch and run concurrently; then disable, then mask. */
static int plan_units(Context *ctx, Plan *plan, const char *phase, const char *when, char **reterr) {
        ServiceManager *m;
        int r;

        r = phase_systemd(ctx, &m);
        if (r < 0)
                return set_errmsg(reterr, r, "cannot look for systemd: %s", strerror(-r));
        if (services_manager_why_absent(m))
                return add_unreachable(ctx, plan, phase, when);
        for (UnitVerb v = 0; v < _VERB_MAX; v++)
                MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_UNIT) {
                        if (!streq(e->args[2], when) || !comma_list_contains(e->args[1], verb_names[v]))
                                continue;
                        r = add_line(ctx, plan, phase, v, e, reterr);
                        if (r < 0)
                                return r;
                }
        return 0;
}

int phase_services_early_plan(Context *ctx, Plan *plan, char **reterr) {
        return plan_units(ctx, plan, "services-early", "early", reterr);
}

int phase_services_late_plan(Context *ctx, Plan *plan, char **reterr) {
        return plan_units(ctx, plan, "services-late", "late", reterr);
}

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
                if (services_unit_status(ctx->systemd, *u, &s) >= 0 && s.need_daemon_reload)
                        return asprintf(&why, "%s changed on disk", *u) < 0 ? NULL : why;
        return NULL;
}

static int reload_apply(Action *a, Context *ctx, char **ret_msg) {
        cleanup_free char *why = reload_reason(ctx, a->data);
        int r;

        if (!why)
                return set_errmsg(ret_msg, 0, "no unit file changed");
        r = services_reload(ctx->systemd, ctx->unit_timeout_usec, ret_msg);
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
        return services_reset_failed(ctx->systemd, a->target, ret_msg);
}

static int reset_failed_check(Action *a, Context *ctx, char **ret_msg) {
        UnitStatus s;

        if (services_unit_status(ctx->systemd, a->target, &s) < 0 || !streq(s.active_state, "failed"))
                return 0;
        return set_errmsg(ret_msg, 1, "still failed (%s)", s.sub_state);
}

static const ActionOps reset_failed_ops = {
        .kind = "reset-failed",
        .apply = reset_failed_apply,
        .check = reset_failed_check,
};

static bool changes_unit_files(const Action *a) {
        if (streq(a->phase, "services-early") || streq(a->phase, "services-late"))
                return a->ops == &verb_ops[VERB_DISABLE] || a->ops == &verb_ops[VERB_MASK];
        if (!streq(a->phase, "files"))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(unit_dirs); i++)
                if (path_startswith_dir(a->target, unit_dirs[i]))
                        return true;
        return false;
}

static int reload_watch(const Plan *plan, ReloadData *d) {
        PLAN_FOREACH(a, plan) {
                if (!changes_unit_files(a))
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

                r = services_expand(ctx->systemd, e->args[0], &units);
                for (char **u = units; r >= 0 && u && *u; u++) {
                        cleanup_free char *state = NULL;
                        UnitStatus s;

                        if (services_unit_is_protected(*u))
                                continue;
                        if (services_unit_status(ctx->systemd, *u, &s) >= 0 ||
                            services_unit_file_state(ctx->systemd, *u, &state) >= 0)
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
        r = phase_systemd(ctx, &m);
        if (r < 0)
                return set_errmsg(reterr, r, "cannot look for systemd: %s", strerror(-r));
        if (services_manager_why_absent(m)) {
                a = plan_add(plan, &reload_ops, "reload", "systemd", NULL, NULL);
                if (!a)
                        return -ENOMEM;
                a->present = false;
                return action_set_skip_code(a, "no-systemd", "systemd not running: %s", services_manager_why_absent(m));
        }
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
