/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IPVS through generic netlink (nl.c): count and clear the virtual services. */

#include <errno.h>
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
