/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the network phase's files share: the one observation of the namespace, and its planners. */
#pragma once

#include "agent/config/manifest.h"
#include "agent/engine/plan.h"
#include "netreset/guard.h"
#include "netreset/link.h"
#include "netreset/route.h"
#include "netreset/fib-rule.h"
#include "netreset/nl.h"

/* One dump per object type, and the guard worked out from them. */
typedef struct NetworkObservation {
        NlSocket *rtnl;
        LinkTable *links;
        RouteTable *routes;
        RuleTable *rules;
        Guard *guard;
} NetworkObservation;

/* A "route" action for r (copied), refused when the guard holds it. */
int network_plan_route(Plan *plan, const NetworkObservation *o, const RouteInfo *r, const char *reason);

/* The first link or link-master line that selects l, or NULL. */
const ManifestEntry *network_link_selected_by(const Manifest *m, const LinkTable *t, const LinkInfo *l);

/* A tunnel driver's fallback device (tunl0, sit0), which cannot be deleted: 1 when it is up or has
 * addresses (not yet reset), 0 when down with none; *ret_n_addrs its address count. -errno. */
int network_fallback_state(NlSocket *rtnl, const LinkInfo *l, int *ret_n_addrs);

/* phase-network-bpf.c: tc/XDP programs on the links the node keeps, programs on the CNIs' cgroup
 * roots, pins. */
bool network_bpf_wanted(const Manifest *m);
int network_bpf_plan(Context *ctx, Plan *plan, const NetworkObservation *o, char **reterr);

/* phase-network-rule.c: the CNIs' policy rules and the routes of their tables. */
int network_rule_plan(Plan *plan, const NetworkObservation *o, const Manifest *m);
/* The routes the guard is to weigh: all but those of tables that only a CNI's rules look up, which
 * unmarked traffic (the management path) never reaches. A shallow view into routes: free the array
 * only. */
int network_rule_guard_view(const RuleTable *rules, const RouteTable *routes, const LinkTable *links, const Manifest *m,
                            RouteTable *ret);

/* phase-network-vip.c: the address a kube-vip line's static pod manifest put on its interface. */
int network_vip_plan(Context *ctx, Plan *plan, const NetworkObservation *o, const ManifestEntry *e);

/* phase-network-conntrack.c: connection tracking entries of the cluster's ranges (conntrack lines). */
int network_conntrack_plan(Context *ctx, Plan *plan, char **reterr);
