/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's conntrack rows: entries to or from the cluster's pod and service ranges and
 * NodeLocal DNS's address. A rejoined node's first connections to a reused service or pod address
 * would otherwise follow a stale entry's NAT to an endpoint that no longer exists. One row per range,
 * all counted in one dump and deleted after one more (the kernel walks its whole table for each). */

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

typedef struct CtRow {
        Action *a;
        const CtData *d;
} CtRow;

/* One pass over the table for every row of rows that has a range: counted (delete false) or deleted,
 * each row's share in counts. */
static int ct_pass(const CtPrefix *prefixes, size_t n, bool delete, unsigned *counts, char **ret_msg) {
        CLEANUP(nl_freep) NlSocket *nf = NULL;
        unsigned total = 0;
        int r;

        r = nl_open(NETLINK_NETFILTER, &nf);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot open a netfilter netlink socket: %s", strerror(-r));
        r = conntrack_flush(nf, prefixes, n, delete, &total, counts, ret_msg);
        if (r < 0 && ret_msg && !*ret_msg)
                (void) set_errmsg(ret_msg, r, "%s", strerror(-r));
        return r;
}

/* Every row's range in one dump (and, when deleting, one pass of deletes): the kernel walks the whole
 * table for each dump, whatever it holds of this node. */
static int ct_rows_pass(Action **actions, size_t n, bool delete, unsigned *counts, char **ret_msg) {
        cleanup_free CtPrefix *p = calloc(n ?: 1, sizeof(CtPrefix));
        size_t k = 0;

        if (!p)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (actions[i]->data)
                        p[k++] = ((const CtData *) actions[i]->data)->prefix;
        if (k > CT_COUNT_MAX)
                return set_errmsg(ret_msg, -E2BIG, "more than %d ranges", CT_COUNT_MAX);
        return ct_pass(p, k, delete, counts, ret_msg);
}

static void ct_apply_batch(Action **actions, size_t n, Context *ctx) {
        cleanup_free unsigned *counts = calloc(n ?: 1, sizeof(unsigned));
        cleanup_free char *msg = NULL;
        int r = counts ? ct_rows_pass(actions, n, true, counts, &msg) : -ENOMEM;

        /* "conntrack cluster" on a node whose files name no range: nothing to flush (said in the plan). */
        for (size_t i = 0, k = 0; i < n; i++) {
                unsigned c;

                if (!actions[i]->data) {
                        action_record(actions[i], 0, NULL);
                        continue;
                }
                c = counts ? counts[k++] : 0;
                if (r < 0)
                        action_recordf(actions[i], r, "%s", strna(msg));
                else
                        action_recordf(actions[i], c > 0, "%u entr%s deleted", c, c == 1 ? "y" : "ies");
        }
}

static int ct_check(Action *a, Context *ctx, char **ret_msg) {
        unsigned n = 0;
        int r;

        if (!a->data)
                return 0;
        r = ct_pass(&((const CtData *) a->data)->prefix, 1, false, &n, ret_msg);
        if (r < 0)
                return r;
        if (n > 0)
                (void) set_errmsg(ret_msg, 0, "%u entr%s left", n, n == 1 ? "y" : "ies");
        return n > 0;
}

static const ActionOps conntrack_ops = {
        .kind = "conntrack",
        .apply_batch = ct_apply_batch,
        .check = ct_check,
        .free_data = free,
};

/* The row of one range; its entries are counted with the others' (ct_count_rows()). */
static int add_row(Plan *plan, const char *cidr, const char *reason, const char *source, char ***planned) {
        CtData *d = calloc(1, sizeof *d);
        Action *a;

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
        return action_set_detail(a, "%s", source);
}

/* The rows from first on, counted in one dump. What cannot be counted is tried: the rows act and
 * report the failure. */
static int ct_count_rows(Plan *plan, size_t first) {
        size_t n = plan->n_actions - first;
        cleanup_free unsigned *counts = calloc(n ?: 1, sizeof(unsigned));
        cleanup_free char *msg = NULL;
        int r;

        if (!counts)
                return -ENOMEM;
        r = ct_rows_pass(plan->actions + first, n, false, counts, &msg);
        for (size_t i = 0, k = 0; i < n; i++) {
                Action *a = plan->actions[first + i];
                unsigned c;

                if (!a->data)
                        continue;
                c = counts[k++];
                a->present = r < 0 || c > 0;
                if ((r < 0 ? action_set_detail(a, "%s; cannot count the entries: %s", strna(a->detail), strna(msg))
                           : action_set_detail(a, "%s; %u entr%s", strna(a->detail), c, c == 1 ? "y" : "ies")) < 0)
                        return -ENOMEM;
        }
        return 0;
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
        size_t first = plan->n_actions;
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
        r = ct_count_rows(plan, first);
        if (r < 0)
                return set_errmsg(reterr, r, "network: cannot plan the conntrack flush: %s", strerror(-r));
        return 0;
}
