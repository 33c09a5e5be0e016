/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A gone node's etcd member, seen from a surviving control plane through the etcd client the etcd
 * phase uses (etcd/, agent/phases/etcd/etcd-member.c): found by the Node's name and addresses, confirmed
 * by its peer URLs, and removed only when the cluster keeps its quorum without it. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "agent/verbs/forget-member.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

void forget_member_done(ForgetMember *m) {
        free(m->name);
        free(m->peer_urls);
        free(m->refusal);
        free(m->endpoint);
        *m = (ForgetMember) {};
}

/* The host of "https://10.0.0.3:2380" or "https://[fd00::3]:2380", in buf. */
static const char *url_host(const char *url, char *buf, size_t size) {
        const char *h = strstr(url, "://"), *end;

        h = h ? h + 3 : url;
        if (*h == '[') {
                h++;
                end = strchr(h, ']');
        } else
                end = h + strcspn(h, ":/");
        if (!end || (size_t) (end - h) >= size)
                return NULL;
        memcpy(buf, h, (size_t) (end - h));
        buf[end - h] = '\0';
        return buf;
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

/* Does this member's own client URL answer a Status, with its own ID? */
static bool member_answers(const NodeEtcd *local, const EtcdMember *m, uint64_t deadline) {
        STRV_FOREACH(u, m->client_urls) {
                EtcdClient *c = NULL;
                EtcdStatus st = {};
                int r;

                r = node_etcd_client(local, *u, deadline, &c);
                if (r >= 0)
                        r = etcd_status(c, &st, NULL);
                etcd_client_free(c);
                if (r >= 0 && st.member_id == m->id)
                        return true;
        }
        return false;
}

/* The member that is node's: 1 and *ret, 0 none, -EEXIST more than one, -EPERM named so but
 * unconfirmed (*ret the one). */
static int pick(const EtcdMemberList *list, const char *node, char *const *addresses, const EtcdMember **ret) {
        const EtcdMember *found = NULL, *unconfirmed = NULL;

        for (size_t i = 0; i < list->n_members; i++) {
                const EtcdMember *m = &list->members[i];

                if (peer_on(m, addresses)) {
                        if (found)
                                return -EEXIST;
                        found = m;
                } else if (named_after(m, node))
                        unconfirmed = m;
        }
        *ret = found ?: unconfirmed;
        return found ? 1 : unconfirmed ? -EPERM : 0;
}

static int refuse(ForgetMember *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(ForgetMember *m, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        m->refusal = vstrprintf(fmt, ap);
        va_end(ap);
        return m->refusal ? 0 : -ENOMEM;
}

/* Counted from the voters that answer: those left after the removal must be a quorum of them. */
static int decide_quorum(const NodeEtcd *local, const EtcdMemberList *list, const EtcdMember *t, uint64_t deadline,
                         ForgetMember *m) {
        size_t after, quorum;

        for (size_t i = 0; i < list->n_members; i++) {
                const EtcdMember *o = &list->members[i];

                if (o->is_learner)
                        continue;
                m->voters++;
                if (o != t && member_answers(local, o, deadline))
                        m->answering++;
        }
        if (t->is_learner)
                return 0;
        after = m->voters - 1;
        quorum = after / 2 + 1;
        if (after == 0)
                return refuse(m, "the last voting member of its cluster");
        if (m->answering < quorum)
                return refuse(m,
                              "removing it leaves %zu voting members of which %zu answer: fewer than a quorum (%zu); "
                              "bring a member back first",
                              after, m->answering, quorum);
        return 0;
}

static int decide(const NodeEtcd *local, const EtcdMemberList *list, const EtcdMember *t, uint64_t own_id, bool force,
                  uint64_t deadline, ForgetMember *m) {
        if (t->id == own_id || node_etcd_is(local, t))
                return refuse(m, "this node's own member (%s): forget runs on a surviving control plane", t->name);
        if (!force && member_answers(local, t, deadline))
                return refuse(m,
                              "its client URL still answers: the node is not gone (--force removes it all the same)");
        return decide_quorum(local, list, t, deadline, m);
}

static int observe_list(const NodeEtcd *local, const char *node, char *const *addresses, bool force, uint64_t deadline,
                        const EtcdMemberList *list, ForgetMember *m) {
        const EtcdMember *t = NULL;
        EtcdStatus own = {};
        int r;

        r = pick(list, node, addresses, &t);
        if (r == 0)
                return 0;
        m->found = true;
        if (r == -EEXIST)
                return refuse(m, "more than one member has a peer URL on %s's addresses", node);
        m->id = t->id;
        m->name = strdup(t->name);
        m->peer_urls = strv_join(t->peer_urls, ", ");
        if (!m->name || !m->peer_urls)
                return -ENOMEM;
        if (r == -EPERM)
                return refuse(m,
                              "named like %s, but no peer URL of it is on the Node's addresses: a name alone "
                              "does not prove it is %s's",
                              node, node);
        (void) node_etcd_status(local, deadline, &own, NULL);
        return decide(local, list, t, own.member_id, force, deadline, m);
}

int forget_member_observe(const NodeEtcd *local, const char *node, char *const *addresses, bool force,
                          uint64_t deadline, ForgetMember *ret, char **reterr) {
        EtcdMemberList list = {};
        int r;

        *ret = (ForgetMember) {};
        r = node_etcd_member_list(local, deadline, &list, &ret->endpoint, reterr);
        if (r < 0)
                return r;
        r = observe_list(local, node, addresses, force, deadline, &list, ret);
        etcd_member_list_done(&list);
        if (r < 0)
                forget_member_done(ret);
        return r;
}

int forget_member_remove(const NodeEtcd *local, const char *node, char *const *addresses, bool force, uint64_t deadline,
                         char **ret_msg) {
        cleanup_free char *err = NULL;
        EtcdClient *c = NULL;
        ForgetMember m;
        int r;

        r = forget_member_observe(local, node, addresses, force, deadline, &m, &err);
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
