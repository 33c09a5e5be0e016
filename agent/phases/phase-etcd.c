/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The etcd phase: this node's member leaves its cluster before etcd is stopped and its data wiped,
 * as kubeadm reset's remove-etcd-member phase does, made safer: only the member the node's own files
 * name (by name and peer URLs), never the last one, never an external etcd, and within a deadline
 * whatever state the cluster is in. */

#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "agent/phases/etcd-member.h"
#include "agent/engine/phase.h"
#include "errno-util.h"
#include "macro.h"
#include "time-util.h"
#include "string-util.h"
#include "strv.h"

#define ETCD_PHASE_TIMEOUT_DEFAULT_USEC (30ULL * 1000000ULL)
#define REMOVE_RETRY_USEC (1000U * 1000U)

typedef struct MemberData {
        EtcdLocal local;
        uint64_t id; /* the member as planned; 0 when it was none or not known */
        int error;   /* why the cluster could not be asked, at plan time */
        char *error_msg;
} MemberData;

static void member_data_free(void *p) {
        MemberData *d = p;

        etcd_local_done(&d->local);
        free(d->error_msg);
        free(d);
}

static uint64_t phase_deadline(const Context *ctx) {
        uint64_t d = now(CLOCK_MONOTONIC) + (ctx->etcd_timeout_usec ?: ETCD_PHASE_TIMEOUT_DEFAULT_USEC);

        return ctx->deadline_usec > 0 && ctx->deadline_usec < d ? ctx->deadline_usec : d;
}

static const EtcdMember *find_local(const EtcdLocal *l, const EtcdMemberList *list) {
        for (size_t i = 0; i < list->n_members; i++)
                if (etcd_local_is(l, &list->members[i]))
                        return &list->members[i];
        return NULL;
}

static char *join_urls(char **l) {
        char *s = NULL;

        STRV_FOREACH(u, l) {
                char *n = strprintf("%s%s%s", s ?: "", s ? "," : "", *u);

                free(s);
                if (!(s = n))
                        return NULL;
        }
        return s;
}

static char *describe_member(const EtcdMember *m) {
        cleanup_free char *peers = join_urls(m->peer_urls);

        return strprintf("member %016" PRIx64 " %s, peer URLs %s%s", m->id, m->name, strna(peers),
                         m->is_learner ? ", learner" : "");
}

static char *names_of(const EtcdMemberList *list) {
        char *s = NULL;

        for (size_t i = 0; i < list->n_members; i++) {
                char *n = strprintf("%s%s%s", s ?: "", s ? ", " : "",
                                    *list->members[i].name ? list->members[i].name : "(unstarted)");
                free(s);
                if (!(s = n))
                        return NULL;
        }
        return s ?: strdup("none");
}

/* Remove through another member first: the member removed stops serving, and may cut its own answer. */
static int remove_order(const EtcdLocal *l, const EtcdMemberList *list, const EtcdMember *m, char ***ret) {
        int r = 0;

        for (size_t i = 0; i < list->n_members && r >= 0; i++)
                STRV_FOREACH(u, list->members[i].client_urls)
                        if (list->members[i].id != m->id && r >= 0)
                                r = strv_extend_unique(ret, *u);
        STRV_FOREACH(u, l->endpoints)
                if (r >= 0)
                        r = strv_extend_unique(ret, *u);
        return r;
}

/* One MemberRemove, asked of each endpoint until one answers. A member's verdict (not found, not
 * enough started members) is the cluster's: no other endpoint is asked then. */
static int remove_member(const EtcdLocal *l, char **endpoints, uint64_t id, uint64_t deadline,
                         EtcdMemberList *ret_after, char **reterr) {
        cleanup_free char *reasons = NULL;
        int r = -ENOENT;

        STRV_FOREACH(e, endpoints) {
                cleanup_free char *msg = NULL;
                EtcdClient *c = NULL;
                char *n;

                r = etcd_local_client(l, *e, deadline, &c);
                if (r >= 0)
                        r = etcd_member_remove(c, id, ret_after, &msg);
                etcd_client_free(c);
                if (r >= 0)
                        return 0;
                n = strprintf("%s%s%s: %s", reasons ?: "", reasons ? "; " : "", *e, msg ?: strerror(-r));
                if (!n)
                        return -ENOMEM;
                free(reasons);
                reasons = n;
                if (r == -ENOENT || r == -EBUSY || r == -EPERM || r == -ETIME)
                        break;
        }
        return set_errmsg(reterr, r, "%s", reasons ?: "no client URL to ask");
}

/* etcd refuses a removal while its cluster is not healthy ("unhealthy cluster": a member not connected
 * for 5 s, no quorum; UNAVAILABLE): such a refusal is asked again every second until the deadline,
 * as kubeadm retries its own, and the last reason is the one reported. */
static int remove_member_retrying(const EtcdLocal *l, char **endpoints, uint64_t id, uint64_t deadline,
                                  EtcdMemberList *ret_after, char **reterr) {
        unsigned tries = 0;
        int r;

        for (;;) {
                cleanup_free char *msg = NULL;

                tries++;
                r = remove_member(l, endpoints, id, deadline, ret_after, &msg);
                if (r != -EAGAIN || now(CLOCK_MONOTONIC) + REMOVE_RETRY_USEC + 100000 >= deadline) {
                        if (r < 0 && tries > 1)
                                return set_errmsg(reterr, r, "%s (asked %u times, until the phase's deadline)",
                                                  strna(msg), tries);
                        if (r < 0)
                                return set_errmsg(reterr, r, "%s", strna(msg));
                        return r;
                }
                (void) usleep(REMOVE_RETRY_USEC);
        }
}

static int member_apply(Action *a, Context *ctx, char **reterr_msg) {
        MemberData *d = a->data;
        uint64_t deadline = phase_deadline(ctx);
        cleanup_free char *err = NULL, *asked = NULL, *left = NULL;
        cleanup_strv char **order = NULL;
        EtcdMemberList list = {}, after = {};
        const EtcdMember *m;
        uint64_t id;
        int r;

        /* The plan may be old: the cluster is asked again, and only what it says now is acted on. */
        r = etcd_local_member_list(&d->local, deadline, &list, &asked, &err);
        if (r < 0)
                return set_errmsg(reterr_msg, r,
                                  "the cluster did not answer (no quorum, or unreachable), member left "
                                  "in place: %s",
                                  err);
        (void) etcd_local_learn(ctx, &d->local, &list, 0);
        m = find_local(&d->local, &list);
        if (!m) {
                etcd_member_list_done(&list);
                return set_errmsg(reterr_msg, 0, "not a member of cluster %016" PRIx64 " (asked %s)", list.cluster_id,
                                  asked);
        }
        if (d->id != 0 && m->id != d->id)
                r = set_errmsg(reterr_msg, -ESTALE,
                               "the member is %016" PRIx64 " now, not %016" PRIx64 " as planned: left in place", m->id,
                               d->id);
        else if (list.n_members == 1)
                r = set_errmsg(reterr_msg, -EBUSY, "the last member of its cluster: left in place");
        else
                r = remove_order(&d->local, &list, m, &order);
        id = m->id;
        etcd_member_list_done(&list);
        if (r < 0)
                return r;
        r = remove_member_retrying(&d->local, order, id, deadline, &after, reterr_msg);
        if (r == -ENOENT)
                return set_errmsg(reterr_msg, 0, "member %016" PRIx64 " was removed meanwhile", id);
        if (r < 0)
                return r;
        left = names_of(&after);
        (void) set_errmsg(reterr_msg, 0, "member %016" PRIx64 " removed; %zu left: %s", id, after.n_members,
                          strna(left));
        etcd_member_list_done(&after);
        return 1;
}

static int member_check(Action *a, Context *ctx, char **ret_msg) {
        MemberData *d = a->data;

        if (d->error < 0) {
                *ret_msg = d->error_msg ? strdup(d->error_msg) : NULL;
                return d->error;
        }
        *ret_msg = strprintf("still member %016" PRIx64 " of its cluster", d->id);
        return 1;
}

static const ActionOps member_ops = {
        .kind = "etcd-member",
        .apply = member_apply,
        .check = member_check,
        .free_data = member_data_free,
};

/* What the plan says about the member the cluster listed (or did not). */
static int plan_listed(Context *ctx, Action *a, MemberData *d, const EtcdMemberList *list, const char *asked) {
        const EtcdMember *m = find_local(&d->local, list);
        cleanup_free char *what = NULL;

        if (!m) {
                a->present = false;
                for (size_t i = 0; i < list->n_members; i++)
                        if (etcd_local_name_clash(&d->local, &list->members[i]))
                                return action_set_detail(a,
                                                         "not a member of cluster %016" PRIx64 " (a member named %s "
                                                         "has other peer URLs: not this node's, never touched)",
                                                         list->cluster_id, d->local.name);
                return action_set_detail(a, "not a member of cluster %016" PRIx64 " (asked %s)", list->cluster_id,
                                         asked);
        }
        d->id = m->id;
        a->present = true;
        what = describe_member(m);
        if (!what || action_set_detail(a, "%s; cluster %016" PRIx64 " of %zu; asked %s", what, list->cluster_id,
                                       list->n_members, asked) < 0)
                return -ENOMEM;
        if (list->n_members > 1)
                return 0;
        /* The last member holds the whole cluster: it stays, and so does its data. */
        free(ctx->etcd_keep_data_dir);
        ctx->etcd_keep_data_dir = strdup(d->local.data_dir);
        if (!ctx->etcd_keep_data_dir)
                return -ENOMEM;
        return action_set_skip(a,
                               "the last member of its cluster: removing it would end the cluster; the member "
                               "and its data directory %s are kept",
                               d->local.data_dir);
}

static int plan_member(Context *ctx, Plan *plan, EtcdLocal *l) {
        cleanup_free char *err = NULL, *asked = NULL, *target = NULL;
        EtcdMemberList list = {};
        MemberData *d;
        Action *a;
        int r;

        d = calloc(1, sizeof *d);
        target = strprintf("member %s", l->name);
        if (!d || !target) {
                free(d);
                return -ENOMEM;
        }
        d->local = *l;
        *l = (EtcdLocal) {};
        a = plan_add(plan, &member_ops, "etcd", target, d->local.source, d);
        if (!a)
                return -ENOMEM;
        r = etcd_local_member_list(&d->local, phase_deadline(ctx), &list, &asked, &err);
        if (r < 0) {
                /* Reported, and tried again when applied: the phase never waits past its deadline. */
                a->present = true;
                d->error = r;
                d->error_msg = TAKE_PTR(err);
                return action_set_detail(a, "the cluster does not answer (no quorum, or unreachable): %s",
                                         strna(d->error_msg));
        }
        r = etcd_local_learn(ctx, &d->local, &list, 0);
        if (r >= 0)
                r = plan_listed(ctx, a, d, &list, asked);
        etcd_member_list_done(&list);
        return r;
}

int phase_etcd_plan(Context *ctx, Plan *plan, char **reterr) {
        EtcdLocal l = {};
        Action *a;
        int r;

        r = etcd_local_find(ctx, &l, reterr);
        if (r < 0)
                return r;
        if (l.external) {
                /* kubeadm's reset skips external etcd too: that cluster is not this node's to change. */
                a = plan_add(plan, &member_ops, "etcd", "external etcd", l.external_source, NULL);
                etcd_local_done(&l);
                if (!a)
                        return -ENOMEM;
                return action_set_skip(a, "ClusterConfiguration.etcd.external: an external etcd is never touched");
        }
        if (r == 0)
                return 0; /* no member on this node */
        r = plan_member(ctx, plan, &l);
        etcd_local_done(&l);
        return r;
}
