/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Network links: one dump, name patterns, deletion one by one or as one IFLA_GROUP, setting down. */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netreset/nl.h"

typedef struct LinkInfo {
        int ifindex;
        char name[IF_NAMESIZE];
        char kind[32]; /* IFLA_INFO_KIND ("veth", "bridge", ...); "" when the link has none */
        int master;    /* ifindex of the bridge/bond it is enslaved to, 0 when none */
        int lower;     /* IFLA_LINK in this namespace: a veth's peer, a vxlan's or macvlan's
                        * lower device; 0 when none or when it lives in another namespace */
        uint32_t group;
        unsigned flags;       /* IFF_* */
        uint32_t vrf_table;   /* a VRF device's routing table (IFLA_VRF_TABLE), 0 for any other link */
        uint32_t xdp_prog[3]; /* IFLA_XDP: the generic, driver and hardware mode programs' IDs, 0 none */
} LinkInfo;

typedef struct LinkTable {
        LinkInfo *links; /* in ifindex order */
        size_t n, allocated;
} LinkTable;

/* One RTM_NEWLINK message: 1 and *ret filled, 0 for a message that names no link, -EBADMSG. */
int link_info_parse(const struct nlmsghdr *nlh, LinkInfo *ret);

/* The VRF device whose routing table is table, or NULL. */
const LinkInfo *link_table_vrf_of(const LinkTable *t, uint32_t table);

/* One RTM_GETLINK dump of the namespace the socket lives in (retried when interrupted). */
int link_table_read(NlSocket *rtnl, LinkTable **ret, char **reterr_msg);
LinkTable *link_table_free(LinkTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(LinkTable *, link_table_free);

const LinkInfo *link_table_by_index(const LinkTable *t, int ifindex);
const LinkInfo *link_table_by_name(const LinkTable *t, const char *name);

/* A group number no link is in (never 0, the default group). */
uint32_t link_table_unused_group(const LinkTable *t);

/* Manifest patterns: an interface name or an fnmatch(3) glob. validate: -EINVAL when empty, too
 * long for a name without glob characters, or containing '/', whitespace or control characters. */
int link_pattern_validate(const char *pattern);
bool link_pattern_match(const char *pattern, const char *name);

/* A tunnel driver's per-namespace fallback device (tunl0 of kind ipip, sit0, gre0, ip6tnl0, ...),
 * made when the module loads. The kernel acknowledges RTM_DELLINK for it and keeps it: it can only
 * be reset (set down, addresses removed). Known by its kind and its fixed name. */
bool link_is_tunnel_fallback(const LinkInfo *l);

/* Delete one link: 1 deleted, 0 already gone (ENODEV), -errno with the kernel's extack text. */
int link_delete(NlSocket *rtnl, int ifindex, char **reterr_msg);

/* Set a link administratively down (clears IFF_UP only): 0, or -errno with the extack text. */
int link_set_down(NlSocket *rtnl, int ifindex, char **reterr_msg);

/* Move each of n links into group; ret_errors[i] gets 0 or -errno (-ENODEV: gone). Returns 0 or
 * -errno when the exchange failed. */
int link_set_group(NlSocket *rtnl, const int *ifindexes, size_t n, uint32_t group, int *ret_errors);

/* Delete every link in group with a single RTM_DELLINK. -EOPNOTSUPP (nothing deleted) when a
 * member has no delete handler, -ENODEV when the group is empty. */
int link_delete_group(NlSocket *rtnl, uint32_t group, char **reterr_msg);

/* The requests, built into buf (at least LINK_MESSAGE_SIZE bytes); exposed for tests. */
#define LINK_MESSAGE_SIZE 64U
struct nlmsghdr *link_message_set_group(void *buf, int ifindex, uint32_t group);
struct nlmsghdr *link_message_delete(void *buf, int ifindex);
struct nlmsghdr *link_message_set_down(void *buf, int ifindex);
struct nlmsghdr *link_message_delete_group(void *buf, uint32_t group);
