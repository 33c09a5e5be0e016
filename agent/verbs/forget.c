/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The forget verb: run on a surviving control plane, with its administrator credentials and its
 * etcd, it removes a gone node's etcd member, its kubeadm ClusterStatus entry and its Node object,
 * as a plan of three rows in the phase "forget" that is printed, confirmed, run, observed again and
 * reported like a reset. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/base/log.h"
#include "agent/config/node-name.h"
#include "agent/config/yaml-util.h"
#include "agent/engine/console.h"
#include "agent/engine/phase.h"
#include "agent/engine/engine.h"
#include "agent/report/report.h"
#include "agent/verbs/forget-kubeadm.h"
#include "agent/verbs/forget-member.h"
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
        KubeIdentity id;
        char *id_error; /* why there are no credentials; NULL when there are */
        NodeEtcd local;
        int local_found; /* node_etcd_find(): 1, 0 none, < 0 */
        char *local_error;
        char **addresses; /* the Node's and ClusterStatus's: gathered by each observation, kept */
        bool refused;     /* the plan refused the member */
        Plan *running;    /* the plan being executed */
} Forget;

static Forget *forget; /* the verb's state, for its actions */

/* A Node as the API has it: being deleted (metadata.deletionTimestamp) it stays only for its finalizers. */
typedef struct NodeSeen {
        bool deleting;
        char *finalizers; /* ", "-separated; NULL when none */
} NodeSeen;

static void node_seen_done(NodeSeen *s) {
        free(s->finalizers);
        *s = (NodeSeen) {};
}

static uint64_t etcd_deadline(void) {
        uint64_t d = now(CLOCK_MONOTONIC) + ETCD_DEADLINE_USEC;

        return forget->o->deadline_usec > 0 && forget->o->deadline_usec < d ? forget->o->deadline_usec : d;
}

static void refuse_rest(Plan *plan, const char *why);

/* A member whose removal failed stays, and so does the rest (refuse_rest()): on k3s and rke2 a
 * deleted server Node would have their etcd controller remove the member without this verb's checks
 * (pkg/etcd/member_controller.go). */
static int etcd_apply(Action *a, Context *ctx, char **ret_msg) {
        int r = forget_member_remove(&forget->local, forget->node, forget->addresses, forget->o->force, etcd_deadline(),
                                     ret_msg);

        if (r < 0 && forget->running)
                refuse_rest(forget->running, *ret_msg ?: strerror(-r));
        return r;
}

static int read_seen(yaml_document_t *doc, yaml_node_t *meta, NodeSeen *seen) {
        yaml_node_t *fin = yaml_map_get(doc, meta, "finalizers");
        cleanup_strv char **l = NULL;

        seen->deleting = yaml_scalar_of(yaml_map_get(doc, meta, "deletionTimestamp")) != NULL;
        if (!fin || fin->type != YAML_SEQUENCE_NODE)
                return 0;
        for (yaml_node_item_t *i = fin->data.sequence.items.start; i < fin->data.sequence.items.top; i++) {
                const char *v = yaml_scalar_of(yaml_document_get_node(doc, *i));

                if (v && strv_extend(&l, v) < 0)
                        return -ENOMEM;
        }
        if (!l)
                return 0;
        seen->finalizers = strv_join(l, ", ");
        return seen->finalizers ? 0 : -ENOMEM;
}

/* The Node's status.addresses, kept in f->addresses, and whether it is being deleted (seen, when
 * given): 1, 0 when there is no such Node, -errno. */
static int observe_node(Forget *f, uint64_t deadline, NodeSeen *seen, char **ret_why) {
        cleanup_free char *path = strprintf("/api/v1/nodes/%s", f->node);
        yaml_document_t doc;
        yaml_node_t *addrs;
        HttpResult res;
        int r;

        if (!f->id.kc)
                return set_errmsg(ret_why, -EACCES, "%s", f->id_error ?: "no credentials");
        if (!path)
                return -ENOMEM;
        r = kube_api_request(
                f->id.kc,
                &(KubeRequest) { .path = path, .kind = "Node", .api_version = "v1", .deadline_usec = deadline }, &res);
        if (r >= 0 && kube_api_answered(&res) && res.status == 404)
                r = 0;
        else if (r >= 0 && kube_api_answered(&res) && res.status == 200 && kube_api_document(&res, &doc) >= 0) {
                addrs = yaml_map_get(&doc, yaml_map_get(&doc, yaml_document_get_root_node(&doc), "status"),
                                     "addresses");
                r = seen ? read_seen(&doc, yaml_map_get(&doc, yaml_document_get_root_node(&doc), "metadata"), seen) : 0;
                r = r < 0 ? r : 1;
                if (addrs && addrs->type == YAML_SEQUENCE_NODE)
                        for (yaml_node_item_t *i = addrs->data.sequence.items.start;
                             r > 0 && i < addrs->data.sequence.items.top; i++) {
                                const char *a =
                                        yaml_scalar_of(yaml_map_get(&doc, yaml_document_get_node(&doc, *i), "address"));

                                if (a && strv_extend_unique(&f->addresses, a) < 0)
                                        r = -ENOMEM;
                        }
                yaml_document_delete(&doc);
        } else if (r >= 0) {
                cleanup_free char *why = kube_api_describe(&res);

                r = set_errmsg(ret_why, -EHOSTUNREACH, "cannot ask for Node %s: %s", f->node, why ?: "out of memory");
        }
        http_result_done(&res);
        return r;
}

/* After the DELETE: wait, bounded, for the Node to go; one still held names what holds it, and
 * the verification finds it still there. */
static int node_wait_gone(uint64_t deadline, char **ret_msg) {
        uint64_t until = now(CLOCK_MONOTONIC) + NODE_GONE_WAIT_USEC;
        cleanup_free char *why = NULL;
        NodeSeen seen = {}, look = {};
        int r, held = -1; /* the last answer: 1 still there, 0 gone; -1 none yet */

        if (deadline > 0 && deadline < until)
                until = deadline;
        for (;;) {
                why = mfree(why);
                r = observe_node(forget, until, &look, &why);
                if (r == -ENOMEM)
                        break;
                if (r >= 0) {
                        node_seen_done(&seen);
                        seen = look;
                        look = (NodeSeen) {};
                        held = r;
                }
                node_seen_done(&look);
                if (r <= 0 || now(CLOCK_MONOTONIC) + NODE_GONE_POLL_USEC >= until)
                        break;
                (void) usleep(NODE_GONE_POLL_USEC);
        }
        node_seen_done(&look);
        if (r == -ENOMEM) {
                node_seen_done(&seen);
                return r;
        }
        if (held > 0)
                r = set_errmsg(ret_msg, 1, "asked to delete Node %s; it is still there, held by its finalizers (%s)",
                               forget->node, seen.finalizers ?: "none");
        else if (held == 0)
                r = set_errmsg(ret_msg, 1, "deleted Node %s", forget->node);
        else
                /* The DELETE was accepted; whether the Node went, verify asks again. */
                r = set_errmsg(ret_msg, 1, "asked to delete Node %s; whether it is gone cannot be told: %s",
                               forget->node, why ?: strerror(-r));
        node_seen_done(&seen);
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

static int plan_etcd_row(Forget *f, Plan *plan, bool verifying) {
        cleanup_free char *err = NULL, *target = NULL;
        ForgetMember m;
        Action *a;
        int r;

        if (f->local_found <= 0 || f->local.external)
                return 0; /* no stacked etcd here: nothing of the node's is in it */
        r = forget_member_observe(&f->local, f->node, f->addresses, f->o->force, etcd_deadline(), &m, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                r = add_row(plan, &etcd_ops, "etcd-member", &a);
                if (r >= 0)
                        a->present = true;
                return r < 0 ? r : action_set_detail(a, "no etcd member answers: %s", err);
        }
        target = m.found ? strprintf("etcd-member/%016" PRIx64 " (%s)", m.id, m.name) : strdup("etcd-member");
        r = target ? add_row(plan, &etcd_ops, target, &a) : -ENOMEM;
        if (r >= 0 && !m.found) {
                a->present = false;
                r = action_set_detail(a, "no member of the cluster (asked %s) is %s's", m.endpoint, f->node);
        } else if (r >= 0 && m.refusal) {
                a->present = true;
                f->refused = !verifying;
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

static int plan_node_row(Forget *f, Plan *plan, int found, const NodeSeen *seen, const char *err) {
        cleanup_free char *target = strprintf("Node/%s", f->node);
        Action *a;
        int r;

        r = target ? add_row(plan, &node_ops, target, &a) : -ENOMEM;
        if (r < 0)
                return r;
        a->present = found != 0;
        if (found < 0)
                return action_set_detail(a, "%s", err ?: strerror(-found));
        if (found > 0 && seen->deleting)
                return action_set_detail(a, "being deleted, held by its finalizers (%s)", seen->finalizers ?: "none");
        return action_set_detail(a, found > 0 ? "delete it (credentials of %s)" : "no Node object %s",
                                 found > 0 ? f->id.kc->path : f->node);
}

/* A refused member keeps everything: a node whose member answers is not gone. */
static void refuse_rest(Plan *plan, const char *why) {
        PLAN_FOREACH(a, plan)
                if (a->ops != &etcd_ops && !a->skip_reason)
                        (void) action_set_skip_code(a, "refused", "not run: its etcd member stays (%s)", why);
}

static int forget_plan(Forget *f, Plan *plan, bool verifying) {
        cleanup_free char *node_err = NULL, *kubeadm_err = NULL;
        KubeadmEndpoint e = {};
        NodeSeen seen = {};
        int node, kubeadm, r;

        node = observe_node(f, f->o->deadline_usec, &seen, &node_err);
        kubeadm = f->id.kc ? kubeadm_endpoint_find(f->id.kc, f->node, f->o->deadline_usec, &e, &kubeadm_err) : 0;
        if (node == -ENOMEM || kubeadm == -ENOMEM || (e.address && strv_extend_unique(&f->addresses, e.address) < 0)) {
                kubeadm_endpoint_done(&e);
                node_seen_done(&seen);
                return -ENOMEM;
        }
        r = plan_etcd_row(f, plan, verifying);
        if (r >= 0)
                r = plan_kubeadm_row(f, plan, &e, kubeadm, kubeadm_err);
        if (r >= 0)
                r = plan_node_row(f, plan, node, &seen, node_err);
        if (r >= 0 && f->refused && plan->n_actions > 0)
                refuse_rest(plan, plan->actions[0]->skip_reason);
        kubeadm_endpoint_done(&e);
        node_seen_done(&seen);
        return r;
}

static void forget_done(Forget *f) {
        kube_identity_done(&f->id);
        free(f->id_error);
        node_etcd_done(&f->local);
        free(f->local_error);
        strv_free(f->addresses);
        phase_facts_done(&f->ctx);
        (void) close_nointr(f->ctx.root_fd);
        free(f->root);
        node_etcd_forget();
        forget = NULL;
}

static int forget_setup(Forget *f, const ForgetOptions *o, const char *node) {
        int r;

        *f = (Forget) { .o = o, .node = node, .ctx.root_fd = -EBADF };
        forget = f;
        if (root_open(o->root, &f->root, &f->ctx.root_fd) < 0)
                return EXIT_USAGE;
        f->ctx.root = f->root;
        f->ctx.deadline_usec = o->deadline_usec;
        r = kube_identity_open(f->ctx.root_fd, streq(f->ctx.root, "/"), o->kubeconfig, node, false, &f->id,
                               &f->id_error);
        if (r < 0 && !f->id_error)
                f->id_error = strprintf(r == -ENOENT ? "no administrator kubeconfig (admin.conf, k3s.yaml, rke2.yaml) "
                                                       "and no --kubeconfig"
                                                     : "cannot read the credentials: %s",
                                        strerror(-r));
        if (r < 0)
                kube_identity_done(&f->id);
        f->local_found = node_etcd_find(&f->ctx, &f->local, &f->local_error);
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
        info.exit_status = r = f.refused ? EXIT_REFUSED : EXIT_CLEAN;
        if (f.refused)
                log_error("Refusing to forget %s: %s", f.node, plan->actions[0]->skip_reason);
        if (o->plan_only || f.refused)
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
