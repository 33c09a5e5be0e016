/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firewall phase's IPVS lines: kube-proxy's virtual services one by one ("ipvs clear"), or all of them ("ipvs
 * flush-all"). */

#include <errno.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "agent/phases/phases.h"
#include "agent/base/log.h"
#include "agent/phases/firewall/firewall-ipvs-select.h"
#include "agent/config/node-addresses.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/addr.h"
#include "netreset/link.h"
#include "string-util.h"

#define PHASE "firewall"
#define KUBE_IPVS_LINK "kube-ipvs0"

/* ---- flush-all ---- */

static int flush_apply(Action *a, Context *ctx, char **ret_msg) {
        int r;

        r = ipvs_flush(ret_msg);
        if (r == -EPROTONOSUPPORT) {
                free(*ret_msg);
                *ret_msg = strdup("IPVS not present in this kernel");
                return 0;
        }
        if (r >= 0)
                *ret_msg = strdup(r > 0 ? "cleared every virtual service" : "no virtual services");
        return r;
}

static int flush_check(Action *a, Context *ctx, char **ret_msg) {
        unsigned n = 0;
        int r;

        r = ipvs_count_services(&n, NULL);
        if (r == -EPROTONOSUPPORT)
                return 0;
        if (r < 0)
                return r;
        if (n > 0)
                *ret_msg = strprintf("%u virtual service%s remain", n, n == 1 ? "" : "s");
        return n > 0;
}

static const ActionOps flush_ops = {
        .kind = "ipvs",
        .apply = flush_apply,
        .check = flush_check,
};

/* ---- one service of kube-proxy's ---- */

static int service_apply(Action *a, Context *ctx, char **ret_msg) {
        int r;

        /* The service is named by its whole key: another one in its place is another key. */
        r = ipvs_delete_service(a->data, ret_msg);
        if (r >= 0)
                *ret_msg = strdup(r > 0 ? "deleted" : "already gone");
        return r;
}

static int service_check(Action *a, Context *ctx, char **ret_msg) {
        cleanup_free IpvsService *v = NULL;
        size_t n = 0;
        int r;

        r = ipvs_list_services(&v, &n, NULL);
        if (r == -EPROTONOSUPPORT)
                return 0;
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (memcmp(&v[i], a->data, sizeof v[i]) == 0) {
                        *ret_msg = strdup("still present");
                        return 1;
                }
        return 0;
}

static const ActionOps service_ops = {
        .kind = "ipvs",
        .apply = service_apply,
        .check = service_check,
        .free_data = free,
};

/* ---- the view: kube-ipvs0's addresses and the node's own ---- */

typedef struct View {
        IpvsAddr *ipvs0, *node;
        size_t n_ipvs0, n_node;
        uint16_t port_min, port_max;
} View;

static void view_done(View *v) {
        free(v->ipvs0);
        free(v->node);
}

static int view_push(IpvsAddr **v, size_t *n, const AddrInfo *a) {
        IpvsAddr *w = reallocarray(*v, *n + 1, sizeof *w);

        if (!w)
                return -ENOMEM;
        *v = w;
        w[*n] = (IpvsAddr) { .family = a->family };
        memcpy(w[*n].bytes, a->has_local ? a->local : a->address, sizeof w[*n].bytes);
        (*n)++;
        return 0;
}

static int view_read(View *v, char **reterr) {
        CLEANUP(link_table_freep) LinkTable *links = NULL;
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        int r;

        r = nl_open(NETLINK_ROUTE, &rtnl);
        if (r >= 0)
                r = link_table_read(rtnl, &links, reterr);
        for (size_t i = 0; r >= 0 && links && i < links->n; i++) {
                CLEANUP(addr_list_freep) AddrList *l = NULL;
                bool ipvs0 = streq(links->links[i].name, KUBE_IPVS_LINK);

                r = addr_list_read(rtnl, links->links[i].ifindex, &l, reterr);
                if (r == -ENODEV) {
                        r = 0;
                        continue;
                }
                for (size_t j = 0; r >= 0 && j < l->n; j++)
                        r = ipvs0 ? view_push(&v->ipvs0, &v->n_ipvs0, &l->addrs[j])
                                  : view_push(&v->node, &v->n_node, &l->addrs[j]);
        }
        return r;
}

/* One row per service: kube-proxy's planned, the others kept with the reason. */
static int plan_services(Plan *plan, const IpvsService *svcs, size_t n, const View *v, const char *reason) {
        const IpvsOwnerView ov = {
                v->ipvs0, v->n_ipvs0, v->node, v->n_node, KUBE_PROXY_NODEPORT_MIN, KUBE_PROXY_NODEPORT_MAX
        };
        int r = 0;

        for (size_t i = 0; i < n && r >= 0; i++) {
                cleanup_free char *target = ipvs_service_to_string(&svcs[i]);
                const char *owner = ipvs_service_owner(&svcs[i], &ov);
                IpvsService *d = owner ? malloc(sizeof *d) : NULL;
                Action *a;

                if (!target || (owner && !d)) {
                        free(d);
                        return -ENOMEM;
                }
                if (d)
                        *d = svcs[i];
                a = plan_add(plan, &service_ops, PHASE, target, reason, d);
                if (!a)
                        return -ENOMEM;
                a->present = owner != NULL;
                r = owner ? action_set_detail(a, "%s", owner)
                          : action_set_skip_code(a, "kept", "kept: not kube-proxy's (not on %s, not a NodePort)",
                                                 KUBE_IPVS_LINK);
        }
        return r;
}

/* kube-proxy's NodePort range: the API server's, where its static pod is on this node. */
static int view_port_range(Context *ctx, View *v) {
        cleanup_free char *range = NULL;
        int r;

        v->port_min = KUBE_PROXY_NODEPORT_MIN;
        v->port_max = KUBE_PROXY_NODEPORT_MAX;
        r = node_apiserver_flag(ctx->root_fd, "service-node-port-range", &range);
        if (r < 0)
                return r;
        if (range && ipvs_port_range_parse(range, &v->port_min, &v->port_max) < 0)
                log_warning("firewall: the API server's --service-node-port-range '%s' does not parse; "
                            "NodePorts are taken as %u-%u",
                            range, KUBE_PROXY_NODEPORT_MIN, KUBE_PROXY_NODEPORT_MAX);
        return 0;
}

static int plan_clear(Context *ctx, Plan *plan, const char *reason) {
        cleanup_free IpvsService *svcs = NULL;
        cleanup_free char *err = NULL;
        View v = {};
        size_t n = 0;
        Action *a;
        int r;

        r = ipvs_list_services(&svcs, &n, &err);
        if (r >= 0 && n > 0)
                r = view_port_range(ctx, &v);
        if (r >= 0 && n > 0)
                r = view_read(&v, &err);
        if (r >= 0 && n > 0)
                r = plan_services(plan, svcs, n, &v, reason);
        view_done(&v);
        if (r >= 0 && n > 0)
                return 0;
        if (r == -ENOMEM)
                return r;
        a = plan_add(plan, &flush_ops, PHASE, "ipvs", reason, NULL);
        if (!a)
                return -ENOMEM;
        a->present = false;
        if (r == -EPROTONOSUPPORT)
                return action_set_skip_code(a, "unsupported", "IPVS not present in this kernel");
        if (r < 0)
                return action_set_skip(a, "cannot list IPVS services: %s", err ?: strerror(-r));
        return action_set_detail(a, "no virtual services");
}

static int plan_flush(Plan *plan, const char *reason) {
        cleanup_free char *err = NULL;
        unsigned n = 0;
        Action *a;
        int r;

        a = plan_add(plan, &flush_ops, PHASE, "ipvs", reason, NULL);
        if (!a)
                return -ENOMEM;
        /* ipvs_count_services() looks at /proc/net/ip_vs first and never resolves the family then. */
        r = ipvs_count_services(&n, &err);
        if (r == -EPROTONOSUPPORT) {
                a->present = false;
                return action_set_skip_code(a, "unsupported", "IPVS not present in this kernel");
        }
        if (r < 0) {
                a->present = false;
                return action_set_skip(a, "cannot list IPVS services: %s", err ?: strerror(-r));
        }
        a->present = n > 0;
        return action_set_detail(a, "every virtual service (flush-all): %u", n);
}

int phase_firewall_ipvs_plan(Context *ctx, Plan *plan, const Manifest *m) {
        const ManifestEntry *last = NULL, *all = NULL;
        cleanup_free char *reason = NULL;

        MANIFEST_FOREACH(e, m, DIRECTIVE_IPVS) {
                last = e;
                if (streq(e->args[0], "flush-all"))
                        all = e;
        }
        if (!last)
                return 0;
        reason = manifest_entry_reason(all ?: last);
        if (!reason)
                return -ENOMEM;
        return all ? plan_flush(plan, reason) : plan_clear(ctx, plan, reason);
}
