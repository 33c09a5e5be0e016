/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The management guard: the links and routes a reset must never delete, and why. */
#pragma once

#include <net/if.h>
#include <stdint.h>

#include "netreset/link.h"
#include "netreset/route.h"
#include "netreset/nl.h"

typedef struct GuardEndpoint {
        int family; /* AF_INET or AF_INET6; IPv4-mapped IPv6 addresses become AF_INET */
        RouteAddr addr;
        uint16_t port;
        char zone[IF_NAMESIZE]; /* the "%eth0" of a link-local address, "" when none */
} GuardEndpoint;

/* $SSH_CONNECTION: "client_ip client_port server_ip server_port". -EINVAL when malformed. */
int guard_parse_ssh_connection(const char *s, GuardEndpoint *ret_client, GuardEndpoint *ret_server);

/* One line of /proc/net/tcp or /proc/net/tcp6 (addresses as the kernel prints them, in host byte
 * order per 32-bit word): the endpoints and the TCP state (1 = established). -EINVAL for the
 * header line or a malformed one. */
int guard_parse_proc_net_tcp_line(const char *line, GuardEndpoint *ret_local, GuardEndpoint *ret_remote,
                                  unsigned *ret_state);

typedef struct GuardOptions {
        const char *ssh_connection; /* the caller's $SSH_CONNECTION, or NULL */
        const char *proc_net;       /* where tcp and tcp6 are read; NULL = "/proc/net" */
        uint16_t ssh_port;          /* established sessions on this local port count; 0 = 22 */
} GuardOptions;

typedef struct Guard Guard;

/* Work out what is guarded in the namespace of rtnl: loopback links, the links of every default
 * route (both families, all tables), the links the SSH sessions arrive through and leave by
 * (their local addresses' links and the routes back to their clients), and, transitively, the
 * masters, ports, lower devices and veth peers of those, since deleting any of them takes the
 * guarded link down too. Routes: default routes, the routes to the default gateways and to the
 * SSH clients. links and routes are the observation the caller already has. With rtnl NULL
 * (tests) nothing more is asked of the kernel: no SSH sessions, no routes to gateways. */
int guard_new(NlSocket *rtnl, const LinkTable *links, const RouteTable *routes, const GuardOptions *o, Guard **ret,
              char **reterr_msg);
Guard *guard_free(Guard *g);
DEFINE_TRIVIAL_CLEANUP_FUNC(Guard *, guard_free);

/* The established sessions the guard reads (o as for guard_new(): the SSH port's sessions in
 * /proc/net/tcp and tcp6, and $SSH_CONNECTION's), read again now: 1 and a reason ("an established SSH
 * session from 203.0.113.9 arrives on it") in *ret_reason when one arrives on the local address addr
 * (family AF_INET or AF_INET6, IPv4-mapped addresses count as IPv4), 0 when none, -errno. */
int guard_address_in_session(const GuardOptions *o, int family, const uint8_t *addr, char **ret_reason);

/* Why this link or route must stay ("carries the default route"), or NULL when it may go. */
const char *guard_link_reason(const Guard *g, int ifindex);
const char *guard_route_reason(const Guard *g, const RouteInfo *r);
