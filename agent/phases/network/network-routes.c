/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's routes: the "route" rows of "route-proto" lines and of the CNIs' tables
 * (network_plan_route(), used by phase-network-rule.c too), refused where the guard keeps one. */

#include <arpa/inet.h>
#include <errno.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/base/log.h"
#include "agent/engine/context.h"
#include "agent/phases/network/network-routes.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/addr.h"
#include "netreset/guard.h"
#include "netreset/link.h"
#include "netreset/route.h"
#include "string-util.h"
#include "strv.h"

#define PHASE "network"

typedef NetworkObservation Observation;

static void route_data_free(void *p) {
        route_info_done(p);
        free(p);
}

static void route_apply_batch(Action **actions, size_t n, Context *ctx) {
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        int r;

        r = nl_open(NETLINK_ROUTE, &rtnl);
        for (size_t i = 0; i < n; i++) {
                Action *a = actions[i];
                cleanup_free char *extack = NULL;
                int k;

                if (!a->data) {
                        action_recordf(a, 0, "no route with this protocol");
                        continue;
                }
                if (r < 0) {
                        network_record_errno(a, r, "cannot open a rtnetlink socket", NULL);
                        continue;
                }
                k = route_delete(rtnl, a->data, &extack);
                if (k < 0)
                        network_record_errno(a, k, NULL, extack);
                else
                        action_recordf(a, k, k > 0 ? "deleted" : "already gone");
        }
}

static int route_check(Action *a, Context *ctx, char **ret_msg) {
        CLEANUP(route_table_freep) RouteTable *t = NULL;
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        const RouteInfo *want = a->data;
        int r;

        if (!want)
                return 0;
        r = nl_open(NETLINK_ROUTE, &rtnl);
        if (r >= 0)
                r = route_table_read(rtnl, &t, NULL);
        if (r < 0)
                return r;
        for (size_t i = 0; i < t->n; i++)
                if (route_same_entry(&t->routes[i], want) && t->routes[i].protocol == want->protocol) {
                        *ret_msg = strdup("still present");
                        return 1;
                }
        return 0;
}

static const ActionOps route_ops = {
        .kind = "route",
        .apply_batch = route_apply_batch,
        .check = route_check,
        .free_data = route_data_free,
};

static const char *link_name(const LinkTable *t, int ifindex, char buf[static 32]) {
        const LinkInfo *l = link_table_by_index(t, ifindex);

        if (l)
                return l->name;
        snprintf(buf, 32, "ifindex %d", ifindex);
        return buf;
}

/* "via 192.0.2.1 dev eth1", "dev cali12 dev cali13", "no nexthop" (a blackhole). */
static int route_set_detail(Action *a, const RouteInfo *r, const LinkTable *links) {
        char gw[INET6_ADDRSTRLEN] = "", devs[256] = "", buf[32];
        size_t l = 0;

        if (r->has_gateway)
                (void) inet_ntop(r->family, r->gateway.bytes, gw, sizeof gw);
        for (size_t i = 0; i < r->n_oifs && l < sizeof devs; i++)
                l += (size_t) snprintf(devs + l, sizeof devs - l, "%sdev %s", i ? " " : "",
                                       link_name(links, r->oifs[i], buf));
        return action_set_detail(a, "%s%s%s%s", r->has_gateway ? "via " : "", gw, r->has_gateway && l ? " " : "",
                                 l                ? devs
                                 : r->has_gateway ? ""
                                                  : "no nexthop");
}

int network_plan_route(Plan *plan, const Observation *o, const RouteInfo *r, const char *reason) {
        cleanup_free char *target = NULL;
        const char *why;
        RouteInfo *d;
        Action *a;
        int k;

        target = route_to_string(r);
        d = calloc(1, sizeof *d);
        if (!target || !d) {
                free(d);
                return -ENOMEM;
        }
        k = route_info_copy(r, d);
        if (k < 0) {
                free(d);
                return k;
        }
        a = plan_add(plan, &route_ops, PHASE, target, reason, d);
        if (!a)
                return -ENOMEM;
        k = route_set_detail(a, r, o->links);
        why = guard_route_reason(o->guard, r);
        if (k >= 0 && why)
                k = action_set_skip(a, "refused: %s", why);
        return k;
}

int network_plan_route_entry(Plan *plan, const Observation *o, const ManifestEntry *e, char **reterr) {
        cleanup_free char *reason = manifest_entry_reason(e);
        cleanup_free char *target = NULL;
        unsigned matched = 0;
        Action *a;
        int proto, k;

        if (!reason)
                return -ENOMEM;
        proto = route_proto_from_string(e->args[0]);
        if (proto < 0)
                return set_errmsg(reterr, -EINVAL, "%s:%u: unknown routing protocol '%s' (give its number)", e->file,
                                  e->line, e->args[0]);
        if (asprintf(&target, "proto %s", e->args[0]) < 0)
                return -ENOMEM;
        if (proto == RTPROT_KERNEL || proto == RTPROT_UNSPEC) {
                a = plan_add(plan, &route_ops, PHASE, target, reason, NULL);
                if (!a)
                        return -ENOMEM;
                return action_set_skip(a, "refused: %s routes belong to addresses and links; delete those instead",
                                       e->args[0]);
        }
        for (size_t i = 0; i < o->routes->n; i++) {
                if (o->routes->routes[i].protocol != proto)
                        continue;
                k = network_plan_route(plan, o, &o->routes->routes[i], reason);
                if (k < 0)
                        return k;
                matched++;
        }
        if (matched > 0)
                return 0;
        a = plan_add(plan, &route_ops, PHASE, target, reason, NULL);
        if (!a)
                return -ENOMEM;
        a->present = false;
        return action_set_detail(a, "no route with protocol %s (IPv4, IPv6, all tables)", e->args[0]);
}
