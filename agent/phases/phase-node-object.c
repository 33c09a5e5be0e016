/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The node-object phase (--delete-node): this node's Node object leaves the API server, so that the
 * node can join again at once. A join is refused while a Node of the same name is Ready, and that
 * refused join leaves pki/ca.crt behind. With credentials that may (admin.conf on a control-plane
 * node, or --kubeconfig) the object is deleted, as "kk delete node" does; with only the kubelet's own
 * (the node authorizer grants it get/update/patch of its Node, never delete) its Ready condition is
 * set to Unknown, as the node lifecycle controller would after its grace period. An API server that
 * does not answer is said and the run goes on, but never as "unchanged": planning skips the row as
 * unobserved (verify cannot call the node clean), acting records a failure, and the row's check
 * asks again, so verify and the rejoin verdict see a Node that is still there. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/phases/phases.h"
#include "agent/kube/kube-api.h"
#include "agent/config/kubeconfig.h"
#include "agent/config/node-name.h"
#include "agent/base/json.h"
#include "agent/base/log.h"
#include "agent/engine/phase.h"
#include "agent/node/phase-options.h"
#include "agent/base/http.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

#define PHASE "node-object"
#define ADMIN_CONF KUBE_ADMIN_CONF
#define NODE_OBJECT_MAX (1U << 20)

/* The credentials and name, found once and kept for the run: verify asks again with the same ones
 * after the files phase has removed the node's kubeconfigs. */
typedef KubeIdentity NodeApi;

typedef enum NodeState {
        NODE_UNREACHABLE, /* no answer, or an answer that says nothing about the object */
        NODE_ABSENT,
        NODE_READY,
        NODE_NOT_READY,
} NodeState;

static void node_api_free(void *p) {
        NodeApi *a = p;

        kube_identity_done(a);
        free(a);
}

/* What the phase keeps for the run, in its Context: the credentials found by the first planning,
 * kept for verify. */
typedef struct NodeObjectState {
        NodeApi *api;
} NodeObjectState;

static void node_object_state_done(void *p) {
        NodeObjectState *st = p;

        node_api_free(st->api);
}

static const ContextStateType node_object_state = {
        .name = "node-object",
        .size = sizeof(NodeObjectState),
        .done = node_object_state_done,
};

/* The credentials the first planning found, or NULL. */
static const NodeApi *node_api(const Context *ctx) {
        const NodeObjectState *st = context_state_peek(ctx, &node_object_state);

        return st ? st->api : NULL;
}

/* --kubeconfig (the Context's: the program's option) is the operator's file on the running system;
 * admin.conf and kubelet.conf are the node's, beneath --root. The node's name comes from --node-name,
 * else the kubelet's certificate either way. */
static int node_api_open(Context *ctx, NodeApi **ret, char **reterr) {
        NodeApi *a;

        a = calloc(1, sizeof *a);
        if (!a)
                return -ENOMEM;
        *ret = a;
        return kube_identity_open(ctx->root_fd, streq(ctx->root, "/"), ctx->kubeconfig, ctx->node_name, true, a,
                                  reterr);
}

static int api_call(const NodeApi *a, const Context *ctx, const char *method, const char *suffix, const char *body,
                    const char *content_type, HttpResult *ret) {
        cleanup_free char *path = strprintf("/api/v1/nodes/%s%s", a->node, suffix);

        if (!path)
                return -ENOMEM;
        return kube_api_request(a->kc,
                                &(KubeRequest) { .method = method,
                                                 .path = path,
                                                 .kind = "Node",
                                                 .api_version = "v1",
                                                 .body = body,
                                                 .content_type = content_type,
                                                 .response_max = NODE_OBJECT_MAX,
                                                 .deadline_usec = ctx->deadline_usec },
                                ret);
}

/* status.conditions[type=Ready].status of a Node as the API server wrote it (JSON). 1 "True", 0
 * anything else or no such condition, -EBADMSG, -EFBIG (cut short). */
static int node_is_ready(const HttpResult *res) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        const JsonValue *conds;
        int r;

        r = kube_api_json(res, &v);
        if (r < 0)
                return r;
        conds = json_get(json_get(v, "status", false), "conditions", false);
        for (size_t i = 0; conds && conds->type == JSON_ARRAY && i < conds->n; i++)
                if (streq_ptr(json_string_of(json_get(conds->items[i], "type", false)), "Ready"))
                        r = streq_ptr(json_string_of(json_get(conds->items[i], "status", false)), "True");
        return r;
}

/* No response arrived: the transfer failed (refused, reset, timed out) before any status. */
static bool no_answer(const HttpResult *res) {
        return res->code != CURLE_OK || res->status == 0;
}

static int no_answer_errno(const HttpResult *res) {
        return res->code == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EHOSTUNREACH;
}

/* What the API server says of the object now; *ret_why says it in words. NODE_UNREACHABLE: *ret_error
 * is -ETIMEDOUT or -EHOSTUNREACH when no answer came, else -EACCES or -EIO for an answer that says
 * nothing about the object. */
static int node_observe(const NodeApi *a, const Context *ctx, NodeState *ret, int *ret_error, char **ret_why) {
        HttpResult res;
        int r;

        *ret_error = 0;
        r = api_call(a, ctx, NULL, "", NULL, NULL, &res);
        if (r < 0) {
                *ret = NODE_UNREACHABLE;
                *ret_error = r;
                *ret_why = strprintf("cannot ask the API server: %s", res.error[0] ? res.error : strerror(-r));
        } else if (no_answer(&res)) {
                *ret = NODE_UNREACHABLE;
                *ret_error = no_answer_errno(&res);
                *ret_why = strprintf("the API server %s did not answer (%s)", a->kc->server, res.error);
        } else if (res.status == 404) {
                *ret = NODE_ABSENT;
                *ret_why = strprintf("no Node object %s", a->node);
        } else if (res.status != 200) {
                *ret = NODE_UNREACHABLE;
                *ret_error = res.status == 401 || res.status == 403 ? -EACCES : -EIO;
                *ret_why = strprintf("the API server answered HTTP %ld for Node %s with the credentials of %s",
                                     res.status, a->node, a->kc->path);
        } else {
                r = node_is_ready(&res);
                *ret = r > 0 ? NODE_READY : NODE_NOT_READY;
                *ret_why = r < 0 ? strprintf("Node %s: cannot read its status (%s)", a->node, strerror(-r))
                                 : strprintf("Node %s is %s", a->node, r > 0 ? "Ready" : "not Ready");
        }
        http_result_done(&res);
        return *ret_why ? 0 : -ENOMEM;
}

/* A strategic merge patch merges conditions by type: only Ready changes. */
static char *ready_unknown_patch(void) {
        char stamp[32];
        time_t t = time(NULL);
        struct tm tm;

        if (!gmtime_r(&t, &tm) || strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                return NULL;
        return strprintf("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"Unknown\","
                         "\"reason\":\"NodeReset\",\"message\":\"node-reset stopped the kubelet and reset this node\","
                         "\"lastHeartbeatTime\":\"%s\",\"lastTransitionTime\":\"%s\"}]}}",
                         stamp, stamp);
}

/* The report's "error" of a row the API server left without an answer, or without one about the Node. */
static const char *unreachable_code(int error) {
        return error == -ETIMEDOUT || error == -EHOSTUNREACH ? "unreachable" : "api-error";
}

static int judge(Action *act, const NodeApi *a, const HttpResult *res, const char *done, char **ret_msg) {
        if (no_answer(res)) {
                log_warning("The API server %s stopped answering (%s): Node %s left to the operator.", a->kc->server,
                            res->error, a->node);
                *ret_msg = strprintf("the API server stopped answering (%s): Node %s left", res->error, a->node);
                act->code = "unreachable";
                return no_answer_errno(res);
        }
        if (res->status == 200 || res->status == 202) {
                *ret_msg = strprintf("%s Node %s", done, a->node);
                return 1;
        }
        if (res->status == 404)
                return 0;
        *ret_msg = strprintf("the API server refused: HTTP %ld with the credentials of %s", res->status, a->kc->path);
        return res->status == 401 || res->status == 403 ? -EACCES : -EIO;
}

static int node_object_apply(Action *act, Context *ctx, char **ret_msg) {
        const NodeApi *a = node_api(ctx);
        cleanup_free char *why = NULL, *patch = NULL;
        HttpResult res;
        NodeState state;
        int r, error;

        /* What the plan saw is a claim: ask again, and act on what the API server says now. A question
         * without an answer leaves the Node as it was: a failure, never "already clean". */
        r = node_observe(a, ctx, &state, &error, &why);
        if (r < 0)
                return r;
        if (state == NODE_UNREACHABLE) {
                log_warning("%s: Node %s left to the operator.", why, a->node);
                *ret_msg = strprintf("%s: Node %s left", why, a->node);
                act->code = unreachable_code(error);
                return *ret_msg ? error : -ENOMEM;
        }
        if (state == NODE_ABSENT || (!a->may_delete && state == NODE_NOT_READY))
                return 0;
        if (!a->may_delete && !(patch = ready_unknown_patch()))
                return -ENOMEM;
        r = a->may_delete ? api_call(a, ctx, "DELETE", "", NULL, NULL, &res)
                          : api_call(a, ctx, "PATCH", "/status", patch, "application/strategic-merge-patch+json", &res);
        if (r >= 0)
                r = judge(act, a, &res, a->may_delete ? "deleted" : "set Ready=Unknown on", ret_msg);
        http_result_done(&res);
        return r;
}

/* Something to do: a Ready Node, or with credentials that may delete it, any Node of this name. */
static bool node_present(const NodeApi *a, NodeState state) {
        return state == NODE_READY || (a->may_delete && state == NODE_NOT_READY);
}

/* Verify's question, asked anew: >0 the Node is still there (Ready, or not deleted), 0 gone or not
 * Ready, -errno when the API server does not answer (verify then counts the row as residue that
 * could not be checked). */
static int node_object_check(Action *act, Context *ctx, char **ret_msg) {
        const NodeApi *a = node_api(ctx);
        NodeState state;
        int r, error;

        if (!a)
                return -ENODATA;
        r = node_observe(a, ctx, &state, &error, ret_msg);
        if (r < 0)
                return r;
        return state == NODE_UNREACHABLE ? error : node_present(a, state);
}

static const ActionOps node_object_ops = {
        .kind = "node-object",
        .apply = node_object_apply,
        .check = node_object_check,
};

/* A fact the tree does not hold (under --root, the node's name) is never filled in from the running
 * system: the row the operator asked for fails with the reason, and the run says so. */
static int node_unknown_apply(Action *act, Context *ctx, char **ret_msg) {
        *ret_msg = strdup(act->detail);
        return *ret_msg ? -ENXIO : -ENOMEM;
}

static int node_unknown_check(Action *act, Context *ctx, char **ret_msg) {
        *ret_msg = strprintf("%s: the Node object may still be there", act->detail);
        return *ret_msg ? 1 : -ENOMEM;
}

static const ActionOps node_unknown_ops = {
        .kind = "node-object",
        .apply = node_unknown_apply,
        .check = node_unknown_check,
};

static int plan_unknown(Plan *plan, const char *why) {
        Action *act = plan_add(plan, &node_unknown_ops, PHASE, "Node", "--delete-node", NULL);

        if (!act)
                return -ENOMEM;
        act->present = true;
        act->code = "unknown";
        return action_set_detail(act, "%s", why);
}

static int plan_row(Context *ctx, Plan *plan) {
        const NodeApi *a = node_api(ctx);
        cleanup_free char *why = NULL, *target = NULL;
        NodeState state;
        Action *act;
        int r, error;

        r = node_observe(a, ctx, &state, &error, &why);
        target = strprintf("Node/%s", a->node);
        if (r < 0 || !target)
                return -ENOMEM;
        act = plan_add(plan, &node_object_ops, PHASE, target, "--delete-node", NULL);
        if (!act)
                return -ENOMEM;
        act->present = node_present(a, state);
        if (state == NODE_UNREACHABLE) {
                /* Not known to be gone: verify reports the node unobserved, never clean. */
                act->unobserved = true;
                return action_set_skip_code(act, unreachable_code(error), "%s: the Node object is left to the operator",
                                            why);
        }
        if (!act->present)
                return action_set_detail(act, "%s", why);
        if (a->may_delete)
                return action_set_detail(act, "%s: delete it with the credentials of %s (node name from the %s)", why,
                                         a->kc->path, a->node_source);
        return action_set_detail(act,
                                 "%s: set its Ready condition to Unknown (the kubelet's own credentials may not "
                                 "delete it)",
                                 why);
}

int phase_node_object_plan(Context *ctx, Plan *plan, char **reterr) {
        cleanup_free char *err = NULL;
        NodeObjectState *st;
        NodeApi *a = NULL;
        Action *act;
        int r;

        if (!phase_option_delete_node())
                return 0;
        st = context_state(ctx, &node_object_state);
        if (!st)
                return -ENOMEM;
        if (!st->api) {
                r = node_api_open(ctx, &a, &err);
                if (r == -ENXIO) {
                        node_api_free(a);
                        return plan_unknown(plan, strna(err));
                }
                if (r < 0) {
                        node_api_free(a);
                        act = plan_add(plan, &node_object_ops, PHASE, "Node", "--delete-node", NULL);
                        if (!act)
                                return -ENOMEM;
                        if (r == -ENOENT)
                                return action_set_skip_code(act, "no-credentials",
                                                            "no %s, %s or --kubeconfig: the API server cannot be asked",
                                                            ADMIN_CONF, KUBECONFIG_DEFAULT);
                        return action_set_skip_code(act, "no-credentials", "%s", err ?: strerror(-r));
                }
                st->api = a;
        }
        r = plan_row(ctx, plan);
        return r < 0 ? set_errmsg(reterr, r, "Cannot plan the Node object's removal: %s", strerror(-r)) : 0;
}

int phase_node_object_ready(Context *ctx, char **ret_msg) {
        NodeState state;
        int r, error;

        if (!phase_option_delete_node())
                return set_errmsg(ret_msg, -ENODATA, "without --delete-node the API server is not asked");
        if (!node_api(ctx))
                return set_errmsg(ret_msg, -ENODATA, "no credentials to ask the API server with");
        r = node_observe(node_api(ctx), ctx, &state, &error, ret_msg);
        if (r < 0)
                return r;
        return state == NODE_UNREACHABLE ? error : state == NODE_READY;
}

const PhaseOption phase_node_object_options[] = {
        { "delete-node", PHASE_OPTION_NO_ARG, NULL,
          "Delete this node's Node object (admin.conf or --kubeconfig), or with\n"
          "only the kubelet's credentials set it NotReady, so it can join again",
          phase_option_delete_node_parse },
        {},
};
