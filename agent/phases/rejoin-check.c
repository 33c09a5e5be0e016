/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The "rejoinable" verdict: after verify, the checks kubeadm join's (and init's) preflight would fail
 * on, made natively - kubelet stopped as its installer leaves it, its ports and the control plane's
 * free, no static pod manifest, no kubelet kubeconfig, no etcd data, the kept runtime answering CRI
 * Status with its CNI conf dir in place, no CNI link or route of the pod ranges left, a resolver with
 * a nameserver. A check whose state the run did not act on (--phases, --root) says so instead. */

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/config/etcd-owner.h"
#include "agent/engine/phase.h"
#include "agent/os/fileio.h"
#include "agent/os/services.h"
#include "agent/phases/network/links.h"
#include "agent/phases/rejoin-check.h"
#include "cri/cri.h"
#include "chase.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/conntrack.h"
#include "string-util.h"

#define NODELOCALDNS "169.254.25.10"

#define RESOLV_MAX (1U << 20)

typedef int (*CheckFn)(Context *ctx, Rejoin *r, char **ret_msg);

static bool selected(const PhaseSelection *sel, const char *name) {
        for (size_t i = 0; i < sel->n; i++)
                if (streq(sel->phases[i]->name, name))
                        return true;
        return false;
}

/* The run acted on this network namespace: a node ("/"), or a phase that acts on the running system. */
static bool acts_on_netns(const Context *ctx, const PhaseSelection *sel) {
        for (size_t i = 0; i < sel->n; i++)
                if (!sel->phases[i]->tree)
                        return true;
        return streq(ctx->root, "/");
}

/* ---- kubelet ---- */

/* What the manifest does to kubelet.service's unit file: "mask", "disable" or NULL. */
static const char *kubelet_expected(const Manifest *m) {
        const char *want = NULL;

        MANIFEST_FOREACH(e, m, DIRECTIVE_UNIT) {
                if (e->n_args < 2 || !services_unit_pattern_matches(e->args[0], "kubelet.service"))
                        continue;
                if (comma_list_contains(e->args[1], "mask"))
                        return "mask";
                if (comma_list_contains(e->args[1], "disable"))
                        want = "disable";
        }
        return want;
}

static int check_kubelet(Context *ctx, Rejoin *r, char **ret_msg) {
        const char *want = kubelet_expected(ctx->manifest);
        cleanup_free char *file = NULL;
        ServiceManager *m = NULL;
        UnitStatus s;
        int k;

        if (phase_systemd(ctx, &m) < 0 || services_manager_why_absent(m))
                return set_errmsg(ret_msg, REJOIN_UNCHECKED, "systemd out of reach: %s",
                                  m ? strna(services_manager_why_absent(m)) : "cannot connect");
        k = services_unit_status(m, "kubelet.service", &s);
        if (k >= 0 && !services_status_is_stopped(&s))
                return set_errmsg(ret_msg, REJOIN_FAILED, "kubelet.service is %s (%s)", s.active_state, s.sub_state);
        if (services_unit_file_state(m, "kubelet.service", &file) < 0)
                return set_errmsg(ret_msg, REJOIN_OK, "kubelet.service stopped, no unit file");
        if ((want && streq(want, "mask") && !startswith(file, "masked")) ||
            (want && streq(want, "disable") && startswith(file, "enabled")))
                return set_errmsg(ret_msg, REJOIN_FAILED, "kubelet.service is %s, the manifest asks to %s it", file,
                                  want);
        return set_errmsg(ret_msg, REJOIN_OK, "kubelet.service stopped, %s", file);
}

/* ---- ports: LISTEN sockets of this network namespace ---- */

static int listening(const char *table, unsigned port) {
        cleanup_free char *text = NULL;
        char *saveptr = NULL;

        if (fileio_read_file(table, 16U << 20, &text, NULL) < 0)
                return 0; /* no IPv6: nothing listens there */
        for (char *l = strtok_r(text, "\n", &saveptr); l; l = strtok_r(NULL, "\n", &saveptr)) {
                unsigned p, st;

                /* "  0: 00000000:280A 00000000:0000 0A ..." local address:port, remote, state */
                if (sscanf(l, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", &p, &st) == 2 && p == port && st == 0x0A)
                        return 1;
        }
        return 0;
}

static int check_ports(Context *ctx, Rejoin *r, char **ret_msg) {
        static const unsigned ports[] = { 10250, 6443, 2379, 2380, 10257, 10259 };
        size_t n = r->control_plane ? ELEMENTSOF(ports) : 1;
        char busy[128] = "";

        for (size_t i = 0; i < n; i++)
                if (listening("/proc/net/tcp", ports[i]) || listening("/proc/net/tcp6", ports[i]))
                        snprintf(busy + strlen(busy), sizeof busy - strlen(busy), "%s%u", busy[0] ? ", " : "",
                                 ports[i]);
        if (busy[0])
                return set_errmsg(ret_msg, REJOIN_FAILED, "in use (LISTEN): %s", busy);
        return set_errmsg(ret_msg, REJOIN_OK, "%s free",
                          r->control_plane ? "10250, 6443, 2379-2380, 10257, 10259" : "10250");
}

/* ---- files ---- */

/* Entries of a directory beneath the root: 0 absent or empty, else how many; the first name in *ret_first. */
static int dir_entries(int root_fd, const char *path, char **ret_first) {
        cleanup_close int fd = chaseat(root_fd, path, 0, O_RDONLY | O_DIRECTORY, NULL, NULL);
        struct dirent *de;
        DIR *d;
        int n = 0;

        if (fd < 0)
                return fd == -ENOENT ? 0 : fd;
        d = fdopendir(TAKE_FD(fd));
        if (!d)
                return negative_errno();
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, "..") && n++ == 0 && ret_first)
                        *ret_first = strdup(de->d_name);
        closedir(d);
        return n;
}

static int check_manifests(Context *ctx, Rejoin *r, char **ret_msg) {
        cleanup_free char *first = NULL;
        int n = dir_entries(ctx->root_fd, "/etc/kubernetes/manifests", &first);

        if (n < 0)
                return set_errmsg(ret_msg, REJOIN_FAILED, "cannot read /etc/kubernetes/manifests: %s", strerror(-n));
        if (n > 0)
                return set_errmsg(ret_msg, REJOIN_FAILED, "/etc/kubernetes/manifests holds %d entr%s (%s)", n,
                                  n == 1 ? "y" : "ies", strna(first));
        return set_errmsg(ret_msg, REJOIN_OK, "/etc/kubernetes/manifests absent or empty");
}

static int check_kubeconfig(Context *ctx, Rejoin *r, char **ret_msg) {
        cleanup_close int fd = chaseat(ctx->root_fd, "/etc/kubernetes/kubelet.conf", 0, O_PATH, NULL, NULL);

        if (fd >= 0)
                return set_errmsg(ret_msg, REJOIN_FAILED, "/etc/kubernetes/kubelet.conf exists");
        return set_errmsg(ret_msg, REJOIN_OK, "no /etc/kubernetes/kubelet.conf");
}

static int check_etcd(Context *ctx, Rejoin *r, char **ret_msg) {
        const char *dirs[] = { "/var/lib/etcd", ctx->facts.etcd_data_dir };
        const EtcdScope *scope;
        int q;

        /* kubeadm's preflight asks for an empty data directory only for a local etcd
         * (DirAvailable--var-lib-etcd, when ClusterConfiguration.etcd.local is set). */
        q = phase_etcd_scope(ctx, &scope);
        if (q < 0)
                return q;
        if (scope->owner == ETCD_OWNER_FOREIGN)
                return set_errmsg(ret_msg, REJOIN_OK, "the etcd is out of scope (%s): its data is kept", scope->source);

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                cleanup_free char *first = NULL;
                int n;

                if (!dirs[i])
                        continue;
                n = dir_entries(ctx->root_fd, dirs[i], &first);
                if (n != 0)
                        return set_errmsg(ret_msg, REJOIN_FAILED, "%s %s%s%s", dirs[i],
                                          n < 0 ? "unreadable: " : "holds ", n < 0 ? strerror(-n) : strna(first),
                                          n > 1 ? ", ..." : "");
        }
        return set_errmsg(ret_msg, REJOIN_OK, "the etcd data directory is absent or empty");
}

/* ---- the kept runtime ---- */

static int check_one_runtime(Context *ctx, const CniKeep *k, char **ret_msg) {
        CLEANUP(cri_client_freep) CriClient *c = NULL;
        cleanup_free char *err = NULL;
        cleanup_close int fd = -EBADF;
        CriRuntimeStatus st = {};
        int q;

        if (cri_client_new(k->socket, &c) < 0)
                return -ENOMEM;
        cri_client_set_timeout(c, 10ULL * 1000000ULL);
        q = cri_status(c, ctx->deadline_usec, &st, &err);
        if (q < 0)
                return set_errmsg(ret_msg, REJOIN_FAILED, "%s at %s does not answer CRI Status: %s", k->runtime,
                                  k->socket, err ?: strerror(-q));
        q = st.runtime_ready ? REJOIN_OK : REJOIN_FAILED;
        if (q == REJOIN_FAILED)
                (void) set_errmsg(ret_msg, q, "%s is not RuntimeReady: %s", k->runtime, strna(st.runtime_reason));
        cri_runtime_status_done(&st);
        if (q != REJOIN_OK)
                return q;
        fd = chaseat(ctx->root_fd, k->conf_dir, 0, O_RDONLY | O_DIRECTORY, NULL, NULL);
        if (fd < 0)
                return set_errmsg(ret_msg, REJOIN_FAILED,
                                  "%s answers, but its CNI conf dir %s is gone: it will not load the CNI configuration "
                                  "a join writes until it restarts",
                                  k->runtime, k->conf_dir);
        return set_errmsg(ret_msg, REJOIN_OK, "%s answers CRI Status (RuntimeReady), its CNI conf dir %s is in place",
                          k->runtime, k->conf_dir);
}

static int check_runtime(Context *ctx, Rejoin *r, char **ret_msg) {
        int q = REJOIN_OK;

        if (r->keep.n == 0)
                return set_errmsg(ret_msg, REJOIN_UNCHECKED, "no running runtime kept by this run");
        for (size_t i = 0; i < r->keep.n && q == REJOIN_OK; i++) {
                if (i > 0)
                        *ret_msg = mfree(*ret_msg);
                q = check_one_runtime(ctx, r->keep.items + i, ret_msg);
        }
        return q;
}

/* ---- CNI links and routes of the pod ranges ---- */

/* A route of a pod range: not the local table's (the node's own addresses, which their links carry). */
static bool route_in_pod_range(const Rejoin *r, const RouteInfo *rt) {
        if (rt->table == RT_TABLE_LOCAL || rt->type == RTN_LOCAL || rt->type == RTN_BROADCAST)
                return false;
        for (size_t i = 0; i < r->cidrs.n; i++) {
                CtPrefix p;

                if (r->cidrs.items[i].kind != CIDR_POD || ct_prefix_parse(r->cidrs.items[i].cidr, &p) < 0)
                        continue;
                if (rt->dst_len >= p.len && ct_prefix_contains(&p, rt->family, rt->dst.bytes))
                        return true;
        }
        return false;
}

/* What the management guard keeps was refused where it happened, and is said there: not counted. */
static int check_network(Context *ctx, Rejoin *r, char **ret_msg) {
        const GuardOptions opts = { .ssh_connection = getenv("SSH_CONNECTION") };
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        CLEANUP(link_table_freep) LinkTable *links = NULL;
        CLEANUP(route_table_freep) RouteTable *routes = NULL;
        CLEANUP(guard_freep) Guard *g = NULL;
        int q;

        q = nl_open(NETLINK_ROUTE, &rtnl);
        if (q >= 0)
                q = link_table_read(rtnl, &links, NULL);
        if (q >= 0)
                q = route_table_read(rtnl, &routes, NULL);
        if (q >= 0)
                q = guard_new(rtnl, links, routes, &opts, &g, NULL);
        if (q < 0)
                return set_errmsg(ret_msg, REJOIN_FAILED, "cannot read the links and routes: %s", strerror(-q));
        for (size_t i = 0; i < links->n; i++) {
                const LinkInfo *l = links->links + i;
                int n;

                if (!network_link_selected_by(ctx->manifest, links, l) || guard_link_reason(g, l->ifindex))
                        continue;
                /* tunl0 cannot be deleted while the ipip module is loaded: reset (down, no address) is clean */
                if (link_is_tunnel_fallback(l) && network_fallback_state(rtnl, l, &n) == 0)
                        continue;
                return set_errmsg(ret_msg, REJOIN_FAILED, "link %s is left", l->name);
        }
        for (size_t i = 0; i < routes->n; i++)
                if (route_in_pod_range(r, routes->routes + i) && !guard_route_reason(g, routes->routes + i)) {
                        cleanup_free char *s = route_to_string(routes->routes + i);

                        return set_errmsg(ret_msg, REJOIN_FAILED, "route %s in a pod range is left", strna(s));
                }
        return set_errmsg(ret_msg, REJOIN_OK, "no CNI link left, no route in the pod ranges%s",
                          r->cidrs.n == 0 ? " (none found before the run)" : "");
}

/* ---- the resolver ---- */

static int check_resolver(Context *ctx, Rejoin *r, char **ret_msg) {
        cleanup_free char *text = NULL;
        char *saveptr = NULL;
        unsigned n = 0, stale = 0;
        /* Beneath --root with no phase of the running system, this namespace's links are not the node's. */
        bool nodelocal_link = !r->netns || if_nametoindex("nodelocaldns") > 0;
        int q;

        q = fileio_read_beneath(ctx->root_fd, "/etc/resolv.conf", RESOLV_MAX, &text, NULL);
        if (q < 0 && !streq(ctx->root, "/"))
                return set_errmsg(ret_msg, REJOIN_UNCHECKED, "no readable /etc/resolv.conf in the tree: %s",
                                  strerror(-q));
        if (q < 0)
                return set_errmsg(ret_msg, REJOIN_FAILED, "cannot read /etc/resolv.conf: %s", strerror(-q));
        for (char *l = strtok_r(text, "\n", &saveptr); l; l = strtok_r(NULL, "\n", &saveptr)) {
                char key[16], addr[64];

                if (sscanf(l, " %15s %63s", key, addr) != 2 || !streq(key, "nameserver"))
                        continue;
                n++;
                if (streq(addr, NODELOCALDNS) && !nodelocal_link)
                        stale++;
        }
        if (n == 0)
                return set_errmsg(ret_msg, REJOIN_FAILED, "/etc/resolv.conf names no nameserver");
        if (stale == n)
                return set_errmsg(ret_msg, REJOIN_FAILED,
                                  "/etc/resolv.conf names only " NODELOCALDNS ", NodeLocal DNS, whose link is gone");
        return set_errmsg(ret_msg, REJOIN_OK, "/etc/resolv.conf names %u nameserver%s%s", n, n == 1 ? "" : "s",
                          stale ? " (" NODELOCALDNS " is gone, the others answer)" : "");
}

/* ---- the verdict ---- */

static const struct {
        const char *name;
        const char *phase; /* the phase that makes the check's state; NULL: the network namespace's */
        CheckFn fn;
} checks[] = {
        { "kubelet", "services-early", check_kubelet }, { "ports", NULL, check_ports },
        { "static-pods", "files", check_manifests },    { "kubelet-kubeconfig", "files", check_kubeconfig },
        { "etcd-data", "files", check_etcd },           { "runtime", "pods", check_runtime },
        { "cni-network", "network", check_network },    { "resolver", "files", check_resolver },
};

int rejoin_prepare(const Context *ctx, Rejoin *ret) {
        cleanup_close int fd = -EBADF;
        Rejoin r = {};
        int q;

        q = cluster_cidrs_read(ctx->root_fd, &r.cidrs);
        if (q >= 0)
                q = cni_keep_find(ctx, &r.keep);
        if (q < 0) {
                rejoin_done(&r);
                return q;
        }
        fd = chaseat(ctx->root_fd, "/etc/kubernetes/manifests/kube-apiserver.yaml", 0, O_PATH, NULL, NULL);
        r.control_plane = fd >= 0;
        *ret = r;
        return 0;
}

int rejoin_check(Context *ctx, const PhaseSelection *sel, Rejoin *r) {
        r->netns = acts_on_netns(ctx, sel);
        _Static_assert(ELEMENTSOF(checks) <= REJOIN_CHECKS_MAX, "too many checks");

        for (size_t i = 0; i < ELEMENTSOF(checks); i++) {
                RejoinCheck *c = r->checks + r->n_checks++;
                bool run = checks[i].phase ? selected(sel, checks[i].phase) : acts_on_netns(ctx, sel);
                int q;

                *c = (RejoinCheck) { .name = checks[i].name };
                if (!run) {
                        c->state = REJOIN_UNCHECKED;
                        c->message = checks[i].phase ? strprintf("the %s phase did not run", checks[i].phase)
                                                     : strdup("the run did not act on this network namespace");
                } else {
                        q = checks[i].fn(ctx, r, &c->message);
                        if (q < 0)
                                return q;
                        c->state = q;
                }
                if (!c->message)
                        return -ENOMEM;
        }
        return 0;
}

bool rejoin_is_rejoinable(const Rejoin *r) {
        for (size_t i = 0; i < r->n_checks; i++)
                if (r->checks[i].state == REJOIN_FAILED)
                        return false;
        return true;
}

void rejoin_done(Rejoin *r) {
        cluster_cidrs_done(&r->cidrs);
        cni_keep_set_done(&r->keep);
        for (size_t i = 0; i < r->n_checks; i++)
                free(r->checks[i].message);
        *r = (Rejoin) {};
}

static const char *state_to_string(RejoinState s) {
        return s == REJOIN_OK ? "ok" : s == REJOIN_FAILED ? "failed" : "unchecked";
}

void rejoin_emit(Emitter *e, const Rejoin *r) {
        bool yes = rejoin_is_rejoinable(r);

        emit_open_object(e, "rejoin");
        emit_bool(e, "rejoinable", NULL, yes);
        emit_text(e, yes ? COLOR_NONE : COLOR_RED, "\nrejoinable: %s\n", yes ? "yes" : "no");
        emit_open_array(e, "checks");
        for (size_t i = 0; i < r->n_checks; i++) {
                const RejoinCheck *c = r->checks + i;

                emit_open_object(e, NULL);
                emit_string(e, c->state == REJOIN_FAILED ? COLOR_RED : COLOR_NONE, "name", "  %-19s", c->name);
                emit_string(e, COLOR_NONE, "state", " %-9s", state_to_string(c->state));
                emit_string(e, COLOR_GREY, "message", " %s\n", c->message);
                emit_close_object(e);
        }
        emit_close_array(e);
        emit_close_object(e);
}
