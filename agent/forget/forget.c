/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Forgetting a gone node, run on a surviving control plane with its administrator credentials and its
 * etcd: it removes the node's etcd member, its kubeadm ClusterStatus entry and its Node object, as a
 * plan of three rows in the phase "forget". It proves the node gone first, and again before each row
 * acts: never the node it runs on (by its own Node name), a Node whose Ready heartbeat and Lease are
 * older than --stale-for (unless --force), and, without an etcd member here to check the node's
 * member with, no control plane or etcd server unless --etcd-gone says its member is gone
 * (forget-member.h decides the member itself). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/base/json.h"
#include "agent/base/log.h"
#include "agent/config/node-name.h"
#include "agent/engine/engine.h"
#include "agent/engine/phase.h"
#include "agent/forget/forget-kubeadm.h"
#include "agent/forget/forget-member.h"
#include "agent/forget/forget-node.h"
#include "agent/forget/forget.h"
#include "agent/os/host-place.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

#define PHASE "forget"
#define ETCD_DEADLINE_USEC (30 * USEC_PER_SEC)
/* k3s and rke2 hold each server's Node with their etcd controller's finalizer
 * (wrangler.cattle.io/managed-etcd-controller, pkg/etcd/member_controller.go: OnRemove) until that
 * controller, on the leader, has looked for its member: a deleted Node is gone a moment later. */
#define NODE_GONE_WAIT_USEC (15 * USEC_PER_SEC)
#define NODE_GONE_POLL_USEC (250 * USEC_PER_MSEC)

/* What one look at the API server found of the node. */
typedef struct Observed {
        int node; /* 1 its Node, 0 none, < 0 it could not be read (node_err) */
        char *node_err;
        ForgetNode seen;
        int lease; /* 1 its Lease, 0 none, < 0 it could not be read (lease_err) */
        char *lease_err;
        usec_t renew;
} Observed;

static void observed_done(Observed *o) {
        free(o->node_err);
        forget_node_done(&o->seen);
        free(o->lease_err);
        *o = (Observed) {};
}

static uint64_t etcd_deadline(const Forget *f) {
        uint64_t d = now(CLOCK_MONOTONIC) + ETCD_DEADLINE_USEC;

        return f->o->deadline_usec > 0 && f->o->deadline_usec < d ? f->o->deadline_usec : d;
}

/* GET path, an object of kind in api_version: 1 and the object, 0 on 404, -errno with the words
 * (an answer of another kind is none: kube-api.h). */
static int api_get(Forget *f, const char *path, const char *kind, const char *api_version, uint64_t deadline,
                   JsonValue **ret, char **ret_why) {
        cleanup_free char *why = NULL;
        HttpResult res;
        int r;

        if (!f->id.kc)
                return set_errmsg(ret_why, -EACCES, "%s", f->id_error ?: "no credentials");
        r = kube_api_request(
                f->id.kc,
                &(KubeRequest) { .path = path, .kind = kind, .api_version = api_version, .deadline_usec = deadline },
                &res);
        if (r >= 0 && kube_api_answered(&res) && res.status == 404)
                r = 0;
        else if (r >= 0 && kube_api_answered(&res) && res.status == 200)
                r = kube_api_json(&res, ret) >= 0 ? 1
                                                  : set_errmsg(ret_why, -EBADMSG, "%s: the answer is no JSON", path);
        else if (r >= 0)
                r = set_errmsg(ret_why, kube_api_answered(&res) ? -EIO : -EHOSTUNREACH, "%s",
                               (why = kube_api_describe(&res)) ?: "out of memory");
        http_result_done(&res);
        return r;
}

/* The Node (its addresses kept in f->addresses) and its Lease in kube-node-lease. */
static int observe(Forget *f, uint64_t deadline, Observed *o) {
        cleanup_free char *node_path = strprintf("/api/v1/nodes/%s", f->node),
                          *lease_path = strprintf("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/%s",
                                                  f->node);
        JsonValue *v;
        int r;

        *o = (Observed) {};
        if (!node_path || !lease_path)
                return -ENOMEM;
        o->node = api_get(f, node_path, "Node", "v1", deadline, &v, &o->node_err);
        if (o->node > 0) {
                r = forget_node_read(v, &o->seen);
                json_free(v);
                STRV_FOREACH(a, o->seen.addresses)
                        if (r >= 0)
                                r = strv_extend_unique(&f->addresses, *a);
                if (r < 0)
                        return r;
        }
        o->lease = api_get(f, lease_path, "Lease", "coordination.k8s.io/v1", deadline, &v, &o->lease_err);
        if (o->lease > 0) {
                if (forget_lease_read(v, &o->renew) < 0)
                        o->renew = 0; /* a Lease never renewed says nothing of life */
                json_free(v);
        }
        return o->node == -ENOMEM || o->lease == -ENOMEM ? -ENOMEM : 0;
}

/* Is the node the one forget runs on: by its own Node name, and on the node itself by an address of
 * the Node's that is this machine's? 1 with the words, 0 no. Whatever its etcd: an external one, or
 * none, has no member to tell it by. */
static int gate_self(Forget *f, const Observed *o, char **ret_why) {
        if (f->self_error)
                return set_errmsg(ret_why, 1,
                                  "the name of the node forget runs on is unknown (%s): it cannot tell that %s is not "
                                  "that node (--node-name names it)",
                                  f->self_error, f->node);
        if (streq(f->id.node, f->node))
                return set_errmsg(ret_why, 1, "%s is the node forget runs on (its name from the %s)", f->node,
                                  f->id.node_source);
        if (streq(f->ctx.root, "/"))
                STRV_FOREACH(a, o->seen.addresses)
                        if (host_place(*a) == HOST_HERE)
                                return set_errmsg(ret_why, 1,
                                                  "Node %s has address %s, which is this machine's: it is the node "
                                                  "forget runs on",
                                                  f->node, *a);
        return 0;
}

/* Has the node been silent for --stale-for (both its Ready heartbeat and its Lease)? */
static int gate_stale(Forget *f, const Observed *o, char **ret_why) {
        uint64_t stale_for = f->o->stale_for_sec ?: FORGET_STALE_FOR_DEFAULT_SEC;
        usec_t last, t = now(CLOCK_REALTIME);
        char want[32], ago[32];

        if (f->o->force)
                return 0;
        if (o->node < 0 || o->lease < 0)
                return set_errmsg(ret_why, 1, "whether %s is gone cannot be told: %s (--force forgets it all the same)",
                                  f->node, o->node < 0 ? o->node_err : o->lease_err);
        last = forget_node_last_seen(&o->seen, o->renew);
        duration_format(stale_for, want, sizeof want);
        if (o->node == 0 && o->renew == 0)
                return 0; /* neither a Node nor a Lease says it lives */
        if (last == 0)
                return set_errmsg(ret_why, 1,
                                  "Node %s has no Ready heartbeat, Lease or creation time: whether it is "
                                  "gone cannot be told (--force forgets it all the same)",
                                  f->node);
        duration_format(last < t ? (t - last) / USEC_PER_SEC : 0, ago, sizeof ago);
        if (last >= t || t - last < stale_for * USEC_PER_SEC)
                return set_errmsg(ret_why, 1,
                                  "%s was last heard from %s ago (%s), less than --stale-for %s: it may not be gone "
                                  "(--force forgets it all the same)",
                                  f->node, ago,
                                  o->renew == last            ? "its Lease's renewTime"
                                  : o->seen.heartbeat == last ? "its Ready condition's lastHeartbeatTime"
                                                              : "its Node's creation, never a heartbeat since",
                                  want);
        return 0;
}

/* A control plane or etcd server whose member this machine has no etcd to check: on k3s and rke2 a
 * deleted server Node has their controller remove its member unchecked (pkg/etcd/member_controller.go). */
static int gate_server(Forget *f, const Observed *o, char **ret_why) {
        if (!o->seen.server || f->o->etcd_gone || (f->local_found > 0 && !f->local.external) ||
            (f->local_found == 0 && f->local.external))
                return 0;
        return set_errmsg(ret_why, 1,
                          "Node %s is a control plane or etcd server (%s), and this machine has no etcd member to "
                          "check its member with (%s): --etcd-gone says its member is gone",
                          f->node, o->seen.server, f->local_found < 0 ? strna(f->local_error) : "no local etcd");
}

/* Why the node must not be forgotten now: 1 with the words, 0 when it may be, -ENOMEM. */
static int gate(Forget *f, const Observed *o, char **ret_why) {
        int r = gate_self(f, o, ret_why);

        if (r == 0)
                r = gate_server(f, o, ret_why);
        if (r == 0)
                r = gate_stale(f, o, ret_why);
        return r;
}

/* Before a row acts: the node is observed again, and whatever the plan saw is decided anew. */
static int gate_again(Forget *f, uint64_t deadline, char **ret_msg) {
        cleanup_free char *why = NULL;
        Observed o;
        int r;

        r = observe(f, deadline, &o);
        if (r >= 0)
                r = gate(f, &o, &why);
        observed_done(&o);
        if (r > 0)
                return set_errmsg(ret_msg, -EPERM, "refused: %s", why);
        return r;
}

static ForgetTarget target_of(const Forget *f, const Observed *o) {
        return (ForgetTarget) { .node = f->node, .addresses = f->addresses, .member_name = o->seen.etcd_member };
}

static void refuse_rest(Plan *plan, const char *why);

/* A member whose removal failed stays, and so does the rest (refuse_rest()): on k3s and rke2 a
 * deleted server Node would have their etcd controller remove the member without this verb's checks
 * (pkg/etcd/member_controller.go). */
static int etcd_apply(Action *a, Context *ctx, char **ret_msg) {
        Forget *f = a->data;
        uint64_t deadline = etcd_deadline(f);
        cleanup_free char *why = NULL;
        Observed o;
        int r;

        r = observe(f, deadline, &o);
        if (r >= 0 && (r = gate(f, &o, &why)) > 0)
                r = set_errmsg(ret_msg, -EPERM, "refused: %s", why);
        else if (r >= 0) {
                ForgetTarget t = target_of(f, &o);

                r = forget_member_remove(&f->local, &t, deadline, ret_msg);
        }
        observed_done(&o);
        if (r < 0 && f->running)
                refuse_rest(f->running, *ret_msg ?: strerror(-r));
        return r;
}

/* After the DELETE: wait, bounded, for the Node to go; one still held names what holds it, and
 * the verification finds it still there. */
static int node_wait_gone(Forget *f, uint64_t deadline, char **ret_msg) {
        uint64_t until = now(CLOCK_MONOTONIC) + NODE_GONE_WAIT_USEC;
        cleanup_free char *why = NULL, *path = strprintf("/api/v1/nodes/%s", f->node);
        ForgetNode seen = {};
        int r, held = -1; /* the last answer: 1 still there, 0 gone; -1 none yet */

        if (!path)
                return -ENOMEM;
        if (deadline > 0 && deadline < until)
                until = deadline;
        for (;;) {
                JsonValue *v;

                why = mfree(why);
                r = api_get(f, path, "Node", "v1", until, &v, &why);
                if (r > 0) {
                        forget_node_done(&seen);
                        r = forget_node_read(v, &seen) ?: 1;
                        json_free(v);
                }
                if (r == -ENOMEM)
                        break;
                if (r >= 0)
                        held = r;
                if (r <= 0 || now(CLOCK_MONOTONIC) + NODE_GONE_POLL_USEC >= until)
                        break;
                (void) usleep(NODE_GONE_POLL_USEC);
        }
        if (r != -ENOMEM && held > 0)
                r = set_errmsg(ret_msg, 1, "asked to delete Node %s; it is still there, held by its finalizers (%s)",
                               f->node, seen.finalizers ?: "none");
        else if (r != -ENOMEM && held == 0)
                r = set_errmsg(ret_msg, 1, "deleted Node %s", f->node);
        else if (r != -ENOMEM)
                /* The DELETE was accepted; whether the Node went, verify asks again. */
                r = set_errmsg(ret_msg, 1, "asked to delete Node %s; whether it is gone cannot be told: %s", f->node,
                               why ?: strerror(-r));
        forget_node_done(&seen);
        return r;
}

static int node_apply(Action *a, Context *ctx, char **ret_msg) {
        Forget *f = a->data;
        cleanup_free char *path = strprintf("/api/v1/nodes/%s", f->node), *why = NULL;
        HttpResult res;
        int r;

        if (!f->id.kc)
                return set_errmsg(ret_msg, -EACCES, "%s", f->id_error ?: "no credentials");
        if (!path)
                return -ENOMEM;
        r = gate_again(f, ctx->deadline_usec, ret_msg);
        if (r < 0)
                return r;
        r = kube_api_request(f->id.kc,
                             &(KubeRequest) { .method = "DELETE",
                                              .path = path,
                                              .kind = "Node",
                                              .api_version = "v1",
                                              .deadline_usec = ctx->deadline_usec },
                             &res);
        if (r >= 0 && kube_api_answered(&res) && (res.status == 200 || res.status == 202))
                r = node_wait_gone(f, ctx->deadline_usec, ret_msg);
        else if (r >= 0 && kube_api_answered(&res) && res.status == 404)
                r = 0;
        else if (r >= 0)
                r = set_errmsg(ret_msg, kube_api_answered(&res) ? -EIO : -EHOSTUNREACH, "cannot delete Node %s: %s",
                               f->node, (why = kube_api_describe(&res)) ?: "out of memory");
        http_result_done(&res);
        return r;
}

static int kubeadm_apply(Action *a, Context *ctx, char **ret_msg) {
        Forget *f = a->data;
        int r;

        if (!f->id.kc)
                return set_errmsg(ret_msg, -EACCES, "%s", f->id_error ?: "no credentials");
        r = gate_again(f, ctx->deadline_usec, ret_msg);
        if (r < 0)
                return r;
        r = kubeadm_endpoint_remove(f->id.kc, f->node, ctx->deadline_usec, ret_msg);
        return r > 0 ? set_errmsg(ret_msg, 1, "removed %s from ClusterStatus.apiEndpoints", f->node) : r;
}

static const ActionOps etcd_ops = { .kind = "etcd-member", .apply = etcd_apply };
static const ActionOps node_ops = { .kind = "node-object", .apply = node_apply };
static const ActionOps kubeadm_ops = { .kind = "kubeadm-endpoint", .apply = kubeadm_apply };

/* Each row's data is the verb's state (not the row's: no free_data). */
static int add_row(Forget *f, Plan *plan, const ActionOps *ops, const char *target, Action **ret) {
        *ret = plan_add(plan, ops, PHASE, target, "forget", f);
        return *ret ? 0 : -ENOMEM;
}

static int plan_etcd_row(Forget *f, Plan *plan, const Observed *o, bool verifying) {
        cleanup_free char *err = NULL, *target = NULL;
        ForgetTarget t = target_of(f, o);
        ForgetMember m;
        Action *a;
        int r;

        if (f->local_found <= 0 || f->local.external)
                return 0; /* no stacked etcd here: nothing of the node's is in it */
        r = forget_member_observe(&f->local, &t, etcd_deadline(f), &m, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                f->failed = !verifying;
                r = add_row(f, plan, &etcd_ops, "etcd-member", &a);
                if (r >= 0)
                        a->present = true;
                return r < 0 ? r : action_set_detail(a, "no etcd member answers: %s", err);
        }
        target = m.found ? strprintf("etcd-member/%016" PRIx64 " (%s)", m.id, m.name) : strdup("etcd-member");
        r = target ? add_row(f, plan, &etcd_ops, target, &a) : -ENOMEM;
        if (r >= 0 && !m.found) {
                a->present = false;
                r = action_set_detail(a, "no member of the cluster (asked %s) is %s's by its name and a peer URL%s%s",
                                      m.endpoint, f->node, m.note ? "; " : "", strempty(m.note));
        } else if (r >= 0 && m.refusal) {
                a->present = true;
                f->refused = f->refused || !verifying;
                r = verifying ? action_set_detail(a, "%s", m.refusal)
                              : action_set_skip_code(a, "refused", "%s", m.refusal);
        } else if (r >= 0) {
                a->present = true;
                r = action_set_detail(a,
                                      "remove it (peer URLs %s; asked %s; %zu of the other voting members answer, "
                                      "of %zu)",
                                      m.peer_urls, m.endpoint, m.answering, m.voters);
        }
        forget_member_done(&m);
        return r;
}

static int plan_kubeadm_row(Forget *f, Plan *plan, const KubeadmEndpoint *e, int found, const char *err) {
        Action *a;
        int r;

        if (found == 0)
                return 0; /* no ClusterStatus entry: k3s, rke2, kubeadm >= 1.22, or removed already */
        r = add_row(f, plan, &kubeadm_ops, "ConfigMap/kube-system/kubeadm-config", &a);
        if (r < 0)
                return r;
        a->present = true;
        if (found < 0)
                return action_set_detail(a, "%s", err ?: strerror(-found));
        return action_set_detail(a, "remove %s (advertiseAddress %s) from ClusterStatus.apiEndpoints", f->node,
                                 e->address ?: "none");
}

static int plan_node_row(Forget *f, Plan *plan, const Observed *o) {
        cleanup_free char *target = strprintf("Node/%s", f->node);
        Action *a;
        int r;

        r = target ? add_row(f, plan, &node_ops, target, &a) : -ENOMEM;
        if (r < 0)
                return r;
        a->present = o->node != 0;
        if (o->node < 0)
                return action_set_detail(a, "cannot ask for Node %s: %s", f->node, strna(o->node_err));
        if (o->node > 0 && o->seen.deleting)
                return action_set_detail(a, "being deleted, held by its finalizers (%s)", o->seen.finalizers ?: "none");
        return action_set_detail(a, o->node > 0 ? "delete it (credentials of %s)" : "no Node object %s",
                                 o->node > 0 ? f->id.kc->path : f->node);
}

/* A refused member keeps everything: a node whose member answers is not gone. */
static void refuse_rest(Plan *plan, const char *why) {
        PLAN_FOREACH(a, plan)
                if (a->ops != &etcd_ops && !a->skip_reason)
                        (void) action_set_skip_code(a, "refused", "not run: its etcd member stays (%s)", why);
}

/* A node not proven gone keeps everything, its member first: this reason before any other. */
static void refuse_all(Plan *plan, const char *why) {
        PLAN_FOREACH(a, plan)
                (void) action_set_skip_code(a, "refused", "%s", why);
}

static int plan_rows(Forget *f, Plan *plan, bool verifying) {
        cleanup_free char *kubeadm_err = NULL, *why = NULL;
        KubeadmEndpoint e = {};
        Observed o;
        int kubeadm, r;

        r = observe(f, f->o->deadline_usec, &o);
        kubeadm = f->id.kc ? kubeadm_endpoint_find(f->id.kc, f->node, f->o->deadline_usec, &e, &kubeadm_err) : 0;
        if (r < 0 || kubeadm == -ENOMEM || (e.address && strv_extend_unique(&f->addresses, e.address) < 0)) {
                r = -ENOMEM;
                goto finish;
        }
        /* What cannot be observed now cannot be proven when run: the plan says so, and stops. */
        f->failed = !verifying && (o.node < 0 || kubeadm < 0);
        r = plan_etcd_row(f, plan, &o, verifying);
        if (r >= 0)
                r = plan_kubeadm_row(f, plan, &e, kubeadm, kubeadm_err);
        if (r >= 0)
                r = plan_node_row(f, plan, &o);
        if (r >= 0 && !verifying && (r = gate(f, &o, &why)) > 0) {
                f->refused = true;
                refuse_all(plan, why);
        } else if (r >= 0 && f->refused && plan->n_actions > 0)
                refuse_rest(plan, plan->actions[0]->skip_reason);
finish:
        kubeadm_endpoint_done(&e);
        observed_done(&o);
        return r < 0 ? r : 0;
}

int forget_plan(Forget *f, Plan *plan) {
        return plan_rows(f, plan, false);
}

void forget_done(Forget *f) {
        kube_identity_done(&f->id);
        free(f->id_error);
        free(f->self_error);
        free(f->hostname);
        node_etcd_done(&f->local);
        free(f->local_error);
        strv_free(f->addresses);
        phase_facts_done(&f->ctx);
        (void) close_nointr(f->ctx.root_fd);
        free(f->root);
}

/* The credentials, and the name of the node forget runs on: --node-name, its kubelet's client
 * certificate, its host name (node-name.h). Without a name the credentials are kept, and the gate
 * refuses. */
static int open_identity(Forget *f, bool on_node) {
        int r = kube_identity_open(f->ctx.root_fd, on_node, f->o->kubeconfig, f->o->node_name, false, &f->id,
                                   &f->id_error);

        if (r >= 0 || (f->id.kc && (r == -ENXIO || r == -EINVAL))) {
                f->self_error = TAKE_PTR(f->id_error);
                if (r >= 0)
                        f->self_error = mfree(f->self_error);
                else if (!f->self_error && !(f->self_error = strdup(strerror(-r))))
                        return -ENOMEM;
                return 0;
        }
        if (!f->id_error)
                f->id_error = strprintf(r == -ENOENT ? "no administrator kubeconfig (admin.conf, k3s.yaml, rke2.yaml) "
                                                       "and no --kubeconfig"
                                                     : "cannot read the credentials: %s",
                                        strerror(-r));
        kube_identity_done(&f->id);
        f->self_error = strdup("no credentials to read it with");
        return f->id_error && f->self_error ? 0 : -ENOMEM;
}

int forget_setup(Forget *f, const ForgetOptions *o, const char *node, char *root, int root_fd) {
        bool on_node;

        *f = (Forget) { .o = o, .node = node, .root = root, .ctx.root = root, .ctx.root_fd = root_fd };
        f->ctx.deadline_usec = o->deadline_usec;
        on_node = streq(f->ctx.root, "/");
        if (node_host_name(f->ctx.root_fd, on_node, &f->hostname) < 0 || open_identity(f, on_node) < 0 ||
            detect_node_installer(f->ctx.root_fd, &f->ctx.installer) < 0)
                return -ENOMEM;
        /* forget runs on the surviving control plane whose files --root names (a toolbox's /host):
         * its etcd answers here. */
        f->local_found = node_etcd_find_here(&f->ctx, &f->local, &f->local_error);
        if (f->local_found < 0)
                log_warning("This node's etcd member cannot be found: %s", f->local_error ?: strerror(-f->local_found));
        return 0;
}

/* What is still there after the rows ran: the rows an observation finds something to do for. */
static int verify(Forget *f, Plan **ret) {
        Plan *fresh = plan_new(), *residue = plan_new();
        int r = fresh && residue ? plan_rows(f, fresh, true) : -ENOMEM;

        for (size_t i = 0; r >= 0 && i < fresh->n_actions; i++)
                if (fresh->actions[i]->present) {
                        r = plan_append(residue, fresh->actions[i]);
                        fresh->actions[i] = NULL;
                }
        plan_free(fresh);
        if (r < 0)
                residue = plan_free(residue);
        *ret = residue;
        return r;
}

int forget_execute(Forget *f, Plan *plan, Plan **ret_residue) {
        int r;

        log_notice("Forgetting node %s: %zu actions.", f->node, plan->n_actions);
        f->running = plan;
        (void) engine_execute(&f->ctx, plan, NULL);
        f->running = NULL;
        r = verify(f, ret_residue);
        if (r < 0)
                log_error("Cannot observe the cluster again: %s", strerror(-r));
        return r;
}
