/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which IPVS virtual services are kube-proxy's: its ClusterIPs on kube-ipvs0 and its NodePorts on the node's addresses.
 */

/* kube-proxy in IPVS mode (pkg/proxy/ipvs) binds every service IP it serves (ClusterIP, external
 * IP, load-balancer ingress) to the dummy device kube-ipvs0 and adds a virtual service on it; a
 * NodePort service gets a virtual service on each node address, at a port of its NodePort range.
 * It never adds firewall-mark services. Anything else on the node's IPVS table is another
 * director's (keepalived, a hand-made LVS) and is not the reset's to remove. */

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "agent/phases/firewall/firewall-ipvs-select.h"
#include "string-util.h"

static bool addr_in(const IpvsAddr *v, size_t n, int family, const uint8_t *bytes) {
        for (size_t i = 0; i < n; i++)
                if (v[i].family == family && memcmp(v[i].bytes, bytes, family == AF_INET ? 4 : 16) == 0)
                        return true;
        return false;
}

const char *ipvs_service_owner(const IpvsService *svc, const IpvsOwnerView *v) {
        if (svc->fwmark != 0)
                return NULL;
        if (addr_in(v->ipvs0, v->n_ipvs0, svc->family, svc->addr))
                return "kube-proxy's: its address is on kube-ipvs0";
        if (addr_in(v->node, v->n_node, svc->family, svc->addr) && svc->port >= v->port_min && svc->port <= v->port_max)
                return "kube-proxy's: a NodePort on a node address";
        return NULL;
}

char *ipvs_service_to_string(const IpvsService *svc) {
        char a[INET6_ADDRSTRLEN] = "?";
        const char *proto = svc->protocol == IPPROTO_TCP    ? "TCP"
                            : svc->protocol == IPPROTO_UDP  ? "UDP"
                            : svc->protocol == IPPROTO_SCTP ? "SCTP"
                                                            : "proto";

        if (svc->fwmark)
                return strprintf("FWM %u (IPv%c)", svc->fwmark, svc->family == AF_INET ? '4' : '6');
        (void) inet_ntop(svc->family, svc->addr, a, sizeof a);
        return strprintf(svc->family == AF_INET6 ? "%s [%s]:%u" : "%s %s:%u", proto, a, svc->port);
}

static int parse_port(const char *s, const char **ret_end, unsigned long *ret) {
        char *end;

        if (!ascii_isdigit(*s))
                return -EINVAL;
        errno = 0;
        *ret = strtoul(s, &end, 10);
        *ret_end = end;
        return errno != 0 || *ret > 65535 ? -EINVAL : 0;
}

int ipvs_port_range_parse(const char *s, uint16_t *ret_min, uint16_t *ret_max) {
        unsigned long base, other;
        const char *end;
        char sep;

        if (!s || parse_port(s, &end, &base) < 0)
                return -EINVAL;
        sep = *end;
        if ((sep != '-' && sep != '+') || parse_port(end + 1, &end, &other) < 0 || *end)
                return -EINVAL;
        if (sep == '+')
                other += base;
        if (other < base || other > 65535)
                return -EINVAL;
        *ret_min = (uint16_t) base;
        *ret_max = (uint16_t) other;
        return 0;
}
