/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IPVS through generic netlink (nl.c): count and clear the virtual services. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

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

/* The requests, built in buf (IPVS_MESSAGE_SIZE bytes) for generic netlink family id family; the
 * sequence number and NLM_F_ACK are set when they are sent. */
#define IPVS_MESSAGE_SIZE 64
struct nlmsghdr *ipvs_message_flush(void *buf, uint16_t family);
struct nlmsghdr *ipvs_message_get_services(void *buf, uint16_t family);
