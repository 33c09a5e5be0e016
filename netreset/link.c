/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Network links: one dump, name patterns, deletion one by one or as one IFLA_GROUP, setting down. */

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/link.h"
#include "string-util.h"
#include "alloc-util.h"

/* Chosen far from the small numbers administrators give groups by hand. */
#define LINK_GROUP_BASE 0x4e520000U

LinkTable *link_table_free(LinkTable *t) {
        if (!t)
                return NULL;
        free(t->links);
        return mfree(t);
}

static int table_append(LinkTable *t, const LinkInfo *l) {
        if (GREEDY_REALLOC(t->links, t->allocated, t->n + 1) < 0)
                return -ENOMEM;
        t->links[t->n++] = *l;
        return 0;
}

/* IFLA_INFO_KIND, and a VRF's table from IFLA_INFO_DATA (which may come first in the nest). */
static void parse_linkinfo(const struct nlattr *nest, LinkInfo *l) {
        const struct nlattr *a, *data = NULL, *v;

        mnl_attr_for_each_nested(a, nest) {
                if (mnl_attr_get_type(a) == IFLA_INFO_KIND && mnl_attr_validate(a, MNL_TYPE_STRING) >= 0)
                        snprintf(l->kind, sizeof l->kind, "%.*s", (int) mnl_attr_get_payload_len(a),
                                 mnl_attr_get_str(a));
                else if (mnl_attr_get_type(a) == IFLA_INFO_DATA && mnl_attr_validate(a, MNL_TYPE_NESTED) >= 0)
                        data = a;
        }
        if (!data || !streq(l->kind, "vrf"))
                return;
        mnl_attr_for_each_nested(v, data) if (mnl_attr_get_type(v) == IFLA_VRF_TABLE &&
                                              mnl_attr_validate(v, MNL_TYPE_U32) >= 0) l->vrf_table =
                mnl_attr_get_u32(v);
}

static int parse_link(const struct nlmsghdr *nlh, void *userdata) {
        LinkInfo l;
        int r;

        r = link_info_parse(nlh, &l);
        return r <= 0 ? 0 : table_append(userdata, &l);
}

const LinkInfo *link_table_vrf_of(const LinkTable *t, uint32_t table) {
        for (size_t i = 0; t && i < t->n; i++)
                if (t->links[i].vrf_table != 0 && t->links[i].vrf_table == table)
                        return t->links + i;
        return NULL;
}

static void parse_xdp(const struct nlattr *nest, uint32_t ids[3]) {
        const struct nlattr *a;

        mnl_attr_for_each_nested(a, nest) {
                if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
                        continue;
                switch (mnl_attr_get_type(a)) {
                case IFLA_XDP_SKB_PROG_ID:
                        ids[0] = mnl_attr_get_u32(a);
                        break;
                case IFLA_XDP_DRV_PROG_ID:
                        ids[1] = mnl_attr_get_u32(a);
                        break;
                case IFLA_XDP_HW_PROG_ID:
                        ids[2] = mnl_attr_get_u32(a);
                        break;
                }
        }
}

int link_info_parse(const struct nlmsghdr *nlh, LinkInfo *ret) {
        const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
        bool other_netns = false;
        const struct nlattr *a;
        LinkInfo l = {};

        if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof *ifi)
                return nlh->nlmsg_type == RTM_NEWLINK ? -EBADMSG : 0;
        l.ifindex = ifi->ifi_index;
        l.flags = ifi->ifi_flags;
        mnl_attr_for_each(a, nlh, sizeof *ifi) {
                switch (mnl_attr_get_type(a)) {
                case IFLA_IFNAME:
                        if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
                                snprintf(l.name, sizeof l.name, "%s", mnl_attr_get_str(a));
                        break;
                case IFLA_MASTER:
                        if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
                                l.master = (int) mnl_attr_get_u32(a);
                        break;
                case IFLA_LINK:
                        if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
                                l.lower = (int) mnl_attr_get_u32(a);
                        break;
                case IFLA_LINK_NETNSID:
                        other_netns = true;
                        break;
                case IFLA_GROUP:
                        if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
                                l.group = mnl_attr_get_u32(a);
                        break;
                case IFLA_LINKINFO:
                        parse_linkinfo(a, &l);
                        break;
                case IFLA_XDP:
                        parse_xdp(a, l.xdp_prog);
                        break;
                default:
                        break;
                }
        }
        /* IFLA_LINK of a device whose peer or lower device is elsewhere names an ifindex there. */
        if (other_netns || l.lower == l.ifindex)
                l.lower = 0;
        if (l.ifindex <= 0 || isempty(l.name))
                return 0;
        *ret = l;
        return 1;
}

static void link_table_clear(void *userdata) {
        LinkTable *t = userdata;

        t->links = mfree(t->links);
        t->n = t->allocated = 0;
}

int link_table_read(NlSocket *rtnl, LinkTable **ret, char **reterr_msg) {
        CLEANUP(link_table_freep) LinkTable *t = calloc(1, sizeof(LinkTable));
        uint8_t buf[LINK_MESSAGE_SIZE + 16];
        struct nlmsghdr *nlh = (struct nlmsghdr *) buf;
        struct ifinfomsg *ifi;
        int r;

        if (!t)
                return -ENOMEM;
        ifi = nl_message_start(buf, sizeof buf, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, sizeof *ifi);
        ifi->ifi_family = AF_UNSPEC;
        /* Counters are most of a link message and of no use here. */
        mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
        r = nl_dump(rtnl, nlh, parse_link, t, link_table_clear, reterr_msg);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

const LinkInfo *link_table_by_index(const LinkTable *t, int ifindex) {
        for (size_t i = 0; i < t->n; i++)
                if (t->links[i].ifindex == ifindex)
                        return &t->links[i];
        return NULL;
}

const LinkInfo *link_table_by_name(const LinkTable *t, const char *name) {
        for (size_t i = 0; i < t->n; i++)
                if (streq(t->links[i].name, name))
                        return &t->links[i];
        return NULL;
}

uint32_t link_table_unused_group(const LinkTable *t) {
        uint32_t g = LINK_GROUP_BASE;

        /* At most t->n groups are taken, so this ends after at most t->n + 1 candidates. */
        for (size_t i = 0; i < t->n;)
                if (t->links[i].group == g) {
                        g++;
                        i = 0;
                } else
                        i++;
        return g;
}

int link_pattern_validate(const char *pattern) {
        if (isempty(pattern))
                return -EINVAL;
        for (const char *p = pattern; *p; p++)
                if (*p == '/' || isspace((unsigned char) *p) || iscntrl((unsigned char) *p))
                        return -EINVAL;
        if (!strpbrk(pattern, "*?[") && strlen(pattern) >= IF_NAMESIZE)
                return -EINVAL;
        return 0;
}

/* FNM_NOESCAPE: a backslash is an ordinary character, the manifest's one rule for every glob. */
bool link_pattern_match(const char *pattern, const char *name) {
        return fnmatch(pattern, name, FNM_NOESCAPE) == 0;
}

bool link_is_tunnel_fallback(const LinkInfo *l) {
        /* The names the drivers give them: ip_tunnel_init_net() and the ip6 drivers' init_net. */
        static const struct {
                const char *kind, *name;
        } fallbacks[] = {
                { "ipip", "tunl0" },     { "sit", "sit0" },
                { "ip6tnl", "ip6tnl0" }, { "gre", "gre0" },
                { "gretap", "gretap0" }, { "erspan", "erspan0" },
                { "vti", "ip_vti0" },    { "vti6", "ip6_vti0" },
                { "ip6gre", "ip6gre0" }, { "ip6erspan", "ip6erspan0" },
        };

        for (size_t i = 0; i < ELEMENTSOF(fallbacks); i++)
                if (streq(l->kind, fallbacks[i].kind) && streq(l->name, fallbacks[i].name))
                        return true;
        return false;
}

static struct nlmsghdr *put_link_header(void *buf, uint16_t type, int ifindex) {
        struct ifinfomsg *ifi = nl_message_start(buf, LINK_MESSAGE_SIZE, type, NLM_F_REQUEST | NLM_F_ACK, sizeof *ifi);

        ifi->ifi_family = AF_UNSPEC;
        ifi->ifi_index = ifindex;
        return buf;
}

struct nlmsghdr *link_message_set_group(void *buf, int ifindex, uint32_t group) {
        struct nlmsghdr *nlh = put_link_header(buf, RTM_NEWLINK, ifindex);

        mnl_attr_put_u32(nlh, IFLA_GROUP, group);
        return nlh;
}

struct nlmsghdr *link_message_delete(void *buf, int ifindex) {
        return put_link_header(buf, RTM_DELLINK, ifindex);
}

/* ifi_change names the one flag to touch; every other flag stays as it is. */
struct nlmsghdr *link_message_set_down(void *buf, int ifindex) {
        struct nlmsghdr *nlh = put_link_header(buf, RTM_NEWLINK, ifindex);
        struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

        ifi->ifi_change = IFF_UP;
        ifi->ifi_flags = 0;
        return nlh;
}

/* ifindex 0 and no name: the kernel then deletes every link of the group (rtnl_group_dellink). */
struct nlmsghdr *link_message_delete_group(void *buf, uint32_t group) {
        struct nlmsghdr *nlh = put_link_header(buf, RTM_DELLINK, 0);

        mnl_attr_put_u32(nlh, IFLA_GROUP, group);
        return nlh;
}

int link_delete(NlSocket *rtnl, int ifindex, char **reterr_msg) {
        uint8_t buf[LINK_MESSAGE_SIZE];
        int r;

        if (ifindex <= 0)
                return -EINVAL;
        r = nl_call(rtnl, link_message_delete(buf, ifindex), NULL, NULL, reterr_msg);
        if (r == -ENODEV)
                return 0;
        return r < 0 ? r : 1;
}

int link_set_down(NlSocket *rtnl, int ifindex, char **reterr_msg) {
        uint8_t buf[LINK_MESSAGE_SIZE];

        if (ifindex <= 0)
                return -EINVAL;
        return nl_call(rtnl, link_message_set_down(buf, ifindex), NULL, NULL, reterr_msg);
}

int link_set_group(NlSocket *rtnl, const int *ifindexes, size_t n, uint32_t group, int *ret_errors) {
        cleanup_free uint8_t *buf = NULL;
        size_t len = 0;

        if (n == 0)
                return 0;
        buf = calloc(n, LINK_MESSAGE_SIZE);
        if (!buf)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct nlmsghdr *nlh = link_message_set_group(buf + len, ifindexes[i], group);

                len += MNL_ALIGN(nlh->nlmsg_len);
        }
        return nl_call_many(rtnl, buf, len, n, ret_errors);
}

int link_delete_group(NlSocket *rtnl, uint32_t group, char **reterr_msg) {
        uint8_t buf[LINK_MESSAGE_SIZE];

        /* Group 0 is every link that was never put in a group: refuse it here as the kernel does. */
        if (group == 0)
                return -EPERM;
        return nl_call(rtnl, link_message_delete_group(buf, group), NULL, NULL, reterr_msg);
}
