/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IPv4 and IPv6 addresses of one link: one dump, and deletion of each exactly as it was dumped. */

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "alloc-util.h"
#include "macro.h"
#include "netreset/addr.h"

typedef struct Collector {
        AddrList *list;
        size_t allocated; /* of list->addrs */
        int ifindex;
} Collector;

AddrList *addr_list_free(AddrList *l) {
        if (!l)
                return NULL;
        free(l->addrs);
        return mfree(l);
}

static size_t family_len(int family) {
        return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

int addr_info_parse(const struct nlmsghdr *nlh, AddrInfo *ret) {
        const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
        const struct nlattr *a;
        AddrInfo info = {};
        size_t len;

        if ((nlh->nlmsg_type != RTM_NEWADDR && nlh->nlmsg_type != RTM_DELADDR) ||
            mnl_nlmsg_get_payload_len(nlh) < sizeof *ifa)
                return -EBADMSG;
        len = family_len(ifa->ifa_family);
        if (len == 0 || ifa->ifa_prefixlen > len * 8)
                return -EBADMSG;
        info.family = ifa->ifa_family;
        info.ifindex = (int) ifa->ifa_index;
        info.prefixlen = ifa->ifa_prefixlen;
        mnl_attr_for_each(a, nlh, sizeof *ifa) {
                uint16_t type = mnl_attr_get_type(a);

                if ((type != IFA_LOCAL && type != IFA_ADDRESS) || mnl_attr_get_payload_len(a) != len)
                        continue;
                if (type == IFA_LOCAL) {
                        memcpy(info.local, mnl_attr_get_payload(a), len);
                        info.has_local = true;
                } else {
                        memcpy(info.address, mnl_attr_get_payload(a), len);
                        info.has_address = true;
                }
        }
        if ((!info.has_local && !info.has_address) || info.ifindex <= 0)
                return -EBADMSG;
        *ret = info;
        return 0;
}

static int collect(const struct nlmsghdr *nlh, void *userdata) {
        Collector *c = userdata;
        AddrInfo info;

        if (addr_info_parse(nlh, &info) < 0 || info.ifindex != c->ifindex)
                return 0;
        if (GREEDY_REALLOC(c->list->addrs, c->allocated, c->list->n + 1) < 0)
                return -ENOMEM;
        c->list->addrs[c->list->n++] = info;
        return 0;
}

static void collector_clear(void *userdata) {
        Collector *c = userdata;

        c->list->addrs = mfree(c->list->addrs);
        c->list->n = c->allocated = 0;
}

int addr_list_read(NlSocket *rtnl, int ifindex, AddrList **ret, char **reterr_msg) {
        CLEANUP(addr_list_freep) AddrList *l = NULL;
        uint8_t buf[64];
        struct nlmsghdr *nlh = (struct nlmsghdr *) buf;
        struct ifaddrmsg *ifa;
        Collector c = { .ifindex = ifindex };
        int r;

        if (ifindex <= 0)
                return -EINVAL;
        l = c.list = calloc(1, sizeof(AddrList));
        if (!l)
                return -ENOMEM;
        ifa = nl_message_start(buf, sizeof buf, RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, sizeof *ifa);
        ifa->ifa_family = AF_UNSPEC;
        /* Only a strict-checking socket has the kernel filter by it: collect() filters anyway. */
        ifa->ifa_index = (unsigned) ifindex;
        r = nl_dump(rtnl, nlh, collect, &c, collector_clear, reterr_msg);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

struct nlmsghdr *addr_message_delete(void *buf, const AddrInfo *a) {
        size_t len = family_len(a->family);
        struct nlmsghdr *nlh = buf;
        struct ifaddrmsg *ifa;

        ifa = nl_message_start(buf, ADDR_MESSAGE_SIZE, RTM_DELADDR, NLM_F_REQUEST | NLM_F_ACK, sizeof *ifa);
        ifa->ifa_family = (uint8_t) a->family;
        ifa->ifa_prefixlen = a->prefixlen;
        ifa->ifa_index = (unsigned) a->ifindex;
        if (a->has_local)
                mnl_attr_put(nlh, IFA_LOCAL, len, a->local);
        if (a->has_address)
                mnl_attr_put(nlh, IFA_ADDRESS, len, a->address);
        return nlh;
}

int addr_delete(NlSocket *rtnl, const AddrInfo *a, char **reterr_msg) {
        uint8_t buf[ADDR_MESSAGE_SIZE];
        cleanup_free char *extack = NULL;
        int r;

        if (family_len(a->family) == 0 || a->ifindex <= 0)
                return -EINVAL;
        r = nl_call(rtnl, addr_message_delete(buf, a), NULL, NULL, &extack);
        /* Gone already: with its primary (IPv4 secondaries), or with the link. */
        if (r == -EADDRNOTAVAIL || r == -ENODEV)
                return 0;
        if (r < 0 && reterr_msg && !*reterr_msg)
                *reterr_msg = TAKE_PTR(extack);
        return r < 0 ? r : 1;
}

int addr_flush(NlSocket *rtnl, int ifindex, char **reterr_msg) {
        CLEANUP(addr_list_freep) AddrList *l = NULL;
        int r, first = 0;

        r = addr_list_read(rtnl, ifindex, &l, reterr_msg);
        if (r < 0)
                return r;
        for (size_t i = 0; i < l->n; i++) {
                r = addr_delete(rtnl, &l->addrs[i], reterr_msg);
                if (r < 0 && first == 0)
                        first = r;
        }
        return first < 0 ? first : (int) l->n;
}
