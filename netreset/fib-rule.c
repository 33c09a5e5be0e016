/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Policy routing rules: one dump per family, parsing by an allow-list, matching by table and mark, deletion by echo. */

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/fib-rule.h"
#include "string-util.h"

RuleTable *rule_table_free(RuleTable *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n; i++)
                rule_info_done(&t->rules[i]);
        free(t->rules);
        return mfree(t);
}

void rule_info_done(RuleInfo *r) {
        if (!r)
                return;
        free(r->msg);
        *r = (RuleInfo) {};
}

int rule_info_copy(const RuleInfo *src, RuleInfo *ret) {
        RuleInfo c = *src;

        c.msg = NULL;
        if (src->msg) {
                c.msg = malloc(src->msg->nlmsg_len);
                if (!c.msg)
                        return -ENOMEM;
                memcpy(c.msg, src->msg, src->msg->nlmsg_len);
        }
        *ret = c;
        return 0;
}

static bool parse_name(const struct nlattr *a, char *ret) {
        if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0 || mnl_attr_get_payload_len(a) > IF_NAMESIZE)
                return false;
        snprintf(ret, IF_NAMESIZE, "%s", mnl_attr_get_str(a));
        return true;
}

static bool parse_addr(const struct nlattr *a, int family, uint8_t *ret) {
        size_t n = family == AF_INET ? 4 : 16;

        if (mnl_attr_get_payload_len(a) != n)
                return false;
        memcpy(ret, mnl_attr_get_payload(a), n);
        return true;
}

static bool parse_u32_attr(const struct nlattr *a, RuleInfo *r) {
        if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
                return false;
        switch (mnl_attr_get_type(a)) {
        case FRA_TABLE:
                r->table = mnl_attr_get_u32(a);
                break;
        case FRA_PRIORITY:
                r->priority = mnl_attr_get_u32(a);
                break;
        case FRA_FWMARK:
                r->fwmark = mnl_attr_get_u32(a);
                r->has_mark = true;
                break;
        case FRA_FWMASK:
                /* A mask alone ("fwmark 0/0xf00") still selects: the bits must be clear. */
                r->fwmask = mnl_attr_get_u32(a);
                r->has_mark = true;
                break;
        }
        return true;
}

/* The allow-list: the attributes this code reads, and true when a is one of them and readable. Any
 * other attribute - a selector it does not compare (uid range, ports, realms, l3mdev, tun_id), an
 * action's detail (goto) or what a newer kernel adds (FRA_DSCP in 6.13, the flow label, the port
 * and DSCP masks) - is false: a rule that selects by what is not read is never taken for a CNI's. */
static bool parse_attr(const struct nlattr *a, RuleInfo *r, unsigned *seen) {
        uint16_t type = mnl_attr_get_type(a);

        if (type < 32)
                *seen |= 1U << type;
        switch (type) {
        case FRA_IIFNAME:
                return parse_name(a, r->iif);
        case FRA_OIFNAME:
                return parse_name(a, r->oif);
        case FRA_SRC:
                return parse_addr(a, r->family, r->src);
        case FRA_DST:
                return parse_addr(a, r->family, r->dst);
        case FRA_TABLE:
        case FRA_PRIORITY:
        case FRA_FWMARK:
        case FRA_FWMASK:
                return parse_u32_attr(a, r);
        case FRA_SUPPRESS_PREFIXLEN:
        case FRA_SUPPRESS_IFGROUP:
                /* Always dumped; -1 means unset. */
                return mnl_attr_validate(a, MNL_TYPE_U32) >= 0 && mnl_attr_get_u32(a) == UINT32_MAX;
        case FRA_PROTOCOL: /* who added the rule ("proto boot"): no selector */
        case FRA_PAD:
                return true;
        }
        return false;
}

/* The header's selectors: a prefix length the family cannot have, a prefix without its address, a
 * tos, or a flag other than "not" (goto's unresolved, a detached iif or oif, a newer kernel's). */
static bool header_understood(const struct fib_rule_hdr *frh, unsigned seen) {
        unsigned max = frh->family == AF_INET ? 32 : 128;

        if (frh->src_len > max || frh->dst_len > max || frh->tos != 0 || (frh->flags & ~FIB_RULE_INVERT))
                return false;
        return (frh->src_len == 0 || (seen & (1U << FRA_SRC))) && (frh->dst_len == 0 || (seen & (1U << FRA_DST)));
}

int rule_info_parse(const struct nlmsghdr *nlh, RuleInfo *ret) {
        const struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);
        const struct nlattr *a;
        RuleInfo r = { .fwmask = UINT32_MAX };
        unsigned seen = 0;

        if (nlh->nlmsg_type != RTM_NEWRULE || mnl_nlmsg_get_payload_len(nlh) < sizeof *frh ||
            (frh->family != AF_INET && frh->family != AF_INET6))
                return -EBADMSG;
        r.family = frh->family;
        r.action = frh->action;
        r.invert = frh->flags & FIB_RULE_INVERT;
        r.table = frh->table;
        r.src_len = frh->src_len;
        r.dst_len = frh->dst_len;
        mnl_attr_for_each(a, nlh, sizeof *frh) {
                if (!parse_attr(a, &r, &seen))
                        r.has_other = true;
        }
        if (!header_understood(frh, seen))
                r.has_other = true;
        if (!r.has_mark)
                r.fwmask = 0;
        r.msg = malloc(nlh->nlmsg_len);
        if (!r.msg)
                return -ENOMEM;
        memcpy(r.msg, nlh, nlh->nlmsg_len);
        *ret = r;
        return 0;
}

/* The table being filled, and how many rules of it (the other family's) a retry keeps. */
typedef struct Collect {
        RuleTable *t;
        size_t keep;
} Collect;

static int collect(const struct nlmsghdr *nlh, void *userdata) {
        RuleTable *t = ((Collect *) userdata)->t;
        RuleInfo r;
        int k;

        k = rule_info_parse(nlh, &r);
        if (k == -EBADMSG)
                return 0;
        if (k < 0)
                return k;
        if (GREEDY_REALLOC(t->rules, t->allocated, t->n + 1) < 0) {
                rule_info_done(&r);
                return -ENOMEM;
        }
        t->rules[t->n++] = r;
        return 0;
}

static void clear(void *userdata) {
        Collect *c = userdata;

        for (size_t i = c->keep; i < c->t->n; i++)
                rule_info_done(&c->t->rules[i]);
        c->t->n = c->keep;
}

/* One family at a time: AF_UNSPEC would also bring the rules of other families (ipmr, decnet). */
int rule_table_read(NlSocket *rtnl, RuleTable **ret, char **reterr_msg) {
        CLEANUP(rule_table_freep) RuleTable *t = calloc(1, sizeof(RuleTable));
        static const int families[] = { AF_INET, AF_INET6 };

        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                uint8_t buf[64];
                struct nlmsghdr *nlh = (struct nlmsghdr *) buf;
                struct fib_rule_hdr *frh;
                Collect c = { t, t->n };
                int k;

                frh = nl_message_start(buf, sizeof buf, RTM_GETRULE, NLM_F_REQUEST | NLM_F_DUMP, sizeof *frh);
                frh->family = (uint8_t) families[i];
                k = nl_dump(rtnl, nlh, collect, &c, clear, reterr_msg);
                /* A kernel without IPv6 has no IPv6 rules to dump. */
                if (k == -EAFNOSUPPORT && families[i] == AF_INET6)
                        continue;
                if (k < 0)
                        return k;
        }
        *ret = TAKE_PTR(t);
        return 0;
}

bool rule_matches(const RuleInfo *r, const RuleMatch *m) {
        if (r->action != FR_ACT_TO_TBL || r->table != m->table || r->invert != m->invert)
                return false;
        if (r->has_other || r->dst_len != 0 || !isempty(r->iif) || !isempty(r->oif))
                return false;
        if (m->fwmask != 0 && (!r->has_mark || r->fwmark != m->fwmark || r->fwmask != m->fwmask || r->src_len != 0))
                return false;
        return m->priority == 0 || r->priority == m->priority;
}

bool rule_same(const RuleInfo *a, const RuleInfo *b) {
        return a->family == b->family && a->priority == b->priority && a->table == b->table && a->action == b->action &&
               a->invert == b->invert && a->has_mark == b->has_mark && a->fwmark == b->fwmark &&
               a->fwmask == b->fwmask && a->src_len == b->src_len && a->dst_len == b->dst_len &&
               memcmp(a->src, b->src, sizeof a->src) == 0 && memcmp(a->dst, b->dst, sizeof a->dst) == 0 &&
               streq(a->iif, b->iif) && streq(a->oif, b->oif) && a->has_other == b->has_other;
}

/* " from 10.244.0.0/24", or "" when len is 0. */
static void prefix_format(char *buf, size_t size, const char *word, int family, const uint8_t *addr, uint8_t len) {
        char a[INET6_ADDRSTRLEN] = "?";

        *buf = 0;
        if (len == 0)
                return;
        (void) inet_ntop(family, addr, a, sizeof a);
        snprintf(buf, size, " %s %s/%u", word, a, len);
}

char *rule_to_string(const RuleInfo *r) {
        char mark[48] = "", table[32], from[64], to[64];

        if (r->has_mark)
                snprintf(mark, sizeof mark, " %sfwmark 0x%x/0x%x", r->invert ? "not " : "", r->fwmark, r->fwmask);
        if (r->action == FR_ACT_TO_TBL)
                snprintf(table, sizeof table, "lookup %u", r->table);
        else
                snprintf(table, sizeof table, "action %u", r->action);
        prefix_format(from, sizeof from, "from", r->family, r->src, r->src_len);
        prefix_format(to, sizeof to, "to", r->family, r->dst, r->dst_len);
        return strprintf("%s pref %u%s%s%s%s%s%s%s%s%s %s", r->family == AF_INET ? "ipv4" : "ipv6", r->priority,
                         r->invert && !r->has_mark ? " not" : "", from, to, mark,
                         r->has_other ? " (with a selector)" : "", isempty(r->iif) ? "" : " iif ", r->iif,
                         isempty(r->oif) ? "" : " oif ", r->oif, table);
}

/* The kernel matches a delete against every attribute given, so the dumped message itself names
 * exactly this rule. */
int rule_delete(NlSocket *rtnl, const RuleInfo *r, char **reterr_msg) {
        cleanup_free struct nlmsghdr *nlh = NULL;
        int k;

        if (!r->msg)
                return -EINVAL;
        nlh = malloc(r->msg->nlmsg_len);
        if (!nlh)
                return -ENOMEM;
        memcpy(nlh, r->msg, r->msg->nlmsg_len);
        nlh->nlmsg_type = RTM_DELRULE;
        nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        k = nl_call(rtnl, nlh, NULL, NULL, reterr_msg);
        if (k == -ENOENT || k == -ESRCH)
                return 0;
        return k < 0 ? k : 1;
}

static int parse_u32(const char *s, uint32_t *ret) {
        unsigned long v;
        char *end;

        if (isempty(s) || !ascii_isdigit(s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 0);
        if (errno != 0 || *end || v > UINT32_MAX)
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

int rule_match_from_args(char *const *args, size_t n_args, RuleMatch *ret) {
        RuleMatch m = {};
        char *slash;

        if (n_args < 1 || n_args > 3 || parse_u32(args[0], &m.table) < 0)
                return -EINVAL;
        if (m.table == RT_TABLE_UNSPEC || m.table == RT_TABLE_DEFAULT || m.table == RT_TABLE_MAIN ||
            m.table == RT_TABLE_LOCAL)
                return -EINVAL;
        if (n_args >= 2) {
                char mark[32];

                if (strlen(args[1]) >= sizeof mark)
                        return -EINVAL;
                m.invert = args[1][0] == '!';
                strcpy(mark, args[1] + m.invert);
                slash = strchr(mark, '/');
                if (!slash)
                        return -EINVAL;
                *slash = 0;
                if (parse_u32(mark, &m.fwmark) < 0 || parse_u32(slash + 1, &m.fwmask) < 0 || m.fwmask == 0 ||
                    (m.fwmark & ~m.fwmask))
                        return -EINVAL;
        }
        if (n_args == 3 && (parse_u32(args[2], &m.priority) < 0 || m.priority == 0))
                return -EINVAL;
        *ret = m;
        return 0;
}
