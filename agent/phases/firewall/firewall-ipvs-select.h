/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which IPVS virtual services are kube-proxy's: its ClusterIPs on kube-ipvs0 and its NodePorts on the node's addresses.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/config/manifest.h"
#include "agent/engine/context.h"
#include "agent/engine/plan.h"
#include "netreset/ipvs.h"

#define KUBE_PROXY_NODEPORT_MIN 30000U
#define KUBE_PROXY_NODEPORT_MAX 32767U

typedef struct IpvsAddr {
        int family; /* AF_INET or AF_INET6 */
        uint8_t bytes[16];
} IpvsAddr;

typedef struct IpvsOwnerView {
        const IpvsAddr *ipvs0; /* the addresses on kube-ipvs0, where kube-proxy binds every ClusterIP,
                                * external and load-balancer IP it serves */
        size_t n_ipvs0;
        const IpvsAddr *node; /* the node's own addresses (the other links'), where its NodePorts listen */
        size_t n_node;
        uint16_t port_min, port_max; /* kube-proxy's NodePort range (30000-32767 unless configured) */
} IpvsOwnerView;

/* Why svc is kube-proxy's ("its address is on kube-ipvs0"), or NULL: a service by firewall mark, on
 * an address kube-ipvs0 does not hold, or on a node address outside the NodePort range is someone
 * else's (keepalived, an LVS director) and stays. */
const char *ipvs_service_owner(const IpvsService *svc, const IpvsOwnerView *v);

/* The API server's --service-node-port-range ("30000-32767", or "30000+2767" as Kubernetes'
 * PortRange also reads it). -EINVAL when malformed. */
int ipvs_port_range_parse(const char *s, uint16_t *ret_min, uint16_t *ret_max);

/* "TCP 10.96.0.1:443", "UDP [fd00::a]:53", "FWM 7 (IPv4)". malloc'd, NULL on OOM. */
char *ipvs_service_to_string(const IpvsService *svc);

/* The firewall phase's "ipvs" lines (phase-firewall-ipvs.c): "ipvs clear" plans one row per
 * virtual service of kube-proxy's and keeps the others (the NodePort range is the API server's
 * --service-node-port-range where its static pod says one); "ipvs flush-all" (the "all" profile, or a
 * manifest that says so) clears every one. */
int phase_firewall_ipvs_plan(Context *ctx, Plan *plan, const Manifest *m);
