/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's tc, tcx and XDP rows: a CNI's programs on the links the node keeps, detached only
 * with the evidence that they are the CNI's (network-bpf.c). */

#include <errno.h>
#include <glob.h>
#include <linux/if_link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/base/log.h"
#include "agent/phases/network/network-bpf-netdev.h"
#include "agent/phases/network/network-bpf-owner.h"
#include "agent/phases/network/network-links.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/bpf.h"
#include "string-util.h"

#define PHASE "network"

static void record_errno(Action *a, int r, const char *what, char *extack) {
        char *msg = NULL;

        if (asprintf(&msg, "%s%s%s%s%s", strempty(what), what ? ": " : "", strerror(-r), extack ? ": " : "",
                     strempty(extack)) < 0)
                msg = NULL;
        free(extack);
        action_record(a, r, msg);
}

static void netdev_apply_batch(Action **actions, size_t n, Context *ctx) {
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        int r;

        r = nl_open(NETLINK_ROUTE, &rtnl);
        for (size_t i = 0; i < n; i++) {
                const BpfNetdevProg *p = actions[i]->data;
                char *extack = NULL;
                int k;

                if (r < 0) {
                        record_errno(actions[i], r, "cannot open a rtnetlink socket", NULL);
                        continue;
                }
                k = bpf_netdev_detach(rtnl, p, &extack);
                if (k == -ESTALE)
                        action_recordf(actions[i], 0, "another program is attached there now: left alone");
                else if (k == -EBUSY && p->link_id == 0 && p->hook != BPF_HOOK_TC_INGRESS &&
                         p->hook != BPF_HOOK_TC_EGRESS)
                        /* A BPF link this process cannot see (another namespace's) holds it. */
                        record_errno(actions[i], k, "attached through a BPF link that was not found", TAKE_PTR(extack));
                else if (k < 0)
                        record_errno(actions[i], k, NULL, TAKE_PTR(extack));
                else if (k > 0 && p->link_id > 0)
                        action_recordf(actions[i], k, "detached through BPF link %u", p->link_id);
                else
                        action_recordf(actions[i], k, k > 0 ? "detached" : "already detached");
                free(extack);
                if (k > 0 && (p->hook == BPF_HOOK_TC_INGRESS || p->hook == BPF_HOOK_TC_EGRESS)) {
                        int q = bpf_clsact_delete_if_empty(rtnl, p->ifindex, NULL);

                        if (q > 0)
                                action_recordf(actions[i], 1, "detached; the clsact qdisc of %s, now empty, deleted",
                                               p->ifname);
                        else if (q < 0)
                                log_warning_errno(q, "Cannot delete the empty clsact qdisc of %s, ignoring: %m",
                                                  p->ifname);
                }
        }
}

static int netdev_check(Action *a, Context *ctx, char **ret_msg) {
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        int r;

        r = nl_open(NETLINK_ROUTE, &rtnl);
        if (r >= 0)
                r = bpf_netdev_attached(rtnl, a->data);
        if (r > 0)
                *ret_msg = strdup("still attached");
        return r;
}

static const ActionOps netdev_ops = {
        .kind = "bpf-netdev",
        .apply_batch = netdev_apply_batch,
        .check = netdev_check,
        .free_data = free,
};

/* The programs of links the phase deletes go with them; a guarded link stays, and so its programs
 * are detached. */
static bool link_stays(const Manifest *m, const NetworkObservation *o, int ifindex) {
        const LinkInfo *l = link_table_by_index(o->links, ifindex);

        return !l || !network_link_selected_by(m, o->links, l) || guard_link_reason(o->guard, ifindex);
}

/* "tc filter pref 1 handle 0x1, program id 7", "XDP program id 7, generic mode", ... */
static char *netdev_describe(const BpfNetdevProg *p) {
        if (p->hook == BPF_HOOK_XDP && p->link_id > 0)
                return strprintf("XDP program id %u, %s mode, held by BPF link %u", p->prog_id,
                                 p->xdp_mode == XDP_FLAGS_SKB_MODE ? "generic" : "driver", p->link_id);
        if (p->hook == BPF_HOOK_XDP)
                return strprintf("XDP program id %u, %s mode", p->prog_id,
                                 p->xdp_mode == XDP_FLAGS_SKB_MODE   ? "generic"
                                 : p->xdp_mode == XDP_FLAGS_DRV_MODE ? "driver"
                                                                     : "offload");
        if (p->hook == BPF_HOOK_TCX_INGRESS || p->hook == BPF_HOOK_TCX_EGRESS)
                return p->link_id > 0 ? strprintf("tcx program id %u, held by BPF link %u", p->prog_id, p->link_id)
                                      : strprintf("tcx program id %u, attached without a link", p->prog_id);
        return strprintf("tc filter pref %u handle 0x%x, program id %u", p->info >> 16, p->handle, p->prog_id);
}

/* What ties a program named like the CNI's to the CNI, on a link that stays: its BPF link, itself
 * or one of its maps pinned under the CNI's "bpf-pin" paths. 1 with the evidence in ret_why, 0 none
 * (a host's program that happens to share the prefix, or one gone since), -errno. */
static int netdev_evidence(const BpfPinnedIds *pinned, const BpfNetdevProg *p, char **ret_why) {
        cleanup_free uint32_t *maps = NULL;
        size_t n = 0;
        int k;

        if (bpf_pinned_ids_contain(pinned, BPF_OBJ_LINK, p->link_id))
                *ret_why = strprintf("its BPF link %u is pinned under the CNI's pin paths", p->link_id);
        else if (bpf_pinned_ids_contain(pinned, BPF_OBJ_PROG, p->prog_id))
                *ret_why = strdup("it is pinned under the CNI's pin paths");
        else {
                k = bpf_prog_map_ids(p->prog_id, &maps, &n);
                if (k < 0)
                        return k == -ENOENT ? 0 : k;
                for (size_t i = 0; i < n && !*ret_why; i++)
                        if (bpf_pinned_ids_contain(pinned, BPF_OBJ_MAP, maps[i]))
                                *ret_why = strprintf("it uses map id %u, pinned under the CNI's pin paths", maps[i]);
                if (!*ret_why)
                        return 0;
        }
        return *ret_why ? 1 : -ENOMEM;
}

/* owned: the evidence that the program is the CNI's; without it (NULL) the row is there, skipped:
 * the program is left alone. */
static int plan_netdev_prog(Plan *plan, const BpfNetdevProg *p, const ManifestEntry *e, const char *owned) {
        cleanup_free char *reason = manifest_entry_reason(e), *target = NULL, *what = netdev_describe(p);
        BpfNetdevProg *d = malloc(sizeof *d);
        Action *a;

        if (d)
                *d = *p;
        if (!reason || !d || !what ||
            !(target = strprintf("%s from %s %s", p->prog_name, p->ifname, bpf_hook_to_string(p->hook)))) {
                free(d);
                return -ENOMEM;
        }
        a = plan_add(plan, &netdev_ops, PHASE, target, reason, d);
        if (!a)
                return -ENOMEM;
        if (owned)
                return action_set_detail(a, "%s; the CNI's: %s", what, owned);
        (void) action_set_detail(a, "%s", what);
        return action_set_skip_code(a, "not-owned",
                                    "named like the CNI's (%s) but neither it, its BPF link nor any of its maps is "
                                    "pinned under the CNI's pin paths: left alone",
                                    e->args[0]);
}

/* The ids of every object pinned at or beneath the "bpf-pin" paths, read once per plan. A path
 * that cannot be read is no evidence: its programs are then left alone. */
static int pinned_ids_read(const Manifest *m, BpfPinnedIds *ret) {
        MANIFEST_FOREACH(e, m, DIRECTIVE_BPF_PIN) {
                glob_t g = {};
                int k = 0;

                if (glob(e->args[0], GLOB_NOSORT, NULL, &g) == 0)
                        for (size_t i = 0; i < g.gl_pathc && k != -ENOMEM; i++) {
                                k = bpf_pinned_ids_collect(ret, g.gl_pathv[i]);
                                if (k < 0 && k != -ENOMEM)
                                        log_warning_errno(k, "Cannot read the pins at %s, ignoring: %m", g.gl_pathv[i]);
                        }
                globfree(&g);
                if (k == -ENOMEM)
                        return k;
        }
        return 0;
}

int network_bpf_plan_netdev(Plan *plan, const NetworkObservation *o, const Manifest *m, char **reterr) {
        CLEANUP(bpf_netdev_table_freep) BpfNetdevTable *t = NULL;
        CLEANUP(bpf_pinned_ids_done) BpfPinnedIds pinned = {};
        cleanup_free char *extack = NULL;
        int k;

        k = bpf_netdev_read(o->rtnl, o->links, &t, &extack);
        if (k < 0)
                return set_errmsg(reterr, k, "network: cannot list tc filters and XDP programs: %s%s%s", strerror(-k),
                                  extack ? ": " : "", strempty(extack));
        k = pinned_ids_read(m, &pinned);
        for (size_t i = 0; k >= 0 && i < t->n; i++) {
                const ManifestEntry *e = network_bpf_prog_owner(m, t->progs[i].prog_name);
                cleanup_free char *why = NULL;

                if (!e || !link_stays(m, o, t->progs[i].ifindex))
                        continue;
                k = netdev_evidence(&pinned, &t->progs[i], &why);
                if (k < 0)
                        return set_errmsg(reterr, k, "network: cannot read the maps of BPF program %u: %s",
                                          t->progs[i].prog_id, strerror(-k));
                k = plan_netdev_prog(plan, &t->progs[i], e, why);
        }
        return k;
}
