/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's links: the CNIs' links deleted in one IFLA_GROUP batch (one by one where the
 * kernel or a peer needs it), tunnel drivers' fallback devices reset, never a link the guard keeps. */

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/base/log.h"
#include "agent/engine/context.h"
#include "agent/phases/phases.h"
#include "agent/phases/network/network-links.h"
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

static bool arg_group_delete = true; /* --no-group-delete turns off the IFLA_GROUP fast path */

typedef struct LinkData {
        int ifindex; /* 0: a placeholder for a manifest line that matched nothing */
        char name[IF_NAMESIZE];
        bool fallback; /* a tunnel driver's fallback device (tunl0, sit0, ...): reset, not deleted */
        /* Filled in when executing, from a fresh dump. */
        int peer;               /* a veth's peer in this namespace */
        uint32_t group;         /* the group it was in before we moved it */
        const char *why_single; /* why it is deleted one by one */
} LinkData;

static void link_record_gone(Action *a) {
        action_recordf(a, 0, "already gone");
}

/* Refresh what each action knows from a dump taken just now; those gone are settled here. */
static void link_refresh(Action **actions, size_t n, const LinkTable *now) {
        for (size_t i = 0; i < n; i++) {
                LinkData *d = actions[i]->data;
                const LinkInfo *l;

                if (!d || d->ifindex == 0) {
                        action_recordf(actions[i], 0, "no link matches");
                        continue;
                }
                /* An ifindex now carrying another name is another link: ours is gone. */
                l = link_table_by_index(now, d->ifindex);
                if (!l || !streq(l->name, d->name)) {
                        link_record_gone(actions[i]);
                        continue;
                }
                d->peer = streq(l->kind, "veth") ? l->lower : 0;
                d->group = l->group;
                d->why_single = isempty(l->kind) ? "it has no link kind, so no group delete" : NULL;
        }
}

/* The index of the member before i that is member i's veth peer in this namespace, or -1: deleting a
 * veth takes its peer along (veth_dellink()), so i needs no move into the group of its own. */
static ssize_t covering_peer(Action **group, size_t i) {
        const LinkData *d = group[i]->data;

        for (size_t j = 0; d->peer > 0 && j < i; j++) {
                const LinkData *o = group[j]->data;

                if (o->ifindex == d->peer && o->peer == d->ifindex)
                        return (ssize_t) j;
        }
        return -1;
}

/* Move the members listed in pick (n_pick of them) into group g; moved[] says which made it. The
 * number moved, or -errno when the messages could not be sent at all. */
static ssize_t link_move_into_group(NlSocket *rtnl, Action **group, const size_t *pick, size_t n_pick, uint32_t g,
                                    bool *moved) {
        cleanup_free int *ifindexes = calloc(n_pick + 1, sizeof(int));
        cleanup_free int *errors = calloc(n_pick + 1, sizeof(int));
        ssize_t n_moved = 0;
        int r;

        if (!ifindexes || !errors)
                return -ENOMEM;
        for (size_t k = 0; k < n_pick; k++)
                ifindexes[k] = ((LinkData *) group[pick[k]]->data)->ifindex;
        r = link_set_group(rtnl, ifindexes, n_pick, g, errors);
        if (r < 0)
                return r;
        for (size_t k = 0; k < n_pick; k++) {
                Action *a = group[pick[k]];

                if (errors[k] == -ENODEV)
                        link_record_gone(a);
                else if (errors[k] < 0)
                        network_record_errno(a, errors[k], "cannot move it into a deletion group", NULL);
                else {
                        moved[pick[k]] = true;
                        n_moved++;
                }
        }
        return n_moved;
}

/* One group, one RTM_DELLINK. Half the moves for veth pairs: of two peers both to be deleted, the
 * first listed is moved and takes the other along; the other is moved itself only when that failed.
 * Returns 0 when done (every member settled), or -errno when the group delete itself failed and
 * the members still pending must go one by one. */
static int link_delete_as_group(NlSocket *rtnl, const LinkTable *now, Action **group, size_t n) {
        cleanup_free ssize_t *peer = calloc(n + 1, sizeof(ssize_t));
        cleanup_free size_t *pick = calloc(n + 1, sizeof(size_t));
        cleanup_free bool *moved = calloc(n + 1, sizeof(bool));
        cleanup_free char *extack = NULL;
        uint32_t g = link_table_unused_group(now);
        size_t n_pick = 0, members = 0;
        ssize_t k;
        int r;

        if (!peer || !pick || !moved)
                return -ENOMEM;
        for (int round = 0; round < 2; round++) {
                n_pick = 0;
                for (size_t i = 0; i < n; i++) {
                        if (round == 0)
                                peer[i] = covering_peer(group, i);
                        if (round == 0 ? peer[i] < 0
                                       : peer[i] >= 0 && !moved[peer[i]] && group[i]->result == ACTION_PENDING)
                                pick[n_pick++] = i;
                }
                k = n_pick > 0 ? link_move_into_group(rtnl, group, pick, n_pick, g, moved) : 0;
                if (k < 0)
                        return (int) k;
                members += (size_t) k;
        }
        for (size_t i = 0; i < n; i++)
                if (peer[i] >= 0 && moved[peer[i]] && !moved[i])
                        members++;
        if (members == 0)
                return 0;
        r = link_delete_group(rtnl, g, &extack);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                if (group[i]->result != ACTION_PENDING)
                        continue;
                if (moved[i])
                        action_recordf(group[i], 1, "deleted by group delete (%zu links, one RTM_DELLINK)", members);
                else
                        action_recordf(group[i], 1,
                                       "deleted with its veth peer %s by group delete (%zu links, one "
                                       "RTM_DELLINK)",
                                       ((LinkData *) group[peer[i]]->data)->name, members);
        }
        return 0;
}

static const char *deleted_peer_of(Action **done, size_t n_done, int ifindex) {
        for (size_t i = 0; i < n_done; i++)
                if (((LinkData *) done[i]->data)->peer == ifindex)
                        return ((LinkData *) done[i]->data)->name;
        return NULL;
}

static void link_delete_single(NlSocket *rtnl, Action *a, const char *why) {
        LinkData *d = a->data;
        cleanup_free char *extack = NULL;
        int r, ignored;

        r = link_delete(rtnl, d->ifindex, &extack);
        if (r > 0)
                action_recordf(a, 1, "deleted one by one: %s", why);
        else if (r == 0)
                link_record_gone(a);
        else {
                network_record_errno(a, r, r == -EOPNOTSUPP ? "the kernel has no delete handler for this link" : NULL,
                                     extack);
                /* Leave no trace of the group delete that was tried first. */
                (void) link_set_group(rtnl, &d->ifindex, 1, d->group, &ignored);
        }
}

/* One by one, in plan order; a veth whose peer we just deleted went with it. */
static void link_delete_one_by_one(NlSocket *rtnl, Action **actions, size_t n, const char *why) {
        cleanup_free Action **done = calloc(n + 1, sizeof(Action *));
        size_t n_done = 0;

        for (size_t i = 0; i < n; i++) {
                Action *a = actions[i];
                LinkData *d = a->data;
                const char *peer;

                if (a->result != ACTION_PENDING)
                        continue;
                peer = done ? deleted_peer_of(done, n_done, d->ifindex) : NULL;
                if (peer) {
                        action_recordf(a, 1, "deleted with its peer %s", peer);
                        continue;
                }
                link_delete_single(rtnl, a, d->why_single ?: why);
                if (a->result == ACTION_CHANGED && done)
                        done[n_done++] = a;
        }
}

static const char *plural_es(int n) {
        return n == 1 ? "" : "es";
}

/* Back to how the module made it: no address, down. Both are tried; the first failure is kept. */
static void link_reset_fallback(NlSocket *rtnl, Action *a, const LinkInfo *l) {
        cleanup_free char *extack = NULL;
        bool up = l->flags & IFF_UP;
        int n, r = 0;

        n = addr_flush(rtnl, l->ifindex, &extack);
        if (up)
                r = link_set_down(rtnl, l->ifindex, &extack);
        if (n < 0 || r < 0)
                network_record_errno(a, n < 0 ? n : r,
                                     "fallback tunnel device: cannot be deleted, and resetting it failed", extack);
        else if (n == 0 && !up)
                action_recordf(a, 0, "fallback tunnel device: cannot be deleted; already down with no addresses");
        else
                action_recordf(a, 1, "fallback tunnel device: cannot be deleted; set down and %d address%s removed", n,
                               plural_es(n));
}

/* The kernel acknowledges RTM_DELLINK (alone or by group) for a tunnel driver's fallback device and
 * keeps it (ip_tunnel_dellink() skips it): a deletion counts once a dump no longer shows the link. */
static void link_verify_deleted(NlSocket *rtnl, Action **actions, size_t n) {
        CLEANUP(link_table_freep) LinkTable *now = NULL;
        int r, ignored;

        r = link_table_read(rtnl, &now, NULL);
        if (r < 0) {
                log_warning_errno(r, "Cannot dump links to verify their deletion, ignoring: %m");
                return;
        }
        for (size_t i = 0; i < n; i++) {
                LinkData *d = actions[i]->data;
                const LinkInfo *l;

                if (actions[i]->result != ACTION_CHANGED)
                        continue;
                l = link_table_by_index(now, d->ifindex);
                if (!l || !streq(l->name, d->name))
                        continue;
                /* Leave no trace of the group delete. */
                if (l->group != d->group)
                        (void) link_set_group(rtnl, &d->ifindex, 1, d->group, &ignored);
                if (link_is_tunnel_fallback(l))
                        link_reset_fallback(rtnl, actions[i], l);
                else
                        action_recordf(actions[i], -EBUSY, "the kernel kept the link");
        }
}

static void link_apply_batch(Action **actions, size_t n, Context *ctx) {
        CLEANUP(link_table_freep) LinkTable *now = NULL;
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        cleanup_free Action **group = calloc(n + 1, sizeof(Action *));
        cleanup_free char *extack = NULL;
        cleanup_free char *why = NULL;
        size_t n_group = 0;
        int r;

        r = nl_open(NETLINK_ROUTE, &rtnl);
        if (r >= 0)
                r = link_table_read(rtnl, &now, &extack);
        if (r >= 0 && !group)
                r = -ENOMEM;
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        network_record_errno(actions[i], r, "cannot observe links", extack);
                return;
        }
        link_refresh(actions, n, now);
        for (size_t i = 0; i < n; i++)
                if (actions[i]->result == ACTION_PENDING && !((LinkData *) actions[i]->data)->why_single)
                        group[n_group++] = actions[i];

        if (!arg_group_delete)
                why = strdup("group delete is disabled");
        else if (n_group > 0) {
                r = link_delete_as_group(rtnl, now, group, n_group);
                if (r == -EOPNOTSUPP)
                        why = strdup("group delete not supported by a member of the group");
                else if (r < 0 && asprintf(&why, "group delete failed: %s", strerror(-r)) < 0)
                        why = NULL;
                if (r < 0)
                        log_debug_errno(r, "Group delete of %zu links failed, deleting one by one: %m", n_group);
        }
        link_delete_one_by_one(rtnl, actions, n, why ?: "group delete failed");
        link_verify_deleted(rtnl, actions, n);
}

/* The state a fallback device is reset to, observed: 1 when it is up or has addresses. */
int network_fallback_state(NlSocket *rtnl, const LinkInfo *l, int *ret_n_addrs) {
        CLEANUP(addr_list_freep) AddrList *addrs = NULL;
        int r;

        r = addr_list_read(rtnl, l->ifindex, &addrs, NULL);
        if (r < 0)
                return r;
        *ret_n_addrs = (int) addrs->n;
        return (l->flags & IFF_UP) || addrs->n > 0;
}

static int link_check_fallback(const LinkData *d, char **ret_msg) {
        CLEANUP(link_table_freep) LinkTable *t = NULL;
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        const LinkInfo *l;
        int r, n = 0;

        r = nl_open(NETLINK_ROUTE, &rtnl);
        if (r >= 0)
                r = link_table_read(rtnl, &t, NULL);
        if (r < 0)
                return r;
        l = link_table_by_name(t, d->name);
        if (!l)
                return 0;
        r = network_fallback_state(rtnl, l, &n);
        if (r > 0 && asprintf(ret_msg, "fallback tunnel device still %s with %d address%s",
                              l->flags & IFF_UP ? "up" : "down", n, plural_es(n)) < 0)
                *ret_msg = NULL;
        return r;
}

static int link_check(Action *a, Context *ctx, char **ret_msg) {
        const LinkData *d = a->data;
        unsigned ifindex;

        if (!d || d->ifindex == 0)
                return 0;
        if (d->fallback)
                return link_check_fallback(d, ret_msg);
        ifindex = if_nametoindex(d->name);
        if (ifindex == 0)
                return errno == ENODEV || errno == ENXIO ? 0 : negative_errno();
        if (asprintf(ret_msg, "still present (ifindex %u)", ifindex) < 0)
                *ret_msg = NULL;
        return 1;
}

static const ActionOps link_ops = {
        .kind = "link",
        .apply_batch = link_apply_batch,
        .check = link_check,
        .free_data = free,
};

const ManifestEntry *network_link_selected_by(const Manifest *m, const LinkTable *t, const LinkInfo *l) {
        const LinkInfo *master = l->master ? link_table_by_index(t, l->master) : NULL;

        for (size_t i = 0; i < m->n_entries; i++) {
                const ManifestEntry *e = &m->entries[i];

                if (e->type == DIRECTIVE_LINK && link_pattern_match(e->args[0], l->name))
                        return e;
                if (e->type == DIRECTIVE_LINK_MASTER && master && link_pattern_match(e->args[0], master->name))
                        return e;
        }
        return NULL;
}

static int link_set_plan_detail(Action *a, const Observation *o, const LinkInfo *l, const ManifestEntry *e,
                                const ManifestEntry **selected) {
        const LinkInfo *peer = streq(l->kind, "veth") && l->lower ? link_table_by_index(o->links, l->lower) : NULL;
        const LinkInfo *master = l->master ? link_table_by_index(o->links, l->master) : NULL;
        char also[IF_NAMESIZE + 32] = "";

        /* A peer nobody asked for goes too: the plan says so. */
        if (peer && !selected[peer - o->links->links])
                snprintf(also, sizeof also, ", its veth peer %s goes with it", peer->name);
        if (e->type == DIRECTIVE_LINK_MASTER)
                return action_set_detail(a, "%s ifindex %d, enslaved to %s%s", strempty(l->kind), l->ifindex,
                                         master ? master->name : "?", also);
        return action_set_detail(a, "%s%sifindex %d, matches %s%s", strempty(l->kind), isempty(l->kind) ? "" : " ",
                                 l->ifindex, e->args[0], also);
}

/* Deleting it is still tried (the kernel may one day let it go); what is promised is the reset. */
static int link_set_fallback_plan_detail(Action *a, const Observation *o, const LinkInfo *l) {
        int r, n = 0;

        r = network_fallback_state(o->rtnl, l, &n);
        if (r < 0)
                return r;
        a->present = r > 0;
        if (!a->present)
                return action_set_detail(a,
                                         "%s ifindex %d, fallback tunnel device: cannot be deleted; already down "
                                         "with no addresses",
                                         l->kind, l->ifindex);
        return action_set_detail(a,
                                 "%s ifindex %d, fallback tunnel device: cannot be deleted; will be set down "
                                 "and its %d address%s removed",
                                 l->kind, l->ifindex, n, plural_es(n));
}

static int plan_link(Plan *plan, const Observation *o, const LinkInfo *l, const ManifestEntry *e,
                     const ManifestEntry **selected) {
        cleanup_free char *reason = manifest_entry_reason(e);
        const char *why;
        LinkData *d;
        Action *a;
        int k;

        d = calloc(1, sizeof *d);
        if (!d || !reason) {
                free(d);
                return -ENOMEM;
        }
        d->ifindex = l->ifindex;
        snprintf(d->name, sizeof d->name, "%s", l->name);
        d->fallback = link_is_tunnel_fallback(l);
        a = plan_add(plan, &link_ops, PHASE, l->name, reason, d);
        if (!a)
                return -ENOMEM;
        k = d->fallback ? link_set_fallback_plan_detail(a, o, l) : link_set_plan_detail(a, o, l, e, selected);
        why = guard_link_reason(o->guard, l->ifindex);
        if (k >= 0 && why)
                k = action_set_skip(a, "refused: %s", why);
        return k;
}

static int plan_link_placeholder(Plan *plan, const ManifestEntry *e) {
        cleanup_free char *reason = manifest_entry_reason(e);
        cleanup_free char *target = NULL;
        Action *a;

        if (!reason)
                return -ENOMEM;
        if (e->type == DIRECTIVE_LINK_MASTER && asprintf(&target, "ports of %s", e->args[0]) < 0)
                return -ENOMEM;
        a = plan_add(plan, &link_ops, PHASE, target ?: e->args[0], reason, calloc(1, sizeof(LinkData)));
        if (!a || !a->data)
                return -ENOMEM;
        a->present = false;
        return action_set_detail(a, "no link matches");
}

/* Ports of a bridge before everything else (k3s deletes cni0's veths, then cni0), then dump order.
 * The group delete does not care; one by one, a bridge then goes without ports to release. */
int network_plan_links(Plan *plan, const Observation *o, const Manifest *m) {
        cleanup_free const ManifestEntry **selected = calloc(o->links->n + 1, sizeof(ManifestEntry *));
        cleanup_free bool *used = calloc(m->n_entries + 1, sizeof(bool));
        int k = 0;

        if (!selected || !used)
                return -ENOMEM;
        for (size_t i = 0; i < o->links->n; i++) {
                selected[i] = network_link_selected_by(m, o->links, &o->links->links[i]);
                if (selected[i])
                        used[selected[i] - m->entries] = true;
        }
        for (int pass = 0; pass < 2 && k >= 0; pass++)
                for (size_t i = 0; i < o->links->n && k >= 0; i++)
                        if (selected[i] && (selected[i]->type == DIRECTIVE_LINK_MASTER) == (pass == 0))
                                k = plan_link(plan, o, &o->links->links[i], selected[i], selected);
        for (size_t i = 0; i < m->n_entries && k >= 0; i++)
                if ((m->entries[i].type == DIRECTIVE_LINK || m->entries[i].type == DIRECTIVE_LINK_MASTER) && !used[i])
                        k = plan_link_placeholder(plan, &m->entries[i]);
        return k;
}

static int parse_no_group_delete(const char *arg, char **reterr) {
        arg_group_delete = false;
        return 0;
}

/* The network phase's options: its only one is about links. */
const PhaseOption phase_network_options[] = {
        { "no-group-delete", PHASE_OPTION_NO_ARG, NULL, "Delete links one by one (no IFLA_GROUP fast path)",
          parse_no_group_delete },
        {},
};
