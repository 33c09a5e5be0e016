/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bytes of one nf_tables transaction: a batch of deletions (and policy resets) built from a
 * snapshot, bound to its generation. */

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/batch.h>
#include <libnftnl/common.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/nft-batch.h"
#include "netreset/nft-ruleset.h"
#include "string-util.h"
#include "alloc-util.h"

#define BATCH_PAGE_SIZE (128U * 1024U)
/* The largest message a batch holds: header, nfgenmsg, table and chain names (NFT_NAME_MAXLEN
 * each), a handle or a policy. */
#define MSG_MAX 1024

/* What each change of the batch does, so that an error names it. */
typedef struct MsgRef {
        uint16_t type;
        const char *table;
        const char *chain;
        uint64_t handle;
} MsgRef;

struct NftBatch {
        struct nftnl_batch *b;
        int family;
        uint32_t seq_begin; /* set by nft_batch_finish() */
        bool finished;
        MsgRef *refs;
        size_t n_refs, allocated_refs;
};

NftBatch *nft_batch_free(NftBatch *b) {
        if (!b)
                return NULL;
        if (b->b)
                nftnl_batch_free(b->b);
        free(b->refs);
        return mfree(b);
}

int nft_batch_new(int family, uint32_t genid, NftBatch **ret) {
        struct nlmsghdr *nlh;
        struct nfgenmsg *nfg;
        NftBatch *b;

        b = calloc(1, sizeof *b);
        if (!b)
                return -ENOMEM;
        b->family = family;
        b->b = nftnl_batch_alloc(BATCH_PAGE_SIZE, MNL_SOCKET_BUFFER_SIZE);
        if (!b->b)
                goto oom;
        nlh = mnl_nlmsg_put_header(nftnl_batch_buffer(b->b));
        nlh->nlmsg_type = NFNL_MSG_BATCH_BEGIN;
        nlh->nlmsg_flags = NLM_F_REQUEST;
        nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
        nfg->nfgen_family = AF_UNSPEC;
        nfg->version = NFNETLINK_V0;
        nfg->res_id = htons(NFNL_SUBSYS_NFTABLES);
        mnl_attr_put_u32(nlh, NFNL_BATCH_GENID, htonl(genid));
        if (nftnl_batch_update(b->b) < 0)
                goto oom;
        *ret = b;
        return 0;
oom:
        nft_batch_free(b);
        return -ENOMEM;
}

static struct nlmsghdr *batch_put(NftBatch *b, uint16_t type, const char *table, const char *chain, uint64_t handle) {
        if (GREEDY_REALLOC(b->refs, b->allocated_refs, b->n_refs + 1) < 0)
                return NULL;
        b->refs[b->n_refs++] = (MsgRef) { type, table, chain, handle };
        /* libmnl leaves attribute padding as it finds it: start from zeroes, so that no stale byte
         * goes to the kernel. A message is at most MSG_MAX bytes, and every batch page has
         * MNL_SOCKET_BUFFER_SIZE of room past its fill mark. */
        memset(nftnl_batch_buffer(b->b), 0, MSG_MAX);
        /* Numbered in nft_batch_finish(). */
        return nftnl_nlmsg_build_hdr(nftnl_batch_buffer(b->b), type, (uint16_t) b->family, 0, 0);
}

int nft_batch_del_rule(NftBatch *b, const char *table, const char *chain, uint64_t handle) {
        struct nlmsghdr *nlh = batch_put(b, NFT_MSG_DELRULE, table, chain, handle);

        if (!nlh)
                return -ENOMEM;
        mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, table);
        if (chain)
                mnl_attr_put_strz(nlh, NFTA_RULE_CHAIN, chain);
        if (handle)
                mnl_attr_put_u64(nlh, NFTA_RULE_HANDLE, htobe64(handle));
        return nftnl_batch_update(b->b) < 0 ? -ENOMEM : 0;
}

int nft_batch_del_chain(NftBatch *b, const char *table, const char *chain) {
        struct nlmsghdr *nlh = batch_put(b, NFT_MSG_DELCHAIN, table, chain, 0);

        if (!nlh)
                return -ENOMEM;
        mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, table);
        mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, chain);
        return nftnl_batch_update(b->b) < 0 ? -ENOMEM : 0;
}

int nft_batch_policy_accept(NftBatch *b, const char *table, const char *chain) {
        struct nlmsghdr *nlh = batch_put(b, NFT_MSG_NEWCHAIN, table, chain, 0);

        if (!nlh)
                return -ENOMEM;
        mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, table);
        mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, chain);
        mnl_attr_put_u32(nlh, NFTA_CHAIN_POLICY, htonl(NF_ACCEPT));
        return nftnl_batch_update(b->b) < 0 ? -ENOMEM : 0;
}

int nft_batch_del_table(NftBatch *b, const char *table) {
        struct nlmsghdr *nlh = batch_put(b, NFT_MSG_DELTABLE, table, NULL, 0);

        if (!nlh)
                return -ENOMEM;
        mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, table);
        return nftnl_batch_update(b->b) < 0 ? -ENOMEM : 0;
}

static int batch_clean_owned(NftBatch *b, const NftTableInfo *t, const FwClass *cls) {
        int r = 0;

        /* Rules that stay behind in kept chains first, then empty the owned chains, and only then
         * delete them: a chain is deletable once nothing jumps to it any more. */
        for (size_t i = 0; i < t->n_rules && r >= 0; i++) {
                const NftRuleInfo *ri = &t->rules[i];
                const NftChainInfo *c = &t->chains[ri->chain];

                if (!nft_chain_removed(c, cls, FW_MODE_OWNED) && nft_rule_removed(t, ri, cls, FW_MODE_OWNED))
                        r = nft_batch_del_rule(b, t->name, c->name, ri->handle);
        }
        for (size_t i = 0; i < t->n_chains && r >= 0; i++)
                if (nft_chain_removed(&t->chains[i], cls, FW_MODE_OWNED) && t->chains[i].n_rules > 0)
                        r = nft_batch_del_rule(b, t->name, t->chains[i].name, 0);
        for (size_t i = 0; i < t->n_chains && r >= 0; i++)
                if (nft_chain_removed(&t->chains[i], cls, FW_MODE_OWNED))
                        r = nft_batch_del_chain(b, t->name, t->chains[i].name);
        return r;
}

static int batch_clean_flush(NftBatch *b, const NftTableInfo *t) {
        int r = 0;

        for (size_t i = 0; i < t->n_chains && r >= 0; i++)
                if (nft_policy_reset(&t->chains[i], FW_MODE_FLUSH))
                        r = nft_batch_policy_accept(b, t->name, t->chains[i].name);
        if (r >= 0 && t->has_rules)
                r = nft_batch_del_rule(b, t->name, NULL, 0);
        for (size_t i = 0; i < t->n_chains && r >= 0; i++)
                if (!t->chains[i].base)
                        r = nft_batch_del_chain(b, t->name, t->chains[i].name);
        return r;
}

static bool table_deleted_by(const NftRequest *reqs, size_t n, const char *table) {
        for (size_t i = 0; i < n; i++)
                if (reqs[i].op == NFT_TABLE_DELETE && streq(reqs[i].table, table))
                        return true;
        return false;
}

int nft_batch_fill(NftBatch *b, const NftRuleset *rs, NftRequest *reqs, size_t n, const FwClass *cls, FwMode mode) {
        int r = 0;

        for (size_t i = 0; i < n && r >= 0; i++) {
                const NftTableInfo *t = nft_ruleset_find_table(rs, reqs[i].table);

                reqs[i].done = (FwCounts) {};
                reqs[i].changed = false;
                if (!t)
                        continue;
                if (reqs[i].op == NFT_TABLE_DELETE) {
                        (void) nft_ruleset_table_size(rs, t->name, &reqs[i].done);
                        reqs[i].changed = true;
                        r = nft_batch_del_table(b, t->name);
                        continue;
                }
                if (table_deleted_by(reqs, n, t->name))
                        continue;
                if (mode == FW_MODE_OWNED && !rs->rules_dumped)
                        return -ENODATA;
                nft_table_count(rs, t, cls, mode, &reqs[i].done);
                if (!fw_counts_any(&reqs[i].done))
                        continue;
                reqs[i].changed = true;
                r = mode == FW_MODE_FLUSH ? batch_clean_flush(b, t) : batch_clean_owned(b, t, cls);
        }
        return r;
}

size_t nft_batch_n_changes(const NftBatch *b) {
        return b->n_refs;
}

int nft_batch_iovec(const NftBatch *b, struct iovec **ret, size_t *ret_n, size_t *ret_len) {
        size_t n = (size_t) nftnl_batch_iovec_len(b->b), len = 0;
        struct iovec *iov;

        iov = calloc(n, sizeof(struct iovec));
        if (!iov)
                return -ENOMEM;
        nftnl_batch_iovec(b->b, iov, (uint32_t) n);
        for (size_t i = 0; i < n; i++)
                len += iov[i].iov_len;
        *ret = iov;
        *ret_n = n;
        if (ret_len)
                *ret_len = len;
        return 0;
}

int nft_batch_finish(NftBatch *b, uint32_t first_seq, uint32_t *ret_last_change) {
        cleanup_free struct iovec *iov = NULL;
        uint32_t seq = first_seq, last_change = first_seq + (uint32_t) b->n_refs;
        size_t n_iov;
        int r;

        if (b->finished || b->n_refs == 0)
                return -EINVAL;
        if (!nftnl_batch_end(nftnl_batch_buffer(b->b), 0) || nftnl_batch_update(b->b) < 0)
                return -ENOMEM;
        b->finished = true;
        b->seq_begin = first_seq;
        r = nft_batch_iovec(b, &iov, &n_iov, NULL);
        if (r < 0)
                return r;
        /* The pages are ours to write: number every message, and flag the last change. */
        for (size_t i = 0; i < n_iov; i++) {
                int len = (int) iov[i].iov_len;

                for (struct nlmsghdr *nlh = iov[i].iov_base; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
                        nlh->nlmsg_seq = seq;
                        if (seq++ == last_change)
                                nlh->nlmsg_flags |= NLM_F_ACK;
                }
        }
        *ret_last_change = last_change;
        return 0;
}

char *nft_batch_describe(const NftBatch *b, uint32_t seq) {
        const char *fam = strna(nft_family_to_string(b->family));
        const MsgRef *m;
        size_t i;

        if (seq <= b->seq_begin || (i = seq - b->seq_begin - 1) >= b->n_refs)
                return strdup("nf_tables transaction");
        m = &b->refs[i];
        if (m->type == NFT_MSG_DELRULE && m->handle)
                return strprintf("deleting rule %llu in chain %s of table %s %s", (unsigned long long) m->handle,
                                 m->chain, fam, m->table);
        if (m->type == NFT_MSG_DELRULE && m->chain)
                return strprintf("flushing chain %s of table %s %s", m->chain, fam, m->table);
        if (m->type == NFT_MSG_DELRULE)
                return strprintf("flushing table %s %s", fam, m->table);
        if (m->type == NFT_MSG_DELCHAIN)
                return strprintf("deleting chain %s of table %s %s", m->chain, fam, m->table);
        if (m->type == NFT_MSG_NEWCHAIN)
                return strprintf("setting policy accept on chain %s of table %s %s", m->chain, fam, m->table);
        return strprintf("deleting table %s %s", fam, m->table);
}
