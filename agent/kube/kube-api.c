/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requests to the Kubernetes API server with a kubeconfig's credentials: the one way the agent's
 * phases and verbs (--delete-node, --drain, forget) talk to it, over agent/base/http.c. */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "agent/config/installers.h"
#include "agent/kube/kube-api.h"
#include "agent/config/node-name.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(Kubeconfig *, kubeconfig_free);

/* The call's timeout: its own bound, cut to what is left before the deadline (at least 1 ms). */
static uint64_t call_timeout_ms(uint64_t deadline_usec) {
        uint64_t t = KUBE_API_CALL_TIMEOUT_MS, now_usec, left;

        if (deadline_usec == 0)
                return t;
        now_usec = now(CLOCK_MONOTONIC);
        left = deadline_usec > now_usec ? (deadline_usec - now_usec) / 1000 : 1;
        return left < 1 ? 1 : left < t ? left : t;
}

/* "application/json", with or without parameters ("; charset=utf-8"), in any case. */
static bool media_type_is_json(const char *ct) {
        size_t n = strcspn(ct, ";");

        while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
                n--;
        return n == strlen("application/json") && strncasecmp(ct, "application/json", n) == 0;
}

/* No object of the tree names a member twice: Go keeps the last, another reader could keep the first,
 * so an answer that repeats one could be read two ways. The API server never sends one. */
static bool members_unique(const JsonValue *v) {
        for (size_t i = 0; i < v->n; i++) {
                const JsonValue *m = v->items[i];

                for (size_t k = 0; v->type == JSON_OBJECT && k < i; k++)
                        if (v->items[k]->key_len == m->key_len && memcmp(v->items[k]->key, m->key, m->key_len) == 0)
                                return false;
                if (!members_unique(m))
                        return false;
        }
        return true;
}

/* Is this 2xx answer what the request asked for? */
static bool answer_is_asked(const KubeRequest *req, const char *kind, const char *api, const JsonValue *v) {
        if (req->method && !streq(req->method, "GET") && streq(kind, "Status") && streq_ptr(api, "v1") &&
            streq_ptr(json_string_of(json_get(v, "status", false)), "Success"))
                return true;
        return (!req->kind || streq(kind, req->kind)) && (!req->api_version || streq_ptr(api, req->api_version));
}

/* Why this answer is none the Kubernetes API gives to req, or NULL when it is one. -ENOMEM only. */
static int answer_refusal(const KubeRequest *req, const HttpResult *res, const char **ret) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        bool success = res->status >= 200 && res->status < 300;
        const char *kind, *api;
        int r;

        *ret = NULL;
        if (res->truncated)
                return *ret = "longer than the bound on an answer", 0;
        if (!media_type_is_json(res->content_type))
                return *ret = "not JSON", 0;
        r = json_parse(res->body ?: "", res->body_size, &v);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || v->type != JSON_OBJECT)
                return *ret = "not a JSON object", 0;
        if (!members_unique(v))
                return *ret = "an object names a member twice", 0;
        kind = json_string_of(json_get(v, "kind", false));
        api = json_string_of(json_get(v, "apiVersion", false));
        if (!success && (!streq_ptr(kind, "Status") || !streq_ptr(api, "v1")))
                *ret = "not a v1 Status";
        else if (success && !kind)
                *ret = "an object of no kind";
        else if (success && !answer_is_asked(req, kind, api, v))
                *ret = "another kind of object";
        return 0;
}

int kube_api_check_answer(const KubeRequest *req, HttpResult *res) {
        char asked[120] = ""; /* with the Content-Type cut at 40 bytes, the message fits res->error */
        const char *why;
        int r;

        if (res->code != CURLE_OK || res->status == 0)
                return 0;
        r = answer_refusal(req, res, &why);
        if (r < 0 || !why)
                return r;
        if (req->kind)
                (void) snprintf(asked, sizeof asked, ", where %s%s%s was asked for", strempty(req->api_version),
                                req->api_version ? " " : "", req->kind);
        (void) snprintf(res->error, sizeof res->error, "HTTP %ld (%.40s) is not an answer of the Kubernetes API: %s%s",
                        res->status, res->content_type[0] ? res->content_type : "no Content-Type", why, asked);
        res->code = CURLE_WEIRD_SERVER_REPLY;
        return 0;
}

int kube_api_request(const Kubeconfig *kc, const KubeRequest *req, HttpResult *ret) {
        cleanup_free char *url = NULL, *auth = NULL;
        char *headers[3] = { (char *) "Accept: application/json" };
        size_t n = strlen(kc->server);
        uint64_t timeout = call_timeout_ms(req->deadline_usec);
        int r;

        while (n > 0 && kc->server[n - 1] == '/')
                n--;
        url = strprintf("%.*s%s", (int) n, kc->server, req->path);
        if (!url || (kc->token && !(auth = strprintf("Authorization: Bearer %s", kc->token))))
                return -ENOMEM;
        headers[1] = auth;
        r = http_perform(
                &(HttpRequest) {
                        .url = url,
                        .method = req->method,
                        .body = req->body,
                        .body_size = req->body ? strlen(req->body) : 0,
                        .content_type = req->content_type,
                        .response_max = req->response_max ?: KUBE_API_RESPONSE_MAX,
                        .headers = headers,
                        .ca = { kc->ca.data, kc->ca.size },
                        .cert = { kc->cert.data, kc->cert.size },
                        .key = { kc->key.data, kc->key.size },
                        .insecure = kc->insecure,
                        .proxy = kc->proxy_url,
                        .connect_timeout_ms =
                                timeout < KUBE_API_CONNECT_TIMEOUT_MS ? timeout : KUBE_API_CONNECT_TIMEOUT_MS,
                        .timeout_ms = timeout,
                },
                ret);
        if (auth)
                explicit_bzero(auth, strlen(auth));
        if (r < 0)
                return r;
        r = kube_api_check_answer(req, ret);
        if (r < 0)
                http_result_done(ret);
        return r;
}

bool kube_api_answered(const HttpResult *res) {
        return res->code == CURLE_OK && res->status != 0;
}

int kube_api_json(const HttpResult *res, JsonValue **ret) {
        int r;

        if (res->truncated)
                return -EFBIG;
        r = json_parse(res->body ?: "", res->body_size, ret);
        return r == -ENOMEM ? r : r < 0 ? -EBADMSG : 0;
}

/* The words of an answer: a Status's message, an answer that was none, or what the transfer said. */
char *kube_api_describe(const HttpResult *res) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        const char *m;

        if (res->code == CURLE_WEIRD_SERVER_REPLY && res->status != 0)
                return strdup(res->error);
        if (!kube_api_answered(res))
                return strprintf("no answer (%s)", res->error[0] ? res->error : "no response");
        if (kube_api_json(res, &v) < 0)
                return strprintf("HTTP %ld", res->status);
        m = json_string_of(json_get(v, "message", false));
        return strprintf("HTTP %ld: %s", res->status, m ?: "(no message)");
}

/* RFC 3986 unreserved: ALPHA DIGIT - . _ ~ */
static bool is_unreserved(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || ascii_isdigit(c) || (c && strchr("-._~", c));
}

char *kube_api_escape(const char *s) {
        size_t n = 0;
        char *e, *p;

        for (const char *c = s; *c; c++)
                n += is_unreserved(*c) ? 1 : 3;
        e = p = malloc(n + 1);
        if (!e)
                return NULL;
        for (const char *c = s; *c; c++)
                if (is_unreserved(*c))
                        *p++ = *c;
                else
                        p += sprintf(p, "%%%02X", (unsigned char) *c);
        *p = '\0';
        return e;
}

/* apimachinery/pkg/api/validation/path: IsValidPathSegmentName, as client-go's Request.Name() checks. */
static bool segment_is_valid(const char *s) {
        return !isempty(s) && !streq(s, ".") && !streq(s, "..") && !strpbrk(s, "/%");
}

int kube_api_path(char **ret, const char *query, const char *first, ...) {
        cleanup_strv char **l = NULL;
        cleanup_free char *joined = NULL;
        va_list ap;
        int r = 0;

        /* A leading "" makes the join start with '/'. */
        if (strv_extend(&l, "") < 0)
                return -ENOMEM;
        va_start(ap, first);
        for (const char *s = first; s && r >= 0; s = va_arg(ap, const char *))
                r = !segment_is_valid(s) ? -EINVAL : strv_consume(&l, kube_api_escape(s));
        va_end(ap);
        if (r < 0)
                return r;
        joined = strv_join(l, "/");
        if (!joined)
                return -ENOMEM;
        *ret = query ? strprintf("%s?%s", joined, query) : TAKE_PTR(joined);
        return *ret ? 0 : -ENOMEM;
}

void kube_node_ready_done(KubeNodeReady *r) {
        free(r->status);
        free(r->reason);
        free(r->since);
        free(r->heartbeat);
        *r = (KubeNodeReady) {};
}

static int ready_read(const JsonValue *node, KubeNodeReady *ret) {
        const JsonValue *conds = json_get(json_get(node, "status", false), "conditions", false);

        for (size_t i = 0; conds && conds->type == JSON_ARRAY && i < conds->n; i++) {
                const JsonValue *c = conds->items[i];
                const char *st = json_string_of(json_get(c, "status", false));
                const char *reason = json_string_of(json_get(c, "reason", false));
                const char *since = json_string_of(json_get(c, "lastTransitionTime", false));
                const char *beat = json_string_of(json_get(c, "lastHeartbeatTime", false));

                if (!streq_ptr(json_string_of(json_get(c, "type", false)), "Ready"))
                        continue;
                kube_node_ready_done(ret);
                *ret = (KubeNodeReady) {
                        .status = strdup(st ?: "Unknown"),
                        .reason = reason ? strdup(reason) : NULL,
                        .since = since ? strdup(since) : NULL,
                        .heartbeat = beat ? strdup(beat) : NULL,
                };
                if (!ret->status || (reason && !ret->reason) || (since && !ret->since) || (beat && !ret->heartbeat))
                        return -ENOMEM;
        }
        return 0;
}

int kube_api_node_ready(const Kubeconfig *kc, const char *node, uint64_t deadline, KubeNodeReady *ret, char **reterr) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        cleanup_free char *path = NULL, *why = NULL;
        HttpResult res;
        int r;

        *ret = (KubeNodeReady) {};
        r = kube_api_path(&path, NULL, "api", "v1", "nodes", node, NULL);
        if (r < 0)
                return r;
        r = kube_api_request(
                kc, &(KubeRequest) { .path = path, .kind = "Node", .api_version = "v1", .deadline_usec = deadline },
                &res);
        if (r < 0)
                r = set_errmsg(reterr, r, "get Node %s: %s", node, res.error[0] ? res.error : strerror(-r));
        else if (kube_api_answered(&res) && res.status == 200)
                r = kube_api_json(&res, &v) < 0 ? -ENOMEM : ready_read(v, ret) < 0 ? -ENOMEM : 1;
        else {
                why = kube_api_describe(&res);
                r = !kube_api_answered(&res)                 ? -EHOSTUNREACH
                    : res.status == 404                      ? -ENOENT
                    : res.status == 401 || res.status == 403 ? -EACCES
                                                             : -EIO;
                r = set_errmsg(reterr, r, "get Node %s: %s", node, why ?: "out of memory");
        }
        http_result_done(&res);
        if (r < 0)
                kube_node_ready_done(ret);
        return r;
}

static int load_kubeconfig(int root_fd, const char *path, Kubeconfig **ret, char **reterr) {
        CLEANUP(kubeconfig_freep) Kubeconfig *k = NULL;
        int r;

        r = kubeconfig_load(root_fd, path, &k, reterr);
        if (r >= 0)
                r = kubeconfig_read_files(k, root_fd, reterr);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(k);
        return 0;
}

/* The administrator's kubeconfig each installer writes on a control-plane node: kubeadm's, k3s's
 * (its server's --write-kubeconfig default) and rke2's. */
static const char *const admin_kubeconfigs[] = {
        KUBE_ADMIN_CONF,
        K3S_KUBECONFIG,
        RKE2_KUBECONFIG,
};

static int load_admin(int root_fd, Kubeconfig **ret, char **reterr) {
        int r = -ENOENT;

        for (size_t i = 0; i < ELEMENTSOF(admin_kubeconfigs) && r == -ENOENT; i++) {
                if (reterr)
                        *reterr = mfree(*reterr);
                r = load_kubeconfig(root_fd, admin_kubeconfigs[i], ret, reterr);
        }
        if (r == -ENOENT && reterr) /* none of them: the caller says so in its words */
                *reterr = mfree(*reterr);
        return r;
}

/* The operator's file on the running system, else the node's administrator kubeconfig, else (when
 * allowed) the kubelet's own credentials. */
static int open_credentials(int root_fd, const char *kubeconfig, bool kubelet_fallback, Kubeconfig **kubelet,
                            KubeIdentity *id, char **reterr) {
        cleanup_close int slash = -EBADF;
        int r;

        if (kubeconfig) {
                slash = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                r = slash < 0 ? -errno : load_kubeconfig(slash, kubeconfig, &id->kc, reterr);
                id->may_delete = true;
                return r;
        }
        r = load_admin(root_fd, &id->kc, reterr);
        id->may_delete = r >= 0;
        if (r == -ENOENT && kubelet_fallback && *kubelet) {
                if (reterr)
                        *reterr = mfree(*reterr);
                id->kc = TAKE_PTR(*kubelet);
                r = 0;
        }
        return r;
}

int kube_identity_open(int root_fd, bool on_node, const char *kubeconfig, const char *node_name, bool kubelet_fallback,
                       KubeIdentity *ret, char **reterr) {
        CLEANUP(kubeconfig_freep) Kubeconfig *kubelet = NULL;
        int r;

        *ret = (KubeIdentity) {};
        r = load_kubeconfig(root_fd, KUBECONFIG_DEFAULT, &kubelet, reterr);
        if (r < 0 && r != -ENOENT)
                return r;
        if (reterr)
                *reterr = mfree(*reterr);
        r = open_credentials(root_fd, kubeconfig, kubelet_fallback, &kubelet, ret, reterr);
        if (r < 0)
                return r;
        r = node_name_pick(node_name,
                           kubelet           ? &kubelet->cert
                           : ret->may_delete ? NULL
                                             : &ret->kc->cert,
                           root_fd, on_node, &ret->node, &ret->node_source);
        if (r == -ENXIO)
                return set_errmsg(reterr, r,
                                  "node name unknown: the tree has %s, no /etc/hostname, and --node-name was not given",
                                  kubelet ? "no node's client certificate in kubelet.conf" : "no kubelet.conf");
        if (r == -EINVAL)
                return set_errmsg(reterr, r, "'%s' (from the %s) is not a valid node name; use --node-name", ret->node,
                                  ret->node_source);
        return r;
}

void kube_identity_done(KubeIdentity *id) {
        if (!id)
                return;
        kubeconfig_free(id->kc);
        free(id->node);
        *id = (KubeIdentity) {};
}
