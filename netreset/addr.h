/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IPv4 and IPv6 addresses of one link: one dump, and deletion of each exactly as it was dumped. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netreset/nl.h"

typedef struct AddrInfo {
        int family; /* AF_INET or AF_INET6 */
        int ifindex;
        uint8_t prefixlen;
        /* Kept as dumped: the kernel matches a deletion on both. IFA_LOCAL is ours; IFA_ADDRESS is
         * the peer on a point-to-point link and ours elsewhere (IPv6 sends only it). */
        bool has_local, has_address;
        uint8_t local[16];
        uint8_t address[16];
} AddrInfo;

typedef struct AddrList {
        AddrInfo *addrs;
        size_t n;
} AddrList;

/* Every IPv4 and IPv6 address of ifindex, from one RTM_GETADDR dump (retried when interrupted). */
int addr_list_read(NlSocket *rtnl, int ifindex, AddrList **ret, char **reterr_msg);
AddrList *addr_list_free(AddrList *l);
DEFINE_TRIVIAL_CLEANUP_FUNC(AddrList *, addr_list_free);

/* Parse one RTM_NEWADDR (or RTM_DELADDR) message; -EBADMSG when it is no address of either family.
 * Exposed for tests. */
int addr_info_parse(const struct nlmsghdr *nlh, AddrInfo *ret);

/* Delete one address: 1 deleted, 0 already gone, -errno with the kernel's extack text. */
int addr_delete(NlSocket *rtnl, const AddrInfo *a, char **reterr_msg);

/* Delete every address of ifindex. Returns how many there were (those that went with another,
 * like IPv4 secondaries with their primary, included), or the first -errno; after a failure the
 * other addresses are still tried. */
int addr_flush(NlSocket *rtnl, int ifindex, char **reterr_msg);

/* The request, built into buf (at least ADDR_MESSAGE_SIZE bytes); exposed for tests. */
#define ADDR_MESSAGE_SIZE 128U
struct nlmsghdr *addr_message_delete(void *buf, const AddrInfo *a);
