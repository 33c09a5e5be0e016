/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requests to the Kubernetes API server with a kubeconfig's credentials: the one way the agent's
 * phases and verbs (--delete-node, --drain, forget) talk to it, over agent/base/http.c. */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "agent/config/installers.h"
#include "agent/config/kube-api.h"
#include "agent/config/node-name.h"
#include "agent/config/yaml-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
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

int kube_api_request(const Kubeconfig *kc, const KubeRequest *req, HttpResult *ret) {
        cleanup_free char *url = NULL, *auth = NULL;
        char *headers[3] = { (char *) "Accept: application/yaml" };
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
        return r;
}

bool kube_api_answered(const HttpResult *res) {
        return res->code == CURLE_OK && res->status != 0;
}

int kube_api_document(const HttpResult *res, yaml_document_t *ret) {
        yaml_parser_t p;
        int r = 0;

        if (res->truncated)
                return -EFBIG;
        if (!yaml_parser_initialize(&p))
                return -ENOMEM;
        yaml_parser_set_input_string(&p, (const unsigned char *) (res->body ?: ""), res->body_size);
        if (!yaml_parser_load(&p, ret))
                r = -EBADMSG;
        else if (!yaml_document_get_root_node(ret)) {
                yaml_document_delete(ret);
                r = -EBADMSG;
        }
        yaml_parser_delete(&p);
        return r;
}

char *kube_api_describe(const HttpResult *res) {
        yaml_document_t doc;
        char *s;

        if (!kube_api_answered(res))
                return strprintf("no answer (%s)", res->error[0] ? res->error : "no response");
        if (kube_api_document(res, &doc) < 0)
                return strprintf("HTTP %ld", res->status);
        s = strprintf("HTTP %ld: %s", res->status,
                      yaml_scalar_of(yaml_map_get(&doc, yaml_document_get_root_node(&doc), "message"))
                              ?: "(no message)");
        yaml_document_delete(&doc);
        return s;
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
