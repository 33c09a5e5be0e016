/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Inside nft.h's NftRuleset: the snapshot's layout and how it is classified, shared by the observer
 * that fills it (nft-observe.c) and the batch builder that reads it (nft-batch.c). Not for agent/. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netreset/fwclass.h"
#include "netreset/nft.h"
#include "netreset/nl.h"

typedef struct NftRuleInfo {
        uint64_t handle;
        size_t chain; /* index into the table's chains */
        char *jump;   /* chain name of a jump/goto verdict, or NULL */
        char **comments;
        size_t n_comments;
} NftRuleInfo;

typedef struct NftChainInfo {
        char *name;
        bool base;
        bool has_policy;
        uint32_t policy;
        unsigned n_rules;
} NftChainInfo;

typedef struct NftTableInfo {
        char *name;
        bool has_rules; /* at least one rule (probed when rules are not dumped) */
        NftChainInfo *chains;
        size_t n_chains, allocated_chains;
        NftRuleInfo *rules;
        size_t n_rules, allocated_rules;
} NftTableInfo;

struct NftRuleset {
        int family;
        uint32_t genid;
        bool rules_dumped; /* NFT_DUMP_RULES: every rule is here, not only whether there are any */
        NftTableInfo *tables;
        size_t n_tables, allocated_tables;
};

const NftTableInfo *nft_ruleset_find_table(const NftRuleset *rs, const char *name);

/* What cleaning in mode removes: a user chain (every one in flush mode, the owned ones otherwise),
 * a rule, a base chain's policy (set to accept in flush mode). */
bool nft_chain_removed(const NftChainInfo *c, const FwClass *cls, FwMode mode);
bool nft_rule_removed(const NftTableInfo *t, const NftRuleInfo *r, const FwClass *cls, FwMode mode);
bool nft_policy_reset(const NftChainInfo *c, FwMode mode);
void nft_table_count(const NftRuleset *rs, const NftTableInfo *t, const FwClass *cls, FwMode mode, FwCounts *ret);

/* A NETLINK_NETFILTER socket with a receive timeout. */
int nft_socket_open(NlSocket **ret);

/* The ruleset's generation now (NFT_MSG_GETGEN). */
int nft_generation_read(NlSocket *s, uint32_t *ret);

/* nft_ruleset_dump() on socket s, which the transaction then goes on using. */
int nft_ruleset_dump_on(NlSocket *s, int family, unsigned flags, const FwClass *bare, NftRuleset **ret,
                        char **reterr_msg);
