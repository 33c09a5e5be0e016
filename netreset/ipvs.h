/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IPVS through generic netlink (libnl-genl-3): count and clear the virtual services. */
#pragma once

#include <stdbool.h>

struct nl_msg;

/* IPVS is in this kernel: /proc/net/ip_vs (this namespace) or /sys/module/ip_vs exists. Checked
 * before the generic netlink family is resolved, because resolving "IPVS" makes the kernel load
 * the module where it is loadable: looking must not change the node. */
bool ipvs_present(void);

/* The number of virtual services. -EPROTONOSUPPORT when IPVS is not present (see above). */
int ipvs_count_services(unsigned *ret, char **reterr_msg);

/* IPVS_CMD_FLUSH (ipvsadm -C): every virtual service and its real servers. 0 when there were
 * none, 1 when flushed, -EPROTONOSUPPORT when IPVS is not present, other -errno with libnl's or
 * the kernel's text in *reterr_msg. */
int ipvs_flush(char **reterr_msg);

/* The IPVS_CMD_FLUSH request for generic netlink family id family (for tests). */
struct nl_msg *ipvs_flush_msg_new(int family);
