/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase: CNI BPF programs, policy rules, routes, links and named network namespaces, never the
 * management path. */

/* Network state has no file-system root. This phase observes and changes the network namespace the
 * agent runs in, and ctx->root is ignored on purpose: --root relocates file-system state only. Named
 * namespaces are the real /run/netns (and /var/run/netns) for the same reason.
 *
 * The one file it reads is a kube-vip line's static pod manifest (phase-network-vip.c), beneath
 * ctx->root like every node file: what it names is then looked for in this namespace.
 *
 * Order inside the phase: BPF programs and pins (network-bpf.c), policy rules and the routes of
 * their tables (network-rule.c), then routes, then kube-vip's VIP addresses, then links, then
 * namespaces.
 * - Routes first, so that each "route-proto" route is deleted and reported by its own action. After
 *   the links, the routes through them would already have vanished and read "unchanged", while the
 *   routes through links that stay (a bird route via eth1) must be deleted anyway.
 * - Links next, in one batch: one IFLA_GROUP delete for all of them.
 * - Namespaces last. Removing the name of an empty namespace frees it, asynchronously, together with
 *   the veth ends inside, whose peers in this namespace then vanish behind the links' backs: their
 *   results would depend on timing. */

#include <arpa/inet.h>
#include <errno.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "agent/phases/phases.h"
#include "agent/base/log.h"
#include "agent/engine/phase.h"
#include "agent/config/cluster-cidrs.h"
#include "agent/phases/network/network-links.h"
#include "agent/phases/network/network-bpf.h"
#include "agent/phases/network/network-conntrack.h"
#include "agent/phases/network/network-rule.h"
#include "agent/phases/network/network-vip.h"
#include "agent/phases/network/network-routes.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/addr.h"
#include "netreset/guard.h"
#include "netreset/link.h"
#include "netreset/netns.h"
#include "netreset/route.h"
#include "string-util.h"
#include "strv.h"

#define PHASE "network"
#define NETNS_PIDS_SHOWN 4

typedef struct NetnsData {
        char *path;  /* NULL: a placeholder */
        int n_procs; /* processes inside when planned */
} NetnsData;

/* What the phase observes once (network/observation.h). */
typedef NetworkObservation Observation;

static void observation_done(Observation *o) {
        free(o->ranges);
        guard_free(o->guard);
        rule_table_free(o->rules);
        route_table_free(o->routes);
        link_table_free(o->links);
        nl_free(o->rtnl);
}

/* ---- named network namespaces ---- */

static void netns_data_free(void *p) {
        NetnsData *d = p;

        free(d->path);
        free(d);
}

static int netns_apply(Action *a, Context *ctx, char **ret_msg) {
        const NetnsData *d = a->data;
        int r;

        if (!d->path) {
                *ret_msg = strdup("no network namespace matches");
                return 0;
        }
        r = netns_delete(d->path, ret_msg);
        if (r < 0)
                return r;
        if (r == 0)
                *ret_msg = strdup("already gone");
        else if (d->n_procs > 0) {
                if (asprintf(ret_msg, "name deleted; %d process%s still inside keep%s the namespace alive", d->n_procs,
                             d->n_procs == 1 ? "" : "es", d->n_procs == 1 ? "s" : "") < 0)
                        *ret_msg = NULL;
        } else
                *ret_msg = strdup("deleted");
        return r;
}

static int netns_check(Action *a, Context *ctx, char **ret_msg) {
        const NetnsData *d = a->data;
        struct stat st;

        if (!d->path)
                return 0;
        if (lstat(d->path, &st) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        *ret_msg = strdup("still present");
        return 1;
}

static const ActionOps netns_ops = {
        .kind = "netns",
        .apply = netns_apply,
        .check = netns_check,
        .free_data = netns_data_free,
};

static int netns_set_plan_detail(Action *a, NetnsData *d, const NetnsProcs *procs) {
        pid_t pids[NETNS_PIDS_SHOWN];
        char list[NETNS_PIDS_SHOWN * 12 + 8] = "";
        size_t l = 0;
        int bound, n;

        bound = netns_is_bound(d->path);
        n = procs ? netns_procs_inside(procs, d->path, pids, ELEMENTSOF(pids)) : 0;
        d->n_procs = n > 0 ? n : 0;
        if (bound <= 0)
                return action_set_detail(a, "a stale name, not a mounted namespace");
        if (d->n_procs == 0)
                return action_set_detail(a, "no process inside");
        for (int i = 0; i < n && i < NETNS_PIDS_SHOWN; i++)
                l += (size_t) snprintf(list + l, sizeof list - l, "%s%d", i ? ", " : "", (int) pids[i]);
        return action_set_detail(a,
                                 "%d process%s still inside (pid %s%s): the name goes, the namespace lives on "
                                 "until they exit",
                                 n, n == 1 ? "" : "es", list, n > NETNS_PIDS_SHOWN ? ", ..." : "");
}

/* Each namespace path once, under the first line that names it. */
typedef struct NetnsPlanner {
        Plan *plan;
        char **dirs;
        const NetnsProcs *procs;
        char **planned;
} NetnsPlanner;

static int plan_netns_one(NetnsPlanner *p, const char *dir, const char *name, const char *reason, bool *planned) {
        NetnsData *d;
        Action *a;
        int k;

        d = calloc(1, sizeof *d);
        if (!d || asprintf(&d->path, "%s/%s", dir, name) < 0) {
                free(d);
                return -ENOMEM;
        }
        *planned = true;
        if (strv_contains(p->planned, d->path)) {
                netns_data_free(d);
                return 0;
        }
        k = strv_extend(&p->planned, d->path);
        if (k < 0) {
                netns_data_free(d);
                return -ENOMEM;
        }
        a = plan_add(p->plan, &netns_ops, PHASE, d->path, reason, d);
        if (!a)
                return -ENOMEM;
        return netns_set_plan_detail(a, d, p->procs);
}

static int plan_netns_entry(NetnsPlanner *p, const ManifestEntry *e) {
        cleanup_free char *reason = manifest_entry_reason(e);
        cleanup_free char *target = NULL;
        bool matched = false;
        Action *a;
        int k;

        if (!reason)
                return -ENOMEM;
        for (char **dir = p->dirs; *dir; dir++) {
                cleanup_strv char **names = NULL;

                k = netns_list(*dir, e->args[0], &names);
                if (k < 0)
                        return k;
                for (char **n = names; *n; n++) {
                        k = plan_netns_one(p, *dir, *n, reason, &matched);
                        if (k < 0)
                                return k;
                }
        }
        if (matched)
                return 0;
        if (asprintf(&target, "%s/%s", p->dirs[0], e->args[0]) < 0)
                return -ENOMEM;
        a = plan_add(p->plan, &netns_ops, PHASE, target, reason, calloc(1, sizeof(NetnsData)));
        if (!a || !a->data)
                return -ENOMEM;
        a->present = false;
        return action_set_detail(a, "no network namespace matches");
}

/* Every process's network namespace, from the planning pass's /proc (phase_procs()). */
static int netns_procs_of(Context *ctx, NetnsProcs **ret) {
        NetnsProcs *p = NULL;
        const ProcTable *t;
        int k;

        k = phase_procs(ctx, &t);
        if (k >= 0 && !(p = netns_procs_new()))
                k = -ENOMEM;
        for (size_t i = 0; k >= 0 && i < t->n; i++)
                if (t->procs[i].netns_known)
                        k = netns_procs_add(p, t->procs[i].netns_dev, t->procs[i].netns_ino, t->procs[i].pid);
        if (k < 0) {
                netns_procs_free(p);
                return k;
        }
        netns_procs_seal(p);
        *ret = p;
        return 0;
}

static int plan_netns(Context *ctx, Plan *plan, const Manifest *m, char **reterr) {
        NetnsPlanner p = { .plan = plan };
        NetnsProcs *procs = NULL;
        int k;

        k = netns_dirs(&p.dirs);
        if (k < 0)
                return k;
        /* Without /proc the plan cannot name the processes inside; the deletion does not need it. */
        k = netns_procs_of(ctx, &procs);
        if (k < 0)
                log_debug_errno(k, "Cannot scan /proc for network namespaces, ignoring: %m");
        p.procs = procs;
        k = 0;
        MANIFEST_FOREACH(e, m, DIRECTIVE_NETNS) {
                k = plan_netns_entry(&p, e);
                if (k < 0) {
                        (void) set_errmsg(reterr, k, "%s:%u: cannot list network namespaces: %s", e->file, e->line,
                                          strerror(-k));
                        break;
                }
        }
        netns_procs_free(procs);
        strv_free(p.planned);
        strv_free(p.dirs);
        return k;
}

/* ---- the phase ---- */

static bool manifest_has(const Manifest *m, DirectiveType a, DirectiveType b, DirectiveType c) {
        for (size_t i = 0; i < m->n_entries; i++)
                if (m->entries[i].type == a || m->entries[i].type == b || m->entries[i].type == c)
                        return true;
        return false;
}

/* The guard weighs every route but those of tables only a CNI's rules reach (network-rule.c):
 * cilium's table 2005 holds a default route via cilium_host that unmarked traffic never takes, and
 * which would otherwise guard cilium_host itself. */
static int observe_guard(Observation *o, const Manifest *m, char **reterr_msg) {
        const GuardOptions opts = { .ssh_connection = getenv("SSH_CONNECTION") };
        RouteTable view = {};
        int r;

        r = network_rule_guard_view(o, m, &view);
        if (r < 0)
                return r;
        r = guard_new(o->rtnl, o->links, &view, &opts, &o->guard, reterr_msg);
        free(view.routes);
        return r;
}

/* The cluster's ranges from the node's (or the tree's) configuration: what a rule's "from" must lie in. */
static int observe_ranges(const Context *ctx, Observation *o) {
        CLEANUP(cluster_cidrs_done) ClusterCidrs c = {};
        int r;

        r = cluster_cidrs_read(ctx->root_fd, ctx->cni_config, &c);
        return r < 0 ? r : cluster_cidrs_prefixes(&c, &o->ranges, &o->n_ranges);
}

static int observe(const Context *ctx, Observation *o, char **reterr) {
        const Manifest *m = ctx->manifest;
        cleanup_free char *extack = NULL;
        const char *what;
        int r;

        what = "read the cluster's address ranges";
        r = observe_ranges(ctx, o);
        if (r >= 0) {
                what = "open a rtnetlink socket";
                r = nl_open(NETLINK_ROUTE, &o->rtnl);
        }
        if (r >= 0) {
                what = "dump links";
                r = link_table_read(o->rtnl, &o->links, &extack);
        }
        if (r >= 0) {
                what = "dump routes";
                r = route_table_read(o->rtnl, &o->routes, &extack);
        }
        if (r >= 0) {
                what = "dump policy routing rules";
                r = rule_table_read(o->rtnl, &o->rules, &extack);
        }
        if (r >= 0) {
                what = "work out the management guard";
                r = observe_guard(o, m, &extack);
        }
        if (r < 0)
                return set_errmsg(reterr, r, "network: cannot %s: %s%s%s", what, strerror(-r), extack ? ": " : "",
                                  strempty(extack));
        return 0;
}

/* BPF objects first: cilium's own cleanup detaches its tc programs before it removes the pinned
 * maps they tail-call through, and both before the links go. Then the rules and the routes of
 * their tables, then the other routes, links and namespaces (see the top of this file). */
static int plan_observed(Context *ctx, Plan *plan, Observation *o, char **reterr) {
        const Manifest *m = ctx->manifest;
        int r;

        r = observe(ctx, o, reterr);
        if (r >= 0 && network_bpf_wanted(m))
                r = network_bpf_plan(ctx, plan, o, reterr);
        if (r >= 0)
                r = network_rule_plan(plan, o, m);
        MANIFEST_FOREACH(e, m, DIRECTIVE_ROUTE_PROTO) {
                if (r < 0)
                        break;
                r = network_plan_route_entry(plan, o, e, reterr);
        }
        MANIFEST_FOREACH(e, m, DIRECTIVE_KUBE_VIP) {
                if (r < 0)
                        break;
                r = network_vip_plan(ctx, plan, o, e);
        }
        if (r >= 0)
                r = network_plan_links(plan, o, m);
        return r;
}

int phase_network_plan(Context *ctx, Plan *plan, char **reterr) {
        const Manifest *m = ctx->manifest;
        Observation o = {};
        int r = 0;

        /* ctx->root is ignored: see the top of this file. */
        if (manifest_has(m, DIRECTIVE_LINK, DIRECTIVE_LINK_MASTER, DIRECTIVE_ROUTE_PROTO) ||
            manifest_has(m, DIRECTIVE_RULE_TABLE, DIRECTIVE_RULE_TABLE, DIRECTIVE_KUBE_VIP) || network_bpf_wanted(m)) {
                r = plan_observed(ctx, plan, &o, reterr);
                observation_done(&o);
        }
        if (r >= 0 && manifest_has(m, DIRECTIVE_NETNS, DIRECTIVE_NETNS, DIRECTIVE_NETNS))
                r = plan_netns(ctx, plan, m, reterr);
        /* Last: once the links are gone, nothing on the node makes new entries of these ranges. */
        if (r >= 0 && manifest_has(m, DIRECTIVE_CONNTRACK, DIRECTIVE_CONNTRACK, DIRECTIVE_CONNTRACK))
                return network_conntrack_plan(ctx, plan, reterr);
        if (r < 0)
                return set_errmsg(reterr, r, "network: cannot plan: %s", strerror(-r));
        return 0;
}
