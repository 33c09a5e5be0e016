/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The nf_tables batch builder, byte for byte: each golden batch below was sent once to a kernel
 * (6.x, in a private network namespace, on a ruleset built with nft as described next to it),
 * which committed it and left the end state described; the genid in each batch-begin message is
 * the one that kernel reported. Netlink headers are host-endian: these are a little-endian host's. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "netreset/fwclass.h"
#include "netreset/nft-batch.h"
#include "netreset/nft-ruleset.h"

/* ip kube-proxy: chain KUBE-SERVICES with two rules ("counter", "ip daddr 10.0.0.1 drop"). After
 * it, the chain is empty. */
/* genid 5 */
static const uint8_t golden_flush_chain[] = {
        0x1c, 0x00, 0x00, 0x00, 0x10, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x08, 0x00, 0x01, 0x00,
        0x00, 0x00, 0x00, 0x05, 0x38, 0x00, 0x00, 0x00, 0x08, 0x0a, 0x05, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
        0x0f, 0x00, 0x01, 0x00, 0x6b, 0x75, 0x62, 0x65, 0x2d, 0x70, 0x72, 0x6f,
        0x78, 0x79, 0x00, 0x00, 0x12, 0x00, 0x02, 0x00, 0x4b, 0x55, 0x42, 0x45,
        0x2d, 0x53, 0x45, 0x52, 0x56, 0x49, 0x43, 0x45, 0x53, 0x00, 0x00, 0x00,
        0x14, 0x00, 0x00, 0x00, 0x11, 0x00, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a,
};

/* Then the empty chain deleted: the table is empty. */
/* genid 6 */
static const uint8_t golden_delete_chain[] = {
        0x1c, 0x00, 0x00, 0x00, 0x10, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x08, 0x00, 0x01, 0x00,
        0x00, 0x00, 0x00, 0x06, 0x38, 0x00, 0x00, 0x00, 0x05, 0x0a, 0x05, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
        0x0f, 0x00, 0x01, 0x00, 0x6b, 0x75, 0x62, 0x65, 0x2d, 0x70, 0x72, 0x6f,
        0x78, 0x79, 0x00, 0x00, 0x12, 0x00, 0x03, 0x00, 0x4b, 0x55, 0x42, 0x45,
        0x2d, 0x53, 0x45, 0x52, 0x56, 0x49, 0x43, 0x45, 0x53, 0x00, 0x00, 0x00,
        0x14, 0x00, 0x00, 0x00, 0x11, 0x00, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a,
};

/* Then the table deleted; another table ("keep") survives. */
/* genid 7 */
static const uint8_t golden_delete_table[] = {
        0x1c, 0x00, 0x00, 0x00, 0x10, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x08, 0x00, 0x01, 0x00,
        0x00, 0x00, 0x00, 0x07, 0x24, 0x00, 0x00, 0x00, 0x02, 0x0a, 0x05, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
        0x0f, 0x00, 0x01, 0x00, 0x6b, 0x75, 0x62, 0x65, 0x2d, 0x70, 0x72, 0x6f,
        0x78, 0x79, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x11, 0x00, 0x01, 0x00,
        0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a,
};

/* nft_batch_fill(), flush mode, on inet filter: base chain input (policy drop, "jump KUBE-FW"),
 * base chain forward (policy accept), user chain KUBE-FW ("counter"); rules not dumped. The kernel
 * left input and forward, both empty with policy accept. */
/* genid 14 */
static const uint8_t golden_fill_flush[] = {
        0x1c, 0x00, 0x00, 0x00, 0x10, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x08, 0x00, 0x01, 0x00,
        0x00, 0x00, 0x00, 0x0e, 0x34, 0x00, 0x00, 0x00, 0x03, 0x0a, 0x01, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x0b, 0x00, 0x01, 0x00, 0x66, 0x69, 0x6c, 0x74, 0x65, 0x72, 0x00, 0x00,
        0x0a, 0x00, 0x03, 0x00, 0x69, 0x6e, 0x70, 0x75, 0x74, 0x00, 0x00, 0x00,
        0x08, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x01, 0x20, 0x00, 0x00, 0x00,
        0x08, 0x0a, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x01, 0x00, 0x66, 0x69, 0x6c, 0x74,
        0x65, 0x72, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x05, 0x0a, 0x05, 0x00,
        0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x0b, 0x00, 0x01, 0x00, 0x66, 0x69, 0x6c, 0x74, 0x65, 0x72, 0x00, 0x00,
        0x0c, 0x00, 0x03, 0x00, 0x4b, 0x55, 0x42, 0x45, 0x2d, 0x46, 0x57, 0x00,
        0x14, 0x00, 0x00, 0x00, 0x11, 0x00, 0x01, 0x00, 0x05, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a,
};

/* nft_batch_fill(), owned mode, on ip filter: base chain INPUT with "counter" (handle 4), "jump
 * KUBE-SERVICES" (5), "tcp dport 22 accept comment "kubernetes service portals"" (6), "jump MINE"
 * (7); user chains KUBE-SERVICES ("counter", 8) and MINE ("counter", 9). The kernel left INPUT
 * with rules 4 and 7, and MINE whole. */
/* genid 26 */
static const uint8_t golden_fill_owned[] = {
        0x1c, 0x00, 0x00, 0x00, 0x10, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x08, 0x00, 0x01, 0x00,
        0x00, 0x00, 0x00, 0x1a, 0x38, 0x00, 0x00, 0x00, 0x08, 0x0a, 0x01, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
        0x0b, 0x00, 0x01, 0x00, 0x66, 0x69, 0x6c, 0x74, 0x65, 0x72, 0x00, 0x00,
        0x0a, 0x00, 0x02, 0x00, 0x49, 0x4e, 0x50, 0x55, 0x54, 0x00, 0x00, 0x00,
        0x0c, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x38, 0x00, 0x00, 0x00, 0x08, 0x0a, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x01, 0x00,
        0x66, 0x69, 0x6c, 0x74, 0x65, 0x72, 0x00, 0x00, 0x0a, 0x00, 0x02, 0x00,
        0x49, 0x4e, 0x50, 0x55, 0x54, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x03, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, 0x34, 0x00, 0x00, 0x00,
        0x08, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x01, 0x00, 0x66, 0x69, 0x6c, 0x74,
        0x65, 0x72, 0x00, 0x00, 0x12, 0x00, 0x02, 0x00, 0x4b, 0x55, 0x42, 0x45,
        0x2d, 0x53, 0x45, 0x52, 0x56, 0x49, 0x43, 0x45, 0x53, 0x00, 0x00, 0x00,
        0x34, 0x00, 0x00, 0x00, 0x05, 0x0a, 0x05, 0x00, 0x05, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x01, 0x00,
        0x66, 0x69, 0x6c, 0x74, 0x65, 0x72, 0x00, 0x00, 0x12, 0x00, 0x03, 0x00,
        0x4b, 0x55, 0x42, 0x45, 0x2d, 0x53, 0x45, 0x52, 0x56, 0x49, 0x43, 0x45,
        0x53, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x11, 0x00, 0x01, 0x00,
        0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a,
};

/* The batch in one buffer, numbered from 1 as the golden batches were. */
static void finish_and_check(NftBatch *b, const uint8_t *golden, size_t golden_len, uint32_t want_last) {
        cleanup_free struct iovec *iov = NULL;
        cleanup_free uint8_t *buf = NULL;
        size_t n_iov, len, off = 0;
        uint32_t last = 0;

        assert_int_equal(nft_batch_finish(b, 1, &last), 0);
        assert_int_equal(last, want_last);
        assert_int_equal(nft_batch_iovec(b, &iov, &n_iov, &len), 0);
        assert_int_equal(len, golden_len);
        buf = malloc(len);
        assert_non_null(buf);
        for (size_t i = 0; i < n_iov; i++) {
                memcpy(buf + off, iov[i].iov_base, iov[i].iov_len);
                off += iov[i].iov_len;
        }
        assert_memory_equal(buf, golden, golden_len);
}

static void assert_described(const NftBatch *b, uint32_t seq, const char *want) {
        cleanup_free char *s = nft_batch_describe(b, seq);

        assert_non_null(s);
        assert_string_equal(s, want);
}

static int skip_big_endian(void **state) {
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
        skip();
#endif
        return 0;
}

static void test_flush_chain(void **state) {
        CLEANUP(nft_batch_freep) NftBatch *b = NULL;

        assert_int_equal(nft_batch_new(NFPROTO_IPV4, 5, &b), 0);
        assert_int_equal(nft_batch_del_rule(b, "kube-proxy", "KUBE-SERVICES", 0), 0);
        assert_int_equal(nft_batch_n_changes(b), 1);
        finish_and_check(b, golden_flush_chain, sizeof golden_flush_chain, 2);
        assert_described(b, 1, "nf_tables transaction");
        assert_described(b, 2, "flushing chain KUBE-SERVICES of table ip kube-proxy");
        assert_described(b, 3, "nf_tables transaction");
        /* Once is all: the end is already written. */
        assert_int_equal(nft_batch_finish(b, 1, &(uint32_t) { 0 }), -EINVAL);
}

static void test_delete_chain(void **state) {
        CLEANUP(nft_batch_freep) NftBatch *b = NULL;

        assert_int_equal(nft_batch_new(NFPROTO_IPV4, 6, &b), 0);
        assert_int_equal(nft_batch_del_chain(b, "kube-proxy", "KUBE-SERVICES"), 0);
        finish_and_check(b, golden_delete_chain, sizeof golden_delete_chain, 2);
        assert_described(b, 2, "deleting chain KUBE-SERVICES of table ip kube-proxy");
}

static void test_delete_table(void **state) {
        CLEANUP(nft_batch_freep) NftBatch *b = NULL;

        assert_int_equal(nft_batch_new(NFPROTO_IPV4, 7, &b), 0);
        assert_int_equal(nft_batch_del_table(b, "kube-proxy"), 0);
        finish_and_check(b, golden_delete_table, sizeof golden_delete_table, 2);
        assert_described(b, 2, "deleting table ip kube-proxy");
}

/* Only the sequence numbers follow first_seq: every other byte stays. */
static void test_numbering(void **state) {
        CLEANUP(nft_batch_freep) NftBatch *b = NULL;
        cleanup_free struct iovec *iov = NULL;
        size_t n_iov, len, off = 0;
        uint32_t last = 0, seq = 1000;

        assert_int_equal(nft_batch_new(NFPROTO_IPV4, 7, &b), 0);
        assert_int_equal(nft_batch_del_table(b, "kube-proxy"), 0);
        assert_int_equal(nft_batch_finish(b, 1000, &last), 0);
        assert_int_equal(last, 1001);
        assert_int_equal(nft_batch_iovec(b, &iov, &n_iov, &len), 0);
        assert_int_equal(n_iov, 1);
        assert_int_equal(len, sizeof golden_delete_table);
        for (const uint8_t *p = iov[0].iov_base; off < len;) {
                struct nlmsghdr got, want;

                memcpy(&got, p + off, sizeof got);
                memcpy(&want, golden_delete_table + off, sizeof want);
                assert_int_equal(got.nlmsg_seq, seq++);
                want.nlmsg_seq = got.nlmsg_seq;
                assert_memory_equal(&got, &want, sizeof want);
                assert_memory_equal(p + off + sizeof got, golden_delete_table + off + sizeof got,
                                    got.nlmsg_len - sizeof got);
                off += MNL_ALIGN(got.nlmsg_len);
        }
        assert_int_equal(seq, 1003);
        assert_described(b, 1001, "deleting table ip kube-proxy");
}

/* The snapshots the fill tests start from, as the kernel's dump gave them. */
static NftChainInfo flush_chains[] = {
        { .name = (char *) "input", .base = true, .has_policy = true, .policy = NF_DROP },
        { .name = (char *) "forward", .base = true, .has_policy = true, .policy = NF_ACCEPT },
        { .name = (char *) "KUBE-FW" },
};

static NftTableInfo flush_tables[] = {
        { .name = (char *) "filter", .has_rules = true, .chains = flush_chains, .n_chains = ELEMENTSOF(flush_chains) },
};

static const NftRuleset flush_snapshot = {
        .family = NFPROTO_INET,
        .genid = 14,
        .tables = flush_tables,
        .n_tables = ELEMENTSOF(flush_tables),
};

static char *owned_comment[] = { (char *) "kubernetes service portals" };

static NftChainInfo owned_chains[] = {
        { .name = (char *) "INPUT", .base = true, .has_policy = true, .policy = NF_ACCEPT, .n_rules = 4 },
        { .name = (char *) "KUBE-SERVICES", .n_rules = 1 },
        { .name = (char *) "MINE", .n_rules = 1 },
};

static NftRuleInfo owned_rules[] = {
        { .handle = 4, .chain = 0 },
        { .handle = 5, .chain = 0, .jump = (char *) "KUBE-SERVICES" },
        { .handle = 6, .chain = 0, .comments = owned_comment, .n_comments = 1 },
        { .handle = 7, .chain = 0, .jump = (char *) "MINE" },
        { .handle = 8, .chain = 1 },
        { .handle = 9, .chain = 2 },
};

static NftTableInfo owned_tables[] = {
        { .name = (char *) "filter", .has_rules = true, .chains = owned_chains, .n_chains = ELEMENTSOF(owned_chains),
          .rules = owned_rules, .n_rules = ELEMENTSOF(owned_rules) },
};

static const NftRuleset owned_snapshot = {
        .family = NFPROTO_IPV4,
        .genid = 26,
        .rules_dumped = true,
        .tables = owned_tables,
        .n_tables = ELEMENTSOF(owned_tables),
};

/* Flush mode: the policy to accept, the table's rules in one message, then the user chain. */
static void test_fill_flush(void **state) {
        CLEANUP(nft_batch_freep) NftBatch *b = NULL;
        NftRequest req = { .table = "filter", .op = NFT_TABLE_CLEAN };

        assert_int_equal(nft_batch_new(NFPROTO_INET, flush_snapshot.genid, &b), 0);
        assert_int_equal(nft_batch_fill(b, &flush_snapshot, &req, 1, NULL, FW_MODE_FLUSH), 0);
        assert_true(req.changed);
        assert_int_equal(req.done.chains, 1);
        assert_int_equal(req.done.owned_chains, 1);
        assert_int_equal(req.done.policies, 1);
        assert_int_equal(req.done.rules, 1);
        assert_true(req.done.rules_uncounted);
        assert_int_equal(nft_batch_n_changes(b), 3);
        finish_and_check(b, golden_fill_flush, sizeof golden_fill_flush, 4);
        assert_described(b, 2, "setting policy accept on chain input of table inet filter");
        assert_described(b, 3, "flushing table inet filter");
        assert_described(b, 4, "deleting chain KUBE-FW of table inet filter");
}

/* Owned mode: the owned rules of kept chains by handle, then the owned chain emptied and deleted. */
static void test_fill_owned(void **state) {
        CLEANUP(fwclass_freep) FwClass *cls = fwclass_new();
        CLEANUP(nft_batch_freep) NftBatch *b = NULL;
        NftRequest req = { .table = "filter", .op = NFT_TABLE_CLEAN };

        assert_non_null(cls);
        assert_int_equal(nft_batch_new(NFPROTO_IPV4, owned_snapshot.genid, &b), 0);
        assert_int_equal(nft_batch_fill(b, &owned_snapshot, &req, 1, cls, FW_MODE_OWNED), 0);
        assert_true(req.changed);
        assert_int_equal(req.done.chains, 2);
        assert_int_equal(req.done.owned_chains, 1);
        assert_int_equal(req.done.rules, 6);
        assert_int_equal(req.done.owned_rules, 3);
        assert_int_equal(req.done.kept_rules, 3);
        finish_and_check(b, golden_fill_owned, sizeof golden_fill_owned, 5);
        assert_described(b, 2, "deleting rule 5 in chain INPUT of table ip filter");
        assert_described(b, 3, "deleting rule 6 in chain INPUT of table ip filter");
        assert_described(b, 4, "flushing chain KUBE-SERVICES of table ip filter");
        assert_described(b, 5, "deleting chain KUBE-SERVICES of table ip filter");
}

/* A table that is deleted whole is not also cleaned; an absent table asks for nothing. */
static void test_fill_delete_wins(void **state) {
        CLEANUP(nft_batch_freep) NftBatch *b = NULL;
        NftRequest reqs[] = {
                { .table = "filter", .op = NFT_TABLE_CLEAN },
                { .table = "filter", .op = NFT_TABLE_DELETE },
                { .table = "absent", .op = NFT_TABLE_DELETE },
        };

        assert_int_equal(nft_batch_new(NFPROTO_INET, flush_snapshot.genid, &b), 0);
        assert_int_equal(nft_batch_fill(b, &flush_snapshot, reqs, ELEMENTSOF(reqs), NULL, FW_MODE_FLUSH), 0);
        assert_int_equal(nft_batch_n_changes(b), 1);
        assert_false(reqs[0].changed);
        assert_true(reqs[1].changed);
        assert_int_equal(reqs[1].done.owned_chains, 3);
        assert_false(reqs[2].changed);
        assert_int_equal(nft_batch_finish(b, 1, &(uint32_t) { 0 }), 0);
        assert_described(b, 2, "deleting table inet filter");
}

/* Nothing to remove is no change at all, and a batch without changes is not finished. Telling
 * owned rules apart needs them dumped. */
static void test_fill_nothing(void **state) {
        CLEANUP(fwclass_freep) FwClass *cls = fwclass_new();
        CLEANUP(nft_batch_freep) NftBatch *b = NULL;
        NftChainInfo clean_chains[] = { { .name = (char *) "input", .base = true, .has_policy = true, .policy = NF_ACCEPT } };
        NftTableInfo clean_tables[] = { { .name = (char *) "filter", .chains = clean_chains, .n_chains = 1 } };
        NftRuleset clean = { .family = NFPROTO_INET, .tables = clean_tables, .n_tables = 1 };
        NftRequest req = { .table = "filter", .op = NFT_TABLE_CLEAN };

        assert_int_equal(nft_batch_new(NFPROTO_INET, 1, &b), 0);
        assert_int_equal(nft_batch_fill(b, &clean, &req, 1, cls, FW_MODE_FLUSH), 0);
        assert_false(req.changed);
        assert_int_equal(nft_batch_n_changes(b), 0);
        assert_int_equal(nft_batch_finish(b, 1, &(uint32_t) { 0 }), -EINVAL);
        assert_int_equal(nft_batch_fill(b, &flush_snapshot, &req, 1, cls, FW_MODE_OWNED), -ENODATA);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_flush_chain, skip_big_endian),
                cmocka_unit_test_setup(test_delete_chain, skip_big_endian),
                cmocka_unit_test_setup(test_delete_table, skip_big_endian),
                cmocka_unit_test_setup(test_numbering, skip_big_endian),
                cmocka_unit_test_setup(test_fill_flush, skip_big_endian),
                cmocka_unit_test_setup(test_fill_owned, skip_big_endian),
                cmocka_unit_test(test_fill_delete_wins),
                cmocka_unit_test(test_fill_nothing),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
