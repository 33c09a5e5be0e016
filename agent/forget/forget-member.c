/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A gone node's etcd member, seen from a surviving control plane through the etcd client the etcd
 * phase uses (etcd/, agent/node/etcd-member.c): found by the Node's name and a peer URL on its
 * addresses together, removed only when it answers on none of its client URLs and a quorum of the
 * cluster as it is now can commit the removal. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "agent/os/host-place.h"
#include "agent/forget/forget-member.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

void forget_member_done(ForgetMember *m) {
        free(m->name);
        free(m->peer_urls);
        free(m->refusal);
        free(m->note);
        free(m->endpoint);
        *m = (ForgetMember) {};
}

static bool peer_on(const EtcdMember *m, char *const *addresses) {
        char buf[256];

        STRV_FOREACH(u, m->peer_urls) {
                const char *h = url_host(*u, buf, sizeof buf);

                if (h && strv_contains((char **) addresses, h))
                        return true;
        }
        return false;
}

/* "cp3", or k3s's and rke2's "cp3-1a2b3c4d" (the node name and a random suffix). */
static bool named_after(const EtcdMember *m, const char *node) {
        const char *rest = startswith(m->name, node);

        return rest &&
               (*rest == '\0' || (*rest == '-' && strlen(rest) == 9 && strspn(rest + 1, "0123456789abcdef") == 8));
}

/* Does this member answer a Status with its own ID on any of its client URLs? */
static bool member_answers(const NodeEtcd *local, const EtcdMember *m, uint64_t deadline, const char **ret_url) {
        STRV_FOREACH(u, m->client_urls) {
                EtcdClient *c = NULL;
                EtcdStatus st = {};
                int r;

                r = node_etcd_client(local, *u, deadline, &c);
                if (r >= 0)
                        r = etcd_status(c, &st, NULL);
                etcd_client_free(c);
                if (r >= 0 && st.member_id == m->id) {
                        if (ret_url)
                                *ret_url = *u;
                        return true;
                }
        }
        return false;
}

static int refuse(ForgetMember *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(ForgetMember *m, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        free(m->refusal);
        m->refusal = vstrprintf(fmt, ap);
        va_end(ap);
        return m->refusal ? 0 : -ENOMEM;
}

/* The member that is the node's: named after it and with a peer URL on its addresses. 1 and *ret, 0
 * none (ret: one on its addresses under another name, noted), -EEXIST more than one, -EPERM named so
 * but on none of its addresses (*ret the one). */
static int pick(const EtcdMemberList *list, const ForgetTarget *t, const EtcdMember **ret) {
        const EtcdMember *found = NULL, *unconfirmed = NULL, *elsewhere = NULL;

        for (size_t i = 0; i < list->n_members; i++) {
                const EtcdMember *m = &list->members[i];
                bool named = named_after(m, t->node), on = peer_on(m, t->addresses);

                if (named && on) {
                        if (found)
                                return -EEXIST;
                        found = m;
                } else if (named)
                        unconfirmed = m;
                else if (on)
                        elsewhere = m;
        }
        *ret = found ?: unconfirmed ?: elsewhere;
        return found ? 1 : unconfirmed ? -EPERM : 0;
}

/* The removal is a configuration change that a quorum of the voting members as they are now must
 * commit; the member removed is gone, so the others that answer must make that quorum. Otherwise
 * etcd accepts the proposal, cannot commit it, and commits it later, unasked, when a member returns. */
static int decide_quorum(const NodeEtcd *local, const EtcdMemberList *list, const EtcdMember *t, uint64_t deadline,
                         ForgetMember *m) {
        size_t quorum;

        for (size_t i = 0; i < list->n_members; i++) {
                const EtcdMember *o = &list->members[i];

                if (o->is_learner)
                        continue;
                m->voters++;
                if (o != t && member_answers(local, o, deadline, NULL))
                        m->answering++;
        }
        if (!t->is_learner && m->voters == 1)
                return refuse(m, "the last voting member of its cluster");
        quorum = m->voters / 2 + 1;
        if (m->answering < quorum)
                return refuse(m,
                              "its removal must be committed by a quorum of the %zu voting members (%zu), and %zu of "
                              "the others answer: it cannot commit now, and etcd would commit it later, unasked, when "
                              "a member returns; bring a member back first",
                              m->voters, quorum, m->answering);
        return 0;
}

static int decide(const NodeEtcd *local, const EtcdMemberList *list, const EtcdMember *t, const EtcdMember *own,
                  uint64_t deadline, ForgetMember *m) {
        const char *url = NULL;

        if (t == own || node_etcd_is(local, t))
                return refuse(m, "this node's own member (%s): forget runs on a surviving control plane", t->name);
        if (member_answers(local, t, deadline, &url))
                return refuse(m, "it still answers as member %016" PRIx64 " on %s: the node is not gone", t->id, url);
        return decide_quorum(local, list, t, deadline, m);
}

static int found(ForgetMember *m, const EtcdMember *e) {
        m->found = true;
        m->id = e->id;
        m->name = strdup(e->name);
        m->peer_urls = strv_join(e->peer_urls, ", ");
        return m->name && m->peer_urls ? 0 : -ENOMEM;
}

/* k3s's and rke2's etcd controller removes the member a server Node's annotation names when the Node
 * is deleted (pkg/etcd/member_controller.go): that member must be the one proven the node's. */
static const EtcdMember *annotated(const EtcdMemberList *list, const ForgetTarget *t) {
        for (size_t i = 0; t->member_name && i < list->n_members; i++)
                if (streq(list->members[i].name, t->member_name))
                        return &list->members[i];
        return NULL;
}

/* None is the node's: a member its annotation names is refused, one on its addresses noted. */
static int observe_none(const ForgetTarget *t, const EtcdMember *on_addresses, const EtcdMember *a, ForgetMember *m) {
        if (a) {
                int r = found(m, a);

                return r < 0 ? r
                             : refuse(m,
                                      "Node %s's annotation names member %s, which k3s's etcd controller removes with "
                                      "the Node, but no peer URL of it is on the Node's addresses",
                                      t->node, a->name);
        }
        if (on_addresses && !(m->note = strprintf("member %s has a peer URL on %s's addresses, but another name: not "
                                                  "taken",
                                                  on_addresses->name, t->node)))
                return -ENOMEM;
        return 0;
}

static int observe_list(const NodeEtcd *local, const ForgetTarget *t, uint64_t deadline, const EtcdMemberList *list,
                        ForgetMember *m) {
        const EtcdMember *e = NULL, *own = NULL, *a = annotated(list, t);
        EtcdStatus st = {};
        int r, k;

        r = pick(list, t, &e);
        if (r == 0)
                return observe_none(t, e, a, m);
        if (r == -EEXIST) {
                m->found = true;
                return refuse(m, "more than one member is named after %s with a peer URL on its addresses", t->node);
        }
        k = found(m, e);
        if (k < 0)
                return k;
        if (r == -EPERM)
                return refuse(m,
                              "named after %s, but no peer URL of it is on the Node's addresses: a name alone does "
                              "not prove it is %s's",
                              t->node, t->node);
        if (a && a != e)
                return refuse(m,
                              "Node %s's annotation names member %s, which k3s's etcd controller would remove with "
                              "the Node: not the one proven %s's",
                              t->node, a->name, t->node);
        /* This node's own member: the one its own client URL answers as, with its name and peer URLs. */
        if (node_etcd_status(local, deadline, &st, NULL) >= 0 &&
            node_etcd_identify(local, list, &st, &own, NULL) == -ENOMEM)
                return -ENOMEM;
        return decide(local, list, e, own, deadline, m);
}

int forget_member_observe(const NodeEtcd *local, const ForgetTarget *t, uint64_t deadline, ForgetMember *ret,
                          char **reterr) {
        EtcdMemberList list = {};
        int r;

        *ret = (ForgetMember) {};
        r = node_etcd_member_list(local, deadline, &list, &ret->endpoint, reterr);
        if (r < 0)
                return r;
        r = observe_list(local, t, deadline, &list, ret);
        etcd_member_list_done(&list);
        if (r < 0)
                forget_member_done(ret);
        return r;
}

int forget_member_remove(const NodeEtcd *local, const ForgetTarget *t, uint64_t deadline, char **ret_msg) {
        cleanup_free char *err = NULL;
        EtcdClient *c = NULL;
        ForgetMember m;
        int r;

        r = forget_member_observe(local, t, deadline, &m, &err);
        if (r < 0)
                return set_errmsg(ret_msg, r, "no etcd member answers: %s", err ?: strerror(-r));
        if (!m.found || m.refusal) {
                r = m.found ? set_errmsg(ret_msg, -EPERM, "refused: %s", m.refusal) : 0;
                forget_member_done(&m);
                return r;
        }
        r = node_etcd_client(local, m.endpoint, deadline, &c);
        if (r >= 0)
                r = etcd_member_remove(c, m.id, NULL, &err);
        etcd_client_free(c);
        if (r >= 0)
                r = set_errmsg(ret_msg, 1, "removed member %016" PRIx64 " (%s) through %s", m.id, m.name, m.endpoint);
        else
                r = set_errmsg(ret_msg, r, "cannot remove member %016" PRIx64 " (%s): %s", m.id, m.name,
                               err ?: strerror(-r));
        forget_member_done(&m);
        return r;
}
