/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's policy routing: the rules a CNI added ("rule-table" lines) and the routes of its tables. */

/* Ownership. A rule is a CNI's only when every selector has the shape of the CNI's own rule
 * (rule_matches()): it looks up a table a "rule-table" line names, with the same "not" flag
 * ("!MARK/MASK"), no iif, oif, "to" or other selector, and, when the line gives MARK/MASK (and
 * PREF), exactly that fwmark and mask, no "from" (and that priority): a host rule "not fwmark
 * 0x200/0xf00 lookup 2004" is not cilium's, and it makes table 2004 the host's too. Only the
 * attributes fib-rule.c reads count as understood: a rule with any other (a newer kernel's "dscp 46",
 * a flow label, a port mask) is the host's. A "from" prefix must lie inside a pod or service range
 * the node's configuration names (cluster-cidrs.h, read into the observation): kube-router's "from
 * <its pod CIDR> lookup 77" is its own, the host's "from 10.0.0.0/24 lookup 77" is not, and with no
 * range known no rule with a "from" is a CNI's. The kernel's
 * own tables (main, local, default) can never be named. The shipped lines, from the CNIs' sources:
 * - cilium (pkg/datapath/linux/linux_defaults): pref 9 fwmark 0x200/0xf00 lookup 2004 (to the proxy),
 *   pref 10 fwmark 0xa00/0xf00 and 0xb00/0xf00 lookup 2005 (from the proxy; bpf/init.sh
 *   PROXY_RT_TABLE, whose table holds "default via <cilium_host ip> dev cilium_host"), IPsec table 200 behind marks
 * 0xd00 and 0xe00, WireGuard table 201 behind 0xe00 (mask 0xf00 each);
 * - calico (felix config WireguardRoutingRulePriority = 99): pref 99 not fwmark 0x100000/0x100000
 *   lookup 1 ("rule-table 1 !0x100000/0x100000 99"), the first table of its default RouteTableRange and the first bit
 * of its mark mask;
 * - kube-router: tables 77 ("kube-router", from the pod CIDR), 78 ("kube-router-dsr", DSR fwmarks)
 *   and 79 ("external_ip"), with no mark of their own to match.
 * The routes of a table go with it when the table is the CNI's: a line without a mark owns its
 * table outright; a line with one owns the table only while a rule it matches looks it up (calico's
 * table 1 could be anybody's otherwise). Either way, a table that any other rule also looks up is
 * not the CNI's alone, and its routes stay.
 *
 * The guard. A rule whose table holds a route the guard keeps (a default route, the route to the
 * SSH client) carries the management path and is refused, and so is such a route. The guard
 * itself ignores the routes of tables only CNI rules reach (network_rule_guard_view()): unmarked
 * traffic, the management path, never takes them. */

#include <errno.h>
#include <linux/fib_rules.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/base/log.h"
#include "agent/phases/network/network-rule.h"
#include "agent/phases/network/network-routes.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

#define PHASE "network"

static int entry_match(const ManifestEntry *e, RuleMatch *ret) {
        return rule_match_from_args(e->args, e->n_args, ret);
}

/* Is the rule's "from" prefix (if any) inside one of the cluster's ranges? ("to" never matches: rule_matches()) */
static bool rule_source_in_ranges(const NetworkObservation *o, const RuleInfo *r) {
        if (r->src_len == 0)
                return true;
        for (size_t i = 0; i < o->n_ranges; i++) {
                const CtPrefix *p = &o->ranges[i];

                if (p->family == r->family && r->src_len >= p->len && ct_prefix_contains(p, r->family, r->src))
                        return true;
        }
        return false;
}

/* The first "rule-table" line that owns this rule, or NULL. */
static const ManifestEntry *rule_owner(const NetworkObservation *o, const Manifest *m, const RuleInfo *r) {
        if (!rule_source_in_ranges(o, r))
                return NULL;
        MANIFEST_FOREACH(e, m, DIRECTIVE_RULE_TABLE) {
                RuleMatch rm;

                if (entry_match(e, &rm) >= 0 && rule_matches(r, &rm))
                        return e;
        }
        return NULL;
}

/* The line that makes table (of family) a CNI's, or NULL; *ret_foreign names a rule of someone else
 * that also looks it up. */
static const ManifestEntry *table_owner(const NetworkObservation *o, const Manifest *m, uint32_t table,
                                        const RuleInfo **ret_foreign) {
        const ManifestEntry *owner = NULL;

        *ret_foreign = NULL;
        /* A VRF's table is the VRF's, whatever number a CNI also uses (cilium's 2004 is a common
         * one to pick): the number alone never makes it a CNI's. */
        if (link_table_vrf_of(o->links, table))
                return NULL;
        for (size_t i = 0; i < o->rules->n; i++) {
                const RuleInfo *r = &o->rules->rules[i];
                const ManifestEntry *e;

                if (r->action != FR_ACT_TO_TBL || r->table != table)
                        continue;
                e = rule_owner(o, m, r);
                if (!e) {
                        *ret_foreign = r;
                        return NULL;
                }
                owner = owner ?: e;
        }
        if (owner)
                return owner;
        MANIFEST_FOREACH(e, m, DIRECTIVE_RULE_TABLE) {
                RuleMatch rm;

                if (entry_match(e, &rm) >= 0 && rm.table == table && rm.fwmask == 0 && rm.priority == 0)
                        return e;
        }
        return NULL;
}

int network_rule_guard_view(const NetworkObservation *o, const Manifest *m, RouteTable *ret) {
        RouteInfo *v = calloc(o->routes->n + 1, sizeof *v);
        const RuleInfo *foreign;
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < o->routes->n; i++)
                if (!table_owner(o, m, o->routes->routes[i].table, &foreign))
                        v[n++] = o->routes->routes[i];
        *ret = (RouteTable) { .routes = v, .n = n };
        return 0;
}

/* ---- rules ---- */

static void rule_data_free(void *p) {
        rule_info_done(p);
        free(p);
}

static void rule_apply_batch(Action **actions, size_t n, Context *ctx) {
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        int r;

        r = nl_open(NETLINK_ROUTE, &rtnl);
        for (size_t i = 0; i < n; i++) {
                cleanup_free char *extack = NULL;
                int k;

                if (!actions[i]->data) {
                        action_recordf(actions[i], 0, "no rule matches");
                        continue;
                }
                /* The whole dumped rule is echoed: the kernel deletes it only if every attribute
                 * still matches, so a rule changed since the plan stays. */
                k = r < 0 ? r : rule_delete(rtnl, actions[i]->data, &extack);
                if (k < 0)
                        action_recordf(actions[i], k, "%s%s%s%s%s", r < 0 ? "cannot open a rtnetlink socket: " : "",
                                       strerror(-k), extack ? " (" : "", strempty(extack), extack ? ")" : "");
                else
                        action_recordf(actions[i], k, k > 0 ? "deleted" : "already gone");
        }
}

static int rule_check(Action *a, Context *ctx, char **ret_msg) {
        CLEANUP(rule_table_freep) RuleTable *t = NULL;
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        int r;

        if (!a->data)
                return 0;
        r = nl_open(NETLINK_ROUTE, &rtnl);
        if (r >= 0)
                r = rule_table_read(rtnl, &t, NULL);
        if (r < 0)
                return r;
        for (size_t i = 0; i < t->n; i++)
                if (rule_same(&t->rules[i], a->data)) {
                        *ret_msg = strdup("still present");
                        return 1;
                }
        return 0;
}

static const ActionOps rule_ops = {
        .kind = "rule",
        .apply_batch = rule_apply_batch,
        .check = rule_check,
        .free_data = rule_data_free,
};

/* The first route the guard keeps in the rule's table, or NULL. */
static const RouteInfo *guarded_route_in(const NetworkObservation *o, const RuleInfo *r, const char **ret_why) {
        for (size_t i = 0; i < o->routes->n; i++) {
                const RouteInfo *rt = &o->routes->routes[i];

                if (rt->family == r->family && rt->table == r->table && (*ret_why = guard_route_reason(o->guard, rt)))
                        return rt;
        }
        return NULL;
}

static int plan_rule(Plan *plan, const NetworkObservation *o, const RuleInfo *r, const ManifestEntry *e) {
        cleanup_free char *reason = manifest_entry_reason(e), *target = rule_to_string(r), *what = NULL;
        const RouteInfo *held;
        const LinkInfo *vrf;
        const char *why = NULL;
        RuleInfo *d;
        Action *a;
        int k;

        d = calloc(1, sizeof *d);
        if (!d || !reason || !target || (k = rule_info_copy(r, d)) < 0) {
                free(d);
                return -ENOMEM;
        }
        a = plan_add(plan, &rule_ops, PHASE, target, reason, d);
        if (!a)
                return -ENOMEM;
        k = action_set_detail(a, "looks up table %u, which a CNI owns", r->table);
        vrf = link_table_vrf_of(o->links, r->table);
        held = guarded_route_in(o, r, &why);
        if (k >= 0 && vrf)
                k = action_set_skip_code(a, "vrf", "refused: table %u is VRF %s's table, not the CNI's", r->table,
                                         vrf->name);
        else if (k >= 0 && held) {
                what = route_to_string(held);
                k = action_set_skip(a, "refused: its table %u holds %s, which %s", r->table, strna(what), why);
        }
        return k;
}

static int plan_rule_placeholder(Plan *plan, const ManifestEntry *e) {
        cleanup_free char *reason = manifest_entry_reason(e), *target = NULL;
        Action *a;

        if (!reason)
                return -ENOMEM;
        target = strprintf("rules looking up table %s%s%s", e->args[0], e->n_args > 1 ? " fwmark " : "",
                           e->n_args > 1 ? e->args[1] : "");
        if (!target)
                return -ENOMEM;
        a = plan_add(plan, &rule_ops, PHASE, target, reason, NULL);
        if (!a)
                return -ENOMEM;
        a->present = false;
        return action_set_detail(a, "no rule matches (IPv4, IPv6)");
}

static int plan_rules(Plan *plan, const NetworkObservation *o, const Manifest *m) {
        cleanup_free bool *used = calloc(m->n_entries + 1, sizeof(bool));
        int k;

        if (!used)
                return -ENOMEM;
        for (size_t i = 0; i < o->rules->n; i++) {
                const ManifestEntry *e = rule_owner(o, m, &o->rules->rules[i]);

                if (!e)
                        continue;
                used[e - m->entries] = true;
                k = plan_rule(plan, o, &o->rules->rules[i], e);
                if (k < 0)
                        return k;
        }
        MANIFEST_FOREACH(e, m, DIRECTIVE_RULE_TABLE)
                if (!used[e - m->entries] && (k = plan_rule_placeholder(plan, e)) < 0)
                        return k;
        return 0;
}

/* ---- the routes of the CNIs' tables ---- */

static bool table_seen(const uint32_t *tables, size_t n, uint32_t t) {
        for (size_t i = 0; i < n; i++)
                if (tables[i] == t)
                        return true;
        return false;
}

static bool manifest_names_table(const Manifest *m, uint32_t table) {
        MANIFEST_FOREACH(e, m, DIRECTIVE_RULE_TABLE) {
                RuleMatch rm;

                if (entry_match(e, &rm) >= 0 && rm.table == table)
                        return true;
        }
        return false;
}

static int plan_table_routes(Plan *plan, const NetworkObservation *o, const Manifest *m) {
        cleanup_free uint32_t *warned = calloc(o->routes->n + 1, sizeof(uint32_t));
        size_t n_warned = 0;

        if (!warned)
                return -ENOMEM;
        for (size_t i = 0; i < o->routes->n; i++) {
                const RouteInfo *rt = &o->routes->routes[i];
                cleanup_free char *reason = NULL;
                const ManifestEntry *e;
                const RuleInfo *foreign;
                int k;

                e = table_owner(o, m, rt->table, &foreign);
                if (!e) {
                        const LinkInfo *vrf = link_table_vrf_of(o->links, rt->table);

                        if ((foreign || vrf) && manifest_names_table(m, rt->table) &&
                            !table_seen(warned, n_warned, rt->table)) {
                                warned[n_warned++] = rt->table;
                                if (vrf)
                                        log_info("network: table %u is VRF %s's table: its routes stay", rt->table,
                                                 vrf->name);
                                else
                                        log_info("network: table %u is also looked up by a rule the CNIs did not "
                                                 "add; its routes stay",
                                                 rt->table);
                        }
                        continue;
                }
                reason = manifest_entry_reason(e);
                if (!reason)
                        return -ENOMEM;
                k = network_plan_route(plan, o, rt, reason);
                if (k < 0)
                        return k;
        }
        return 0;
}

int network_rule_plan(Plan *plan, const NetworkObservation *o, const Manifest *m) {
        int k;

        k = plan_rules(plan, o, m);
        if (k < 0)
                return k;
        return plan_table_routes(plan, o, m);
}
