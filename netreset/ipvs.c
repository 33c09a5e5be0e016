/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IPVS through generic netlink (nl.c): list, delete one by one, count and clear the virtual services. */

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/ip_vs.h>
#include <string.h>
#include <unistd.h>

#include "errno-util.h"
#include "macro.h"
#include "netreset/ipvs.h"
#include "netreset/nl.h"

bool ipvs_present(void) {
        return access("/proc/net/ip_vs", F_OK) >= 0 || access("/sys/module/ip_vs", F_OK) >= 0;
}

static struct nlmsghdr *put_request(void *buf, uint16_t family, uint16_t flags, uint8_t cmd) {
        struct genlmsghdr *g = nl_message_start(buf, IPVS_MESSAGE_SIZE, family, NLM_F_REQUEST | flags, sizeof *g);

        g->cmd = cmd;
        g->version = IPVS_GENL_VERSION;
        return buf;
}

struct nlmsghdr *ipvs_message_flush(void *buf, uint16_t family) {
        return put_request(buf, family, 0, IPVS_CMD_FLUSH);
}

struct nlmsghdr *ipvs_message_get_services(void *buf, uint16_t family) {
        return put_request(buf, family, NLM_F_DUMP, IPVS_CMD_GET_SERVICE);
}

static int ipvs_connect(NlSocket **ret_s, uint16_t *ret_family, char **reterr_msg) {
        CLEANUP(nl_freep) NlSocket *s = NULL;
        int r;

        if (!ipvs_present())
                return set_errmsg(reterr_msg, -EPROTONOSUPPORT, "IPVS not present in this kernel");
        r = nl_open(NETLINK_GENERIC, &s);
        if (r < 0)
                return set_errmsg(reterr_msg, r, "cannot connect to generic netlink: %s", strerror(-r));
        r = nl_genl_family_id(s, IPVS_GENL_NAME, ret_family, NULL);
        if (r == -ENOENT)
                return set_errmsg(reterr_msg, -EPROTONOSUPPORT, "IPVS not present in this kernel");
        if (r < 0)
                return set_errmsg(reterr_msg, r, "cannot resolve the IPVS generic netlink family: %s", strerror(-r));
        *ret_s = TAKE_PTR(s);
        return 0;
}

static int count_cb(const struct nlmsghdr *nlh, void *userdata) {
        (*(unsigned *) userdata)++;
        return 0;
}

static void count_clear(void *userdata) {
        *(unsigned *) userdata = 0;
}

static int count_on(NlSocket *s, uint16_t family, unsigned *ret, char **reterr_msg) {
        uint8_t buf[IPVS_MESSAGE_SIZE];
        unsigned n = 0;
        int r;

        r = nl_dump(s, ipvs_message_get_services(buf, family), count_cb, &n, count_clear, NULL);
        if (r < 0)
                return set_errmsg(reterr_msg, r, "cannot list IPVS services: %s", strerror(-r));
        *ret = n;
        return 0;
}

int ipvs_count_services(unsigned *ret, char **reterr_msg) {
        CLEANUP(nl_freep) NlSocket *s = NULL;
        uint16_t family = 0;
        int r;

        r = ipvs_connect(&s, &family, reterr_msg);
        if (r < 0)
                return r;
        return count_on(s, family, ret, reterr_msg);
}

int ipvs_flush(char **reterr_msg) {
        CLEANUP(nl_freep) NlSocket *s = NULL;
        cleanup_free char *extack = NULL;
        uint8_t buf[IPVS_MESSAGE_SIZE];
        uint16_t family = 0;
        unsigned n = 0;
        int r;

        r = ipvs_connect(&s, &family, reterr_msg);
        if (r < 0)
                return r;
        r = count_on(s, family, &n, reterr_msg);
        if (r < 0)
                return r;
        if (n == 0)
                return 0;
        r = nl_call(s, ipvs_message_flush(buf, family), NULL, NULL, &extack);
        if (r < 0)
                return set_errmsg(reterr_msg, r, "cannot flush IPVS: %s", extack ?: strerror(-r));
        return 1;
}

static const struct nlattr *service_nest(const struct nlmsghdr *nlh) {
        const struct nlattr *a;

        mnl_attr_for_each(a, nlh,
                          sizeof(struct genlmsghdr)) if (mnl_attr_get_type(a) == IPVS_CMD_ATTR_SERVICE) return a;
        return NULL;
}

int ipvs_service_parse(const struct nlmsghdr *nlh, IpvsService *ret) {
        const struct nlattr *nest = service_nest(nlh), *a;
        IpvsService s = {};

        if (!nest)
                return -EBADMSG;
        mnl_attr_for_each_nested(a, nest) {
                size_t len = mnl_attr_get_payload_len(a);

                switch (mnl_attr_get_type(a)) {
                case IPVS_SVC_ATTR_AF:
                        if (len >= 2)
                                s.family = mnl_attr_get_u16(a);
                        break;
                case IPVS_SVC_ATTR_PROTOCOL:
                        if (len >= 2)
                                s.protocol = mnl_attr_get_u16(a);
                        break;
                case IPVS_SVC_ATTR_ADDR:
                        memcpy(s.addr, mnl_attr_get_payload(a), len < sizeof s.addr ? len : sizeof s.addr);
                        break;
                case IPVS_SVC_ATTR_PORT:
                        if (len >= 2)
                                s.port = ntohs(mnl_attr_get_u16(a));
                        break;
                case IPVS_SVC_ATTR_FWMARK:
                        if (len >= 4)
                                s.fwmark = mnl_attr_get_u32(a);
                        break;
                }
        }
        if (s.family != AF_INET && s.family != AF_INET6)
                return -EBADMSG;
        *ret = s;
        return 0;
}

typedef struct ServiceList {
        IpvsService *v;
        size_t n;
} ServiceList;

static int list_cb(const struct nlmsghdr *nlh, void *userdata) {
        ServiceList *l = userdata;
        IpvsService s, *v;

        if (ipvs_service_parse(nlh, &s) < 0)
                return 0;
        v = reallocarray(l->v, l->n + 1, sizeof *v);
        if (!v)
                return -ENOMEM;
        l->v = v;
        l->v[l->n++] = s;
        return 0;
}

static void list_clear(void *userdata) {
        ((ServiceList *) userdata)->n = 0;
}

int ipvs_list_services(IpvsService **ret, size_t *ret_n, char **reterr_msg) {
        CLEANUP(nl_freep) NlSocket *s = NULL;
        uint8_t buf[IPVS_MESSAGE_SIZE];
        ServiceList l = {};
        uint16_t family = 0;
        int r;

        r = ipvs_connect(&s, &family, reterr_msg);
        if (r < 0)
                return r;
        r = nl_dump(s, ipvs_message_get_services(buf, family), list_cb, &l, list_clear, NULL);
        if (r < 0) {
                free(l.v);
                return set_errmsg(reterr_msg, r, "cannot list IPVS services: %s", strerror(-r));
        }
        *ret = l.v;
        *ret_n = l.n;
        return 0;
}

/* A service is named by its fwmark, or by protocol, address and port (ipvsadm -D). */
/* Through mnl_attr_put(): the shim forwards only the libmnl symbols the program already uses. */
static void put_u16(struct nlmsghdr *nlh, uint16_t type, uint16_t v) {
        mnl_attr_put(nlh, type, sizeof v, &v);
}

struct nlmsghdr *ipvs_message_del_service(void *buf, uint16_t family, const IpvsService *svc) {
        struct nlmsghdr *nlh = put_request(buf, family, 0, IPVS_CMD_DEL_SERVICE);
        struct nlattr *nest = mnl_attr_nest_start(nlh, IPVS_CMD_ATTR_SERVICE);

        put_u16(nlh, IPVS_SVC_ATTR_AF, (uint16_t) svc->family);
        if (svc->fwmark)
                mnl_attr_put_u32(nlh, IPVS_SVC_ATTR_FWMARK, svc->fwmark);
        else {
                put_u16(nlh, IPVS_SVC_ATTR_PROTOCOL, svc->protocol);
                mnl_attr_put(nlh, IPVS_SVC_ATTR_ADDR, sizeof svc->addr, svc->addr);
                put_u16(nlh, IPVS_SVC_ATTR_PORT, htons(svc->port));
        }
        mnl_attr_nest_end(nlh, nest);
        return nlh;
}

int ipvs_delete_service(const IpvsService *svc, char **reterr_msg) {
        CLEANUP(nl_freep) NlSocket *s = NULL;
        cleanup_free char *extack = NULL;
        uint8_t buf[IPVS_MESSAGE_SIZE];
        uint16_t family = 0;
        int r;

        r = ipvs_connect(&s, &family, reterr_msg);
        if (r < 0)
                return r;
        r = nl_call(s, ipvs_message_del_service(buf, family, svc), NULL, NULL, &extack);
        if (r == -ESRCH || r == -ENOENT)
                return 0;
        if (r < 0)
                return set_errmsg(reterr_msg, r, "cannot delete the IPVS service: %s", extack ?: strerror(-r));
        return 1;
}
