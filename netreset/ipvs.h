/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IPVS through generic netlink (nl.c): list, delete one by one, count and clear the virtual services. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/netlink.h>

/* IPVS is in this kernel: /proc/net/ip_vs (this namespace) or /sys/module/ip_vs exists. Checked
 * before the generic netlink family is resolved, because resolving "IPVS" makes the kernel load
 * the module where it is loadable: looking must not change the node. */
bool ipvs_present(void);

/* The number of virtual services. -EPROTONOSUPPORT when IPVS is not present (see above). */
int ipvs_count_services(unsigned *ret, char **reterr_msg);

/* IPVS_CMD_FLUSH (ipvsadm -C): every virtual service and its real servers. 0 when there were
 * none, 1 when flushed, -EPROTONOSUPPORT when IPVS is not present, other -errno with the kernel's
 * text in *reterr_msg. */
int ipvs_flush(char **reterr_msg);

/* One virtual service as the kernel lists it: protocol, address and port, or a firewall mark. */
typedef struct IpvsService {
        int family;        /* AF_INET or AF_INET6 */
        uint16_t protocol; /* IPPROTO_TCP, _UDP, _SCTP; 0 with a fwmark */
        uint8_t addr[16];
        uint16_t port; /* host order */
        uint32_t fwmark;
} IpvsService;

/* Every virtual service (one IPVS_CMD_GET_SERVICE dump). -EPROTONOSUPPORT when IPVS is not present. */
int ipvs_list_services(IpvsService **ret, size_t *ret_n, char **reterr_msg);
/* Delete exactly this virtual service and its real servers: 1 deleted, 0 already gone, -errno. */
int ipvs_delete_service(const IpvsService *svc, char **reterr_msg);
/* Parse one IPVS_CMD_NEW_SERVICE message of a dump; -EBADMSG when it holds no service. For tests. */
int ipvs_service_parse(const struct nlmsghdr *nlh, IpvsService *ret);
/* The IPVS_CMD_DEL_SERVICE request, built in buf (IPVS_MESSAGE_SIZE bytes). For tests. */
struct nlmsghdr *ipvs_message_del_service(void *buf, uint16_t family, const IpvsService *svc);

/* The requests, built in buf (IPVS_MESSAGE_SIZE bytes) for generic netlink family id family; the
 * sequence number and NLM_F_ACK are set when they are sent. */
#define IPVS_MESSAGE_SIZE 128
struct nlmsghdr *ipvs_message_flush(void *buf, uint16_t family);
struct nlmsghdr *ipvs_message_get_services(void *buf, uint16_t family);
