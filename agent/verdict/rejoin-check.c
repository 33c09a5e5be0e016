/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The "rejoinable" verdict: after verify, what kubeadm join refuses, made natively, and no more.
 * Each check names its source in kubeadm 1.20 (the version the e2e nodes run), read from
 * cmd/kubeadm/app/preflight/checks.go (RunJoinNodeChecks, addCommonChecks, and RunInitNodeChecks as
 * cmd/kubeadm/app/cmd/phases/join/preflight.go runs it for a control-plane join) and
 * cmd/kubeadm/app/cmd/phases/join/kubelet.go (the existing Ready Node). A condition join does not
 * refuse - a resolver without a nameserver, a CNI link left, a runtime not RuntimeReady - is a warning.
 * A check whose state the run did not act on (--phases) is unchecked; one that cannot be told from
 * here (the running system's ports beneath --root) is unknown. Neither counts against the node. The
 * checks of the files a join wants absent are rejoin-files.c's. */

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/config/installers.h"
#include "agent/config/manifest.h"
#include "agent/config/etcd-owner.h"
#include "agent/os/remote-fs.h"
#include "agent/engine/phase.h"
#include "agent/node/etcd.h"
#include "agent/os/fileio.h"
#include "agent/os/services.h"
#include "agent/phases/network/network-links.h"
#include "agent/phases/phases.h"
#include "agent/verdict/rejoin-check.h"
#include "agent/verdict/rejoin-files.h"
#include "cri/cri.h"
#include "chase.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/conntrack.h"
#include "string-util.h"

#define NODELOCALDNS "169.254.25.10"

#define RESOLV_MAX (1U << 20)

typedef int (*CheckFn)(Context *ctx, Rejoin *r, char **ret_msg);

/* The run acted on this network namespace: a node ("/"), or a phase that acts on the running system. */
static bool acts_on_netns(const Context *ctx, const PhaseSelection *sel) {
        for (size_t i = 0; i < sel->n; i++)
                if (!sel->phases[i]->tree)
                        return true;
        return streq(ctx->root, "/");
}

static int warn(Rejoin *r, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int warn(Rejoin *r, const char *name, const char *fmt, ...) {
        RejoinWarning *w;
        va_list ap;
        int k;

        if (r->n_warnings >= ELEMENTSOF(r->warnings))
                return 0;
        w = r->warnings + r->n_warnings;
        va_start(ap, fmt);
        k = vasprintf(&w->message, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        w->name = name;
        r->n_warnings++;
        return 0;
}

/* ---- kubelet: ServiceCheck{Service: "kubelet", CheckIfActive: false} (addCommonChecks) ---- */

/* kubeadm only warns here (no unit, not enabled); a running kubelet holds port 10250, which the ports
 * check asks. A masked unit passes preflight, but join's kubelet-start cannot start it. */
static int kubelet_warnings(Rejoin *r, ServiceManager *m, const char *file) {
        UnitStatus s;

        if (services_unit_status(m, "kubelet.service", &s) >= 0 && !services_status_is_stopped(&s) &&
            warn(r, "kubelet", "kubelet.service is %s (%s)", s.active_state, s.sub_state) < 0)
                return -ENOMEM;
        if (!file)
                return warn(r, "kubelet",
                            "kubelet.service has no unit file: kubeadm join warns that it does not exist");
        if (startswith(file, "masked"))
                return warn(r, "kubelet",
                            "kubelet.service is masked: kubeadm join's kubelet-start cannot start it until it is "
                            "unmasked");
        if (!startswith(file, "enabled"))
                return warn(r, "kubelet", "kubelet.service is %s: kubeadm join warns that it is not enabled", file);
        return 0;
}

static int check_kubelet(Context *ctx, Rejoin *r, char **ret_msg) {
        cleanup_free char *file = NULL;
        ServiceManager *m;
        const char *why;

        if (phase_systemd_running(ctx, &m, &why) < 0)
                return set_errmsg(ret_msg, REJOIN_UNKNOWN, "systemd out of reach: %s", why);
        (void) services_unit_file_state(m, "kubelet.service", &file);
        if (kubelet_warnings(r, m, file) < 0)
                return -ENOMEM;
        return set_errmsg(ret_msg, REJOIN_OK, "kubelet.service %s (kubeadm join refuses no state of it)",
                          file ?: "has no unit file");
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

/* PortOpenCheck: 10250 (addCommonChecks); a control-plane join (RunInitNodeChecks) also 6443, 10259,
 * 10257 and, only "if cfg.Etcd.Local != nil" (cmd/kubeadm/app/preflight/checks.go, 1.20), 2379 and
 * 2380: an out-of-scope etcd (etcd.external, a unit of the site's) keeps listening there, and kubeadm
 * init with that etcd does not ask. */
static int check_ports(Context *ctx, Rejoin *r, char **ret_msg) {
        static const unsigned ports[] = { 10250, 6443, 10257, 10259, 2379, 2380 };
        const EtcdScope *scope;
        size_t n = 1;
        char busy[128] = "";
        int q;

        if (r->control_plane) {
                q = node_etcd_scope(ctx, &scope);
                if (q < 0)
                        return q;
                n = scope->owner == ETCD_OWNER_FOREIGN ? ELEMENTSOF(ports) - 2 : ELEMENTSOF(ports);
        }
        for (size_t i = 0; i < n; i++)
                if (listening("/proc/net/tcp", ports[i]) || listening("/proc/net/tcp6", ports[i]))
                        snprintf(busy + strlen(busy), sizeof busy - strlen(busy), "%s%u", busy[0] ? ", " : "",
                                 ports[i]);
        if (busy[0])
                return set_errmsg(ret_msg, REJOIN_FAILED, "in use (LISTEN): %s", busy);
        if (n == ELEMENTSOF(ports) - 2)
                return set_errmsg(ret_msg, REJOIN_OK,
                                  "10250, 6443, 10257, 10259 free (2379-2380 not asked: the etcd is out of scope, %s)",
                                  scope->source);
        return set_errmsg(ret_msg, REJOIN_OK, "%s free",
                          r->control_plane ? "10250, 6443, 10257, 10259, 2379-2380" : "10250");
}

/* ---- InPathCheck (addCommonChecks) ---- */

/* kubeadm looks the programs up with exec.LookPath in the PATH it runs with; beneath the root, root's
 * usual PATH. Resolved inside the tree (a symlink such as /usr/sbin/iptables -> /etc/alternatives/...
 * is followed within it): a regular file with an execute bit is found, at the node path returned
 * (static storage; NULL: not found). */
static const char *found_in_path(int root_fd, const char *name) {
        static const char *const path[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                                            "/usr/bin",        "/sbin",          "/bin" };
        static char found[PATH_MAX];

        for (size_t i = 0; i < ELEMENTSOF(path); i++) {
                cleanup_close int fd = -EBADF;
                struct stat st;

                if (snprintf(found, sizeof found, "%s/%s", path[i], name) >= (int) sizeof found)
                        continue;
                fd = chaseat(root_fd, found, 0, O_PATH, NULL, NULL);
                if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
                        return found;
        }
        return NULL;
}

static bool in_path(int root_fd, const char *name) {
        return found_in_path(root_fd, name);
}

/* InPathCheck's mandatory programs (crictl is not asked of a dockershim node: the manifest's
 * docker-endpoint) and its optional ones, which kubeadm only warns about. */
static const char *const mandatory_programs[] = { "crictl", "conntrack", "ip", "iptables", "mount", "nsenter" };
static const char *const optional_programs[] = { "ebtables", "ethtool", "socat", "tc", "touch" };

/* Bit i: mandatory program i is in PATH; in *ret_installer's, as a link the detected installer's own
 * install made and its own uninstall removes again (k3s's crictl -> k3s, installers.h). */
static unsigned programs_in_path(int root_fd, Installer installer, unsigned *ret_installer) {
        unsigned m = 0, own = 0;

        for (size_t i = 0; i < ELEMENTSOF(mandatory_programs); i++) {
                const char *p = found_in_path(root_fd, mandatory_programs[i]);

                if (p)
                        m |= 1U << i;
                if (p && installer_uninstall_removes(root_fd, installer, p))
                        own |= 1U << i;
        }
        if (ret_installer)
                *ret_installer = own;
        return m;
}

/* The names of list[] (from index first) not in PATH now, ", "-separated, in *ret (NULL: none). */
static int programs_missing(int root_fd, const char *const *list, size_t n, size_t first, unsigned before,
                            bool want_before, char **ret) {
        cleanup_free char *s = NULL;

        for (size_t i = first; i < n; i++) {
                char *t;

                if (in_path(root_fd, list[i]) || (want_before != !!(before & (1U << i))))
                        continue;
                t = strprintf("%s%s%s", strempty(s), s ? ", " : "", list[i]);
                if (!t)
                        return -ENOMEM;
                free(s);
                s = t;
        }
        *ret = TAKE_PTR(s);
        return 0;
}

/* Does the manifest stop a CRI runtime's unit (--with-runtime, the runtime-containerd and
 * runtime-crio profiles)? Then crictl, which those profiles remove with it, is the runtime's. */
static bool runtime_removed(const Manifest *m) {
        return cni_keep_manifest_stops(m, "containerd.service") || cni_keep_manifest_stops(m, "crio.service");
}

/* A mandatory program missing from PATH refuses the join, as kubeadm's InPathCheck does: the verdict
 * says so whether the run removed it (the default manifest's /usr/local/bin/crictl, where a cri-tools
 * tarball puts it) or the node lacked it before the run too (its preparation, not the reset: the
 * message tells the two apart). Only a tree that had none of them before the run is not judged
 * (unchecked): no node prepared for kubeadm is that, and nothing the reset did changed it. The
 * optional ones are kubeadm's own warnings. */
static int check_executables(Context *ctx, Rejoin *r, char **ret_msg) {
        cleanup_free char *removed = NULL, *lacked = NULL, *optional = NULL, *own = NULL;
        size_t first = 0;

        MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_DOCKER_ENDPOINT)
                first = 1; /* crictl */
        if (first == 0 && runtime_removed(ctx->manifest) && (r->programs_before & 1U) &&
            !in_path(ctx->root_fd, mandatory_programs[0])) {
                /* --with-runtime: crictl went with the runtime, as the runtime check is unchecked; the
                 * reinstall that a join needs brings both back. */
                first = 1;
                if (warn(r, "executables",
                         "the run removed crictl with the runtime: reinstall both before kubeadm join") < 0)
                        return -ENOMEM;
        }
        /* The installer's own links (k3s's crictl -> k3s) go as its own uninstall takes them: not the
         * reset's doing, and the reinstall a join needs brings crictl back. */
        if (programs_missing(ctx->root_fd, mandatory_programs, ELEMENTSOF(mandatory_programs), first,
                             r->programs_installer, true, &own) < 0 ||
            programs_missing(ctx->root_fd, mandatory_programs, ELEMENTSOF(mandatory_programs), first,
                             r->programs_before & ~r->programs_installer, true, &removed) < 0 ||
            programs_missing(ctx->root_fd, mandatory_programs, ELEMENTSOF(mandatory_programs), first,
                             r->programs_before, false, &lacked) < 0 ||
            programs_missing(ctx->root_fd, optional_programs, ELEMENTSOF(optional_programs), 0, 0, false, &optional) <
                    0)
                return -ENOMEM;
        if (own && warn(r, "executables",
                        "%s went with %s (a link to its binary its install made and its own uninstall removes): "
                        "install %s before kubeadm join",
                        own, strna(installer_to_string(r->installer)), own) < 0)
                return -ENOMEM;
        if (optional && warn(r, "executables", "not in PATH: %s (kubeadm join only warns)", optional) < 0)
                return -ENOMEM;
        if (removed || (lacked && r->programs_before != 0))
                return set_errmsg(ret_msg, REJOIN_FAILED, "%s%s%s%s%s%s: kubeadm join refuses it",
                                  removed ? "the run removed " : "", strempty(removed), removed ? " from PATH" : "",
                                  removed && lacked ? "; " : "",
                                  !lacked ? ""
                                  : ctx->executed
                                          ? "not in PATH, before the run too (the node's own preparation lacks it): "
                                          : "not in PATH: ",
                                  strempty(lacked));
        if (lacked)
                return set_errmsg(ret_msg, REJOIN_UNCHECKED,
                                  "none of the programs kubeadm join needs (%s) was in PATH before the run: a node not "
                                  "prepared for kubeadm, which this run did not change",
                                  lacked);
        return set_errmsg(ret_msg, REJOIN_OK, "the run removed none of the programs kubeadm join needs in PATH");
}

/* ---- the kept runtime: ContainerRuntimeCheck (addCommonChecks) ---- */

/* kubeadm runs "crictl -r SOCKET info" (util/runtime/runtime.go IsRunning): an answer is enough. What
 * else a join needs of a kept runtime - RuntimeReady, the CNI conf dir it watches - is a warning. */
static int check_one_runtime(Context *ctx, Rejoin *r, const CniKeep *k, char **ret_msg) {
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
        q = st.runtime_ready ? 0
                             : warn(r, "runtime", "%s is not RuntimeReady: %s", k->runtime, strna(st.runtime_reason));
        cri_runtime_status_done(&st);
        if (q < 0)
                return q;
        fd = chaseat(ctx->root_fd, k->conf_dir, 0, O_RDONLY | O_DIRECTORY, NULL, NULL);
        if (fd < 0 && warn(r, "runtime",
                           "%s answers, but its CNI conf dir %s is gone: it will not load the CNI configuration a join "
                           "writes until it restarts",
                           k->runtime, k->conf_dir) < 0)
                return -ENOMEM;
        return set_errmsg(ret_msg, REJOIN_OK, "%s answers CRI Status", k->runtime);
}

static int check_runtime(Context *ctx, Rejoin *r, char **ret_msg) {
        int q = REJOIN_OK;

        if (r->keep.n == 0)
                return set_errmsg(ret_msg, REJOIN_UNCHECKED, "no running runtime kept by this run");
        for (size_t i = 0; i < r->keep.n && q == REJOIN_OK; i++) {
                if (i > 0)
                        *ret_msg = mfree(*ret_msg);
                q = check_one_runtime(ctx, r, r->keep.items + i, ret_msg);
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

/* kubeadm join does not look at links or routes: what is left is a warning (and verify's residue).
 * What the management guard keeps was refused where it happened, and is said there: not counted. */
static int warn_network(Context *ctx, Rejoin *r) {
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
                return q == -ENOMEM ? q : warn(r, "cni-network", "cannot read the links and routes: %s", strerror(-q));
        for (size_t i = 0; i < links->n; i++) {
                const LinkInfo *l = links->links + i;
                int n;

                if (!network_link_selected_by(ctx->manifest, links, l) || guard_link_reason(g, l->ifindex))
                        continue;
                /* tunl0 cannot be deleted while the ipip module is loaded: reset (down, no address) is clean */
                if (link_is_tunnel_fallback(l) && network_fallback_state(rtnl, l, &n) == 0)
                        continue;
                return warn(r, "cni-network", "link %s is left", l->name);
        }
        for (size_t i = 0; i < routes->n; i++)
                if (route_in_pod_range(r, routes->routes + i) && !guard_route_reason(g, routes->routes + i)) {
                        cleanup_free char *s = route_to_string(routes->routes + i);

                        return warn(r, "cni-network", "route %s in a pod range is left", strna(s));
                }
        return 0;
}

/* ---- the resolver: kubeadm join does not read it; what the kubelet will find there is a warning ---- */

static int warn_resolver(Context *ctx, Rejoin *r) {
        cleanup_free char *text = NULL;
        char *saveptr = NULL;
        unsigned n = 0, stale = 0;
        /* Beneath --root with no phase of the running system, this namespace's links are not the node's. */
        bool nodelocal_link = !r->netns || if_nametoindex("nodelocaldns") > 0;
        int q;

        q = fileio_read_beneath(ctx->root_fd, "/etc/resolv.conf", RESOLV_MAX, &text, NULL);
        if (q == -ENOMEM)
                return q;
        if (q < 0 && !streq(ctx->root, "/"))
                return 0; /* a tree may hold none: the rescue system's is not the node's */
        if (q < 0)
                return warn(r, "resolver", "cannot read /etc/resolv.conf: %s", strerror(-q));
        for (char *l = strtok_r(text, "\n", &saveptr); l; l = strtok_r(NULL, "\n", &saveptr)) {
                char key[16], addr[64];

                if (sscanf(l, " %15s %63s", key, addr) != 2 || !streq(key, "nameserver"))
                        continue;
                n++;
                if (streq(addr, NODELOCALDNS) && !nodelocal_link)
                        stale++;
        }
        if (n == 0)
                return warn(r, "resolver", "/etc/resolv.conf names no nameserver (kubeadm join does not check it)");
        if (stale == n)
                return warn(r, "resolver",
                            "/etc/resolv.conf names only " NODELOCALDNS
                            ", NodeLocal DNS, whose link is gone (kubeadm join does not check it)");
        return 0;
}

/* ---- the running system's kernel: SwapCheck and FileContentCheck (addCommonChecks) ---- */

static int check_swap(Context *ctx, Rejoin *r, char **ret_msg) {
        cleanup_free char *text = NULL;
        unsigned lines = 0;

        /* kubeadm: no /proc/swaps, no reason to refuse; more than its header line, swap is on. */
        if (fileio_read_file("/proc/swaps", 1U << 20, &text, NULL) < 0)
                return set_errmsg(ret_msg, REJOIN_OK, "no /proc/swaps");
        for (const char *p = text; *p; p++)
                lines += *p == '\n';
        if (lines > 1)
                return set_errmsg(ret_msg, REJOIN_FAILED, "swap is on (%u in /proc/swaps): kubeadm join refuses it",
                                  lines - 1);
        return set_errmsg(ret_msg, REJOIN_OK, "swap is off");
}

static int check_sysctl(Context *ctx, Rejoin *r, char **ret_msg) {
        static const char *const files[] = { "/proc/sys/net/bridge/bridge-nf-call-iptables",
                                             "/proc/sys/net/ipv4/ip_forward" };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                cleanup_free char *text = NULL;

                /* kubeadm compares the first byte with '1'. */
                if (fileio_read_file(files[i], 4096, &text, NULL) < 0)
                        return set_errmsg(ret_msg, REJOIN_FAILED, "%s does not exist: kubeadm join refuses it",
                                          files[i]);
                if (text[0] != '1')
                        return set_errmsg(ret_msg, REJOIN_FAILED, "%s is not 1: kubeadm join refuses it", files[i]);
        }
        return set_errmsg(ret_msg, REJOIN_OK, "bridge-nf-call-iptables and ip_forward are 1");
}

/* ---- the Node object: kubelet-start (cmd/kubeadm/app/cmd/phases/join/kubelet.go) ---- */

static int check_node_object(Context *ctx, Rejoin *r, char **ret_msg) {
        int q = phase_node_object_ready(ctx, ret_msg);

        if (q == -ENOMEM)
                return q;
        if (q == -ENODATA)
                return REJOIN_UNCHECKED;
        if (q < 0)
                return REJOIN_UNKNOWN;
        if (q > 0) {
                *ret_msg = mfree(*ret_msg);
                return set_errmsg(ret_msg, REJOIN_FAILED,
                                  "a Node of this name is Ready: kubeadm join refuses to register it again");
        }
        return REJOIN_OK;
}

/* ---- the verdict ---- */

/* Each check, with the phase whose work it looks at (NULL: the running system's network namespace,
 * which beneath --root is the node's only when a phase that acts on it was selected; KERNEL: the
 * running kernel's swap and sysctls, never the node's beneath --root, where they come from the node's
 * own boot) and where kubeadm 1.20 asks it. */
#define KERNEL ""
static const struct {
        const char *name;
        const char *phase;
        CheckFn fn;
} checks[] = {
        { "static-pods", "files", rejoin_check_manifests },         /* RunJoinNodeChecks DirAvailableCheck */
        { "kubelet-kubeconfig", "files", rejoin_check_kubeconfig }, /* RunJoinNodeChecks FileAvailableCheck */
        { "bootstrap-kubeconfig", "files", rejoin_check_bootstrap_kubeconfig }, /* RunJoinNodeChecks */
        { "ca-cert", "files", rejoin_check_ca },             /* RunJoinNodeChecks FileAvailableCheck CACertPath */
        { "etcd-data", "files", rejoin_check_etcd },         /* RunInitNodeChecks DirAvailableCheck */
        { "executables", "files", check_executables },       /* addCommonChecks InPathCheck */
        { "ports", NULL, check_ports },                      /* PortOpenCheck */
        { "runtime", "pods", check_runtime },                /* ContainerRuntimeCheck */
        { "kubelet", "services-early", check_kubelet },      /* ServiceCheck kubelet (warnings only) */
        { "swap", KERNEL, check_swap },                      /* SwapCheck */
        { "sysctl", KERNEL, check_sysctl },                  /* FileContentCheck bridgenf, ipv4Forward */
        { "node-object", "node-object", check_node_object }, /* join/kubelet.go */
};

int rejoin_prepare(const Context *ctx, Rejoin *ret) {
        cleanup_close int fd = -EBADF;
        Rejoin r = {};
        int q;

        q = cluster_cidrs_read(ctx->root_fd, ctx->cni_config, &r.cidrs);
        if (q >= 0)
                q = cni_keep_find(ctx, &r.keep);
        if (q < 0) {
                rejoin_done(&r);
                return q;
        }
        fd = chaseat(ctx->root_fd, KUBEADM_APISERVER_MANIFEST, 0, O_PATH, NULL, NULL);
        r.control_plane = fd >= 0;
        r.programs_before = programs_in_path(ctx->root_fd, ctx->installer, &r.programs_installer);
        r.installer = ctx->installer;
        *ret = r;
        return 0;
}

int rejoin_check(Context *ctx, const PhaseSelection *sel, Rejoin *r) {
        r->netns = acts_on_netns(ctx, sel);
        _Static_assert(ELEMENTSOF(checks) <= REJOIN_CHECKS_MAX, "too many checks");

        for (size_t i = 0; i < ELEMENTSOF(checks); i++) {
                RejoinCheck *c = r->checks + r->n_checks++;
                const char *phase = checks[i].phase;
                bool kernel = phase && streq(phase, KERNEL);
                bool run = kernel  ? streq(ctx->root, "/")
                           : phase ? phase_selection_has(sel, phase)
                                   : acts_on_netns(ctx, sel);
                int q;

                *c = (RejoinCheck) { .name = checks[i].name };
                /* The tree holds no ports, swap or sysctls: never "ok", never "failed". */
                if (!run && kernel) {
                        c->state = REJOIN_UNKNOWN;
                        c->message = strdup("beneath --root the running kernel is not the node's: its swap and "
                                            "sysctls come from the node's own boot, cannot tell");
                } else if (!run && !phase) {
                        c->state = REJOIN_UNKNOWN;
                        c->message = strdup("beneath --root no phase acted on the running system, which is not "
                                            "the node: cannot tell");
                } else if (!run) {
                        c->state = REJOIN_UNCHECKED;
                        c->message = strprintf("the %s phase did not run", phase);
                } else {
                        q = checks[i].fn(ctx, r, &c->message);
                        if (q < 0)
                                return q;
                        c->state = q;
                }
                if (!c->message)
                        return -ENOMEM;
        }
        if (phase_selection_has(sel, "network") && warn_network(ctx, r) < 0)
                return -ENOMEM;
        if (phase_selection_has(sel, "files") && warn_resolver(ctx, r) < 0)
                return -ENOMEM;
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
        for (size_t i = 0; i < r->n_warnings; i++)
                free(r->warnings[i].message);
        *r = (Rejoin) {};
}

static const char *state_to_string(RejoinState s) {
        static const char *const names[] = {
                [REJOIN_OK] = "ok",
                [REJOIN_FAILED] = "failed",
                [REJOIN_UNCHECKED] = "unchecked",
                [REJOIN_UNKNOWN] = "unknown",
        };

        return names[s];
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
                emit_string(e, c->state == REJOIN_FAILED ? COLOR_RED : COLOR_NONE, "name", "  %-21s", c->name);
                emit_string(e, COLOR_NONE, "state", " %-9s", state_to_string(c->state));
                emit_string(e, COLOR_GREY, "message", " %s\n", c->message);
                emit_close_object(e);
        }
        emit_close_array(e);
        emit_open_array(e, "warnings");
        for (size_t i = 0; i < r->n_warnings; i++) {
                emit_open_object(e, NULL);
                emit_string(e, COLOR_YELLOW, "name", "  warning: %s:", r->warnings[i].name);
                emit_string(e, COLOR_NONE, "message", " %s\n", r->warnings[i].message);
                emit_close_object(e);
        }
        emit_close_array(e);
        emit_close_object(e);
}
