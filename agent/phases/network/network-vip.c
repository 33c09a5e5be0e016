/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's kube-vip lines: the VIP that kube-vip's static pod put on the management interface. */

/* kube-vip (kubekey v4's and kubespray's kube_vip_enabled control-plane endpoint, and a common
 * addition to kubeadm control planes) runs as a static pod. The leader adds the VIP to vip_interface
 * as a host address (netlink AddrReplace of ADDRESS/32, or /128, pkg/vip/address.go; vip_subnet
 * overrides the prefix) and announces it with gratuitous ARP or NDP packets: it adds no neighbour
 * entries, so there are none to remove. When the node is reset, kubelet and the pod go, the address
 * stays: the old leader keeps answering for the VIP next to the new one. The manifest is read while
 * planning, before the files phase removes /etc/kubernetes/manifests, and exactly that address on
 * exactly that interface goes, nothing else of the interface. Without vip_interface kube-vip takes
 * the default route's interface, and so does this. Whatever the manifest says, an address the node
 * depends on stays: one an SSH session arrives on, the node's own (node-addresses.c), one a route
 * prefers as its source or whose prefix alone reaches a route's gateway; sessions and routes are
 * read again at apply time. */

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdarg.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "agent/config/yaml-util.h"
#include "agent/engine/context.h"
#include "agent/os/fileio.h"
#include "agent/config/node-addresses.h"
#include "agent/phases/network/network-vip.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/addr.h"
#include "netreset/route.h"
#include "string-util.h"

#define PHASE "network"
#define VIP_MANIFEST_MAX (256U * 1024U)
#define VIP_MAX 4U

/* What the static pod manifest says. */
typedef struct KubeVip {
        char *address;   /* "address" (kube-vip >= 0.5) or "vip_address": one or a comma list */
        char *interface; /* "vip_interface" */
        char *subnet;    /* "vip_subnet" (or the older "vip_cidr"): the prefix length(s), "32" or "32,128";
                          * NULL = host prefix */
} KubeVip;

typedef struct VipData {
        AddrInfo addr;      /* the address as the plan expects it: family, ifindex, host prefix, local */
        uint8_t alt_prefix; /* the manifest's vip_subnet/vip_cidr prefix (the host prefix when it says none) */
        char ifname[IF_NAMESIZE];
        int error; /* < 0: the VIP could not be known (an unreadable manifest): the row fails with it */
} VipData;

static void kube_vip_done(KubeVip *k) {
        free(k->address);
        free(k->interface);
        free(k->subnet);
}

/* The env list of one container: name/value pairs (valueFrom entries have no value and are skipped). */
static int env_collect(yaml_document_t *doc, yaml_node_t *env, KubeVip *k) {
        for (yaml_node_item_t *i = env->data.sequence.items.start; i < env->data.sequence.items.top; i++) {
                yaml_node_t *e = yaml_document_get_node(doc, *i);
                const char *name = yaml_scalar_of(yaml_map_get(doc, e, "name")),
                           *value = yaml_scalar_of(yaml_map_get(doc, e, "value"));
                char **field = NULL;

                if (!name || isempty(value))
                        continue;
                if (streq(name, "address") || (streq(name, "vip_address") && !k->address))
                        field = &k->address;
                else if (streq(name, "vip_interface"))
                        field = &k->interface;
                else if (streq(name, "vip_subnet") || (streq(name, "vip_cidr") && !k->subnet))
                        field = &k->subnet;
                if (!field)
                        continue;
                free(*field);
                *field = strdup(value);
                if (!*field)
                        return -ENOMEM;
        }
        return 0;
}

static int pod_collect(yaml_document_t *doc, KubeVip *k) {
        yaml_node_t *cs = yaml_map_get(doc, yaml_map_get(doc, yaml_document_get_root_node(doc), "spec"), "containers");

        if (!cs || cs->type != YAML_SEQUENCE_NODE)
                return 0;
        for (yaml_node_item_t *i = cs->data.sequence.items.start; i < cs->data.sequence.items.top; i++) {
                yaml_node_t *env = yaml_map_get(doc, yaml_document_get_node(doc, *i), "env");
                int r;

                if (!env || env->type != YAML_SEQUENCE_NODE)
                        continue;
                r = env_collect(doc, env, k);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Read the manifest beneath the root: 0 no file, 1 parsed (k filled as far as the file says), -errno
 * with the reason. */
static int kube_vip_read(int root_fd, const char *path, KubeVip *k, char **reterr) {
        cleanup_free char *text = NULL;
        yaml_document_t doc;
        size_t size;
        int r;

        r = fileio_read_beneath(root_fd, path, VIP_MANIFEST_MAX, &text, &size);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return set_errmsg(reterr, r, "cannot read %s: %s", path, strerror(-r));
        r = yaml_load_first(text, size, path, &doc, reterr);
        if (r < 0)
                return r;
        r = pod_collect(&doc, k);
        yaml_document_delete(&doc);
        return r < 0 ? r : 1;
}

/* The prefix the manifest gives the address: vip_subnet's entry for the family ("32,128": v4 first,
 * v6 last), else a host prefix. Older kube-vip releases add a host address whatever vip_cidr says, so
 * both are looked for. */
static uint8_t vip_prefix(const KubeVip *k, int family) {
        unsigned max = family == AF_INET ? 32 : 128, v;
        const char *s = k->subnet;
        char *end;

        if (!s)
                return (uint8_t) max;
        if (family == AF_INET6 && strchr(s, ','))
                s = strrchr(s, ',') + 1;
        v = (unsigned) strtoul(s, &end, 10);
        if (end == s || (*end && *end != ',') || v == 0 || v > max)
                return (uint8_t) max;
        return (uint8_t) v;
}

static const uint8_t *addr_bytes(const AddrInfo *a) {
        /* IPv4 has its own address in IFA_LOCAL; IPv6 sends only IFA_ADDRESS. */
        if (a->has_local)
                return a->local;
        return a->has_address ? a->address : NULL;
}

static bool addr_is(const AddrInfo *a, int family, const uint8_t *vip) {
        const uint8_t *b = addr_bytes(a);

        return a->family == family && b && memcmp(b, vip, family == AF_INET ? 4 : 16) == 0;
}

/* The entry of l that is exactly the VIP (address, and the host prefix or the manifest's), or NULL. */
static const AddrInfo *addr_find(const AddrList *l, const VipData *want) {
        for (size_t i = 0; i < l->n; i++)
                if (addr_is(&l->addrs[i], want->addr.family, want->addr.local) &&
                    (l->addrs[i].prefixlen == want->addr.prefixlen || l->addrs[i].prefixlen == want->alt_prefix))
                        return &l->addrs[i];
        return NULL;
}

/* Another address of the family on the link that the node could still be reached by (an IPv6
 * link-local address is no management address). */
static bool addr_has_other(const AddrList *l, const AddrInfo *vip) {
        for (size_t i = 0; i < l->n; i++) {
                const uint8_t *b = addr_bytes(&l->addrs[i]);

                if (l->addrs[i].family != vip->family || !b || addr_is(&l->addrs[i], vip->family, vip->local))
                        continue;
                if (vip->family == AF_INET6 && b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
                        continue;
                return true;
        }
        return false;
}

/* a and b share their first prefixlen bits. */
static bool same_prefix(const uint8_t *a, const uint8_t *b, unsigned prefixlen) {
        unsigned bytes = prefixlen / 8, bits = prefixlen % 8;

        if (memcmp(a, b, bytes) != 0)
                return false;
        return bits == 0 || ((a[bytes] ^ b[bytes]) & (uint8_t) (0xff << (8 - bits))) == 0;
}

/* Another address of the link, not the VIP, whose prefix holds gw: the route keeps its way out. */
static bool other_covers(const AddrList *l, const AddrInfo *vip, const uint8_t *gw) {
        for (size_t i = 0; i < l->n; i++) {
                const uint8_t *b = addr_bytes(&l->addrs[i]);

                if (l->addrs[i].family == vip->family && b && !addr_is(&l->addrs[i], vip->family, vip->local) &&
                    same_prefix(b, gw, l->addrs[i].prefixlen))
                        return true;
        }
        return false;
}

/* The kernel's own routes of the address itself: its local entry and its prefix route. */
static bool route_is_own(const RouteInfo *r, const AddrInfo *vip) {
        return r->table == RT_TABLE_LOCAL || (r->protocol == RTPROT_KERNEL && r->dst_len == vip->prefixlen &&
                                              same_prefix(r->dst.bytes, vip->local, vip->prefixlen));
}

/* The route leaves through a link that carries the address too: it keeps its source when the VIP goes. */
static bool source_elsewhere(NlSocket *rtnl, const RouteInfo *r, const AddrInfo *vip) {
        for (size_t i = 0; i < r->n_oifs; i++) {
                CLEANUP(addr_list_freep) AddrList *l = NULL;

                if (r->oifs[i] == vip->ifindex || addr_list_read(rtnl, r->oifs[i], &l, NULL) < 0)
                        continue;
                for (size_t j = 0; j < l->n; j++)
                        if (addr_is(&l->addrs[j], vip->family, vip->local))
                                return true;
        }
        return false;
}

/* A route that depends on the address: one that prefers it as its source, or one whose gateway
 * only this address's prefix reaches on its link (the node's management address, whatever prefix a
 * manifest gives it). A reason (malloc'd) or NULL; *ret_oom on allocation failure. */
static char *route_dependency(NlSocket *rtnl, const RouteTable *routes, const AddrList *l, const AddrInfo *vip,
                              bool *ret_oom) {
        unsigned max = vip->family == AF_INET ? 32 : 128;

        for (size_t i = 0; i < routes->n; i++) {
                const RouteInfo *r = &routes->routes[i];
                cleanup_free char *what = NULL;
                char gw[INET6_ADDRSTRLEN] = "";
                const char *how = NULL;
                char *s;

                if (r->family != vip->family)
                        continue;
                if (r->has_prefsrc && memcmp(r->prefsrc.bytes, vip->local, max / 8) == 0 && !route_is_own(r, vip) &&
                    !source_elsewhere(rtnl, r, vip))
                        how = "prefers it as its source";
                else if (r->has_gateway && vip->prefixlen < max && route_uses_link(r, vip->ifindex) &&
                         same_prefix(r->gateway.bytes, vip->local, vip->prefixlen) &&
                         !other_covers(l, vip, r->gateway.bytes)) {
                        how = "reaches its gateway through its prefix: ";
                        (void) inet_ntop(r->family, r->gateway.bytes, gw, sizeof gw);
                }
                if (!how)
                        continue;
                what = route_to_string(r);
                s = what ? strprintf("the route %s %s%s", what, how, gw) : NULL;
                *ret_oom = !s;
                return s;
        }
        return NULL;
}

/* Why the address must stay at act time too (the kernel's state read again): an SSH session
 * arrives on it, or a route depends on it. 0 none, 1 with *ret_why, -errno. */
static int vip_depended_on(NlSocket *rtnl, const RouteTable *routes, const AddrList *l, const AddrInfo *vip,
                           char **ret_why) {
        const GuardOptions opts = { .ssh_connection = getenv("SSH_CONNECTION") };
        bool oom = false;
        int r;

        r = guard_address_in_session(&opts, vip->family, vip->local, ret_why);
        if (r != 0)
                return r;
        *ret_why = route_dependency(rtnl, routes, l, vip, &oom);
        return oom ? -ENOMEM : !!*ret_why;
}

/* The plan's "nothing depends on it" is a claim: sessions and routes are read again. */
static int vip_recheck(NlSocket *rtnl, const AddrList *l, const AddrInfo *found, char **ret_msg) {
        CLEANUP(route_table_freep) RouteTable *routes = NULL;
        cleanup_free char *why = NULL;
        AddrInfo vip = *found;
        int r;

        memcpy(vip.local, addr_bytes(found), sizeof vip.local);
        r = route_table_read(rtnl, &routes, NULL);
        if (r >= 0)
                r = vip_depended_on(rtnl, routes, l, &vip, &why);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot tell whether the node depends on it: %s", strerror(-r));
        if (r > 0)
                return set_errmsg(ret_msg, -EBUSY, "not deleted: %s", why);
        return 0;
}

static int vip_apply(Action *a, Context *ctx, char **ret_msg) {
        const VipData *d = a->data;
        CLEANUP(addr_list_freep) AddrList *l = NULL;
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        char name[IF_NAMESIZE];
        const AddrInfo *found;
        int r;

        if (!d)
                return set_errmsg(ret_msg, 0, "%s", strna(a->detail));
        if (d->error < 0)
                return set_errmsg(ret_msg, d->error, "%s", strna(a->detail));
        if (!if_indextoname((unsigned) d->addr.ifindex, name))
                return set_errmsg(ret_msg, 0, "interface %s is gone, and the address with it", d->ifname);
        if (!streq(name, d->ifname))
                return set_errmsg(ret_msg, -ESTALE, "interface %d is %s now, not %s: not touched", d->addr.ifindex,
                                  name, d->ifname);
        r = nl_open(NETLINK_ROUTE, &rtnl);
        if (r >= 0)
                r = addr_list_read(rtnl, d->addr.ifindex, &l, ret_msg);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot list the addresses of %s: %s", d->ifname, strerror(-r));
        found = addr_find(l, d);
        if (!found)
                return set_errmsg(ret_msg, 0, "already gone");
        r = vip_recheck(rtnl, l, found, ret_msg);
        if (r != 0)
                return r;
        r = addr_delete(rtnl, found, ret_msg);
        if (r < 0)
                return set_errmsg(ret_msg, r, "%s", strerror(-r));
        return set_errmsg(ret_msg, r, "%s", r > 0 ? "deleted" : "already gone");
}

static int vip_check(Action *a, Context *ctx, char **ret_msg) {
        const VipData *d = a->data;
        CLEANUP(addr_list_freep) AddrList *l = NULL;
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        int r;

        if (!d)
                return 0;
        if (d->error < 0)
                return d->error;
        r = nl_open(NETLINK_ROUTE, &rtnl);
        if (r >= 0)
                r = addr_list_read(rtnl, d->addr.ifindex, &l, NULL);
        if (r == -ENODEV)
                return 0;
        if (r < 0)
                return r;
        if (!addr_find(l, d))
                return 0;
        *ret_msg = strdup("still present");
        return 1;
}

static const ActionOps vip_ops = {
        .kind = "address",
        .apply = vip_apply,
        .check = vip_check,
        .free_data = free,
};

/* A row that acts on nothing: what was looked at, and why there is nothing to do (or why not).
 * With error < 0 the row is a failure to come: what could not be read is never "nothing to do". */
static int plan_note(Plan *plan, const char *target, const char *reason, bool skip, int error, const char *fmt, ...)
        _printf_(6, 7);
static int plan_note(Plan *plan, const char *target, const char *reason, bool skip, int error, const char *fmt, ...) {
        cleanup_free char *msg = NULL;
        VipData *d = NULL;
        va_list ap;
        Action *a;

        va_start(ap, fmt);
        msg = vstrprintf(fmt, ap);
        va_end(ap);
        if (!msg)
                return -ENOMEM;
        if (error < 0) {
                d = calloc(1, sizeof *d);
                if (!d)
                        return -ENOMEM;
                d->error = error;
        }
        a = plan_add(plan, &vip_ops, PHASE, target, reason, d);
        if (!a)
                return -ENOMEM;
        a->present = error < 0;
        if (skip)
                return action_set_skip(a, "%s", msg);
        return action_set_detail(a, "%s", msg);
}

/* Why the VIP must stay: it is the node's own address (its configuration names it), a session or a
 * route depends on it, or it is how this node is reached. 0 may go, 1 with *ret_why, -errno. */
static int vip_guarded(const NetworkObservation *o, const NodeAddresses *own, const AddrList *l, const AddrInfo *found,
                       char **ret_why) {
        const char *why = guard_link_reason(o->guard, found->ifindex), *src;
        cleanup_free char *dep = NULL;
        AddrInfo vip = *found;
        int r;

        memcpy(vip.local, addr_bytes(found), sizeof vip.local);
        src = node_addresses_find(own, vip.family, vip.local);
        if (src)
                *ret_why = strprintf("refused: the node's own address, %s", src);
        else if ((r = vip_depended_on(o->rtnl, o->routes, l, &vip, &dep)) != 0) {
                if (r < 0)
                        return r;
                *ret_why = strprintf("refused: %s", dep);
        } else if (why && !addr_has_other(l, &vip))
                *ret_why = strprintf("refused: the only IPv%c address of an interface that %s",
                                     vip.family == AF_INET ? '4' : '6', why);
        else
                return 0;
        return *ret_why ? 1 : -ENOMEM;
}

/* What one manifest address is looked for with: the manifest, the node's own addresses, the reason. */
typedef struct VipScope {
        const KubeVip *k;
        const NodeAddresses *own;
        const char *reason;
        const char *how; /* how the interface was chosen: NULL when the manifest names it */
} VipScope;

/* One address of the manifest: the exact host address on the interface, planned if it is there. */
static int plan_vip(Plan *plan, const NetworkObservation *o, const VipScope *sc, const char *ip, const LinkInfo *link) {
        CLEANUP(addr_list_freep) AddrList *l = NULL;
        cleanup_free char *target = NULL, *why = NULL;
        VipData want = {}, *d;
        const AddrInfo *found;
        Action *a;
        int r;

        want.addr.family = strchr(ip, ':') ? AF_INET6 : AF_INET;
        if (inet_pton(want.addr.family, ip, want.addr.local) != 1)
                return plan_note(plan, ip, sc->reason, true, 0,
                                 "'%s' is a DNS name, not an address: the VIP it resolved to is not known", ip);
        want.addr.ifindex = link->ifindex;
        want.addr.has_local = true;
        want.addr.prefixlen = want.addr.family == AF_INET ? 32 : 128;
        want.alt_prefix = vip_prefix(sc->k, want.addr.family);
        snprintf(want.ifname, sizeof want.ifname, "%s", link->name);
        r = addr_list_read(o->rtnl, link->ifindex, &l, NULL);
        if (r < 0)
                return r;
        found = addr_find(l, &want);
        target = strprintf("%s/%u dev %s", ip, found ? found->prefixlen : want.addr.prefixlen, link->name);
        if (!target)
                return -ENOMEM;
        if (!found)
                return plan_note(plan, target, sc->reason, false, 0, "not present%s%s", sc->how ? " " : "",
                                 strempty(sc->how));
        d = malloc(sizeof *d);
        if (!d)
                return -ENOMEM;
        *d = want;
        a = plan_add(plan, &vip_ops, PHASE, target, sc->reason, d);
        if (!a)
                return -ENOMEM;
        r = vip_guarded(o, sc->own, l, found, &why);
        if (r < 0)
                return r;
        if (r > 0)
                return action_set_skip(a, "%s", why);
        return action_set_detail(a, "kube-vip's VIP, only this address of %s%s%s", link->name, sc->how ? " " : "",
                                 strempty(sc->how));
}

/* kube-vip without vip_interface takes the interface of the default route (IPv4, main table, as
 * its GetDefaultGatewayInterface does; IPv6 when there is none), or NULL. */
static const LinkInfo *default_route_link(const NetworkObservation *o) {
        static const int families[] = { AF_INET, AF_INET6 };

        for (size_t f = 0; f < ELEMENTSOF(families); f++)
                for (size_t i = 0; i < o->routes->n; i++) {
                        const RouteInfo *r = &o->routes->routes[i];

                        if (r->family == families[f] && r->table == RT_TABLE_MAIN && route_is_default(r) &&
                            r->n_oifs > 0)
                                return link_table_by_index(o->links, r->oifs[0]);
                }
        return NULL;
}

/* Each address of the manifest's comma list on its interface. */
static int plan_vips(Plan *plan, const NetworkObservation *o, const VipScope *sc) {
        cleanup_free char *list = strdup(sc->k->address);
        const LinkInfo *link =
                sc->k->interface ? link_table_by_name(o->links, sc->k->interface) : default_route_link(o);
        char *save = NULL;
        unsigned n = 0;
        int r = 0;

        if (!list)
                return -ENOMEM;
        for (char *ip = strtok_r(list, ", ", &save); ip && r >= 0; ip = strtok_r(NULL, ", ", &save)) {
                if (++n > VIP_MAX)
                        break;
                if (!link && sc->k->interface)
                        r = plan_note(plan, ip, sc->reason, false, 0, "no interface %s: not present", sc->k->interface);
                else if (!link)
                        /* Where kube-vip put it is not known: the VIP may be there, so never "clean". */
                        r = plan_note(plan, ip, sc->reason, false, -ENXIO,
                                      "the manifest names no vip_interface and there is no default route: "
                                      "the interface kube-vip used is not known");
                else
                        r = plan_vip(plan, o, sc, ip, link);
        }
        return r;
}

int network_vip_plan(Context *ctx, Plan *plan, const NetworkObservation *o, const ManifestEntry *e) {
        cleanup_free char *reason = manifest_entry_reason(e), *err = NULL;
        NodeAddresses own = {};
        VipScope sc = {};
        KubeVip k = {};
        int r;

        if (!reason)
                return -ENOMEM;
        r = kube_vip_read(ctx->root_fd, e->args[0], &k, &err);
        if (r == 0)
                r = plan_note(plan, e->args[0], reason, false, 0, "no kube-vip manifest");
        else if (r < 0 && r != -ENOMEM)
                r = plan_note(plan, e->args[0], reason, false, r, "the VIP is not known: %s", strna(err));
        else if (r > 0 && !k.address)
                r = plan_note(plan, e->args[0], reason, false, 0,
                              "the manifest names no address (or vip_address): nothing to remove");
        else if (r > 0 && (r = node_addresses_read(ctx->root_fd, &own)) >= 0) {
                sc = (VipScope) { &k, &own, reason,
                                  k.interface ? NULL : "(no vip_interface: the default route's interface)" };
                r = plan_vips(plan, o, &sc);
        }
        node_addresses_done(&own);
        kube_vip_done(&k);
        return r;
}
