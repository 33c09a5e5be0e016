/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of netreset's link, address, route, netns and guard code that needs no kernel: message builders
 * (built, then parsed back), the extack parser, patterns, protocol names, and the guard's parsers. */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <limits.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "macro.h"
#include "netreset/addr.h"
#include "netreset/guard.h"
#include "netreset/link.h"
#include "netreset/netns.h"
#include "netreset/route.h"
#include "netreset/nl.h"
#include "string-util.h"

/* Every attribute of a link request, checked against the one attribute expected (or none). */
static void assert_link_attrs(const struct nlmsghdr *nlh, int want_type, uint32_t want_value) {
        const struct nlattr *a;
        unsigned n = 0;

        mnl_attr_for_each(a, nlh, sizeof(struct ifinfomsg)) {
                n++;
                assert_int_equal(mnl_attr_get_type(a), want_type);
                assert_int_equal(mnl_attr_validate(a, MNL_TYPE_U32), 0);
                assert_int_equal(mnl_attr_get_u32(a), want_value);
        }
        assert_int_equal(n, want_type < 0 ? 0 : 1);
}

static const struct ifinfomsg *assert_link_header(const struct nlmsghdr *nlh, uint16_t type, size_t len) {
        const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

        assert_int_equal(nlh->nlmsg_type, type);
        assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
        assert_int_equal(nlh->nlmsg_len, len);
        assert_int_equal(ifi->ifi_family, AF_UNSPEC);
        assert_int_equal(ifi->ifi_change, 0);
        assert_int_equal(ifi->ifi_flags, 0);
        return ifi;
}

static void test_message_set_group(void **state) {
        uint8_t buf[LINK_MESSAGE_SIZE];
        struct nlmsghdr *nlh = link_message_set_group(buf, 42, 0x4e520001U);
        const struct ifinfomsg *ifi;

        ifi = assert_link_header(nlh, RTM_NEWLINK, NLMSG_HDRLEN + sizeof(struct ifinfomsg) + 8);
        assert_int_equal(ifi->ifi_index, 42);
        assert_link_attrs(nlh, IFLA_GROUP, 0x4e520001U);
}

static void test_message_delete_group(void **state) {
        uint8_t buf[LINK_MESSAGE_SIZE];
        struct nlmsghdr *nlh = link_message_delete_group(buf, 7);
        const struct ifinfomsg *ifi;

        /* ifindex 0 and no IFLA_IFNAME: what makes the kernel delete by group. */
        ifi = assert_link_header(nlh, RTM_DELLINK, NLMSG_HDRLEN + sizeof(struct ifinfomsg) + 8);
        assert_int_equal(ifi->ifi_index, 0);
        assert_link_attrs(nlh, IFLA_GROUP, 7);
}

static void test_message_delete_golden(void **state) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        static const uint8_t golden[] = {
                0x28, 0, 0, 0, RTM_DELLINK, 0, 0x05, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, /* nlmsghdr */
                AF_UNSPEC, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,         /* ifinfomsg, ifindex 0 */
                0x08, 0, IFLA_GROUP, 0, 0x01, 0x00, 0x52, 0x4e,                 /* IFLA_GROUP */
        };
        uint8_t buf[LINK_MESSAGE_SIZE];
        struct nlmsghdr *nlh = link_message_delete_group(buf, 0x4e520001U);

        assert_int_equal(nlh->nlmsg_len, sizeof golden);
        assert_memory_equal(nlh, golden, sizeof golden);
#else
        skip();
#endif
}

static void test_message_delete(void **state) {
        uint8_t buf[LINK_MESSAGE_SIZE];
        struct nlmsghdr *nlh = link_message_delete(buf, 1234);
        const struct ifinfomsg *ifi;

        ifi = assert_link_header(nlh, RTM_DELLINK, NLMSG_HDRLEN + sizeof(struct ifinfomsg));
        assert_int_equal(ifi->ifi_index, 1234);
        assert_link_attrs(nlh, -1, 0);
}

/* Only IFF_UP changes: ifi_change names it, ifi_flags clears it, and no attribute rides along. */
static void test_message_set_down(void **state) {
        uint8_t buf[LINK_MESSAGE_SIZE];
        struct nlmsghdr *nlh = link_message_set_down(buf, 77);
        const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

        assert_int_equal(nlh->nlmsg_type, RTM_NEWLINK);
        assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
        assert_int_equal(nlh->nlmsg_len, NLMSG_HDRLEN + sizeof(struct ifinfomsg));
        assert_int_equal(ifi->ifi_family, AF_UNSPEC);
        assert_int_equal(ifi->ifi_index, 77);
        assert_int_equal(ifi->ifi_change, IFF_UP);
        assert_int_equal(ifi->ifi_flags, 0);
        assert_link_attrs(nlh, -1, 0);
}

static void test_tunnel_fallback(void **state) {
        static const struct {
                const char *kind, *name;
                bool fallback;
        } cases[] = {
                { "ipip", "tunl0", true },
                { "sit", "sit0", true },
                { "ip6tnl", "ip6tnl0", true },
                { "gre", "gre0", true },
                { "gretap", "gretap0", true },
                { "erspan", "erspan0", true },
                { "vti", "ip_vti0", true },
                { "vti6", "ip6_vti0", true },
                { "ip6gre", "ip6gre0", true },
                { "ip6erspan", "ip6erspan0", true },
                { "ipip", "tunl1", false },  /* one made by hand: deletable */
                { "", "tunl0", false },      /* the name without the kind */
                { "gretap", "gre0", false }, /* the kinds are not interchangeable */
                { "vxlan", "vxlan.calico", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                LinkInfo l = { .ifindex = 4 };

                snprintf(l.kind, sizeof l.kind, "%s", cases[i].kind);
                snprintf(l.name, sizeof l.name, "%s", cases[i].name);
                assert_int_equal(link_is_tunnel_fallback(&l), cases[i].fallback);
        }
}

/* An RTM_NEWLINK for calico's WireGuard device as the kernel reports one: "wireguard.cali type
 * wireguard" (this kernel has no wireguard module to make a real one). */
static struct nlmsghdr *build_wireguard(void *buf, int ifindex, const char *name) {
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
        struct ifinfomsg *ifi;
        struct nlattr *info;

        nlh->nlmsg_type = RTM_NEWLINK;
        ifi = mnl_nlmsg_put_extra_header(nlh, sizeof *ifi);
        ifi->ifi_index = ifindex;
        ifi->ifi_flags = IFF_UP | IFF_NOARP | IFF_POINTOPOINT;
        mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
        mnl_attr_put_u32(nlh, IFLA_MTU, 1440);
        info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
        mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "wireguard");
        mnl_attr_nest_end(nlh, info);
        return nlh;
}

static void test_wireguard_parse(void **state) {
        uint8_t buf[256] = {};
        LinkInfo l;

        assert_int_equal(link_info_parse(build_wireguard(buf, 42, "wireguard.cali"), &l), 1);
        assert_int_equal(l.ifindex, 42);
        assert_string_equal(l.name, "wireguard.cali");
        assert_string_equal(l.kind, "wireguard");
        assert_false(link_is_tunnel_fallback(&l));
        assert_true(link_pattern_match("wireguard.cali", l.name));
        assert_false(link_pattern_match("wireguard.cali", "wireguard.calico"));
        memset(buf, 0, sizeof buf);
        assert_int_equal(link_info_parse(build_wireguard(buf, 43, "wg-v6.cali"), &l), 1);
        assert_string_equal(l.name, "wg-v6.cali");
        assert_string_equal(l.kind, "wireguard");
}

/* Built, then parsed back: the address must come back exactly as it went out. */
static void assert_addr_round_trip(const AddrInfo *a) {
        uint8_t buf[ADDR_MESSAGE_SIZE];
        struct nlmsghdr *nlh = addr_message_delete(buf, a);
        const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
        size_t len = a->family == AF_INET ? 4 : 16;
        AddrInfo back;

        assert_int_equal(nlh->nlmsg_type, RTM_DELADDR);
        assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
        assert_int_equal(nlh->nlmsg_len,
                         NLMSG_HDRLEN + sizeof *ifa + (a->has_local + a->has_address) * MNL_ALIGN(4 + len));
        assert_int_equal(ifa->ifa_family, a->family);
        assert_int_equal(ifa->ifa_prefixlen, a->prefixlen);
        assert_int_equal(ifa->ifa_index, a->ifindex);
        assert_int_equal(addr_info_parse(nlh, &back), 0);
        assert_int_equal(back.family, a->family);
        assert_int_equal(back.ifindex, a->ifindex);
        assert_int_equal(back.prefixlen, a->prefixlen);
        assert_int_equal(back.has_local, a->has_local);
        assert_int_equal(back.has_address, a->has_address);
        if (a->has_local)
                assert_memory_equal(back.local, a->local, len);
        if (a->has_address)
                assert_memory_equal(back.address, a->address, len);
}

static void test_message_delete_addr(void **state) {
        AddrInfo v4 = { .family = AF_INET, .ifindex = 9, .prefixlen = 32, .has_local = true, .has_address = true };
        AddrInfo v4_peer = v4, v6 = { .family = AF_INET6, .ifindex = 9, .prefixlen = 64, .has_address = true };

        /* calico's tunl0 address: 10.233.64.0/32, IFA_LOCAL and IFA_ADDRESS alike. */
        assert_int_equal(inet_pton(AF_INET, "10.233.64.0", v4.local), 1);
        memcpy(v4.address, v4.local, 4);
        assert_addr_round_trip(&v4);
        /* Point-to-point: the peer in IFA_ADDRESS differs and must go out as it was dumped. */
        memcpy(v4_peer.local, v4.local, 4);
        assert_int_equal(inet_pton(AF_INET, "192.0.2.1", v4_peer.address), 1);
        assert_addr_round_trip(&v4_peer);
        /* IPv6 sends IFA_ADDRESS alone (sit0's link-local). */
        assert_int_equal(inet_pton(AF_INET6, "fe80::a00:1", v6.address), 1);
        assert_addr_round_trip(&v6);
}

static void test_message_delete_addr_golden(void **state) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        static const uint8_t golden[] = {
                0x28, 0, 0, 0, RTM_DELADDR, 0, 0x05, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, /* nlmsghdr */
                AF_INET, 32, 0, 0, 0x05, 0, 0, 0,                               /* ifaddrmsg, ifindex 5 */
                0x08, 0, IFA_LOCAL, 0, 10, 233, 64, 0,                          /* IFA_LOCAL */
                0x08, 0, IFA_ADDRESS, 0, 10, 233, 64, 0,                        /* IFA_ADDRESS */
        };
        AddrInfo a = { .family = AF_INET, .ifindex = 5, .prefixlen = 32, .has_local = true, .has_address = true,
                       .local = { 10, 233, 64, 0 }, .address = { 10, 233, 64, 0 } };
        uint8_t buf[ADDR_MESSAGE_SIZE];
        struct nlmsghdr *nlh = addr_message_delete(buf, &a);

        assert_int_equal(nlh->nlmsg_len, sizeof golden);
        assert_memory_equal(nlh, golden, sizeof golden);
#else
        skip();
#endif
}

/* What the dump parser must refuse: another family, a prefix longer than the address, no address. */
static void test_addr_parse_invalid(void **state) {
        AddrInfo a = { .family = AF_INET, .ifindex = 5, .prefixlen = 24, .has_local = true };
        uint8_t buf[ADDR_MESSAGE_SIZE];
        struct nlmsghdr *nlh;
        struct ifaddrmsg *ifa;
        AddrInfo back;

        nlh = addr_message_delete(buf, &a);
        ifa = mnl_nlmsg_get_payload(nlh);
        assert_int_equal(addr_info_parse(nlh, &back), 0);
        ifa->ifa_family = AF_PACKET;
        assert_int_equal(addr_info_parse(nlh, &back), -EBADMSG);
        ifa->ifa_family = AF_INET;
        ifa->ifa_prefixlen = 33;
        assert_int_equal(addr_info_parse(nlh, &back), -EBADMSG);
        a.has_local = false;
        nlh = addr_message_delete(buf, &a);
        assert_int_equal(addr_info_parse(nlh, &back), -EBADMSG);
        nlh->nlmsg_type = RTM_NEWLINK;
        assert_int_equal(addr_info_parse(nlh, &back), -EBADMSG);
}

/* An NLMSG_ERROR as the kernel sends it with NETLINK_CAP_ACK and NETLINK_EXT_ACK. */
static void test_parse_error_extack(void **state) {
        uint8_t buf[256] = {};
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
        struct nlmsgerr *e;

        nlh->nlmsg_type = NLMSG_ERROR;
        nlh->nlmsg_flags = NLM_F_CAPPED | NLM_F_ACK_TLVS;
        e = mnl_nlmsg_put_extra_header(nlh, sizeof *e);
        e->error = -EOPNOTSUPP;
        e->msg.nlmsg_len = 400; /* capped: the request is not echoed, whatever its length */
        mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, "Unknown device type");
        mnl_attr_put_u32(nlh, NLMSGERR_ATTR_OFFS, 16);

        char *msg = NULL;
        assert_int_equal(nl_parse_error(nlh, &msg), -EOPNOTSUPP);
        assert_string_equal(msg, "Unknown device type");
        free(msg);

        /* An ack is 0 and leaves the message alone. */
        e->error = 0;
        msg = NULL;
        assert_int_equal(nl_parse_error(nlh, &msg), 0);
        assert_null(msg);

        /* Truncated: not even a struct nlmsgerr. */
        nlh->nlmsg_len = NLMSG_HDRLEN + 2;
        assert_int_equal(nl_parse_error(nlh, NULL), -EBADMSG);
}

static void test_pattern_match(void **state) {
        assert_true(link_pattern_match("cali*", "cali0a000000010"));
        assert_true(link_pattern_match("cali*", "calico"));
        assert_true(link_pattern_match("cali[a-f0-9]*", "cali3f2a"));
        assert_false(link_pattern_match("cali[a-f0-9]*", "caliZZ"));
        assert_false(link_pattern_match("cali*", "vxlan.calico"));
        assert_true(link_pattern_match("vxlan.calico", "vxlan.calico"));
        assert_false(link_pattern_match("vxlan.calico", "vxlanXcalico"));
        assert_true(link_pattern_match("flannel*", "flannel-v6.1"));
        assert_true(link_pattern_match("cilium_*", "cilium_host"));
        assert_false(link_pattern_match("kube-ipvs0", "kube-ipvs01"));
        assert_true(link_pattern_match("eth?", "eth1"));
        assert_false(link_pattern_match("eth?", "eth1p"));
}

static void test_pattern_validate(void **state) {
        assert_int_equal(link_pattern_validate("cali*"), 0);
        assert_int_equal(link_pattern_validate("abcdefghijklmno"), 0);
        assert_int_equal(link_pattern_validate("abcdefghijklmnop"), -EINVAL);
        assert_int_equal(link_pattern_validate("a-long-glob-for-many-names*"), 0);
        assert_int_equal(link_pattern_validate(""), -EINVAL);
        assert_int_equal(link_pattern_validate(NULL), -EINVAL);
        assert_int_equal(link_pattern_validate("a/b"), -EINVAL);
        assert_int_equal(link_pattern_validate("a b"), -EINVAL);
        assert_int_equal(link_pattern_validate("a\tb"), -EINVAL);
}

static void test_unused_group(void **state) {
        LinkInfo links[3] = { { .ifindex = 1 }, { .ifindex = 2 }, { .ifindex = 3 } };
        LinkTable t = { .links = links, .n = 3 };
        uint32_t g = link_table_unused_group(&t);

        assert_int_not_equal(g, 0);
        /* Take the one it chose, and the next one, and it must move on. */
        links[1].group = g;
        links[2].group = g + 1;
        g = link_table_unused_group(&t);
        assert_int_not_equal(g, 0);
        for (size_t i = 0; i < 3; i++)
                assert_int_not_equal(g, links[i].group);
}

static void test_route_proto(void **state) {
        assert_int_equal(route_proto_from_string("bird"), 12);
        assert_int_equal(route_proto_from_string("kernel"), 2);
        assert_int_equal(route_proto_from_string("boot"), 3);
        assert_int_equal(route_proto_from_string("static"), 4);
        assert_int_equal(route_proto_from_string("gated"), 8);
        assert_int_equal(route_proto_from_string("ra"), 9);
        assert_int_equal(route_proto_from_string("mrt"), 10);
        assert_int_equal(route_proto_from_string("zebra"), 11);
        assert_int_equal(route_proto_from_string("dnrouted"), 13);
        assert_int_equal(route_proto_from_string("xorp"), 14);
        assert_int_equal(route_proto_from_string("ntk"), 15);
        assert_int_equal(route_proto_from_string("dhcp"), 16);
        assert_int_equal(route_proto_from_string("keepalived"), 18);
        assert_int_equal(route_proto_from_string("babel"), 42);
        assert_int_equal(route_proto_from_string("bgp"), 186);
        assert_int_equal(route_proto_from_string("isis"), 187);
        assert_int_equal(route_proto_from_string("ospf"), 188);
        assert_int_equal(route_proto_from_string("rip"), 189);
        assert_int_equal(route_proto_from_string("eigrp"), 192);
        assert_int_equal(route_proto_from_string("12"), 12);
        assert_int_equal(route_proto_from_string("255"), 255);
        assert_int_equal(route_proto_from_string("0x0c"), 12); /* as iproute2 reads numbers */
        assert_int_equal(route_proto_from_string("256"), -EINVAL);
        assert_int_equal(route_proto_from_string("-1"), -EINVAL);
        assert_int_equal(route_proto_from_string("12x"), -EINVAL);
        assert_int_equal(route_proto_from_string("birds"), -EINVAL);
        assert_int_equal(route_proto_from_string(""), -EINVAL);
        assert_string_equal(route_proto_to_string(12), "bird");
        assert_string_equal(route_proto_to_string(186), "bgp");
        assert_null(route_proto_to_string(200));
}

/* A route message as the kernel dumps it. */
static struct nlmsghdr *put_route(void *buf, int family, uint8_t type, uint8_t proto, uint32_t table,
                                  const char *dst, uint8_t dst_len) {
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
        struct rtmsg *rtm;
        RouteAddr a = {};

        nlh->nlmsg_type = RTM_NEWROUTE;
        nlh->nlmsg_flags = NLM_F_MULTI;
        nlh->nlmsg_seq = 99;
        rtm = mnl_nlmsg_put_extra_header(nlh, sizeof *rtm);
        rtm->rtm_family = (uint8_t) family;
        rtm->rtm_dst_len = dst_len;
        rtm->rtm_type = type;
        rtm->rtm_protocol = proto;
        rtm->rtm_table = table < 256 ? (uint8_t) table : RT_TABLE_COMPAT;
        mnl_attr_put_u32(nlh, RTA_TABLE, table);
        assert_int_equal(inet_pton(family, dst, &a), 1);
        mnl_attr_put(nlh, RTA_DST, family == AF_INET ? 4 : 16, &a);
        return nlh;
}

static void test_route_parse_v4(void **state) {
        uint8_t buf[512] = {}, del[512];
        struct nlmsghdr *nlh = put_route(buf, AF_INET, RTN_UNICAST, RTPROT_BIRD, RT_TABLE_MAIN, "10.0.3.0", 26);
        struct in_addr gw;
        RouteInfo r, c;
        char *s;

        assert_int_equal(inet_pton(AF_INET, "192.0.2.20", &gw), 1);
        mnl_attr_put(nlh, RTA_GATEWAY, 4, &gw);
        mnl_attr_put_u32(nlh, RTA_OIF, 5);
        mnl_attr_put_u32(nlh, RTA_PRIORITY, 100);
        assert_int_equal(route_info_parse(nlh, &r), 0);
        assert_int_equal(r.family, AF_INET);
        assert_int_equal(r.dst_len, 26);
        assert_int_equal(r.protocol, RTPROT_BIRD);
        assert_int_equal(r.table, RT_TABLE_MAIN);
        assert_int_equal(r.priority, 100);
        assert_true(r.has_gateway);
        assert_memory_equal(&r.gateway.in, &gw, 4);
        assert_int_equal(r.n_oifs, 1);
        assert_int_equal(r.oifs[0], 5);
        assert_true(route_uses_link(&r, 5));
        assert_false(route_uses_link(&r, 6));
        assert_false(route_is_default(&r));
        s = route_to_string(&r);
        assert_string_equal(s, "10.0.3.0/26 proto bird");
        free(s);

        /* The delete request is the dumped message, retyped: the kernel then matches every field. */
        nlh = route_message_delete(del, &r);
        assert_int_equal(nlh->nlmsg_type, RTM_DELROUTE);
        assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
        assert_int_equal(nlh->nlmsg_len, r.msg->nlmsg_len);
        assert_memory_equal(mnl_nlmsg_get_payload(nlh), mnl_nlmsg_get_payload(r.msg),
                            mnl_nlmsg_get_payload_len(r.msg));

        assert_int_equal(route_info_copy(&r, &c), 0);
        assert_true(route_same_entry(&r, &c));
        assert_int_equal(c.oifs[0], 5);
        c.priority = 7;
        assert_false(route_same_entry(&r, &c));
        route_info_done(&c);
        route_info_done(&r);
}

static void test_route_parse_v6_multipath(void **state) {
        uint8_t buf[512] = {};
        struct nlmsghdr *nlh = put_route(buf, AF_INET6, RTN_UNICAST, RTPROT_BIRD, 100, "::", 0);
        struct nlattr *mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
        RouteInfo r;
        char *s;

        for (int ifindex = 7; ifindex <= 8; ifindex++) {
                struct rtnexthop *nh = mnl_nlmsg_get_payload_tail(nlh);

                *nh = (struct rtnexthop) { .rtnh_len = sizeof *nh, .rtnh_ifindex = ifindex };
                nlh->nlmsg_len += RTNH_ALIGN(sizeof *nh);
        }
        mnl_attr_nest_end(nlh, mp);
        assert_int_equal(route_info_parse(nlh, &r), 0);
        assert_int_equal(r.table, 100);
        assert_int_equal(r.n_oifs, 2);
        assert_true(route_uses_link(&r, 7));
        assert_true(route_uses_link(&r, 8));
        assert_true(route_is_default(&r));
        s = route_to_string(&r);
        assert_string_equal(s, "::/0 table 100 proto bird");
        free(s);
        route_info_done(&r);

        nlh = put_route(buf, AF_INET6, RTN_BLACKHOLE, 77, RT_TABLE_MAIN, "fd00:3::", 122);
        assert_int_equal(route_info_parse(nlh, &r), 0);
        assert_false(route_is_default(&r));
        s = route_to_string(&r);
        assert_string_equal(s, "blackhole fd00:3::/122 proto 77");
        free(s);
        route_info_done(&r);

        /* Not a route of either family: refused. */
        nlh = put_route(buf, AF_INET, RTN_UNICAST, 12, RT_TABLE_MAIN, "10.0.0.0", 8);
        ((struct rtmsg *) mnl_nlmsg_get_payload(nlh))->rtm_family = RTNL_FAMILY_IPMR;
        assert_int_equal(route_info_parse(nlh, &r), -EBADMSG);
}

static void assert_endpoint(const GuardEndpoint *e, int family, const char *addr, uint16_t port) {
        RouteAddr a = {};

        assert_int_equal(e->family, family);
        assert_int_equal(inet_pton(family, addr, &a), 1);
        assert_memory_equal(e->addr.bytes, a.bytes, family == AF_INET ? 4 : 16);
        assert_int_equal(e->port, port);
}

static void test_ssh_connection(void **state) {
        GuardEndpoint c, s;

        assert_int_equal(guard_parse_ssh_connection("192.0.2.9 51234 192.0.2.10 22", &c, &s), 0);
        assert_endpoint(&c, AF_INET, "192.0.2.9", 51234);
        assert_endpoint(&s, AF_INET, "192.0.2.10", 22);
        assert_string_equal(s.zone, "");

        assert_int_equal(guard_parse_ssh_connection("2001:db8::9 40000 2001:db8::10 2222\n", &c, &s), 0);
        assert_endpoint(&c, AF_INET6, "2001:db8::9", 40000);
        assert_endpoint(&s, AF_INET6, "2001:db8::10", 2222);

        /* A dual-stack sshd reports IPv4 clients as IPv4-mapped addresses. */
        assert_int_equal(guard_parse_ssh_connection("::ffff:192.0.2.9 1 ::ffff:192.0.2.10 22", &c, &s), 0);
        assert_endpoint(&c, AF_INET, "192.0.2.9", 1);
        assert_endpoint(&s, AF_INET, "192.0.2.10", 22);

        assert_int_equal(guard_parse_ssh_connection("fe80::1%eth0 5 fe80::2%eth0 22", &c, &s), 0);
        assert_endpoint(&s, AF_INET6, "fe80::2", 22);
        assert_string_equal(s.zone, "eth0");

        assert_int_equal(guard_parse_ssh_connection("", &c, &s), -EINVAL);
        assert_int_equal(guard_parse_ssh_connection(NULL, &c, &s), -EINVAL);
        assert_int_equal(guard_parse_ssh_connection("192.0.2.9 51234", &c, &s), -EINVAL);
        assert_int_equal(guard_parse_ssh_connection("192.0.2.9 51234 192.0.2.10 22 x", &c, &s), -EINVAL);
        assert_int_equal(guard_parse_ssh_connection("host 51234 192.0.2.10 22", &c, &s), -EINVAL);
        assert_int_equal(guard_parse_ssh_connection("192.0.2.9 0 192.0.2.10 22", &c, &s), -EINVAL);
        assert_int_equal(guard_parse_ssh_connection("192.0.2.9 1 192.0.2.10 65536", &c, &s), -EINVAL);
        assert_int_equal(guard_parse_ssh_connection("192.0.2.9 1 192.0.2.10 -22", &c, &s), -EINVAL);
        assert_int_equal(guard_parse_ssh_connection("192.0.2.9 1 fe80::2% 22", &c, &s), -EINVAL);
}

/* The kernel prints each 32-bit word of the address as a host-order integer ("%08X"). */
static void format_proc_addr(char *buf, int family, const char *addr) {
        RouteAddr a = {};

        assert_int_equal(inet_pton(family, addr, &a), 1);
        buf[0] = '\0';
        for (size_t w = 0; w < (family == AF_INET ? 1U : 4U); w++) {
                uint32_t v;

                memcpy(&v, a.bytes + 4 * w, 4);
                sprintf(buf + strlen(buf), "%08X", v);
        }
}

static void test_proc_net_tcp(void **state) {
        char local[40], remote[40], line[512];
        GuardEndpoint l, r;
        unsigned st;

        assert_int_equal(guard_parse_proc_net_tcp_line(
                "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n",
                &l, &r, &st), -EINVAL);

        format_proc_addr(local, AF_INET, "10.2.0.10");
        format_proc_addr(remote, AF_INET, "10.2.0.9");
        snprintf(line, sizeof line, "   3: %s:0016 %s:C822 01 00000000:00000000 02:000A7B2B 00000000     0        0 "
                 "31337 2 0000000000000000 20 4 30 10 -1\n", local, remote);
        assert_int_equal(guard_parse_proc_net_tcp_line(line, &l, &r, &st), 0);
        assert_endpoint(&l, AF_INET, "10.2.0.10", 22);
        assert_endpoint(&r, AF_INET, "10.2.0.9", 0xC822);
        assert_int_equal(st, 1);

        format_proc_addr(local, AF_INET6, "2001:db8::10");
        format_proc_addr(remote, AF_INET6, "2001:db8::9");
        snprintf(line, sizeof line, "  0: %s:0016 %s:9C40 0A 00000000:00000000 00:00000000 00000000     0 0 1 1\n",
                 local, remote);
        assert_int_equal(guard_parse_proc_net_tcp_line(line, &l, &r, &st), 0);
        assert_endpoint(&l, AF_INET6, "2001:db8::10", 22);
        assert_endpoint(&r, AF_INET6, "2001:db8::9", 40000);
        assert_int_equal(st, 0x0A);

        /* tcp6 shows IPv4 sessions of a dual-stack socket as mapped addresses. */
        format_proc_addr(local, AF_INET6, "::ffff:10.2.0.10");
        format_proc_addr(remote, AF_INET6, "::ffff:10.2.0.9");
        snprintf(line, sizeof line, "  1: %s:0016 %s:0050 01 0:0 0:0 0 0 0 7\n", local, remote);
        assert_int_equal(guard_parse_proc_net_tcp_line(line, &l, &r, &st), 0);
        assert_endpoint(&l, AF_INET, "10.2.0.10", 22);
        assert_endpoint(&r, AF_INET, "10.2.0.9", 80);

        assert_int_equal(guard_parse_proc_net_tcp_line("", &l, &r, &st), -EINVAL);
        assert_int_equal(guard_parse_proc_net_tcp_line("  0: 0A00020A 0900020A:C822 01", &l, &r, &st), -EINVAL);
        assert_int_equal(guard_parse_proc_net_tcp_line("  0: 0A0002:0016 0900020A:C822 01", &l, &r, &st), -EINVAL);
        assert_int_equal(guard_parse_proc_net_tcp_line("  0: 0A00020G:0016 0900020A:C822 01", &l, &r, &st), -EINVAL);
        assert_int_equal(guard_parse_proc_net_tcp_line("  0: 0A00020A:16 0900020A:C822 01", &l, &r, &st), -EINVAL);
        assert_int_equal(guard_parse_proc_net_tcp_line("  0: 0A00020A:0016 0900020A:C822", &l, &r, &st), -EINVAL);
}

/* The guard's closure, from a made-up observation: what goes with a guarded link is guarded too. */
static void test_guard_closure(void **state) {
        LinkInfo links[] = {
                { .ifindex = 1, .name = "lo", .flags = IFF_LOOPBACK | IFF_UP },
                { .ifindex = 2, .name = "eth1p", .kind = "veth", .lower = 3 },
                { .ifindex = 3, .name = "eth1", .kind = "veth", .lower = 2 },
                { .ifindex = 4, .name = "br0", .kind = "bridge" },
                { .ifindex = 5, .name = "port0", .kind = "veth", .master = 4, .lower = 10 },
                { .ifindex = 6, .name = "mv0", .kind = "macvlan", .lower = 3 },
                { .ifindex = 7, .name = "cali1", .kind = "veth", .lower = 8 },
                { .ifindex = 8, .name = "cali2", .kind = "veth", .lower = 7 },
                { .ifindex = 9, .name = "vx0", .kind = "vxlan", .lower = 3 },
                { .ifindex = 10, .name = "vp0", .kind = "veth", .lower = 5 },
        };
        int oif_eth1 = 3, oif_br0 = 4, oif_cali = 7;
        RouteInfo routes[] = {
                { .family = AF_INET, .type = RTN_UNICAST, .table = RT_TABLE_MAIN, .oifs = &oif_eth1, .n_oifs = 1 },
                { .family = AF_INET6, .type = RTN_UNICAST, .table = 100, .oifs = &oif_br0, .n_oifs = 1 },
                { .family = AF_INET, .type = RTN_UNICAST, .table = RT_TABLE_MAIN, .dst_len = 26, .protocol = 12,
                  .oifs = &oif_cali, .n_oifs = 1 },
        };
        LinkTable lt = { .links = links, .n = ELEMENTSOF(links) };
        RouteTable rt = { .routes = routes, .n = ELEMENTSOF(routes) };
        Guard *g = NULL;

        assert_int_equal(guard_new(NULL, &lt, &rt, NULL, &g, NULL), 0);
        assert_string_equal(guard_link_reason(g, 1), "loopback");
        assert_string_equal(guard_link_reason(g, 3), "carries the default route");
        assert_string_equal(guard_link_reason(g, 2), "its veth peer eth1 carries the default route");
        assert_string_equal(guard_link_reason(g, 4), "carries the default route");
        assert_string_equal(guard_link_reason(g, 5), "its master br0 carries the default route");
        assert_string_equal(guard_link_reason(g, 10), "its veth peer port0 is tied to br0, which carries the default route");
        /* Upper devices go without harm to their lower one; unrelated links are free. */
        assert_null(guard_link_reason(g, 6));
        assert_null(guard_link_reason(g, 9));
        assert_null(guard_link_reason(g, 7));
        assert_null(guard_link_reason(g, 8));
        assert_null(guard_link_reason(g, 99));
        assert_string_equal(guard_route_reason(g, &routes[0]), "a default route");
        assert_string_equal(guard_route_reason(g, &routes[1]), "a default route");
        assert_null(guard_route_reason(g, &routes[2]));
        guard_free(g);

        /* A port carrying the default route guards its master in turn. */
        links[4].lower = 0;
        oif_eth1 = 5;
        routes[1].n_oifs = 0;
        assert_int_equal(guard_new(NULL, &lt, &rt, NULL, &g, NULL), 0);
        assert_string_equal(guard_link_reason(g, 4), "its port port0 carries the default route");
        assert_null(guard_link_reason(g, 3));
        guard_free(g);
}

static void touch(const char *dir, const char *name) {
        char p[PATH_MAX];
        int fd;

        snprintf(p, sizeof p, "%s/%s", dir, name);
        fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        close(fd);
}

/* Listing and unlinking need no namespace: a stale name is a plain file. */
static void test_netns_list_delete(void **state) {
        char dir[] = "/tmp/test-netreset-netns.XXXXXX", p[PATH_MAX];
        char **l = NULL;

        assert_non_null(mkdtemp(dir));
        touch(dir, "cni-b");
        touch(dir, "cni-a");
        touch(dir, "other");
        assert_int_equal(netns_list(dir, "cni-*", &l), 0);
        assert_string_equal(l[0], "cni-a");
        assert_string_equal(l[1], "cni-b");
        assert_null(l[2]);
        strv_free(l);

        snprintf(p, sizeof p, "%s/cni-a", dir);
        assert_int_equal(netns_is_bound(p), 0);
        assert_int_equal(netns_delete(p, NULL), 1);
        assert_int_equal(netns_delete(p, NULL), 0);
        snprintf(p, sizeof p, "%s/cni-b", dir);
        assert_int_equal(netns_delete(p, NULL), 1);
        snprintf(p, sizeof p, "%s/other", dir);
        assert_int_equal(netns_delete(p, NULL), 1);
        assert_int_equal(rmdir(dir), 0);

        assert_int_equal(netns_list(dir, "*", &l), 0);
        assert_null(l[0]);
        strv_free(l);
}

/* A name, or the directory on the way to it, swapped for a symlink: refused with the reason, and
 * neither the symlink nor what it points to is touched. */
static void test_netns_delete_symlink(void **state) {
        char dir[] = "/tmp/test-netreset-netns.XXXXXX", p[PATH_MAX], target[PATH_MAX], link[PATH_MAX];
        char *msg = NULL;
        struct stat st;

        assert_non_null(mkdtemp(dir));
        touch(dir, "target");
        snprintf(target, sizeof target, "%s/target", dir);
        snprintf(p, sizeof p, "%s/cni-s", dir);
        assert_int_equal(symlink(target, p), 0);
        assert_int_equal(netns_is_bound(p), 0);
        assert_int_equal(netns_delete(p, &msg), -ELOOP);
        assert_non_null(strstr(msg, "is now a symlink"));
        free(msg);
        msg = NULL;
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        assert_int_equal(stat(target, &st), 0);

        snprintf(link, sizeof link, "%s/dir-link", dir);
        assert_int_equal(symlink(dir, link), 0);
        snprintf(p, sizeof p, "%s/dir-link/target", dir);
        assert_int_equal(netns_delete(p, &msg), -ELOOP);
        assert_non_null(strstr(msg, "directory of"));
        free(msg);
        assert_int_equal(stat(target, &st), 0);

        assert_int_equal(unlink(link), 0);
        snprintf(p, sizeof p, "%s/cni-s", dir);
        assert_int_equal(unlink(p), 0);
        assert_int_equal(unlink(target), 0);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_message_set_group),
                cmocka_unit_test(test_message_delete_group),
                cmocka_unit_test(test_message_delete_golden),
                cmocka_unit_test(test_message_delete),
                cmocka_unit_test(test_message_set_down),
                cmocka_unit_test(test_tunnel_fallback),
                cmocka_unit_test(test_wireguard_parse),
                cmocka_unit_test(test_message_delete_addr),
                cmocka_unit_test(test_message_delete_addr_golden),
                cmocka_unit_test(test_addr_parse_invalid),
                cmocka_unit_test(test_parse_error_extack),
                cmocka_unit_test(test_pattern_match),
                cmocka_unit_test(test_pattern_validate),
                cmocka_unit_test(test_unused_group),
                cmocka_unit_test(test_route_proto),
                cmocka_unit_test(test_route_parse_v4),
                cmocka_unit_test(test_route_parse_v6_multipath),
                cmocka_unit_test(test_ssh_connection),
                cmocka_unit_test(test_proc_net_tcp),
                cmocka_unit_test(test_guard_closure),
                cmocka_unit_test(test_netns_list_delete),
                cmocka_unit_test(test_netns_delete_symlink),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
