/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Find this node's etcd member in its own files and reach its cluster. Which files, and whether the
 * etcd is this node's at all, is the run's one decision (etcd-owner.h); they are read as what they
 * are: kubeadm's static pod manifest as a pod spec (the etcd container's command and args, an
 * argument vector), kubespray's and kubekey's /etc/etcd.env as an environment file, k3s's and rke2's
 * server/db/etcd/config as etcd's YAML configuration; a comment is no flag. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "agent/base/path.h"
#include "agent/config/envfile.h"
#include "agent/config/etcd-flags.h"
#include "agent/config/installers.h"
#include "agent/engine/libraries.h"
#include "agent/node/etcd.h"
#include "agent/os/fileio.h"
#include "agent/os/host-place.h"
#include "chase.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define NODE_FILE_MAX (1U << 20)
/* Each call to a member: a member that is down refuses at once, one that hangs costs this much. */
#define ETCD_CALL_TIMEOUT_USEC (5ULL * 1000000ULL)

void node_etcd_done(NodeEtcd *l) {
        free(l->source);
        free(l->why);
        free(l->name);
        strv_free(l->peer_urls);
        strv_free(l->endpoints);
        free(l->data_dir);
        free(l->ca_file);
        free(l->cert_file);
        free(l->key_file);
        strv_free(l->not_own);
        strv_free(l->initial_cluster);
        *l = (NodeEtcd) {};
}

static char *trim(char *s) {
        size_t n;

        s += strspn(s, " \t");
        n = strlen(s);
        while (n > 0 && strchr(" \t\r", s[n - 1]))
                s[--n] = '\0';
        if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
                s[n - 1] = '\0';
                s++;
        }
        return s;
}

static const char *flag(char **argv, const char *name) {
        return argv_flag(argv, name);
}

static bool node_file_exists(const Context *ctx, const char *path) {
        return fileio_exists_beneath(ctx->root_fd, path);
}

static int split_urls(const char *list, char ***l) {
        cleanup_free char *copy = list ? strdup(list) : NULL;
        char *save = NULL;
        int r;

        if (!list)
                return 0;
        if (!copy)
                return -ENOMEM;
        for (char *u = strtok_r(copy, ",", &save); u; u = strtok_r(NULL, ",", &save)) {
                u = trim(u);
                if (!*u)
                        continue;
                r = strv_extend_unique(l, u);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A listen URL on every address is reached on loopback. */
static int add_listen_urls(const char *list, char ***l) {
        cleanup_strv char **urls = NULL;
        int r;

        r = split_urls(list, &urls);
        if (r < 0)
                return r;
        STRV_FOREACH(u, urls) {
                const char *rest;
                char *s;

                if ((rest = startswith(*u, "https://0.0.0.0")) || (rest = startswith(*u, "http://0.0.0.0")))
                        s = strprintf("%s127.0.0.1%s", (*u)[4] == 's' ? "https://" : "http://", rest);
                else if ((rest = startswith(*u, "https://[::]")) || (rest = startswith(*u, "http://[::]")))
                        s = strprintf("%s[::1]%s", (*u)[4] == 's' ? "https://" : "http://", rest);
                else
                        s = strdup(*u);
                r = strv_consume_unique(l, s);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The other members' client URLs, guessed from --initial-cluster's peer URLs by etcd's default
 * ports (2380 for peers, 2379 for clients): a guess is only ever asked, never trusted, since TLS
 * verifies the member and the answer is matched by name and peer URLs. The entries themselves
 * ("name=peer URL") go to *pairs. */
static int add_initial_cluster(const char *list, const char *own_name, char ***l, char ***pairs) {
        cleanup_strv char **entries = NULL;
        int r;

        r = split_urls(list, &entries);
        if (r < 0)
                return r;
        STRV_FOREACH(e, entries) {
                char *eq = strchr(*e, '='), *port, *s;

                if (!eq || (own_name && strncmp(*e, own_name, (size_t) (eq - *e)) == 0 &&
                            strlen(own_name) == (size_t) (eq - *e)))
                        continue;
                r = strv_extend_unique(pairs, *e);
                if (r < 0)
                        return r;
                port = strrchr(eq + 1, ':');
                if (!port || !streq(port, ":2380"))
                        continue;
                s = strprintf("%.*s:2379", (int) (port - eq - 1), eq + 1);
                r = strv_consume_unique(l, s);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* kube-apiserver's --etcd-servers: kubespray lists every member there. A manifest that does not
 * parse names no server. */
static int add_apiserver_urls(const Context *ctx, char ***l) {
        cleanup_free char *text = NULL;
        cleanup_strv char **argv = NULL;
        size_t size;

        if (fileio_read_beneath(ctx->root_fd, KUBE_APISERVER_MANIFEST, NODE_FILE_MAX, &text, &size) < 0 ||
            pod_container_argv(text, size, "kube-apiserver", &argv) <= 0)
                return 0;
        return split_urls(flag(argv, "etcd-servers"), l);
}

static int set_host_path(const Context *ctx, const char *node_path, char **ret) {
        if (!node_path)
                return 0;
        *ret = path_join_root(ctx->root, node_path);
        return *ret ? 0 : -ENOMEM;
}

/* The client certificate kubeadm's own reset uses (apiserver-etcd-client), else the health check
 * one; k3s's and rke2's own client (server/tls/etcd/client.crt, signed by server-ca.crt: k3s
 * pkg/daemons/control/server.go, ClientETCDCert and ETCDServerCA); else the member's server
 * certificate (kubespray's member certificates are client ones too). */
static int pick_tls(const Context *ctx, char **flags, const EtcdScope *s, NodeEtcd *l) {
        static const char *const kubeadm_pairs[][2] = {
                { KUBEADM_ETCD_CLIENT_CRT, KUBEADM_ETCD_CLIENT_KEY },
                { KUBEADM_ETCD_HEALTHCHECK_CRT, KUBEADM_ETCD_HEALTHCHECK_KEY },
        };
        cleanup_free char *k3s_ca = NULL, *k3s_cert = NULL, *k3s_key = NULL;
        const char *ca = flag(flags, "trusted-ca-file"), *cert = flag(flags, "cert-file"),
                   *key = flag(flags, "key-file");
        int r;

        for (size_t i = 0; s->owner == ETCD_OWNER_KUBEADM && i < ELEMENTSOF(kubeadm_pairs); i++)
                if (node_file_exists(ctx, kubeadm_pairs[i][0]) && node_file_exists(ctx, kubeadm_pairs[i][1])) {
                        cert = kubeadm_pairs[i][0];
                        key = kubeadm_pairs[i][1];
                        break;
                }
        if (s->server_dir) {
                k3s_ca = strprintf("%s/tls/etcd/server-ca.crt", s->server_dir);
                k3s_cert = strprintf("%s/tls/etcd/client.crt", s->server_dir);
                k3s_key = strprintf("%s/tls/etcd/client.key", s->server_dir);
                if (!k3s_ca || !k3s_cert || !k3s_key)
                        return -ENOMEM;
                if (node_file_exists(ctx, k3s_cert) && node_file_exists(ctx, k3s_key)) {
                        ca = k3s_ca;
                        cert = k3s_cert;
                        key = k3s_key;
                }
        }
        r = set_host_path(ctx, ca, &l->ca_file);
        if (r >= 0)
                r = set_host_path(ctx, cert, &l->cert_file);
        if (r >= 0)
                r = set_host_path(ctx, key, &l->key_file);
        return r;
}

/* Under --root (elsewhere) a URL that leads here reaches the running machine: never one of this
 * member's own, nor one asked before the others (it may be another member of the cluster: the one
 * this runs on). A name is not looked up: it is asked for a member list only. */
static int place_endpoints(NodeEtcd *l, char **own, char **others, bool elsewhere) {
        cleanup_strv char **later = NULL, **here = NULL;
        int r = 0;

        STRV_FOREACH(u, own) {
                HostPlace p = elsewhere ? url_host_place(*u) : HOST_ELSEWHERE;

                if (p == HOST_ELSEWHERE)
                        r = strv_extend_unique(&l->endpoints, *u);
                else {
                        r = strv_consume_unique(&l->not_own, strprintf("%s (%s)", *u, host_place_to_string(p)));
                        if (r >= 0)
                                r = strv_extend_unique(p == HOST_HERE ? &here : &later, *u);
                }
                if (r < 0)
                        return r;
        }
        l->n_own = strv_length(l->endpoints);
        STRV_FOREACH(u, others)
                if ((r = strv_extend_unique(elsewhere && url_host_place(*u) == HOST_HERE ? &here : &later, *u)) < 0)
                        return r;
        STRV_FOREACH(u, later)
                if ((r = strv_extend_unique(&l->endpoints, *u)) < 0)
                        return r;
        STRV_FOREACH(u, here)
                if ((r = strv_extend_unique(&l->endpoints, *u)) < 0)
                        return r;
        return 0;
}

static int fill_member(Context *ctx, const EtcdScope *s, bool elsewhere, NodeEtcd *l) {
        const NodeEtcdRun *run = node_etcd_run(ctx);
        cleanup_strv char **own = NULL, **others = NULL;
        char **flags = s->argv;
        const char *name = flag(flags, "name");
        int r;

        /* etcd's own default when neither --name nor ETCD_NAME is given (an etcd.env that only sets
         * the data directory is common): the member really is called that. */
        if (!name || !*name)
                name = "default";
        l->name = strdup(name);
        l->data_dir = strdup(flag(flags, "data-dir") ?: KUBEADM_ETCD_DATA_DIR);
        if (!l->name || !l->data_dir)
                return -ENOMEM;
        l->elsewhere = elsewhere;
        /* k3s writes initial-advertise-peer-urls only while a member joins; its listen URL is the same. */
        r = split_urls(flag(flags, "initial-advertise-peer-urls") ?: flag(flags, "listen-peer-urls"), &l->peer_urls);
        if (r >= 0)
                r = split_urls(flag(flags, "advertise-client-urls"), &own);
        if (r >= 0)
                r = add_listen_urls(flag(flags, "listen-client-urls"), &own);
        if (r >= 0)
                r = add_initial_cluster(flag(flags, "initial-cluster"), l->name, &others, &l->initial_cluster);
        if (r >= 0 && s->owner != ETCD_OWNER_K3S && s->owner != ETCD_OWNER_RKE2)
                r = add_apiserver_urls(ctx, &others);
        if (!run)
                return -ENOMEM;
        STRV_FOREACH(e, run->learned_endpoints)
                if (r >= 0)
                        r = strv_extend_unique(&others, *e);
        if (r >= 0)
                r = place_endpoints(l, own, others, elsewhere);
        if (r >= 0)
                r = pick_tls(ctx, flags, s, l);
        return r < 0 ? r : 0;
}

static int find(Context *ctx, bool elsewhere, NodeEtcd *ret, char **reterr) {
        const EtcdScope *s;
        NodeEtcd l = {};
        int r;

        *ret = (NodeEtcd) {};
        r = node_etcd_scope(ctx, &s);
        if (r < 0)
                return set_errmsg(reterr, r, "cannot tell who owns this node's etcd: %s", strerror(-r));
        l.owner = s->owner;
        l.external = s->owner == ETCD_OWNER_FOREIGN;
        l.source = s->source ? strdup(s->source) : NULL;
        l.why = s->why ? strdup(s->why) : NULL;
        if ((s->source && !l.source) || (s->why && !l.why)) {
                node_etcd_done(&l);
                return -ENOMEM;
        }
        if (s->owner == ETCD_OWNER_NONE || l.external) {
                *ret = l;
                return 0;
        }
        /* The owner is decided once, from the files as they were; the member's own files are looked
         * at now: once the run removed them (verify, a second run), no member of this node's is left
         * to ask for - the last voter's data went only with a complete snapshot in the backup. */
        if (s->source && !fileio_exists_beneath(ctx->root_fd, s->source)) {
                *ret = l;
                return 0;
        }
        if (!s->argv) {
                *ret = l;
                return set_errmsg(reterr, -EBADMSG, "%s, and nothing is done on its word", s->why);
        }
        r = fill_member(ctx, s, elsewhere, &l);
        if (r < 0) {
                node_etcd_done(&l);
                return set_errmsg(reterr, r, "cannot read the etcd member's files: %s", strerror(-r));
        }
        *ret = l;
        return 1;
}

int node_etcd_find(Context *ctx, NodeEtcd *ret, char **reterr) {
        return find(ctx, !streq(ctx->root, "/"), ret, reterr);
}

int node_etcd_find_here(Context *ctx, NodeEtcd *ret, char **reterr) {
        return find(ctx, false, ret, reterr);
}

bool node_etcd_is(const NodeEtcd *l, const EtcdMember *m) {
        if (!streq(m->name, l->name))
                return false;
        STRV_FOREACH(p, m->peer_urls)
                if (strv_contains(l->peer_urls, *p))
                        return true;
        return false;
}

bool node_etcd_name_clash(const NodeEtcd *l, const EtcdMember *m) {
        return streq(m->name, l->name) && !node_etcd_is(l, m);
}

static char *describe(const EtcdMember *m) {
        cleanup_free char *peers = strv_join(m->peer_urls, ",");

        return peers ? strprintf("member %016" PRIx64 " named %s, peer URLs %s", m->id, *m->name ? m->name : "\"\"",
                                 *peers ? peers : "none")
                     : NULL;
}

static int identify_by_name(const NodeEtcd *l, const EtcdMemberList *list, const EtcdMember **ret, char **reterr) {
        const EtcdMember *found = NULL;

        for (size_t i = 0; i < list->n_members; i++) {
                if (!node_etcd_is(l, &list->members[i]))
                        continue;
                if (found)
                        return set_errmsg(reterr, -EEXIST,
                                          "members %016" PRIx64 " and %016" PRIx64 " both have this node's name %s and "
                                          "a peer URL of its",
                                          found->id, list->members[i].id, l->name);
                found = &list->members[i];
        }
        *ret = found;
        return found ? 1 : 0;
}

int node_etcd_identify(const NodeEtcd *l, const EtcdMemberList *list, const EtcdStatus *st, const EtcdMember **ret,
                       char **reterr) {
        cleanup_free char *who = NULL, *own = NULL;
        const EtcdMember *m;

        *ret = NULL;
        if (!st)
                return l->elsewhere ? identify_by_name(l, list, ret, reterr)
                                    : set_errmsg(reterr, -ENXIO, "this member's own client URL did not answer");
        m = etcd_member_list_find(list, st->member_id);
        if (!m)
                return 0;
        if (node_etcd_is(l, m)) {
                *ret = m;
                return 1;
        }
        /* The member that answers at this node's own client URL is not the one its files describe: a
         * URL that leads to another machine's etcd (a loopback one under --root, an address now
         * another node's), or files gone stale. Either way, not this node's to remove. */
        who = describe(m);
        own = strv_join(l->peer_urls, ",");
        if (!who || !own)
                return -ENOMEM;
        return set_errmsg(reterr, -EPERM,
                          "%s answers at this node's own client URL, but this node's files name member %s with peer "
                          "URLs %s: not taken as this node's",
                          who, l->name, *own ? own : "none");
}

bool node_etcd_cluster_is_ours(const NodeEtcd *l, const EtcdMemberList *list) {
        for (size_t i = 0; i < list->n_members; i++) {
                const EtcdMember *m = &list->members[i];

                STRV_FOREACH(p, m->peer_urls) {
                        cleanup_free char *pair = strprintf("%s=%s", m->name, *p);

                        if (pair && strv_contains(l->initial_cluster, pair))
                                return true;
                }
        }
        return false;
}

int node_etcd_learn(Context *ctx, NodeEtcd *l, const EtcdMemberList *list, uint64_t skip_id) {
        NodeEtcdRun *run = node_etcd_run(ctx);
        int r;

        if (!run)
                return -ENOMEM;
        for (size_t i = 0; i < list->n_members; i++) {
                if (list->members[i].id == skip_id)
                        continue;
                STRV_FOREACH(u, list->members[i].client_urls) {
                        r = strv_extend_unique(&l->endpoints, *u);
                        if (r >= 0)
                                r = strv_extend_unique(&run->learned_endpoints, *u);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int node_etcd_client(const NodeEtcd *l, const char *endpoint, uint64_t deadline, EtcdClient **ret) {
        EtcdTls tls = { .ca_file = l->ca_file, .cert_file = l->cert_file, .key_file = l->key_file };
        int r;

        /* The first etcd call loads libcurl; one that does not load is no client ("Can not access a
         * needed shared library"), and the report's unavailable list says why. */
        if (libraries_check(DLIB_LIBCURL, NULL) < 0)
                return -ELIBACC;
        r = etcd_client_new(endpoint, &tls, ret);
        if (r < 0)
                return r;
        etcd_client_set_timeout(*ret, ETCD_CALL_TIMEOUT_USEC);
        etcd_client_set_deadline(*ret, deadline);
        return 0;
}

static int append_reason(char **buf, const char *endpoint, const char *why) {
        char *s = strprintf("%s%s%s: %s", *buf ?: "", *buf ? "; " : "", endpoint, why);

        if (!s)
                return -ENOMEM;
        free(*buf);
        *buf = s;
        return 0;
}

int node_etcd_status(const NodeEtcd *l, uint64_t deadline, EtcdStatus *ret, char **reterr) {
        cleanup_free char *reasons = NULL;
        int r = -ENOENT;

        for (size_t i = 0; i < l->n_own; i++) {
                cleanup_free char *msg = NULL;
                EtcdClient *c = NULL;

                r = node_etcd_client(l, l->endpoints[i], deadline, &c);
                if (r >= 0)
                        r = etcd_status(c, ret, &msg);
                etcd_client_free(c);
                if (r >= 0 && ret->member_id != 0)
                        return 0;
                if (r >= 0)
                        r = set_errmsg(&msg, -EBADMSG, "an answer without a member ID");
                if (append_reason(&reasons, l->endpoints[i], msg ?: strerror(-r)) < 0)
                        return -ENOMEM;
                if (r == -ETIME)
                        break;
        }
        if (!reasons && l->not_own) {
                cleanup_free char *skipped = strv_join(l->not_own, ", ");

                /* --root: every one leads here, or to a name that would have to be looked up here. */
                return set_errmsg(reterr, -ENOENT,
                                  "under --root its own client URLs are not asked: none leads to the tree's machine "
                                  "for certain (%s)",
                                  strna(skipped));
        }
        return set_errmsg(reterr, r, "%s", reasons ?: "no client URL of its own");
}

int node_etcd_member_list(const NodeEtcd *l, uint64_t deadline, EtcdMemberList *ret, char **ret_endpoint,
                          char **reterr) {
        cleanup_free char *reasons = NULL;
        int r = -ENOENT;

        STRV_FOREACH(e, l->endpoints) {
                cleanup_free char *msg = NULL;
                EtcdClient *c = NULL;

                r = node_etcd_client(l, *e, deadline, &c);
                if (r >= 0)
                        r = etcd_member_list(c, ret, &msg);
                etcd_client_free(c);
                if (r >= 0) {
                        if (ret_endpoint && !(*ret_endpoint = strdup(*e))) {
                                etcd_member_list_done(ret);
                                return -ENOMEM;
                        }
                        return 0;
                }
                if (append_reason(&reasons, *e, msg ?: strerror(-r)) < 0)
                        return -ENOMEM;
                if (r == -ETIME)
                        break; /* the deadline: no endpoint after this one can be asked */
        }
        return set_errmsg(reterr, r, "%s", reasons ?: "no client URL to ask");
}
