/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IPv4 and IPv6 routes of every table: one dump, routing protocol names, deletion, FIB lookups. */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netreset/nl.h"

typedef union RouteAddr {
        struct in_addr in;
        struct in6_addr in6;
        uint8_t bytes[16];
} RouteAddr;

typedef struct RouteInfo {
        int family; /* AF_INET or AF_INET6 */
        uint8_t dst_len;
        uint8_t protocol; /* RTPROT_* */
        uint8_t type;     /* RTN_* */
        uint8_t tos;
        uint32_t table;
        uint32_t priority;
        RouteAddr dst;
        RouteAddr gateway; /* the first nexthop's, when has_gateway */
        bool has_gateway;
        RouteAddr prefsrc; /* the source address it prefers ("src"), when has_prefsrc */
        bool has_prefsrc;
        int *oifs; /* the device of every nexthop (multipath too) */
        size_t n_oifs;
        struct nlmsghdr *msg; /* the message as dumped: echoed back to delete exactly this route */
} RouteInfo;

typedef struct RouteTable {
        RouteInfo *routes;
        size_t n, allocated;
} RouteTable;

/* One RTM_GETROUTE dump of both families and all tables (retried when interrupted). */
int route_table_read(NlSocket *rtnl, RouteTable **ret, char **reterr_msg);
RouteTable *route_table_free(RouteTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(RouteTable *, route_table_free);

void route_info_done(RouteInfo *r);
int route_info_copy(const RouteInfo *src, RouteInfo *ret);

/* Parse one RTM_NEWROUTE message (also exposed for tests). -EBADMSG when it is not a route of
 * either family. */
int route_info_parse(const struct nlmsghdr *nlh, RouteInfo *ret);

bool route_is_default(const RouteInfo *r);
bool route_uses_link(const RouteInfo *r, int ifindex);
/* Same route entry: family, table, destination, tos and metric. */
bool route_same_entry(const RouteInfo *a, const RouteInfo *b);

/* Routing protocols: the iproute2 rt_protos names or a number 0..255. -EINVAL otherwise. */
int route_proto_from_string(const char *s);
/* The name, or NULL for a number without one. */
const char *route_proto_to_string(unsigned proto);

/* "10.0.3.0/26 proto bird", "blackhole fd00:3::/122 table 100 proto 99". malloc'd, NULL on OOM. */
char *route_to_string(const RouteInfo *r);

/* Delete exactly this route: 1 deleted, 0 already gone (ESRCH), -errno with the extack text. */
int route_delete(NlSocket *rtnl, const RouteInfo *r, char **reterr_msg);

/* The FIB entry the kernel would use to reach addr (RTM_F_FIB_MATCH). -ENETUNREACH when none. */
int route_fib_match(NlSocket *rtnl, int family, const RouteAddr *addr, RouteInfo *ret, char **reterr_msg);

/* The RTM_DELROUTE request for r, built into buf (at least r->msg->nlmsg_len bytes). For tests. */
struct nlmsghdr *route_message_delete(void *buf, const RouteInfo *r);
