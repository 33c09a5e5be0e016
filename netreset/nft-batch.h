/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bytes of one nf_tables transaction: a batch of deletions (and policy resets) built from a
 * snapshot, bound to its generation. Internal to netreset/ (nft.c sends it), public for its tests. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "macro.h"
#include "netreset/fwclass.h"
#include "netreset/nft.h"

typedef struct NftBatch NftBatch;

/* An open batch (NFNL_MSG_BATCH_BEGIN) for family. genid is the generation the changes were
 * planned on: the kernel refuses the whole batch (ERESTART) when the ruleset changed since. */
int nft_batch_new(int family, uint32_t genid, NftBatch **ret);
NftBatch *nft_batch_free(NftBatch *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(NftBatch *, nft_batch_free);

/* One change each. Table and chain names are borrowed: they must outlive the batch. */
/* DELRULE: one rule by handle, every rule of a chain (handle 0), or of the table (chain NULL). */
int nft_batch_del_rule(NftBatch *b, const char *table, const char *chain, uint64_t handle);
int nft_batch_del_chain(NftBatch *b, const char *table, const char *chain);
/* NEWCHAIN on an existing base chain, without NLM_F_EXCL: its policy becomes accept. */
int nft_batch_policy_accept(NftBatch *b, const char *table, const char *chain);
int nft_batch_del_table(NftBatch *b, const char *table);

/* The changes that carry out reqs (see nft_reset()) on snapshot rs, and in each request what they
 * will remove. -ENODATA for owned mode on a snapshot without rules. */
int nft_batch_fill(NftBatch *b, const NftRuleset *rs, NftRequest *reqs, size_t n, const FwClass *cls, FwMode mode);

size_t nft_batch_n_changes(const NftBatch *b);

/* Close the batch (NFNL_MSG_BATCH_END), number its messages first_seq, first_seq + 1, ... (the
 * begin message first, the end last) and ask an ack of the last change only: failures are
 * reported anyway, and that ack says the kernel went through the whole batch. Returns the sequence
 * number of the last change. Call once, with at least one change. */
int nft_batch_finish(NftBatch *b, uint32_t first_seq, uint32_t *ret_last_change);

/* The batch as an iovec (freed by the caller; it points into b) and its length in bytes. */
int nft_batch_iovec(const NftBatch *b, struct iovec **ret, size_t *ret_n, size_t *ret_len);

/* What the message with sequence number seq does, for an error message: "deleting chain ..." */
char *nft_batch_describe(const NftBatch *b, uint32_t seq);
