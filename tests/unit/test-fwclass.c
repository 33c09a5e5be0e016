/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owned-rule classification: prefixes and comment markers, then real rule objects as the kernel
 * hands them out: libnftnl rules (immediate jump/goto, userdata comment, xt comment match), also
 * through a netlink round trip, and legacy ipt_entry/ip6t_entry built in memory. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <libiptc/libip6tc.h>
#include <libiptc/libiptc.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/xt_comment.h>
#include <sys/socket.h>

#include "macro.h"
#include "netreset/fwclass.h"
#include "netreset/nft.h"
#include "netreset/xtables.h"

static int setup_cls(void **state) {
        *state = fwclass_new();
        return *state ? 0 : -1;
}

static int teardown_cls(void **state) {
        fwclass_free(*state);
        return 0;
}

/* ---- prefixes and markers ---- */

static void test_builtin_prefixes(void **state) {
        const FwClass *c = *state;

        assert_true(fwclass_chain_owned(c, "KUBE-SERVICES"));
        assert_true(fwclass_chain_owned(c, "KUBE-SVC-ABCDEF0123456789"));
        assert_true(fwclass_chain_owned(c, "KUBE-ROUTER-INPUT"));
        assert_true(fwclass_chain_owned(c, "CNI-HOSTPORT-DNAT"));
        assert_true(fwclass_chain_owned(c, "cali-INPUT"));
        assert_true(fwclass_chain_owned(c, "CILIUM_FORWARD"));
        assert_true(fwclass_chain_owned(c, "FLANNEL-POSTRTG"));

        /* Prefixes are exact, case and separator included. */
        assert_false(fwclass_chain_owned(c, "MYFW"));
        assert_false(fwclass_chain_owned(c, "KUBE"));
        assert_false(fwclass_chain_owned(c, "kube-services"));
        assert_false(fwclass_chain_owned(c, "CALI-INPUT"));
        assert_false(fwclass_chain_owned(c, "calico"));
        assert_false(fwclass_chain_owned(c, "CILIUM-X"));
        assert_false(fwclass_chain_owned(c, "DOCKER-USER"));
        assert_false(fwclass_chain_owned(c, "INPUT"));
        assert_false(fwclass_chain_owned(c, ""));
        assert_false(fwclass_chain_owned(c, NULL));
}

static void test_added_prefix(void **state) {
        CLEANUP(fwclass_freep) FwClass *c = fwclass_new(), *d = NULL;

        assert_non_null(c);
        assert_false(fwclass_chain_owned(c, "WEAVE-NPC"));
        assert_int_equal(fwclass_add_prefix(c, "WEAVE-"), 0);
        assert_int_equal(fwclass_add_prefix(c, "WEAVE-"), 0);
        assert_int_equal(fwclass_add_prefix(c, ""), -EINVAL);
        assert_int_equal(fwclass_add_prefix(c, NULL), -EINVAL);
        assert_true(fwclass_chain_owned(c, "WEAVE-NPC"));
        assert_false(fwclass_chain_owned(c, "WEAVE"));

        d = fwclass_dup(c);
        assert_non_null(d);
        assert_true(fwclass_chain_owned(d, "WEAVE-NPC"));
        assert_true(fwclass_chain_owned(d, "KUBE-X"));
}

static void test_comment_markers(void **state) {
        const FwClass *c = *state;

        assert_true(fwclass_comment_owned(c, "cali:Cz_u1IQiXIMmKD4c"));
        assert_true(fwclass_comment_owned(c, "flanneld masq"));
        assert_true(fwclass_comment_owned(c, "flanneld forward"));
        assert_true(fwclass_comment_owned(c, "Flannel masquerade"));
        assert_true(fwclass_comment_owned(c, "cilium-feeder: CILIUM_INPUT"));
        assert_true(fwclass_comment_owned(c, "cilium: any->cluster on cilium_host forward accept"));
        assert_true(fwclass_comment_owned(c, "kube-router netpol - 4IA2OSFRMVNDXBVV"));
        assert_true(fwclass_comment_owned(c, "kubernetes service portals"));
        assert_true(fwclass_comment_owned(c, "kubernetes externally-visible service portals"));
        assert_true(fwclass_comment_owned(c, "kubernetes forwarding rules"));
        assert_true(fwclass_comment_owned(c, "kubernetes postrouting rules"));
        assert_true(fwclass_comment_owned(c, "kubernetes health check service ports"));
        assert_true(fwclass_comment_owned(c, "kubernetes service nodeports; NOTE: this must be the last rule in this chain"));
        assert_true(fwclass_comment_owned(c, "kube-proxy firewall rules"));
        assert_true(fwclass_comment_owned(c, "NodeLocal DNS Cache: skip conntrack"));
        assert_true(fwclass_comment_owned(c, "NodeLocal DNS Cache: allow DNS traffic"));
        assert_false(fwclass_comment_owned(c, "NodeLocal DNS"));

        /* A host rule that merely talks about Kubernetes stays. */
        assert_false(fwclass_comment_owned(c, "kubernetes api server"));
        assert_false(fwclass_comment_owned(c, "allow kubernetes"));
        assert_false(fwclass_comment_owned(c, "ssh"));
        assert_false(fwclass_comment_owned(c, "CALI:upper"));
        assert_false(fwclass_comment_owned(c, "my calico notes"));
        assert_false(fwclass_comment_owned(c, ""));
        assert_false(fwclass_comment_owned(c, NULL));
}

static void test_rule_owned(void **state) {
        const FwClass *c = *state;
        const char *host[] = { "ssh", NULL };
        const char *mixed[] = { NULL, "ssh", "cali:x" };

        assert_true(fwclass_rule_owned(c, "KUBE-SERVICES", NULL, 0));
        assert_false(fwclass_rule_owned(c, "MYFW", NULL, 0));
        assert_false(fwclass_rule_owned(c, NULL, NULL, 0));
        assert_false(fwclass_rule_owned(c, "MYFW", host, 2));
        assert_true(fwclass_rule_owned(c, "MYFW", mixed, 3));
        assert_true(fwclass_rule_owned(c, NULL, mixed, 3));
        assert_false(fwclass_rule_owned(c, NULL, mixed, 2));
}

static void test_modes(void **state) {
        assert_int_equal(fw_mode_from_string("owned"), FW_MODE_OWNED);
        assert_int_equal(fw_mode_from_string("flush"), FW_MODE_FLUSH);
        assert_int_equal(fw_mode_from_string("keep"), _FW_MODE_INVALID);
        assert_int_equal(fw_mode_from_string(NULL), _FW_MODE_INVALID);
        assert_string_equal(fw_mode_to_string(FW_MODE_FLUSH), "flush");
        assert_null(fw_mode_to_string(_FW_MODE_MAX));
}

/* ---- nf_tables rule objects ---- */

static void add_verdict(struct nftnl_rule *r, int32_t verdict, const char *chain) {
        struct nftnl_expr *e = nftnl_expr_alloc("immediate");

        assert_non_null(e);
        nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
        nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t) verdict);
        if (chain)
                nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
        nftnl_rule_add_expr(r, e);
}

/* iptables-nft 1.8.9: "-m comment" is an xt match carrying struct xt_comment_info. */
static void add_xt_match(struct nftnl_rule *r, const char *name, const char *comment) {
        struct nftnl_expr *e = nftnl_expr_alloc("match");
        struct xt_comment_info *info = calloc(1, sizeof(*info));

        assert_non_null(e);
        assert_non_null(info);
        snprintf(info->comment, sizeof(info->comment), "%s", comment);
        nftnl_expr_set_str(e, NFTNL_EXPR_MT_NAME, name);
        nftnl_expr_set_u32(e, NFTNL_EXPR_MT_REV, 0);
        /* The expression takes the buffer. */
        nftnl_expr_set_data(e, NFTNL_EXPR_MT_INFO, info, sizeof(*info));
        nftnl_rule_add_expr(r, e);
}

/* nft and newer iptables-nft: the comment is a userdata TLV. */
static void set_userdata_comment(struct nftnl_rule *r, const char *comment) {
        struct nftnl_udata_buf *u = nftnl_udata_buf_alloc(256);

        assert_non_null(u);
        assert_true(nftnl_udata_put_strz(u, NFTNL_UDATA_RULE_COMMENT, comment));
        nftnl_rule_set_data(r, NFTNL_RULE_USERDATA, nftnl_udata_buf_data(u), nftnl_udata_buf_len(u));
        nftnl_udata_buf_free(u);
}

static struct nftnl_rule *rule_new(void) {
        struct nftnl_rule *r = nftnl_rule_alloc();

        assert_non_null(r);
        nftnl_rule_set_str(r, NFTNL_RULE_TABLE, "filter");
        nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, "INPUT");
        nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_IPV4);
        return r;
}

/* Through the wire format and back, as a dump delivers it. */
static struct nftnl_rule *round_trip(struct nftnl_rule *r) {
        char buf[MNL_SOCKET_BUFFER_SIZE];
        struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_NEWRULE, NFPROTO_IPV4, 0, 1);
        struct nftnl_rule *out = nftnl_rule_alloc();

        assert_non_null(out);
        nftnl_rule_nlmsg_build_payload(nlh, r);
        assert_int_equal(nftnl_rule_nlmsg_parse(nlh, out), 0);
        nftnl_rule_free(r);
        return out;
}

static bool nft_owned(struct nftnl_rule *r, const FwClass *c) {
        bool direct = nft_rule_owned(r, c);
        struct nftnl_rule *back = round_trip(r);
        bool parsed = nft_rule_owned(back, c);

        nftnl_rule_free(back);
        assert_true(direct == parsed);
        return parsed;
}

static void test_nft_jump_goto(void **state) {
        const FwClass *c = *state;
        struct nftnl_rule *r;

        r = rule_new();
        add_verdict(r, NFT_JUMP, "KUBE-SERVICES");
        assert_true(nft_owned(r, c));

        r = rule_new();
        add_verdict(r, NFT_GOTO, "cali-fw-cali1234");
        assert_true(nft_owned(r, c));

        r = rule_new();
        add_verdict(r, NFT_JUMP, "MYFW");
        assert_false(nft_owned(r, c));

        r = rule_new();
        add_verdict(r, NF_ACCEPT, NULL);
        assert_false(nft_owned(r, c));

        r = rule_new();
        add_verdict(r, NFT_RETURN, NULL);
        assert_false(nft_owned(r, c));
}

static void test_nft_comments(void **state) {
        const FwClass *c = *state;
        struct nftnl_rule *r;

        r = rule_new();
        add_xt_match(r, "comment", "cali:PajejrV4aFdkZojI");
        add_verdict(r, NF_ACCEPT, NULL);
        assert_true(nft_owned(r, c));

        r = rule_new();
        add_xt_match(r, "comment", "flanneld masq");
        add_verdict(r, NF_ACCEPT, NULL);
        assert_true(nft_owned(r, c));

        r = rule_new();
        add_xt_match(r, "comment", "host dns");
        add_verdict(r, NF_ACCEPT, NULL);
        assert_false(nft_owned(r, c));

        /* Another match's payload is never read as a comment. */
        r = rule_new();
        add_xt_match(r, "set", "cali:not-a-comment");
        add_verdict(r, NF_ACCEPT, NULL);
        assert_false(nft_owned(r, c));

        r = rule_new();
        set_userdata_comment(r, "cali:tVnHkvAo15HuiPy0");
        add_verdict(r, NF_ACCEPT, NULL);
        assert_true(nft_owned(r, c));

        r = rule_new();
        set_userdata_comment(r, "ssh from the office");
        add_verdict(r, NF_ACCEPT, NULL);
        assert_false(nft_owned(r, c));

        /* A host comment does not protect a jump into an owned chain. */
        r = rule_new();
        set_userdata_comment(r, "ssh from the office");
        add_verdict(r, NFT_JUMP, "KUBE-FIREWALL");
        assert_true(nft_owned(r, c));
}

static void test_nft_malformed_userdata(void **state) {
        const FwClass *c = *state;
        /* type 0 (comment), length 6, no terminating NUL: not read. */
        const uint8_t tlv[] = { 0, 6, 'c', 'a', 'l', 'i', ':', 'x' };
        struct nftnl_rule *r = rule_new();

        nftnl_rule_set_data(r, NFTNL_RULE_USERDATA, tlv, sizeof(tlv));
        assert_false(nft_rule_owned(r, c));
        nftnl_rule_free(r);
}

/* ---- legacy entries ---- */

/* An entry as the kernel lays it out: header, matches, then a standard target. */
typedef struct EntryBuf {
        union {
                struct ipt_entry e4;
                struct ip6t_entry e6;
                uint8_t bytes[1024];
        };
        size_t size;
} EntryBuf;

static size_t header_size(int family) {
        return family == AF_INET ? sizeof(struct ipt_entry) : sizeof(struct ip6t_entry);
}

static void entry_init(EntryBuf *b, int family) {
        memset(b, 0, sizeof(*b));
        b->size = header_size(family);
}

static void entry_add_match(EntryBuf *b, const char *name, const char *comment) {
        struct xt_entry_match *m = (void *) (b->bytes + b->size);
        size_t size = XT_ALIGN(sizeof(*m) + sizeof(struct xt_comment_info));

        m->u.user.match_size = (uint16_t) size;
        snprintf(m->u.user.name, sizeof(m->u.user.name), "%s", name);
        snprintf(((struct xt_comment_info *) m->data)->comment, XT_MAX_COMMENT_LEN, "%s", comment);
        b->size += size;
}

static void entry_finish(EntryBuf *b, int family, bool go) {
        size_t target_size = XT_ALIGN(sizeof(struct xt_standard_target));
        struct xt_standard_target *t = (void *) (b->bytes + b->size);

        t->target.u.target_size = (uint16_t) target_size;
        if (family == AF_INET) {
                b->e4.target_offset = (uint16_t) b->size;
                b->e4.next_offset = (uint16_t) (b->size + target_size);
                b->e4.ip.flags = go ? IPT_F_GOTO : 0;
        } else {
                b->e6.target_offset = (uint16_t) b->size;
                b->e6.next_offset = (uint16_t) (b->size + target_size);
                b->e6.ipv6.flags = go ? IP6T_F_GOTO : 0;
        }
        b->size += target_size;
}

static void test_xt_entries(void **state) {
        const FwClass *c = *state;
        static const int families[] = { AF_INET, AF_INET6 };

        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                int f = families[i];
                EntryBuf b;

                /* -j KUBE-SERVICES and -g KUBE-SERVICES: libiptc names the chain either way. */
                entry_init(&b, f);
                entry_finish(&b, f, false);
                assert_true(xt_entry_owned(f, b.bytes, b.size, "KUBE-SERVICES", c));
                entry_init(&b, f);
                entry_finish(&b, f, true);
                assert_true(xt_entry_owned(f, b.bytes, b.size, "KUBE-SERVICES", c));
                assert_false(xt_entry_owned(f, b.bytes, b.size, "MYFW", c));
                assert_false(xt_entry_owned(f, b.bytes, b.size, NULL, c));

                /* -m conntrack ... -m comment --comment "cali:..." -j ACCEPT */
                entry_init(&b, f);
                entry_add_match(&b, "conntrack", "cali:not-a-comment");
                entry_add_match(&b, "comment", "cali:6gwbT8clXdHdC1b1");
                entry_finish(&b, f, false);
                assert_true(xt_entry_owned(f, b.bytes, b.size, NULL, c));

                entry_init(&b, f);
                entry_add_match(&b, "comment", "host dns");
                entry_finish(&b, f, false);
                assert_false(xt_entry_owned(f, b.bytes, b.size, NULL, c));

                entry_init(&b, f);
                entry_add_match(&b, "conntrack", "flanneld masq");
                entry_finish(&b, f, false);
                assert_false(xt_entry_owned(f, b.bytes, b.size, NULL, c));
        }
}

static void test_xt_malformed(void **state) {
        const FwClass *c = *state;
        EntryBuf b;

        /* A target offset beyond the entry, a zero-sized match, a short buffer: nothing is read. */
        entry_init(&b, AF_INET);
        entry_add_match(&b, "comment", "cali:x");
        entry_finish(&b, AF_INET, false);
        b.e4.target_offset = (uint16_t) (b.size + 64);
        assert_false(xt_entry_owned(AF_INET, b.bytes, b.size, NULL, c));

        entry_init(&b, AF_INET);
        entry_add_match(&b, "comment", "cali:x");
        ((struct xt_entry_match *) (b.bytes + sizeof(struct ipt_entry)))->u.match_size = 0;
        entry_finish(&b, AF_INET, false);
        assert_false(xt_entry_owned(AF_INET, b.bytes, b.size, NULL, c));

        assert_false(xt_entry_owned(AF_INET, b.bytes, 16, NULL, c));
        assert_false(xt_entry_owned(AF_UNIX, b.bytes, b.size, NULL, c));
}

static void test_names(void **state) {
        assert_int_equal(nft_family_from_string("ip"), NFPROTO_IPV4);
        assert_int_equal(nft_family_from_string("ip6"), NFPROTO_IPV6);
        assert_int_equal(nft_family_from_string("inet"), NFPROTO_INET);
        assert_int_equal(nft_family_from_string("ipv4"), -EINVAL);
        assert_string_equal(nft_family_to_string(NFPROTO_BRIDGE), "bridge");
        assert_true(nft_table_is_xtables("filter"));
        assert_true(nft_table_is_xtables("security"));
        assert_false(nft_table_is_xtables("kube-proxy"));
        assert_false(nft_table_is_xtables(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_builtin_prefixes, setup_cls, teardown_cls),
                cmocka_unit_test(test_added_prefix),
                cmocka_unit_test_setup_teardown(test_comment_markers, setup_cls, teardown_cls),
                cmocka_unit_test_setup_teardown(test_rule_owned, setup_cls, teardown_cls),
                cmocka_unit_test(test_modes),
                cmocka_unit_test_setup_teardown(test_nft_jump_goto, setup_cls, teardown_cls),
                cmocka_unit_test_setup_teardown(test_nft_comments, setup_cls, teardown_cls),
                cmocka_unit_test_setup_teardown(test_nft_malformed_userdata, setup_cls, teardown_cls),
                cmocka_unit_test_setup_teardown(test_xt_entries, setup_cls, teardown_cls),
                cmocka_unit_test_setup_teardown(test_xt_malformed, setup_cls, teardown_cls),
                cmocka_unit_test(test_names),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
