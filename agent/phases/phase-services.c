/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The services phases: stop, disable and mask the manifest's units through systemd's D-Bus API,
 * "services-early" before the pods phase (kubelet) and "services-late" after it (the runtime, etcd).
 * The reload phase (phase-reload.c) reloads systemd after them when a unit file changed. */

#include "agent/phases/phases.h"
#include "agent/config/etcd-owner.h"
#include "agent/engine/phase.h"
#include "agent/os/services.h"
#include "agent/phases/phase-services.h"
#include "agent/engine/cmdline.h"
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

static unsigned arg_unit_timeout_sec; /* --unit-timeout; 0: services.h's default */

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
        services_stop_many(ctx->facts.systemd, stops, k, phase_services_unit_timeout(), ctx->deadline_usec);
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
        r = services_unit_status(ctx->facts.systemd, a->data, &s);
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
        return services_disable(ctx->facts.systemd, a->data, ret_msg);
}

static bool file_state_is_enabled(const char *state) {
        return startswith(state, "enabled") || startswith(state, "linked");
}

static int disable_check(Action *a, Context *ctx, char **ret_msg) {
        cleanup_free char *state = NULL;
        int r;

        if (!a->data)
                return 0;
        r = services_unit_file_state(ctx->facts.systemd, a->data, &state);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return file_state_is_enabled(state) ? set_errmsg(ret_msg, 1, "still %s", state) : 0;
}

static int mask_apply(Action *a, Context *ctx, char **ret_msg) {
        if (!a->data)
                return set_errmsg(ret_msg, 0, "no unit matches");
        return services_mask(ctx->facts.systemd, a->data, ret_msg);
}

static int mask_check(Action *a, Context *ctx, char **ret_msg) {
        cleanup_free char *state = NULL;
        int r;

        if (!a->data)
                return 0;
        r = services_unit_file_state(ctx->facts.systemd, a->data, &state);
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

/* The unit of an etcd no installer of this node made (etcd-owner.h): never stopped nor disabled. */
static int add_out_of_scope(Plan *plan, const char *phase, UnitVerb v, const char *unit, const char *reason,
                            const EtcdScope *scope) {
        Action *a;

        if (already_planned(plan, &verb_ops[v], unit))
                return 0;
        a = plan_add(plan, &verb_ops[v], phase, unit, reason, NULL);
        if (!a)
                return -ENOMEM;
        a->present = false;
        return action_set_skip_code(a, "out-of-scope", "%s", scope->why);
}

static int add_line(Context *ctx, Plan *plan, const char *phase, UnitVerb v, const ManifestEntry *e, char **reterr) {
        cleanup_free char *reason = NULL;
        cleanup_strv char **units = NULL;
        ServiceManager *m = ctx->facts.systemd;
        const EtcdScope *scope = ctx->facts.etcd_scope; /* plan_units() asked */
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
                r = etcd_scope_keeps_unit(scope, *u) ? add_out_of_scope(plan, phase, v, *u, reason, scope)
                                                     : add_unit(plan, m, phase, v, *u, reason);
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

static int add_unreachable(Context *ctx, Plan *plan, const char *phase, const char *when, const EtcdScope *scope) {
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
                if (r >= 0 && etcd_scope_keeps_unit(scope, e->args[0]))
                        r = action_set_skip_code(a, "out-of-scope", "%s", scope->why);
                else if (r >= 0)
                        r = action_set_skip_code(a, "no-systemd", "systemd not running: %s",
                                                 services_manager_why_absent(ctx->facts.systemd));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* All stops first, so that they form one batch and run concurrently; then disable, then mask. */
static int plan_units(Context *ctx, Plan *plan, const char *phase, const char *when, char **reterr) {
        const EtcdScope *scope;
        ServiceManager *m;
        int r;

        r = phase_etcd_scope(ctx, &scope);
        if (r < 0)
                return set_errmsg(reterr, r, "cannot tell who owns this node's etcd: %s", strerror(-r));
        r = phase_systemd(ctx, &m);
        if (r < 0)
                return set_errmsg(reterr, r, "cannot look for systemd: %s", strerror(-r));
        if (services_manager_why_absent(m))
                return add_unreachable(ctx, plan, phase, when, scope);
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

/* ---- what the reload phase watches ---- */

bool services_action_changes_unit_files(const Action *a) {
        if (streq(a->phase, "services-early") || streq(a->phase, "services-late"))
                return a->ops == &verb_ops[VERB_DISABLE] || a->ops == &verb_ops[VERB_MASK];
        if (!streq(a->phase, "files"))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(unit_dirs); i++)
                if (path_startswith_dir(a->target, unit_dirs[i]))
                        return true;
        return false;
}

usec_t phase_services_unit_timeout(void) {
        return (usec_t) arg_unit_timeout_sec * USEC_PER_SEC;
}

static int parse_unit_timeout(const char *arg, char **reterr) {
        return cmdline_parse_duration("unit-timeout", arg, 1, CMDLINE_DURATION_MAX, &arg_unit_timeout_sec, reterr);
}

const PhaseOption phase_services_options[] = {
        { "unit-timeout", PHASE_OPTION_REQUIRED_ARG, "DURATION", "How long to wait for each unit's stop job (100s)",
          parse_unit_timeout },
        {},
};
