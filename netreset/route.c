/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IPv4 and IPv6 routes of every table: one dump, routing protocol names, deletion, FIB lookups. */

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/route.h"
#include "string-util.h"
#include "alloc-util.h"

/* iproute2's rt_protos names, and the kernel's RTPROT_* values. */
static const char *const proto_names[256] = {
        [RTPROT_UNSPEC] = "unspec",
        [RTPROT_REDIRECT] = "redirect",
        [RTPROT_KERNEL] = "kernel",
        [RTPROT_BOOT] = "boot",
        [RTPROT_STATIC] = "static",
        [RTPROT_GATED] = "gated",
        [RTPROT_RA] = "ra",
        [RTPROT_MRT] = "mrt",
        [RTPROT_ZEBRA] = "zebra",
        [RTPROT_BIRD] = "bird",
        [RTPROT_DNROUTED] = "dnrouted",
        [RTPROT_XORP] = "xorp",
        [RTPROT_NTK] = "ntk",
        [RTPROT_DHCP] = "dhcp",
        [RTPROT_MROUTED] = "mrouted",
        [RTPROT_KEEPALIVED] = "keepalived",
        [RTPROT_BABEL] = "babel",
        [RTPROT_OPENR] = "openr",
        [RTPROT_BGP] = "bgp",
        [RTPROT_ISIS] = "isis",
        [RTPROT_OSPF] = "ospf",
        [RTPROT_RIP] = "rip",
        [RTPROT_EIGRP] = "eigrp",
};

static const char *const type_names[] = {
        [RTN_BLACKHOLE] = "blackhole",
        [RTN_UNREACHABLE] = "unreachable",
        [RTN_PROHIBIT] = "prohibit",
        [RTN_LOCAL] = "local",
        [RTN_BROADCAST] = "broadcast",
        [RTN_ANYCAST] = "anycast",
        [RTN_MULTICAST] = "multicast",
        [RTN_THROW] = "throw",
        [RTN_NAT] = "nat",
};

static bool family_ok(int family) {
        return family == AF_INET || family == AF_INET6;
}

int route_proto_from_string(const char *s) {
        char *end;
        unsigned long v;

        if (isempty(s))
                return -EINVAL;
        for (unsigned i = 0; i < ELEMENTSOF(proto_names); i++)
                if (proto_names[i] && streq(proto_names[i], s))
                        return (int) i;
        if (!strchr("0123456789", s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 0);
        if (errno != 0 || *end || v > 255)
                return -EINVAL;
        return (int) v;
}

const char *route_proto_to_string(unsigned proto) {
        return proto < ELEMENTSOF(proto_names) ? proto_names[proto] : NULL;
}

void route_info_done(RouteInfo *r) {
        if (!r)
                return;
        free(r->oifs);
        free(r->msg);
        *r = (RouteInfo) {};
}

int route_info_copy(const RouteInfo *src, RouteInfo *ret) {
        RouteInfo c = *src;

        c.oifs = NULL;
        c.msg = NULL;
        if (src->n_oifs > 0 && !(c.oifs = reallocarray(NULL, src->n_oifs, sizeof(int))))
                return -ENOMEM;
        if (src->n_oifs > 0)
                memcpy(c.oifs, src->oifs, src->n_oifs * sizeof(int));
        if (src->msg && !(c.msg = malloc(src->msg->nlmsg_len))) {
                free(c.oifs);
                return -ENOMEM;
        }
        if (src->msg)
                memcpy(c.msg, src->msg, src->msg->nlmsg_len);
        *ret = c;
        return 0;
}

static void route_table_clear(void *userdata) {
        RouteTable *t = userdata;

        for (size_t i = 0; i < t->n; i++)
                route_info_done(&t->routes[i]);
        t->routes = mfree(t->routes);
        t->n = t->allocated = 0;
}

RouteTable *route_table_free(RouteTable *t) {
        if (!t)
                return NULL;
        route_table_clear(t);
        return mfree(t);
}

static int add_oif(RouteInfo *r, int ifindex) {
        int *n;

        if (ifindex <= 0)
                return 0;
        n = reallocarray(r->oifs, r->n_oifs + 1, sizeof *n);
        if (!n)
                return -ENOMEM;
        r->oifs = n;
        r->oifs[r->n_oifs++] = ifindex;
        return 0;
}

static void copy_addr(const struct nlattr *a, int family, RouteAddr *ret, bool *ret_ok) {
        size_t len = family == AF_INET ? 4 : 16;

        if (mnl_attr_get_payload_len(a) != len)
                return;
        memcpy(ret->bytes, mnl_attr_get_payload(a), len);
        if (ret_ok)
                *ret_ok = true;
}

/* RTA_MULTIPATH: a list of struct rtnexthop, each followed by its own attributes. */
static int parse_multipath(const struct nlattr *a, RouteInfo *r) {
        const uint8_t *p = mnl_attr_get_payload(a);
        size_t left = mnl_attr_get_payload_len(a);

        while (left >= sizeof(struct rtnexthop)) {
                const struct rtnexthop *nh = (const struct rtnexthop *) p;
                size_t step = RTNH_ALIGN(nh->rtnh_len);
                int k;

                if (nh->rtnh_len < sizeof *nh || nh->rtnh_len > left)
                        return -EBADMSG;
                k = add_oif(r, nh->rtnh_ifindex);
                if (k < 0)
                        return k;
                if (step >= left)
                        break;
                p += step;
                left -= step;
        }
        return 0;
}

static int parse_attrs(const struct nlmsghdr *nlh, RouteInfo *r) {
        const struct nlattr *a;
        int k = 0;

        mnl_attr_for_each(a, nlh, sizeof(struct rtmsg)) {
                switch (mnl_attr_get_type(a)) {
                case RTA_DST:
                        copy_addr(a, r->family, &r->dst, NULL);
                        break;
                case RTA_GATEWAY:
                        copy_addr(a, r->family, &r->gateway, &r->has_gateway);
                        break;
                case RTA_PREFSRC:
                        copy_addr(a, r->family, &r->prefsrc, &r->has_prefsrc);
                        break;
                case RTA_OIF:
                        if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
                                k = add_oif(r, (int) mnl_attr_get_u32(a));
                        break;
                case RTA_MULTIPATH:
                        k = parse_multipath(a, r);
                        break;
                case RTA_TABLE:
                        if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
                                r->table = mnl_attr_get_u32(a);
                        break;
                case RTA_PRIORITY:
                        if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
                                r->priority = mnl_attr_get_u32(a);
                        break;
                default:
                        break;
                }
                if (k < 0)
                        return k;
        }
        return 0;
}

int route_info_parse(const struct nlmsghdr *nlh, RouteInfo *ret) {
        const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
        RouteInfo r = {};
        int k;

        if (nlh->nlmsg_type != RTM_NEWROUTE || mnl_nlmsg_get_payload_len(nlh) < sizeof *rtm ||
            !family_ok(rtm->rtm_family))
                return -EBADMSG;
        r.family = rtm->rtm_family;
        r.dst_len = rtm->rtm_dst_len;
        r.protocol = rtm->rtm_protocol;
        r.type = rtm->rtm_type;
        r.tos = rtm->rtm_tos;
        r.table = rtm->rtm_table;
        r.msg = malloc(nlh->nlmsg_len);
        if (!r.msg)
                return -ENOMEM;
        memcpy(r.msg, nlh, nlh->nlmsg_len);
        k = parse_attrs(nlh, &r);
        if (k < 0) {
                route_info_done(&r);
                return k;
        }
        *ret = r;
        return 0;
}

static int collect_route(const struct nlmsghdr *nlh, void *userdata) {
        RouteTable *t = userdata;
        RouteInfo r;

        /* An AF_UNSPEC dump also brings multicast routing tables and others: not ours. */
        if (route_info_parse(nlh, &r) < 0)
                return 0;
        if (GREEDY_REALLOC(t->routes, t->allocated, t->n + 1) < 0) {
                route_info_done(&r);
                return -ENOMEM;
        }
        t->routes[t->n++] = r;
        return 0;
}

int route_table_read(NlSocket *rtnl, RouteTable **ret, char **reterr_msg) {
        CLEANUP(route_table_freep) RouteTable *t = calloc(1, sizeof(RouteTable));
        uint8_t buf[128];
        struct nlmsghdr *nlh = (struct nlmsghdr *) buf;
        struct rtmsg *rtm;
        int r;

        if (!t)
                return -ENOMEM;
        rtm = nl_message_start(buf, sizeof buf, RTM_GETROUTE, NLM_F_REQUEST | NLM_F_DUMP, sizeof *rtm);
        rtm->rtm_family = AF_UNSPEC;
        r = nl_dump(rtnl, nlh, collect_route, t, route_table_clear, reterr_msg);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

bool route_is_default(const RouteInfo *r) {
        return r->dst_len == 0 && r->type == RTN_UNICAST;
}

bool route_uses_link(const RouteInfo *r, int ifindex) {
        for (size_t i = 0; i < r->n_oifs; i++)
                if (r->oifs[i] == ifindex)
                        return true;
        return false;
}

bool route_same_entry(const RouteInfo *a, const RouteInfo *b) {
        size_t len = a->family == AF_INET ? 4 : 16;

        return a->family == b->family && a->table == b->table && a->dst_len == b->dst_len && a->tos == b->tos &&
               a->priority == b->priority && memcmp(a->dst.bytes, b->dst.bytes, len) == 0;
}

char *route_to_string(const RouteInfo *r) {
        char dst[INET6_ADDRSTRLEN] = "?", table[32] = "", proto[16];
        const char *type = r->type < ELEMENTSOF(type_names) ? type_names[r->type] : NULL;
        const char *pname = route_proto_to_string(r->protocol);
        char *s;

        (void) inet_ntop(r->family, r->dst.bytes, dst, sizeof dst);
        if (r->table != RT_TABLE_MAIN)
                snprintf(table, sizeof table, " table %u", r->table);
        snprintf(proto, sizeof proto, "%s", pname ?: "");
        if (!pname)
                snprintf(proto, sizeof proto, "%u", r->protocol);
        if (asprintf(&s, "%s%s%s/%u%s proto %s", type ?: "", type ? " " : "", dst, r->dst_len, table, proto) < 0)
                return NULL;
        return s;
}

/* iproute2's "ip route flush" does the same: the dumped message, turned into a delete. */
struct nlmsghdr *route_message_delete(void *buf, const RouteInfo *r) {
        struct nlmsghdr *nlh = buf;

        memcpy(buf, r->msg, r->msg->nlmsg_len);
        nlh->nlmsg_type = RTM_DELROUTE;
        nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        nlh->nlmsg_seq = 0;
        nlh->nlmsg_pid = 0;
        return nlh;
}

int route_delete(NlSocket *rtnl, const RouteInfo *r, char **reterr_msg) {
        cleanup_free void *buf = NULL;
        int k;

        if (!r->msg)
                return -EINVAL;
        buf = malloc(r->msg->nlmsg_len);
        if (!buf)
                return -ENOMEM;
        k = nl_call(rtnl, route_message_delete(buf, r), NULL, NULL, reterr_msg);
        if (k == -ESRCH || k == -ENOENT)
                return 0;
        return k < 0 ? k : 1;
}

static int collect_one(const struct nlmsghdr *nlh, void *userdata) {
        RouteInfo *ret = userdata;

        /* Only the first route of the reply is the answer; a parse failure leaves ret empty. */
        if (!ret->msg)
                (void) route_info_parse(nlh, ret);
        return 0;
}

int route_fib_match(NlSocket *rtnl, int family, const RouteAddr *addr, RouteInfo *ret, char **reterr_msg) {
        uint8_t buf[128];
        struct nlmsghdr *nlh = (struct nlmsghdr *) buf;
        struct rtmsg *rtm;
        RouteInfo r = {};
        int k;

        if (!family_ok(family))
                return -EAFNOSUPPORT;
        rtm = nl_message_start(buf, sizeof buf, RTM_GETROUTE, NLM_F_REQUEST, sizeof *rtm);
        rtm->rtm_family = (uint8_t) family;
        rtm->rtm_dst_len = family == AF_INET ? 32 : 128;
        /* Without RTM_F_LOOKUP_TABLE the kernel reports an IPv4 match as table main whatever table the
         * rules led to (inet_rtm_getroute()), and a route in another table would go unrecognised. */
        rtm->rtm_flags = RTM_F_FIB_MATCH | RTM_F_LOOKUP_TABLE;
        mnl_attr_put(nlh, RTA_DST, family == AF_INET ? 4 : 16, addr->bytes);
        k = nl_call(rtnl, nlh, collect_one, &r, reterr_msg);
        if (k >= 0 && !r.msg)
                k = -ENETUNREACH;
        if (k < 0) {
                route_info_done(&r);
                return k;
        }
        *ret = r;
        return 0;
}
