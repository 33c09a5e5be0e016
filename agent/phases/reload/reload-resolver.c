/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host resolver after a run removed what an installer configured in it (kubespray's resolved
 * drop-in and NetworkManager dns.conf pointing at NodeLocal DNS, its "# Ansible entries" blocks, the
 * nodelocaldns link): systemd-resolved and NetworkManager keep serving the old servers until they
 * read their configuration again. kubespray restarts them; so does this, through D-Bus, and only
 * those that run. systemd-resolved gained a reload only in systemd 256 (Debian 12 has 252): restart. */

#include "agent/engine/phase.h"
#include "agent/node/phase-options.h"
#include "agent/os/services.h"
#include "agent/phases/reload/reload-resolver.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

#define RESOLVED "systemd-resolved.service"
#define NETWORKMANAGER "NetworkManager.service"

/* What, changed by the run, a running resolver would go on serving stale. */
static bool resolver_input(const Action *a) {
        static const char *const dirs[] = {
                "/etc/systemd/resolved.conf.d",
                "/etc/systemd/resolved.conf",
                "/etc/NetworkManager/conf.d",
                "/etc/NetworkManager/NetworkManager.conf",
                "/etc/resolv.conf",
                "/etc/dhcp/dhclient.conf",
                "/etc/resolvconf",
        };

        if (!a->present || a->skip_reason || !a->target)
                return false;
        if (streq(a->phase, "network"))
                return streq(a->target, "nodelocaldns");
        if (!streq(a->phase, "files"))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                if (path_startswith_dir(a->target, dirs[i]) || path_startswith_dir(dirs[i], a->target))
                        return true;
        return false;
}

/* Reload(0) over D-Bus. NetworkManager authorizes its caller by PID, which the bus cannot tell from
 * another PID namespace than the node's (a container, or --root on a running tree): it refuses with
 * "Unable to authenticate the request". Then systemd reloads the unit: its ExecReload= runs in the
 * node (Debian 12's is busctl's "Reload u 0", the same call). */
static int networkmanager_reload(ServiceManager *m, Context *ctx, char **ret_msg) {
        cleanup_free char *refused = NULL, *msg = NULL;
        int r;

        r = services_networkmanager_reload(m, &refused);
        if (r >= 0)
                return set_errmsg(ret_msg, 1, "reloaded (Reload(0): configuration and DNS)");
        if (r != -EACCES)
                return set_errmsg(ret_msg, r, "%s", strna(refused));
        r = services_reload_unit(m, NETWORKMANAGER, phase_option_unit_timeout(), ctx->deadline_usec, &msg);
        if (r < 0)
                return set_errmsg(ret_msg, r, "%s; then systemd's ReloadUnit: %s", strna(refused), strna(msg));
        return set_errmsg(ret_msg, 1,
                          "reloaded by systemd's ReloadUnit (job done): NetworkManager refused the bus call (%s)",
                          strna(refused));
}

static int reload_apply(Action *a, Context *ctx, char **ret_msg) {
        ServiceManager *m;
        const char *why;
        UnitStatus s;
        int r;

        r = phase_systemd_running(ctx, &m, &why);
        if (r == -EHOSTDOWN)
                return set_errmsg(ret_msg, 0, "no systemd, so no %s running: %s", a->target, why);
        if (r < 0)
                return r;
        r = services_unit_status(m, a->target, &s);
        if (r == -ENOENT || (r >= 0 && !streq(s.active_state, "active")))
                return set_errmsg(ret_msg, 0, "%s", r == -ENOENT ? "not loaded, not running" : s.active_state);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot read its state: %s", strerror(-r));
        if (streq(a->target, NETWORKMANAGER))
                return networkmanager_reload(m, ctx, ret_msg);
        return services_restart(m, a->target, phase_option_unit_timeout(), ctx->deadline_usec, ret_msg);
}

static const ActionOps resolver_reload_ops = {
        .kind = "resolver-reload",
        .apply = reload_apply,
};

int resolver_reload_plan(Context *ctx, Plan *plan) {
        static const char *const units[] = { RESOLVED, NETWORKMANAGER };
        const Action *cause = NULL;

        for (size_t i = 0; i < plan->n_actions && !cause; i++)
                if (resolver_input(plan->actions[i]))
                        cause = plan->actions[i];
        if (!cause)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                Action *a = plan_add(plan, &resolver_reload_ops, "reload", units[i], cause->reason, NULL);

                if (!a || action_set_detail(a, "%s if it runs: the run changes %s",
                                            i == 0 ? "restart" : "Reload(0) over D-Bus", cause->target) < 0)
                        return -ENOMEM;
                a->present = true;
        }
        return 0;
}
