/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's conntrack rows: entries to or from the cluster's pod and service ranges and
 * NodeLocal DNS's address. A rejoined node's first connections to a reused service or pod address
 * would otherwise follow a stale entry's NAT to an endpoint that no longer exists. One row per range;
 * the entries are dumped again when the row acts. */

#include <linux/netlink.h>

#include "agent/engine/context.h"
#include "agent/base/log.h"
#include "agent/config/cluster-cidrs.h"
#include "agent/phases/network/network-conntrack.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/conntrack.h"
#include "string-util.h"
#include "strv.h"

#define PHASE "network"

typedef struct CtData {
        CtPrefix prefix;
} CtData;

static int ct_run(const CtData *d, bool delete, unsigned *ret_n, char **ret_msg) {
        CLEANUP(nl_freep) NlSocket *nf = NULL;
        int r;

        *ret_n = 0;
        r = nl_open(NETLINK_NETFILTER, &nf);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot open a netfilter netlink socket: %s", strerror(-r));
        r = conntrack_flush(nf, &d->prefix, 1, delete, ret_n, ret_msg);
        if (r < 0 && ret_msg && !*ret_msg)
                (void) set_errmsg(ret_msg, r, "%s", strerror(-r));
        return r;
}

static int ct_apply(Action *a, Context *ctx, char **ret_msg) {
        unsigned n = 0;
        int r;

        /* "conntrack cluster" on a node whose files name no range: nothing to flush (said in the plan). */
        if (!a->data)
                return 0;
        r = ct_run(a->data, true, &n, ret_msg);
        if (r < 0)
                return r;
        (void) set_errmsg(ret_msg, 0, "%u entr%s deleted", n, n == 1 ? "y" : "ies");
        return n > 0;
}

static int ct_check(Action *a, Context *ctx, char **ret_msg) {
        unsigned n = 0;
        int r;

        if (!a->data)
                return 0;
        r = ct_run(a->data, false, &n, ret_msg);
        if (r < 0)
                return r;
        if (n > 0)
                (void) set_errmsg(ret_msg, 0, "%u entr%s left", n, n == 1 ? "y" : "ies");
        return n > 0;
}

static const ActionOps conntrack_ops = {
        .kind = "conntrack",
        .apply = ct_apply,
        .check = ct_check,
        .free_data = free,
};

static int add_row(Plan *plan, const char *cidr, const char *reason, const char *source, char ***planned) {
        CtData *d = calloc(1, sizeof *d);
        cleanup_free char *msg = NULL;
        unsigned n = 0;
        Action *a;
        int r;

        if (!d)
                return -ENOMEM;
        if (ct_prefix_parse(cidr, &d->prefix) < 0 || strv_contains(*planned, cidr)) {
                if (!strv_contains(*planned, cidr))
                        log_warning("%s: '%s' is no address range, ignoring", source, cidr);
                free(d);
                return 0;
        }
        if (strv_extend(planned, cidr) < 0 || !(a = plan_add(plan, &conntrack_ops, PHASE, cidr, reason, d)))
                return -ENOMEM;
        r = ct_run(d, false, &n, &msg);
        /* What cannot be counted is tried: the row acts and reports the failure. */
        a->present = r < 0 || n > 0;
        return r < 0 ? action_set_detail(a, "%s; cannot count the entries: %s", source, strna(msg))
                     : action_set_detail(a, "%s; %u entr%s", source, n, n == 1 ? "y" : "ies");
}

static int plan_cluster(Context *ctx, Plan *plan, const char *reason, char ***planned) {
        CLEANUP(cluster_cidrs_done) ClusterCidrs c = {};
        Action *a;
        int r;

        r = cluster_cidrs_read(ctx->root_fd, ctx->cni_config, &c);
        if (r < 0)
                return r;
        for (size_t i = 0; i < c.n; i++) {
                cleanup_free char *src =
                        strprintf("%s range from %s", cidr_kind_to_string(c.items[i].kind), c.items[i].source);

                if (!src)
                        return -ENOMEM;
                r = add_row(plan, c.items[i].cidr, reason, src, planned);
                if (r < 0)
                        return r;
        }
        if (c.n > 0)
                return 0;
        a = plan_add(plan, &conntrack_ops, PHASE, "cluster", reason, NULL);
        if (!a)
                return -ENOMEM;
        return action_set_detail(a, "no pod or service range in the node's configuration");
}

int network_conntrack_plan(Context *ctx, Plan *plan, char **reterr) {
        cleanup_strv char **planned = NULL;
        int r = 0;

        MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_CONNTRACK) {
                cleanup_free char *reason = manifest_entry_reason(e);

                if (!reason)
                        return -ENOMEM;
                if (streq(e->args[0], "cluster"))
                        r = plan_cluster(ctx, plan, reason, &planned);
                else
                        r = add_row(plan, e->args[0], reason, "the manifest's range", &planned);
                if (r < 0)
                        return set_errmsg(reterr, r, "network: cannot plan the conntrack flush: %s", strerror(-r));
        }
        return 0;
}
