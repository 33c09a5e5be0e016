/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The etcd phase: this node's member leaves its cluster before etcd is stopped and its data wiped,
 * as kubeadm reset's remove-etcd-member phase does, made safer: only the member this node's own client
 * URL says it is (the member ID in its answer's header) when its name and peer URLs are the ones this
 * node's files give (under --root, those alone: a URL of the tree's that leads to the running machine
 * is never asked as its member, node_etcd_identify()), never the last voting one, never an etcd no
 * installer of this node made (etcd-owner.h), kubeadm's, kubespray's, kubekey's, k3s's and rke2's
 * alike, decided again from what the run reads, and within a deadline whatever state the cluster is
 * in. What it finds feeds the data directory rule (etcd-datadir.h). */

#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "agent/phases/phases.h"
#include "agent/phases/etcd/etcd.h"
#include "agent/engine/cmdline.h"
#include "agent/phases/etcd/etcd-member.h"
#include "agent/phases/etcd/etcd-datadir.h"
#include "agent/phases/etcd/etcd-state.h"
#include "agent/base/log.h"
#include "agent/engine/phase.h"
#include "errno-util.h"
#include "macro.h"
#include "time-util.h"
#include "string-util.h"
#include "strv.h"

#define ETCD_PHASE_TIMEOUT_DEFAULT_USEC (30ULL * 1000000ULL)
#define REMOVE_RETRY_USEC (1000U * 1000U)
#define LEFT_BY_NAME                                                                                       \
        "it lists no member with this node's name and peer URLs, and it is this node's cluster (it lists " \
        "another member of the tree's --initial-cluster)"

static unsigned arg_etcd_timeout_sec; /* --etcd-timeout; 0: the default */

/* Where this node's member stands, from what one observation read. */
typedef enum Standing {
        STANDING_NONE,       /* no member answered */
        STANDING_UNKNOWN,    /* members answered, but which one is this node's is not known */
        STANDING_LEFT,       /* its cluster does not list this member's ID */
        STANDING_MEMBER,     /* a member, and other voting members remain */
        STANDING_LAST_VOTER, /* the last voting member of its cluster */
} Standing;

typedef struct View {
        Standing standing;
        EtcdMemberList list;
        const EtcdMember *m; /* this member in list */
        uint64_t self_id;    /* this member's ID: from its own client URL, or remembered */
        uint64_t cluster_id;
        bool remembered; /* self_id is what an earlier run recorded (etcd-state.h) */
        bool by_name;    /* --root: found by this node's name and peer URLs, not by an answer of its own */
        size_t voters;
        char *asked; /* the endpoint whose list this is */
        char *why;   /* NONE, UNKNOWN: the reason */
        int error;
} View;

typedef struct MemberData {
        NodeEtcd local;
        uint64_t id; /* the member as planned; 0 when it was none or not known */
        Standing standing;
        int error; /* why the cluster could not be asked, at plan time */
        char *error_msg;
} MemberData;

static void view_done(View *v) {
        etcd_member_list_done(&v->list);
        free(v->asked);
        free(v->why);
        *v = (View) {};
}

static void member_data_free(void *p) {
        MemberData *d = p;

        node_etcd_done(&d->local);
        free(d->error_msg);
        free(d);
}

static uint64_t phase_deadline(const Context *ctx) {
        uint64_t d = now(CLOCK_MONOTONIC) + (phase_etcd_timeout() ?: ETCD_PHASE_TIMEOUT_DEFAULT_USEC);

        return ctx->deadline_usec > 0 && ctx->deadline_usec < d ? ctx->deadline_usec : d;
}

static size_t count_voters(const EtcdMemberList *list) {
        size_t n = 0;

        for (size_t i = 0; i < list->n_members; i++)
                n += !list->members[i].is_learner;
        return n;
}

/* No member answered: an earlier run may have seen this member leave. */
static int view_unanswered(const Context *ctx, const NodeEtcd *l, View *v) {
        NodeEtcdLeft e;
        int r;

        v->standing = STANDING_NONE;
        r = node_etcd_state_find_left(ctx, 0, l->name, &e);
        if (r > 0) {
                v->self_id = e.member_id;
                v->cluster_id = e.cluster_id;
                v->remembered = true;
        }
        return 0;
}

/* Could m be this node's member, by name (and peer URLs)? Beside a recorded departure, only a member
 * with this node's name and peer URLs and another ID: this node may have joined again. */
static bool may_be_this_node(const NodeEtcd *l, const EtcdMember *m, const NodeEtcdLeft *left) {
        if (left)
                return node_etcd_is(l, m) && m->id != left->member_id;
        return node_etcd_is(l, m) || node_etcd_name_clash(l, m);
}

/* The list answered, this node's own client URL did not: only an ID an earlier run recorded for
 * this cluster names the member; a name and peer URLs alone never do. */
static int view_unidentified(const Context *ctx, const NodeEtcd *l, View *v, const char *status_err) {
        NodeEtcdLeft e;
        int r;

        r = node_etcd_state_find_left(ctx, v->list.cluster_id, l->name, &e);
        v->standing = STANDING_UNKNOWN;
        for (size_t i = 0; i < v->list.n_members; i++)
                if (may_be_this_node(l, &v->list.members[i], r > 0 ? &e : NULL))
                        return set_errmsg(&v->why, 0,
                                          "this node's own client URL does not answer (%s): member %016" PRIx64
                                          " is named %s, but a name and peer URLs do not prove it is this "
                                          "node's; left in place",
                                          status_err, v->list.members[i].id, l->name);
        if (r > 0) {
                v->standing = STANDING_NONE; /* decided by the caller from the remembered ID */
                v->self_id = e.member_id;
                v->remembered = true;
                return 0;
        }
        return set_errmsg(&v->why, 0,
                          "this node's own client URL does not answer (%s): which member of cluster %016" PRIx64
                          " is this node's is not known; left in place",
                          status_err, v->list.cluster_id);
}

/* Under --root, no member has this node's name and peer URLs: an earlier run's record for this
 * cluster, or the cluster the tree's --initial-cluster names, says it left; anything else is not
 * known (another cluster answers where the tree's files point). */
static int view_not_listed(const Context *ctx, const NodeEtcd *l, View *v) {
        NodeEtcdLeft e;
        int r;

        for (size_t i = 0; i < v->list.n_members; i++)
                if (node_etcd_name_clash(l, &v->list.members[i]))
                        return set_errmsg(&v->why, 0,
                                          "member %016" PRIx64 " is named %s, but its peer URLs are not this node's: "
                                          "a name alone does not prove it is; left in place",
                                          v->list.members[i].id, l->name);
        r = node_etcd_state_find_left(ctx, v->list.cluster_id, l->name, &e);
        if (r > 0) {
                v->self_id = e.member_id;
                v->remembered = true;
                return 0;
        }
        if (node_etcd_cluster_is_ours(l, &v->list)) {
                v->by_name = true;
                return 0;
        }
        return set_errmsg(&v->why, 0,
                          "cluster %016" PRIx64 " (asked %s) lists no member named %s with this node's peer URLs, nor "
                          "any other member the tree's --initial-cluster names: whether this member left it or it is "
                          "another cluster is not known; left in place",
                          v->list.cluster_id, v->asked, l->name);
}

/* Which member is this node's (node_etcd_identify()), and the standing that follows: UNKNOWN with
 * the reason whenever it is not proven. */
static int view_identify(Context *ctx, const NodeEtcd *l, View *v, const EtcdStatus *st, const char *status_err) {
        cleanup_free char *why = NULL;
        const EtcdMember *m = NULL;
        int r;

        v->standing = STANDING_UNKNOWN;
        r = node_etcd_identify(l, &v->list, st, &m, &why);
        if (r == -ENOMEM)
                return r;
        if (r == -ENXIO) /* live, and its own client URL did not answer */
                return view_unidentified(ctx, l, v, status_err);
        if (r < 0)
                return set_errmsg(&v->why, 0, "%s; left in place", why);
        v->standing = STANDING_NONE; /* decided by the caller */
        if (r > 0) {
                v->self_id = m->id;
                v->by_name = !st;
        } else if (st)
                v->self_id = st->member_id; /* it answers, and its cluster does not list it: it left */
        else if ((r = view_not_listed(ctx, l, v)) < 0 || v->why)
                v->standing = STANDING_UNKNOWN;
        return r < 0 ? r : 0;
}

/* Ask this node's own member who it is, then the cluster who is in it. */
static int observe(Context *ctx, NodeEtcd *l, uint64_t deadline, View *v) {
        cleanup_free char *status_err = NULL, *list_err = NULL;
        EtcdStatus st = {};
        int r, rs;

        *v = (View) {};
        rs = node_etcd_status(l, deadline, &st, &status_err);
        r = node_etcd_member_list(l, deadline, &v->list, &v->asked, &list_err);
        if (r < 0) {
                v->error = r;
                if (rs >= 0) {
                        v->standing = STANDING_UNKNOWN;
                        return set_errmsg(&v->why, 0, "no member lists the cluster's members: %s", list_err);
                }
                /* Both reasons: the first call may have spent the deadline the second then lacked. */
                r = set_errmsg(&v->why, 0, "%s; %s", status_err, list_err);
                return r < 0 ? r : view_unanswered(ctx, l, v);
        }
        r = node_etcd_learn(ctx, l, &v->list, 0);
        if (r < 0)
                return r;
        v->cluster_id = v->list.cluster_id;
        if (rs >= 0 && st.cluster_id != v->list.cluster_id) {
                v->standing = STANDING_UNKNOWN;
                return set_errmsg(&v->why, 0,
                                  "this node's member belongs to cluster %016" PRIx64 ", the answer came from cluster "
                                  "%016" PRIx64 ": left in place",
                                  st.cluster_id, v->list.cluster_id);
        }
        r = view_identify(ctx, l, v, rs >= 0 ? &st : NULL, status_err);
        if (r < 0 || v->standing == STANDING_UNKNOWN)
                return r;
        v->m = v->self_id != 0 ? etcd_member_list_find(&v->list, v->self_id) : NULL;
        v->voters = count_voters(&v->list);
        if (!v->m)
                v->standing = STANDING_LEFT;
        else if (!v->m->is_learner && v->voters == 1)
                v->standing = STANDING_LAST_VOTER;
        else
                v->standing = STANDING_MEMBER;
        return 0;
}

static char *describe_member(const EtcdMember *m) {
        cleanup_free char *peers = strv_join(m->peer_urls, ",");

        if (!peers)
                return NULL;
        return strprintf("member %016" PRIx64 " %s, peer URLs %s%s", m->id, m->name, *peers ? peers : "n/a",
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
static int remove_order(const NodeEtcd *l, const EtcdMemberList *list, const EtcdMember *m, char ***ret) {
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
static int remove_member(const NodeEtcd *l, char **endpoints, uint64_t id, uint64_t deadline, EtcdMemberList *ret_after,
                         char **reterr) {
        cleanup_free char *reasons = NULL;
        int r = -ENOENT, busy = 0;

        STRV_FOREACH(e, endpoints) {
                cleanup_free char *msg = NULL;
                EtcdClient *c = NULL;
                char *n;

                r = node_etcd_client(l, *e, deadline, &c);
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
                /* "Not healthy" from a member is worth asking again, whatever a later endpoint said. */
                if (r == -EAGAIN)
                        busy = r;
        }
        if (r != -ETIME && busy < 0)
                r = busy;
        return set_errmsg(reterr, r, "%s", reasons ?: "no client URL to ask");
}

/* etcd refuses a removal while its cluster is not healthy ("unhealthy cluster": a member not connected
 * for 5 s, no quorum; UNAVAILABLE): such a refusal is asked again every second until the deadline,
 * as kubeadm retries its own, and the last reason is the one reported. */
static int remove_member_retrying(const NodeEtcd *l, char **endpoints, uint64_t id, uint64_t deadline,
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

/* This member is gone from its cluster: the facts say so, and the state file remembers it. */
static void note_left(Context *ctx, const MemberData *d, uint64_t cluster_id, uint64_t id) {
        int r;

        ctx->facts.etcd.left = true;
        if (id == 0)
                return; /* found by name: no ID of its own to remember */
        r = node_etcd_state_record_left(ctx, cluster_id, id, d->local.name);
        if (r < 0)
                (void) log_warning_errno(r, "Cannot record in %s/%s that member %016" PRIx64 " left, ignoring: %m",
                                         ETCD_STATE_DIR, ETCD_STATE_NAME, id);
}

/* The member leaves: through another member first, retried while etcd says it is not healthy. */
static int leave(Context *ctx, MemberData *d, View *v, uint64_t deadline, char **reterr_msg) {
        cleanup_free char *left = NULL;
        cleanup_strv char **order = NULL;
        EtcdMemberList after = {};
        uint64_t id = v->m->id;
        int r;

        if (d->id != 0 && id != d->id)
                return set_errmsg(reterr_msg, -ESTALE,
                                  "the member is %016" PRIx64 " now, not %016" PRIx64 " as planned: left in place", id,
                                  d->id);
        r = remove_order(&d->local, &v->list, v->m, &order);
        if (r < 0)
                return r;
        r = remove_member_retrying(&d->local, order, id, deadline, &after, reterr_msg);
        if (r == -ENOENT) {
                note_left(ctx, d, v->cluster_id, id);
                return set_errmsg(reterr_msg, 0,
                                  "member %016" PRIx64 " was removed from cluster %016" PRIx64 " meanwhile", id,
                                  v->cluster_id);
        }
        if (r < 0)
                return r;
        note_left(ctx, d, v->cluster_id, id);
        left = names_of(&after);
        (void) set_errmsg(reterr_msg, 0, "member %016" PRIx64 " removed from cluster %016" PRIx64 "; %zu left: %s", id,
                          v->cluster_id, after.n_members, strna(left));
        etcd_member_list_done(&after);
        return 1;
}

/* What the run does from where the member stands now; every outcome feeds the data directory rule. */
static int act_on(Context *ctx, MemberData *d, View *v, uint64_t deadline, char **reterr_msg) {
        switch (v->standing) {
        case STANDING_NONE:
                ctx->facts.etcd.none_answered = true;
                if (v->remembered)
                        return set_errmsg(reterr_msg, 0,
                                          "not a member: member %016" PRIx64 " left cluster %016" PRIx64
                                          " in an earlier run (%s/%s); no member answers now: %s",
                                          v->self_id, v->cluster_id, ETCD_STATE_DIR, ETCD_STATE_NAME, strna(v->why));
                return set_errmsg(reterr_msg, v->error ?: -EHOSTUNREACH,
                                  "the cluster did not answer (no quorum, or unreachable), member left in place: %s",
                                  strna(v->why));
        case STANDING_UNKNOWN:
                free(ctx->facts.etcd.why);
                ctx->facts.etcd.why = strdup(strna(v->why));
                return set_errmsg(reterr_msg, v->error ?: -ENXIO, "%s", strna(v->why));
        case STANDING_LEFT:
                note_left(ctx, d, v->cluster_id, v->self_id);
                if (v->self_id == 0)
                        return set_errmsg(reterr_msg, 0, "not a member of cluster %016" PRIx64 ": %s (asked %s)",
                                          v->cluster_id, LEFT_BY_NAME, v->asked);
                return set_errmsg(
                        reterr_msg, 0,
                        "not a member of cluster %016" PRIx64 ": it does not list member %016" PRIx64 "%s (asked %s)",
                        v->cluster_id, v->self_id, v->remembered ? ", which left in an earlier run" : "", v->asked);
        case STANDING_LAST_VOTER:
                ctx->facts.etcd.last_voter = true;
                if (ctx->facts.etcd.snapshot)
                        return set_errmsg(reterr_msg, 0,
                                          "member %016" PRIx64 " is the last voting member of cluster %016" PRIx64
                                          ": the cluster ends with this node; its snapshot is in the backup",
                                          v->m->id, v->cluster_id);
                return set_errmsg(reterr_msg, -EBUSY,
                                  "member %016" PRIx64 " is the last voting member of cluster %016" PRIx64
                                  ": removing it would end the cluster, and the backup holds no complete snapshot "
                                  "of it; the member and its data directory are left in place",
                                  v->m->id, v->cluster_id);
        case STANDING_MEMBER:
                return leave(ctx, d, v, deadline, reterr_msg);
        }
        return -EINVAL;
}

static int member_apply(Action *a, Context *ctx, char **reterr_msg) {
        MemberData *d = a->data;
        uint64_t deadline = phase_deadline(ctx);
        View v;
        int r;

        /* The plan may be old: the cluster is asked again, and only what it says now is acted on. */
        ctx->facts.etcd.observed = true;
        r = observe(ctx, &d->local, deadline, &v);
        if (r >= 0)
                r = act_on(ctx, d, &v, deadline, reterr_msg);
        view_done(&v);
        return r;
}

static int member_check(Action *a, Context *ctx, char **ret_msg) {
        MemberData *d = a->data;

        if (d->error < 0) {
                *ret_msg = d->error_msg ? strdup(d->error_msg) : NULL;
                return d->error;
        }
        if (d->standing == STANDING_LAST_VOTER) {
                /* The last member never leaves; its data directory is what is residue, or not. */
                *ret_msg = strprintf("member %016" PRIx64 " is the last voting member of its cluster", d->id);
                return 0;
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

/* What the plan says about where the member stands. */
static int plan_view(Action *a, MemberData *d, const View *v) {
        cleanup_free char *what = NULL;

        d->standing = v->standing;
        a->present = v->standing != STANDING_LEFT && !(v->standing == STANDING_NONE && v->remembered);
        if (v->standing == STANDING_NONE && v->remembered)
                return action_set_detail(a,
                                         "member %016" PRIx64 " left cluster %016" PRIx64
                                         " in an earlier run; no member answers now: %s",
                                         v->self_id, v->cluster_id, strna(v->why));
        switch (v->standing) {
        case STANDING_NONE:
        case STANDING_UNKNOWN:
                /* Reported, and tried again when applied: the phase never waits past its deadline. */
                d->error = v->error ?: -ENXIO;
                d->error_msg = strdup(strna(v->why));
                return action_set_detail(
                        a, "%s%s",
                        v->standing == STANDING_NONE ? "the cluster does not answer (no quorum, or unreachable): " : "",
                        strna(v->why));
        case STANDING_LEFT:
                if (v->self_id == 0)
                        return action_set_detail(a, "not a member of cluster %016" PRIx64 ": %s (asked %s)",
                                                 v->cluster_id, LEFT_BY_NAME, v->asked);
                return action_set_detail(
                        a, "not a member of cluster %016" PRIx64 ": it does not list member %016" PRIx64 " (asked %s)",
                        v->cluster_id, v->self_id, v->asked);
        case STANDING_MEMBER:
        case STANDING_LAST_VOTER:
                break;
        }
        d->id = v->m->id;
        what = describe_member(v->m);
        if (!what)
                return -ENOMEM;
        /* The member its own client URL answers as, with this node's name and peer URLs; under --root
         * those alone (node_etcd_identify()). */
        return action_set_detail(
                a, "%s%s; cluster %016" PRIx64 " of %zu (%zu voting)%s; asked %s", what,
                v->by_name ? " (found by this node's name and peer URLs in its cluster's list: under --root, no "
                             "client URL of its own answered or was asked)"
                           : "",
                v->cluster_id, v->list.n_members, v->voters,
                v->standing == STANDING_LAST_VOTER
                        ? "; the last voting member: kept unless the backup holds its snapshot, decided when run"
                        : "",
                v->asked);
}

static int plan_member(Context *ctx, Plan *plan, NodeEtcd *l) {
        cleanup_free char *target = NULL;
        MemberData *d;
        Action *a;
        View v;
        int r;

        d = calloc(1, sizeof *d);
        target = strprintf("member %s", l->name);
        if (!d || !target) {
                free(d);
                return -ENOMEM;
        }
        d->local = *l;
        *l = (NodeEtcd) {};
        a = plan_add(plan, &member_ops, "etcd", target, d->local.source, d);
        if (!a)
                return -ENOMEM;
        free(ctx->facts.etcd_data_dir);
        ctx->facts.etcd_data_dir = strdup(d->local.data_dir);
        if (!ctx->facts.etcd_data_dir)
                return -ENOMEM;
        r = observe(ctx, &d->local, phase_deadline(ctx), &v);
        if (r >= 0)
                r = plan_view(a, d, &v);
        view_done(&v);
        return r;
}

int phase_etcd_plan(Context *ctx, Plan *plan, char **reterr) {
        NodeEtcd l = {};
        Action *a;
        int r;

        r = node_etcd_find(ctx, &l, reterr);
        if (r < 0)
                return r;
        if (l.external) {
                /* kubeadm's reset skips external etcd too (removeetcdmember.go: "Assuming external
                 * etcd"): that cluster is not this node's to change. */
                a = plan_add(plan, &member_ops, "etcd", "external etcd", l.source, NULL);
                if (!a || action_set_skip_code(a, "out-of-scope", "%s", l.why) < 0) {
                        node_etcd_done(&l);
                        return -ENOMEM;
                }
                node_etcd_done(&l);
                return 0;
        }
        if (r == 0)
                return 0; /* no member on this node */
        r = plan_member(ctx, plan, &l);
        node_etcd_done(&l);
        return r;
}

void phase_etcd_done(Context *ctx) {
        node_etcd_forget();
}

usec_t phase_etcd_timeout(void) {
        return (usec_t) arg_etcd_timeout_sec * USEC_PER_SEC;
}

static int parse_etcd_timeout(const char *arg, char **reterr) {
        return cmdline_parse_duration("etcd-timeout", arg, 1, 3600, &arg_etcd_timeout_sec, reterr);
}

const PhaseOption phase_etcd_options[] = {
        { "etcd-timeout", PHASE_OPTION_REQUIRED_ARG, "DURATION", "Bound the etcd phase's calls each time it asks (30s)",
          parse_etcd_timeout },
        {},
};
