/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The management guard: the links and routes a reset must never delete, and why. */

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <stdarg.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/guard.h"
#include "string-util.h"

#define SSH_PORT_DEFAULT 22
#define TCP_ESTABLISHED_STATE 1U

typedef enum GuardRoot {
        ROOT_NONE,
        ROOT_LOOPBACK,
        ROOT_DEFAULT_ROUTE,
        ROOT_SSH,
} GuardRoot;

/* How a link came to be guarded: directly, or through a neighbour ("via") that is. */
typedef struct Mark {
        GuardRoot root;
        size_t root_index;    /* index in the link table of the directly guarded link */
        size_t via;           /* the neighbour it was reached through, when not direct */
        const char *relation; /* what the neighbour is to this link: "veth peer", "port", ... */
} Mark;

typedef struct GuardedRoute {
        RouteInfo key; /* no oifs, no msg: only what route_same_entry compares */
        char *reason;
} GuardedRoute;

typedef struct Address {
        int family;
        RouteAddr addr;
        int ifindex;
} Address;

typedef struct AddressList {
        Address *v;
        size_t n, allocated;
} AddressList;

typedef struct Session {
        GuardEndpoint local, remote;
} Session;

struct Guard {
        int *ifindexes;
        char **reasons; /* parallel to ifindexes; NULL: may go */
        size_t n;
        GuardedRoute *routes;
        size_t n_routes, allocated_routes;
};

Guard *guard_free(Guard *g) {
        if (!g)
                return NULL;
        for (size_t i = 0; i < g->n; i++)
                free(g->reasons[i]);
        for (size_t i = 0; i < g->n_routes; i++)
                free(g->routes[i].reason);
        free(g->ifindexes);
        free(g->reasons);
        free(g->routes);
        return mfree(g);
}

static bool is_v4_mapped(const struct in6_addr *a) {
        static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

        return memcmp(a->s6_addr, prefix, sizeof prefix) == 0;
}

/* IPv4-mapped IPv6 addresses (a dual-stack sshd) are the IPv4 address the kernel routes by. */
static void endpoint_unmap(GuardEndpoint *e) {
        if (e->family != AF_INET6 || !is_v4_mapped(&e->addr.in6))
                return;
        memmove(e->addr.bytes, e->addr.bytes + 12, 4);
        memset(e->addr.bytes + 4, 0, 12);
        e->family = AF_INET;
}

static int parse_address(const char *s, GuardEndpoint *ret) {
        char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 1];
        GuardEndpoint e = {};
        char *zone;

        if (strlen(s) >= sizeof buf)
                return -EINVAL;
        strcpy(buf, s);
        zone = strchr(buf, '%');
        if (zone) {
                *zone++ = '\0';
                if (isempty(zone) || strlen(zone) >= sizeof e.zone)
                        return -EINVAL;
                strcpy(e.zone, zone);
        }
        if (inet_pton(AF_INET, buf, &e.addr.in) == 1)
                e.family = AF_INET;
        else if (inet_pton(AF_INET6, buf, &e.addr.in6) == 1)
                e.family = AF_INET6;
        else
                return -EINVAL;
        endpoint_unmap(&e);
        *ret = e;
        return 0;
}

static int parse_port(const char *s, uint16_t *ret) {
        char *end;
        unsigned long v;

        if (isempty(s) || !strchr("0123456789", s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || *end || v == 0 || v > 65535)
                return -EINVAL;
        *ret = (uint16_t) v;
        return 0;
}

int guard_parse_ssh_connection(const char *s, GuardEndpoint *ret_client, GuardEndpoint *ret_server) {
        cleanup_free char *copy = NULL;
        char *w[5] = {}, *saveptr = NULL;
        GuardEndpoint client, server;
        size_t n = 0;

        if (isempty(s))
                return -EINVAL;
        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        for (char *t = strtok_r(copy, " \t\n", &saveptr); t; t = strtok_r(NULL, " \t\n", &saveptr)) {
                if (n == ELEMENTSOF(w))
                        return -EINVAL;
                w[n++] = t;
        }
        if (n != 4 || parse_address(w[0], &client) < 0 || parse_port(w[1], &client.port) < 0 ||
            parse_address(w[2], &server) < 0 || parse_port(w[3], &server.port) < 0)
                return -EINVAL;
        if (ret_client)
                *ret_client = client;
        if (ret_server)
                *ret_server = server;
        return 0;
}

/* "0100007F:0016": 8 (IPv4) or 32 (IPv6) hex digits, each 32-bit word in host order, a hex port. */
static int parse_proc_endpoint(const char *s, GuardEndpoint *ret) {
        GuardEndpoint e = {};
        const char *colon = strchr(s, ':');
        size_t len = colon ? (size_t) (colon - s) : 0;
        unsigned long port;
        char *end;

        if (len != 8 && len != 32)
                return -EINVAL;
        for (size_t w = 0; w < len / 8; w++) {
                char word[9];
                uint32_t v;

                memcpy(word, s + w * 8, 8);
                word[8] = '\0';
                if (strspn(word, "0123456789abcdefABCDEF") != 8)
                        return -EINVAL;
                v = (uint32_t) strtoul(word, NULL, 16);
                memcpy(e.addr.bytes + w * 4, &v, 4);
        }
        if (strspn(colon + 1, "0123456789abcdefABCDEF") != 4)
                return -EINVAL;
        port = strtoul(colon + 1, &end, 16);
        if (*end)
                return -EINVAL;
        e.family = len == 8 ? AF_INET : AF_INET6;
        e.port = (uint16_t) port;
        endpoint_unmap(&e);
        *ret = e;
        return 0;
}

int guard_parse_proc_net_tcp_line(const char *line, GuardEndpoint *ret_local, GuardEndpoint *ret_remote,
                                  unsigned *ret_state) {
        char local[64], remote[64];
        GuardEndpoint l, r;
        unsigned state;

        /* "   0: 0100007F:0016 00000000:0000 0A ..." */
        if (sscanf(line, " %*u: %63s %63s %x", local, remote, &state) != 3)
                return -EINVAL;
        if (parse_proc_endpoint(local, &l) < 0 || parse_proc_endpoint(remote, &r) < 0 || state > 0xff)
                return -EINVAL;
        if (ret_local)
                *ret_local = l;
        if (ret_remote)
                *ret_remote = r;
        if (ret_state)
                *ret_state = state;
        return 0;
}

static int sessions_push(Session **s, size_t *n, const GuardEndpoint *local, const GuardEndpoint *remote) {
        Session *v = reallocarray(*s, *n + 1, sizeof *v);

        if (!v)
                return -ENOMEM;
        *s = v;
        v[(*n)++] = (Session) { *local, *remote };
        return 0;
}

static int read_tcp_sessions(const char *path, uint16_t port_a, uint16_t port_b, Session **s, size_t *n) {
        cleanup_fclose FILE *f = NULL;
        cleanup_free char *line = NULL;
        size_t size = 0;

        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? 0 : negative_errno();
        while (getline(&line, &size, f) >= 0) {
                GuardEndpoint local, remote;
                unsigned state;
                int r;

                if (guard_parse_proc_net_tcp_line(line, &local, &remote, &state) < 0 ||
                    state != TCP_ESTABLISHED_STATE || (local.port != port_a && local.port != port_b))
                        continue;
                r = sessions_push(s, n, &local, &remote);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int collect_sessions(const GuardOptions *o, Session **ret, size_t *ret_n) {
        const char *proc_net = o && o->proc_net ? o->proc_net : "/proc/net";
        uint16_t port = o && o->ssh_port ? o->ssh_port : SSH_PORT_DEFAULT, conn_port = port;
        GuardEndpoint client, server;
        char path[4096];
        int r;

        if (o && o->ssh_connection && guard_parse_ssh_connection(o->ssh_connection, &client, &server) >= 0) {
                r = sessions_push(ret, ret_n, &server, &client);
                if (r < 0)
                        return r;
                conn_port = server.port;
        }
        for (unsigned i = 0; i < 2; i++) {
                snprintf(path, sizeof path, "%s/%s", proc_net, i == 0 ? "tcp" : "tcp6");
                r = read_tcp_sessions(path, port, conn_port, ret, ret_n);
                if (r < 0)
                        return r;
        }
        return 0;
}

int guard_address_in_session(const GuardOptions *o, int family, const uint8_t *addr, char **ret_reason) {
        cleanup_free Session *s = NULL;
        size_t n = 0;
        int r;

        r = collect_sessions(o, &s, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                char peer[INET6_ADDRSTRLEN] = "?";

                if (s[i].local.family != family || memcmp(s[i].local.addr.bytes, addr, family == AF_INET ? 4 : 16) != 0)
                        continue;
                (void) inet_ntop(s[i].remote.family, s[i].remote.addr.bytes, peer, sizeof peer);
                *ret_reason = strprintf("an established SSH session from %s arrives on it", peer);
                return *ret_reason ? 1 : -ENOMEM;
        }
        return 0;
}

static int collect_address(const struct nlmsghdr *nlh, void *userdata) {
        const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
        const struct nlattr *a, *local = NULL, *address = NULL;
        AddressList *t = userdata;
        size_t len;
        Address *v;

        if (nlh->nlmsg_type != RTM_NEWADDR || mnl_nlmsg_get_payload_len(nlh) < sizeof *ifa ||
            (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6))
                return 0;
        mnl_attr_for_each(a, nlh, sizeof *ifa) {
                if (mnl_attr_get_type(a) == IFA_LOCAL)
                        local = a;
                else if (mnl_attr_get_type(a) == IFA_ADDRESS)
                        address = a;
        }
        /* On a point-to-point link IFA_ADDRESS is the peer; IFA_LOCAL is ours. */
        a = local ?: address;
        len = ifa->ifa_family == AF_INET ? 4 : 16;
        if (!a || mnl_attr_get_payload_len(a) != len)
                return 0;
        if (GREEDY_REALLOC(t->v, t->allocated, t->n + 1) < 0)
                return -ENOMEM;
        v = t->v;
        v[t->n] = (Address) { .family = ifa->ifa_family, .ifindex = (int) ifa->ifa_index };
        memcpy(v[t->n].addr.bytes, mnl_attr_get_payload(a), len);
        t->n++;
        return 0;
}

static int read_addresses(NlSocket *rtnl, Address **ret, size_t *ret_n, char **reterr_msg) {
        AddressList t = {};
        uint8_t buf[64];
        struct nlmsghdr *nlh = (struct nlmsghdr *) buf;
        struct ifaddrmsg *ifa;
        int r;

        ifa = nl_message_start(buf, sizeof buf, RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, sizeof *ifa);
        ifa->ifa_family = AF_UNSPEC;
        r = nl_call(rtnl, nlh, collect_address, &t, reterr_msg);
        if (r < 0) {
                free(t.v);
                return r;
        }
        *ret = t.v;
        *ret_n = t.n;
        return 0;
}

/* Marking links, then spreading the marks to every link whose deletion would take a marked one
 * down or cut it off. */

typedef struct Marker {
        const LinkTable *links;
        Mark *marks;
        size_t *queue;
        size_t head, tail;
} Marker;

static void mark(Marker *m, size_t i, GuardRoot root, size_t root_index, size_t via, const char *relation) {
        if (m->marks[i].root != ROOT_NONE)
                return;
        m->marks[i] = (Mark) { root, root_index, via, relation };
        m->queue[m->tail++] = i;
}

static void mark_ifindex(Marker *m, int ifindex, GuardRoot root) {
        for (size_t i = 0; i < m->links->n; i++)
                if (m->links->links[i].ifindex == ifindex)
                        mark(m, i, root, i, i, NULL);
}

static void mark_neighbours(Marker *m, size_t g) {
        const LinkInfo *gl = &m->links->links[g];
        const Mark *gm = &m->marks[g];

        for (size_t i = 0; i < m->links->n; i++) {
                const LinkInfo *l = &m->links->links[i];

                if (i == g)
                        continue;
                /* Deleting a master releases its ports; deleting a port can cut the master off. */
                if (gl->master == l->ifindex)
                        mark(m, i, gm->root, gm->root_index, g, "port");
                else if (l->master == gl->ifindex)
                        mark(m, i, gm->root, gm->root_index, g, "master");
                /* A veth dies with its peer; vlan, macvlan and vxlan die with their lower device. */
                else if (gl->lower == l->ifindex)
                        mark(m, i, gm->root, gm->root_index, g, streq(gl->kind, "veth") ? "veth peer" : "upper device");
                /* An upper device can go without harm to its lower one, a veth peer cannot. */
                else if (l->lower == gl->ifindex && streq(l->kind, "veth"))
                        mark(m, i, gm->root, gm->root_index, g, "veth peer");
        }
}

static char *mark_reason(const LinkTable *links, const Mark *k) {
        static const char *const direct[] = {
                [ROOT_LOOPBACK] = "loopback",
                [ROOT_DEFAULT_ROUTE] = "carries the default route",
                [ROOT_SSH] = "the SSH session arrives through it",
        };
        const char *via = links->links[k->via].name, *root = links->links[k->root_index].name;
        char *s = NULL;
        int r;

        if (!k->relation)
                return strdup(direct[k->root]);
        if (k->via == k->root_index)
                r = k->root == ROOT_SSH ? asprintf(&s, "the SSH session arrives through its %s %s", k->relation, via)
                    : k->root == ROOT_LOOPBACK ? asprintf(&s, "its %s %s is the loopback device", k->relation, via)
                                               : asprintf(&s, "its %s %s carries the default route", k->relation, via);
        else
                r = asprintf(&s, "its %s %s is tied to %s, which %s", k->relation, via, root,
                             k->root == ROOT_SSH        ? "the SSH session arrives through"
                             : k->root == ROOT_LOOPBACK ? "is the loopback device"
                                                        : "carries the default route");
        return r < 0 ? NULL : s;
}

static int guard_route_add(Guard *g, const RouteInfo *r, const char *fmt, ...) _printf_(3, 4);
static int guard_route_add(Guard *g, const RouteInfo *r, const char *fmt, ...) {
        GuardedRoute *v;
        va_list ap;
        char *reason;

        for (size_t i = 0; i < g->n_routes; i++)
                if (route_same_entry(&g->routes[i].key, r))
                        return 0;
        va_start(ap, fmt);
        reason = vstrprintf(fmt, ap);
        va_end(ap);
        if (!reason)
                return -ENOMEM;
        if (GREEDY_REALLOC(g->routes, g->allocated_routes, g->n_routes + 1) < 0) {
                free(reason);
                return -ENOMEM;
        }
        v = g->routes;
        v[g->n_routes].key = *r;
        v[g->n_routes].key.oifs = NULL;
        v[g->n_routes].key.n_oifs = 0;
        v[g->n_routes].key.msg = NULL;
        v[g->n_routes++].reason = reason;
        return 0;
}

/* The route the kernel uses towards addr is guarded, and so are the links it leaves through.
 * A failed lookup (no route, a link-local address without scope) leaves nothing to guard. */
static int guard_path_to(Guard *g, Marker *m, NlSocket *rtnl, int family, const RouteAddr *addr, GuardRoot root,
                         const char *what) {
        char a[INET6_ADDRSTRLEN] = "?";
        RouteInfo r;
        int k;

        if (!rtnl || route_fib_match(rtnl, family, addr, &r, NULL) < 0)
                return 0;
        (void) inet_ntop(family, addr->bytes, a, sizeof a);
        if (root == ROOT_SSH)
                for (size_t i = 0; i < r.n_oifs; i++)
                        mark_ifindex(m, r.oifs[i], root);
        k = guard_route_add(g, &r, "%s %s is routed through it", what, a);
        route_info_done(&r);
        return k;
}

static int guard_defaults(Guard *g, Marker *m, NlSocket *rtnl, const RouteTable *routes) {
        for (size_t i = 0; i < routes->n; i++) {
                const RouteInfo *r = &routes->routes[i];
                int k;

                if (!route_is_default(r))
                        continue;
                for (size_t j = 0; j < r->n_oifs; j++)
                        mark_ifindex(m, r->oifs[j], ROOT_DEFAULT_ROUTE);
                k = guard_route_add(g, r, "a default route");
                if (k >= 0 && r->has_gateway)
                        k = guard_path_to(g, m, rtnl, r->family, &r->gateway, ROOT_DEFAULT_ROUTE,
                                          "the default gateway");
                if (k < 0)
                        return k;
        }
        return 0;
}

static void guard_local_address(Marker *m, const LinkTable *links, const Address *addrs, size_t n_addrs,
                                const GuardEndpoint *e) {
        size_t len = e->family == AF_INET ? 4 : 16;
        const LinkInfo *l;

        if (!isempty(e->zone) && (l = link_table_by_name(links, e->zone)))
                mark_ifindex(m, l->ifindex, ROOT_SSH);
        for (size_t i = 0; i < n_addrs; i++)
                if (addrs[i].family == e->family && memcmp(addrs[i].addr.bytes, e->addr.bytes, len) == 0)
                        mark_ifindex(m, addrs[i].ifindex, ROOT_SSH);
}

static int guard_sessions(Guard *g, Marker *m, NlSocket *rtnl, const GuardOptions *o, char **reterr_msg) {
        cleanup_free Address *addrs = NULL;
        cleanup_free Session *s = NULL;
        size_t n_addrs = 0, n = 0;
        int k;

        if (!rtnl)
                return 0;
        k = collect_sessions(o, &s, &n);
        if (k < 0 || n == 0)
                return k;
        k = read_addresses(rtnl, &addrs, &n_addrs, reterr_msg);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                guard_local_address(m, m->links, addrs, n_addrs, &s[i].local);
                k = guard_path_to(g, m, rtnl, s[i].remote.family, &s[i].remote.addr, ROOT_SSH, "the SSH session from");
                if (k < 0)
                        return k;
        }
        return 0;
}

static int guard_finish(Guard *g, const Marker *m) {
        const LinkTable *links = m->links;

        g->n = links->n;
        for (size_t i = 0; i < links->n; i++) {
                g->ifindexes[i] = links->links[i].ifindex;
                if (m->marks[i].root == ROOT_NONE)
                        continue;
                g->reasons[i] = mark_reason(links, &m->marks[i]);
                if (!g->reasons[i])
                        return -ENOMEM;
        }
        return 0;
}

int guard_new(NlSocket *rtnl, const LinkTable *links, const RouteTable *routes, const GuardOptions *o, Guard **ret,
              char **reterr_msg) {
        CLEANUP(guard_freep) Guard *g = NULL;
        cleanup_free Mark *marks = NULL;
        cleanup_free size_t *queue = NULL;
        Marker m;
        int k;

        g = calloc(1, sizeof *g);
        marks = calloc(links->n + 1, sizeof *marks);
        queue = calloc(links->n + 1, sizeof *queue);
        if (!g || !marks || !queue || !(g->ifindexes = calloc(links->n + 1, sizeof(int))) ||
            !(g->reasons = calloc(links->n + 1, sizeof(char *))))
                return -ENOMEM;
        m = (Marker) { links, marks, queue, 0, 0 };

        /* Direct marks first, strongest reason first; then breadth-first, so each link is
         * explained through its nearest guarded neighbour. */
        for (size_t i = 0; i < links->n; i++)
                if (links->links[i].flags & IFF_LOOPBACK)
                        mark(&m, i, ROOT_LOOPBACK, i, i, NULL);
        k = guard_defaults(g, &m, rtnl, routes);
        if (k < 0)
                return k;
        k = guard_sessions(g, &m, rtnl, o, reterr_msg);
        if (k < 0)
                return k;
        while (m.head < m.tail)
                mark_neighbours(&m, m.queue[m.head++]);
        k = guard_finish(g, &m);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(g);
        return 0;
}

const char *guard_link_reason(const Guard *g, int ifindex) {
        for (size_t i = 0; i < g->n; i++)
                if (g->ifindexes[i] == ifindex)
                        return g->reasons[i];
        return NULL;
}

const char *guard_route_reason(const Guard *g, const RouteInfo *r) {
        for (size_t i = 0; i < g->n_routes; i++)
                if (route_same_entry(&g->routes[i].key, r))
                        return g->routes[i].reason;
        return NULL;
}
