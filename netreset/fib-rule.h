/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Policy routing rules (the FIB rules "ip rule" shows): one dump of both families, matching, deletion. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <stdint.h>

#include "netreset/nl.h"

typedef struct RuleInfo {
        int family;     /* AF_INET or AF_INET6 */
        uint8_t action; /* FR_ACT_* */
        bool invert;    /* "not": FIB_RULE_INVERT */
        bool has_mark;
        uint32_t table;    /* FRA_TABLE, or the header's 8-bit table */
        uint32_t priority; /* FRA_PRIORITY; 0 when absent (the local rule) */
        uint32_t fwmark;
        uint32_t fwmask; /* 0xffffffff when the rule gave no mask */
        uint8_t src_len, dst_len;
        uint8_t src[16], dst[16];                /* FRA_SRC, FRA_DST: the "from" and "to" prefixes' addresses */
        char iif[IF_NAMESIZE], oif[IF_NAMESIZE]; /* FRA_IIFNAME, FRA_OIFNAME; "" when none */
        bool has_other;       /* anything else: a selector or modifier this code does not read (tos, a flag
                               * but "not", l3mdev, uid range, ip_proto, ports, tun_id, realms, goto,
                               * suppress_prefixlen/ifgroup, dscp, flow label, port masks), an attribute it
                               * does not know (a newer kernel's) or one it cannot read */
        struct nlmsghdr *msg; /* the message as dumped: echoed back to delete exactly this rule */
} RuleInfo;

typedef struct RuleTable {
        RuleInfo *rules;
        size_t n, allocated;
} RuleTable;

/* One RTM_GETRULE dump of IPv4 and one of IPv6 (each retried when interrupted). */
int rule_table_read(NlSocket *rtnl, RuleTable **ret, char **reterr_msg);
RuleTable *rule_table_free(RuleTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(RuleTable *, rule_table_free);

void rule_info_done(RuleInfo *r);
int rule_info_copy(const RuleInfo *src, RuleInfo *ret);

/* Parse one RTM_NEWRULE message (exposed for tests). -EBADMSG when it is not a rule of either family.
 * Only the attributes listed in fib-rule.c are read; any other sets has_other, so a selector this code
 * does not understand can never make a rule look like a CNI's. */
int rule_info_parse(const struct nlmsghdr *nlh, RuleInfo *ret);

/* What makes a rule someone's: the CNI's own rule shape. A rule matches only when it looks up table
 * with no iif, oif, destination or other selector and the same "not" flag; when mask != 0, with
 * exactly this fwmark/mask and no source prefix; when priority != 0, at that priority. A shape without
 * a mark (kube-router's tables) accepts a source prefix (its pod CIDR: the caller checks that it
 * lies in the cluster's ranges) and any mark (its per-service DSR marks), never "not". */
typedef struct RuleMatch {
        uint32_t table;
        uint32_t fwmark;
        uint32_t fwmask;
        uint32_t priority;
        bool invert; /* "!MARK/MASK": the CNI writes "not fwmark" */
} RuleMatch;

bool rule_matches(const RuleInfo *r, const RuleMatch *m);
/* Same rule: family, priority, table, action, mark and mask, selector lengths. */
bool rule_same(const RuleInfo *a, const RuleInfo *b);

/* "ipv4 pref 9 fwmark 0x200/0xf00 lookup 2004". malloc'd, NULL on OOM. */
char *rule_to_string(const RuleInfo *r);

/* Delete exactly this rule: 1 deleted, 0 already gone (ENOENT), -errno with the extack text. */
int rule_delete(NlSocket *rtnl, const RuleInfo *r, char **reterr_msg);

/* "TABLE[ [!]MARK/MASK[ PREF]]" as a manifest gives it ("!" for "not fwmark"): -EINVAL when malformed or when TABLE is
 * one of the kernel's own (0, 253 default, 254 main, 255 local), which no CNI owns. */
int rule_match_from_args(char *const *args, size_t n_args, RuleMatch *ret);
