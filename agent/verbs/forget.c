/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The forget verb: run on a surviving control plane, with its administrator credentials and its
 * etcd, it removes a gone node's etcd member, its kubeadm ClusterStatus entry and its Node object,
 * as a plan of three rows in the phase "forget" that is printed, confirmed, run, observed again and
 * reported like a reset. It proves the node gone first, and again before each row acts: never the
 * node it runs on (by its own Node name), a Node whose Ready heartbeat and Lease are older than
 * --stale-for (unless --force), and, without an etcd member here to check the node's member with, no
 * control plane or etcd server unless --etcd-gone says its member is gone (forget-member.h decides
 * the member itself). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/base/log.h"
#include "agent/config/node-name.h"
#include "agent/base/json.h"
#include "agent/engine/console.h"
#include "agent/engine/phase.h"
#include "agent/engine/engine.h"
#include "agent/os/host-place.h"
#include "agent/report/report.h"
#include "agent/verbs/forget-kubeadm.h"
#include "agent/verbs/forget-member.h"
#include "agent/verbs/forget-node.h"
#include "agent/verbs/forget.h"
#include "agent/verbs/root.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

#define PHASE "forget"
#define EXIT_CLEAN 0
#define EXIT_RESIDUE 1
#define EXIT_USAGE 2
#define EXIT_REFUSED 3
#define ETCD_DEADLINE_USEC (30 * USEC_PER_SEC)
/* k3s and rke2 hold each server's Node with their etcd controller's finalizer
 * (wrangler.cattle.io/managed-etcd-controller, pkg/etcd/member_controller.go: OnRemove) until that
 * controller, on the leader, has looked for its member: a deleted Node is gone a moment later. */
#define NODE_GONE_WAIT_USEC (15 * USEC_PER_SEC)
#define NODE_GONE_POLL_USEC (250 * USEC_PER_MSEC)

typedef struct Forget {
        const ForgetOptions *o;
        const char *node;
        Context ctx;
        char *root;
        char *hostname; /* the node forget runs on, for the report; NULL: unknown */
        KubeIdentity id;
        char *id_error;   /* why there are no credentials; NULL when there are */
        char *self_error; /* why this node's own Node name (id.node) is unknown; NULL when known */
        NodeEtcd local;
        int local_found; /* node_etcd_find_here(): 1, 0 none, < 0 */
        char *local_error;
        char **addresses; /* the Node's and ClusterStatus's: gathered by each observation, kept */
        bool refused;     /* the plan refused */
        bool failed;      /* the plan could not observe something: it exits 1, and nothing is run */
        Plan *running;    /* the plan being executed */
} Forget;

static Forget *forget; /* the verb's state, for its actions */

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

static uint64_t etcd_deadline(void) {
        uint64_t d = now(CLOCK_MONOTONIC) + ETCD_DEADLINE_USEC;

        return forget->o->deadline_usec > 0 && forget->o->deadline_usec < d ? forget->o->deadline_usec : d;
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
        uint64_t deadline = etcd_deadline();
        cleanup_free char *why = NULL;
        Observed o;
        int r;

        r = observe(forget, deadline, &o);
        if (r >= 0 && (r = gate(forget, &o, &why)) > 0)
                r = set_errmsg(ret_msg, -EPERM, "refused: %s", why);
        else if (r >= 0) {
                ForgetTarget t = target_of(forget, &o);

                r = forget_member_remove(&forget->local, &t, deadline, ret_msg);
        }
        observed_done(&o);
        if (r < 0 && forget->running)
                refuse_rest(forget->running, *ret_msg ?: strerror(-r));
        return r;
}

/* After the DELETE: wait, bounded, for the Node to go; one still held names what holds it, and
 * the verification finds it still there. */
static int node_wait_gone(uint64_t deadline, char **ret_msg) {
        uint64_t until = now(CLOCK_MONOTONIC) + NODE_GONE_WAIT_USEC;
        cleanup_free char *why = NULL, *path = strprintf("/api/v1/nodes/%s", forget->node);
        ForgetNode seen = {};
        int r, held = -1; /* the last answer: 1 still there, 0 gone; -1 none yet */

        if (!path)
                return -ENOMEM;
        if (deadline > 0 && deadline < until)
                until = deadline;
        for (;;) {
                JsonValue *v;

                why = mfree(why);
                r = api_get(forget, path, "Node", "v1", until, &v, &why);
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
                               forget->node, seen.finalizers ?: "none");
        else if (r != -ENOMEM && held == 0)
                r = set_errmsg(ret_msg, 1, "deleted Node %s", forget->node);
        else if (r != -ENOMEM)
                /* The DELETE was accepted; whether the Node went, verify asks again. */
                r = set_errmsg(ret_msg, 1, "asked to delete Node %s; whether it is gone cannot be told: %s",
                               forget->node, why ?: strerror(-r));
        forget_node_done(&seen);
        return r;
}

static int node_apply(Action *a, Context *ctx, char **ret_msg) {
        cleanup_free char *path = strprintf("/api/v1/nodes/%s", forget->node), *why = NULL;
        HttpResult res;
        int r;

        if (!forget->id.kc)
                return set_errmsg(ret_msg, -EACCES, "%s", forget->id_error ?: "no credentials");
        if (!path)
                return -ENOMEM;
        r = gate_again(forget, ctx->deadline_usec, ret_msg);
        if (r < 0)
                return r;
        r = kube_api_request(forget->id.kc,
                             &(KubeRequest) { .method = "DELETE",
                                              .path = path,
                                              .kind = "Node",
                                              .api_version = "v1",
                                              .deadline_usec = ctx->deadline_usec },
                             &res);
        if (r >= 0 && kube_api_answered(&res) && (res.status == 200 || res.status == 202))
                r = node_wait_gone(ctx->deadline_usec, ret_msg);
        else if (r >= 0 && kube_api_answered(&res) && res.status == 404)
                r = 0;
        else if (r >= 0)
                r = set_errmsg(ret_msg, kube_api_answered(&res) ? -EIO : -EHOSTUNREACH, "cannot delete Node %s: %s",
                               forget->node, (why = kube_api_describe(&res)) ?: "out of memory");
        http_result_done(&res);
        return r;
}

static int kubeadm_apply(Action *a, Context *ctx, char **ret_msg) {
        int r;

        if (!forget->id.kc)
                return set_errmsg(ret_msg, -EACCES, "%s", forget->id_error ?: "no credentials");
        r = gate_again(forget, ctx->deadline_usec, ret_msg);
        if (r < 0)
                return r;
        r = kubeadm_endpoint_remove(forget->id.kc, forget->node, ctx->deadline_usec, ret_msg);
        return r > 0 ? set_errmsg(ret_msg, 1, "removed %s from ClusterStatus.apiEndpoints", forget->node) : r;
}

static const ActionOps etcd_ops = { .kind = "etcd-member", .apply = etcd_apply };
static const ActionOps node_ops = { .kind = "node-object", .apply = node_apply };
static const ActionOps kubeadm_ops = { .kind = "kubeadm-endpoint", .apply = kubeadm_apply };

static int add_row(Plan *plan, const ActionOps *ops, const char *target, Action **ret) {
        *ret = plan_add(plan, ops, PHASE, target, "forget", NULL);
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
        r = forget_member_observe(&f->local, &t, etcd_deadline(), &m, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                f->failed = !verifying;
                r = add_row(plan, &etcd_ops, "etcd-member", &a);
                if (r >= 0)
                        a->present = true;
                return r < 0 ? r : action_set_detail(a, "no etcd member answers: %s", err);
        }
        target = m.found ? strprintf("etcd-member/%016" PRIx64 " (%s)", m.id, m.name) : strdup("etcd-member");
        r = target ? add_row(plan, &etcd_ops, target, &a) : -ENOMEM;
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
        r = add_row(plan, &kubeadm_ops, "ConfigMap/kube-system/kubeadm-config", &a);
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

        r = target ? add_row(plan, &node_ops, target, &a) : -ENOMEM;
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

static int forget_plan(Forget *f, Plan *plan, bool verifying) {
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

static void forget_done(Forget *f) {
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
        node_etcd_forget();
        forget = NULL;
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

static int forget_setup(Forget *f, const ForgetOptions *o, const char *node) {
        bool on_node;

        *f = (Forget) { .o = o, .node = node, .ctx.root_fd = -EBADF };
        forget = f;
        if (root_open(o->root, &f->root, &f->ctx.root_fd) < 0)
                return EXIT_USAGE;
        f->ctx.root = f->root;
        f->ctx.deadline_usec = o->deadline_usec;
        on_node = streq(f->ctx.root, "/");
        if (node_host_name(f->ctx.root_fd, on_node, &f->hostname) < 0 || open_identity(f, on_node) < 0 ||
            detect_node_installer(f->ctx.root_fd, &f->ctx.installer) < 0)
                return log_oom(), EXIT_RESIDUE;
        /* forget runs on the surviving control plane whose files --root names (a toolbox's /host):
         * its etcd answers here. */
        f->local_found = node_etcd_find_here(&f->ctx, &f->local, &f->local_error);
        if (f->local_found < 0)
                log_warning("This node's etcd member cannot be found: %s", f->local_error ?: strerror(-f->local_found));
        return 0;
}

/* What is still there after the rows ran: the rows an observation finds something to do for. */
static int forget_verify(Forget *f, Plan **ret) {
        Plan *fresh = plan_new(), *residue = plan_new();
        int r = fresh && residue ? forget_plan(f, fresh, true) : -ENOMEM;

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

static void forget_emit(const Forget *f, ReportInfo *info, const Plan *plan, const Plan *residue) {
        Emitter e;

        info->root = f->root;
        info->finished_usec = now(CLOCK_REALTIME);
        emitter_init(&e, stdout, f->o->output, color_wanted(stdout));
        e.all_actions = f->o->all_actions;
        report_emit(&e, info, plan, residue);
}

static bool forget_confirmed(const Forget *f, const Plan *plan) {
        cleanup_free char *what = strprintf("forget node %s", f->node);
        FILE *out = f->o->output == OUTPUT_JSON ? stderr : stdout;
        Emitter e;

        emitter_init(&e, out, OUTPUT_TEXT, color_wanted(out));
        e.all_actions = f->o->all_actions;
        report_plan_text(&e, plan);
        fflush(out);
        return what && console_confirm(stdin, stderr, what);
}

static int forget_run(Forget *f, Plan *plan, ReportInfo *info) {
        Plan *residue = NULL;
        int r;

        info->executed = true;
        log_notice("Forgetting node %s: %zu actions.", f->node, plan->n_actions);
        f->running = plan;
        (void) engine_execute(&f->ctx, plan, NULL);
        f->running = NULL;
        r = forget_verify(f, &residue);
        if (r < 0)
                log_error("Cannot observe the cluster again: %s", strerror(-r));
        info->verified = residue != NULL;
        info->exit_status = plan_count(plan, NULL, ACTION_FAILED) > 0 || !residue || residue->n_actions > 0
                                    ? EXIT_RESIDUE
                                    : EXIT_CLEAN;
        forget_emit(f, info, plan, residue);
        plan_free(residue);
        return info->exit_status;
}

int verb_forget(const ForgetOptions *o, int argc, char *argv[]) {
        ReportInfo info = { .command = "forget", .started_usec = now(CLOCK_REALTIME) };
        Plan *plan = NULL;
        Forget f;
        int r;

        if (argc != 2 || !node_name_is_valid(argv[1])) {
                fprintf(stderr, "node-reset: 'forget' takes one NODE, a node name%s\nTry 'node-reset --help'.\n",
                        argc == 2 ? ": not a valid one" : "");
                return EXIT_USAGE;
        }
        if (o->node_name && !node_name_is_valid(o->node_name)) {
                fprintf(stderr, "node-reset: invalid --node-name '%s': not a node name\nTry 'node-reset --help'.\n",
                        o->node_name);
                return EXIT_USAGE;
        }
        r = forget_setup(&f, o, argv[1]);
        if (r == 0 && !(plan = plan_new())) {
                (void) log_oom();
                r = EXIT_RESIDUE;
        }
        if (r == 0 && (r = forget_plan(&f, plan, false)) < 0) {
                log_error("Cannot build the plan, nothing was changed: %s", strerror(-r));
                r = EXIT_RESIDUE;
        }
        if (r != 0)
                goto finish;
        info.hostname = f.hostname;
        /* The dry run exits as the run would: 1 when something cannot be observed, 3 when refused. */
        info.exit_status = r = f.failed ? EXIT_RESIDUE : f.refused ? EXIT_REFUSED : EXIT_CLEAN;
        if (f.failed)
                log_error("Cannot forget %s: what it left cannot all be observed; nothing was changed.", f.node);
        else if (f.refused)
                log_error("Refusing to forget %s: %s", f.node, plan->actions[0]->skip_reason);
        if (o->plan_only || f.refused || f.failed)
                forget_emit(&f, &info, plan, NULL);
        else if (!o->yes && !forget_confirmed(&f, plan))
                r = EXIT_REFUSED;
        else
                r = forget_run(&f, plan, &info);
finish:
        plan_free(plan);
        forget_done(&f);
        return r;
}
