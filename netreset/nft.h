/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nf_tables through libmnl + libnftnl: observe one family's ruleset, then remove owned state (or
 * everything) in one batch transaction per family. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"
#include "netreset/fwclass.h"

struct nftnl_rule;

/* nf_tables family names as nft spells them: ip ip6 inet arp bridge netdev. Returns NFPROTO_*,
 * or -EINVAL. */
int nft_family_from_string(const char *s);
const char *nft_family_to_string(int family);

/* One of the tables iptables-nft creates in ip/ip6: filter nat mangle raw security. Only these are
 * cleaned rule by rule; any other table is touched only when it is deleted whole. */
bool nft_table_is_xtables(const char *name);

/* A snapshot of one family's tables, chains and rules (consistent: taken within one ruleset
 * generation). */
typedef struct NftRuleset NftRuleset;

typedef enum NftDumpFlags {
        /* Every rule, for owned mode and for counts. Without it only tables, chains and, per table,
         * whether it has any rule: what flush mode needs, at a fraction of the cost (a dump of
         * thousands of rules costs more than the flush itself). */
        NFT_DUMP_RULES = 1 << 0,
} NftDumpFlags;

/* bare: a class whose owned chains go whole in this run (owned mode), so that their rules are only
 * recorded (chain, handle), not parsed; NULL parses every rule. */
int nft_ruleset_dump(int family, unsigned flags, const FwClass *bare, NftRuleset **ret, char **reterr_msg);
NftRuleset *nft_ruleset_free(NftRuleset *rs);
DEFINE_TRIVIAL_CLEANUP_FUNC(NftRuleset *, nft_ruleset_free);

int nft_ruleset_family(const NftRuleset *rs);
bool nft_ruleset_rules_dumped(const NftRuleset *rs);
size_t nft_ruleset_n_tables(const NftRuleset *rs);
const char *nft_ruleset_table_name(const NftRuleset *rs, size_t i);
bool nft_ruleset_has_table(const NftRuleset *rs, const char *table);

/* What cleaning table in mode would remove and keep (see FwCounts). In owned mode only user chains
 * with an owned prefix and owned rules count; in flush mode every rule, every user chain, and every
 * base chain whose policy is not accept (rules_uncounted when the rules were not dumped). -ENOENT
 * when the table is absent, -ENODATA for owned mode on a snapshot without rules. */
int nft_ruleset_count(const NftRuleset *rs, const char *table, const FwClass *cls, FwMode mode, FwCounts *ret);

/* The size of a whole table: every chain (chains, owned_chains) and rule (rules, owned_rules).
 * -ENOENT when absent. */
int nft_ruleset_table_size(const NftRuleset *rs, const char *table, FwCounts *ret);

/* A rule outside an owned chain is owned when an immediate verdict jumps or goes to an owned
 * chain, or when a comment marks it: the NFTNL_RULE_USERDATA comment TLV (nft, newer iptables-nft)
 * or an xt "comment" match (iptables-nft 1.8.9 and older). */
bool nft_rule_owned(const struct nftnl_rule *r, const FwClass *cls);

typedef enum NftTableOp {
        NFT_TABLE_CLEAN,  /* remove owned state (or everything, in flush mode) inside it */
        NFT_TABLE_DELETE, /* delete the whole table */
} NftTableOp;

typedef struct NftRequest {
        const char *table;
        NftTableOp op;
        /* out: what the transaction removed from this table (for DELETE, chains and rules are the
         * table's size); changed: anything at all. Zero when the transaction failed. */
        FwCounts done;
        bool changed;
} NftRequest;

/* The transactions of one run, family after family. They share one socket: closing a netfilter
 * socket waits for the kernel to free what the last commit deleted (its NETLINK_URELEASE handler
 * flushes the destroy work), so that wait comes once, at the end, instead of after each family. And
 * they carry the generation on: each commit moves it on by exactly one, so when the kernel reports
 * g + 1 right after our commit bound to g, no one else committed, and a snapshot of another family
 * taken at g is still exact: its transaction is bound to g + 1 instead of being refused (ERESTART)
 * and observed again. The kernel still checks every transaction's generation. */
typedef struct NftSession NftSession;

int nft_session_new(NftSession **ret);
NftSession *nft_session_free(NftSession *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(NftSession *, nft_session_free);

/* Apply every request for family in one transaction, raising the socket's send buffer
 * (SO_SNDBUFFORCE) for big batches. The transaction is built from observed (the plan's snapshot of
 * that family; NULL: observe now) and bound to its generation: when the ruleset changed since, the
 * kernel refuses it (ERESTART), and it is observed again and retried. Absent tables are no-ops.
 * Returns 0 when there was nothing to do, 1 when the transaction committed, -errno when it failed
 * (the kernel then changed nothing); the kernel's extack text goes to *reterr_msg. session: NULL for
 * a transaction on its own. */
int nft_reset(NftSession *session, const NftRuleset *observed, int family, NftRequest *reqs, size_t n,
              const FwClass *cls, FwMode mode, char **reterr_msg);
