/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nf_tables, read only: one family's tables, chains and rules in a consistent snapshot, and what
 * cleaning them would remove. */

#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/gen.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <endian.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <sys/socket.h>

#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/nft-ruleset.h"
#include "netreset/nft.h"
#include "netreset/nl.h"
#include "string-util.h"
#include "alloc-util.h"

#define RULE_MAX_COMMENTS 4
/* How often a dump is retried when the ruleset changed underneath. */
#define GENERATION_RETRIES 5
/* A kernel that never answers must not hang a reset. */
#define RECV_TIMEOUT_SEC 60

static const struct {
        const char *name;
        int family;
} families[] = {
        { "ip", NFPROTO_IPV4 }, { "ip6", NFPROTO_IPV6 },      { "inet", NFPROTO_INET },
        { "arp", NFPROTO_ARP }, { "bridge", NFPROTO_BRIDGE }, { "netdev", NFPROTO_NETDEV },
};

static const char *const xtables_tables[] = { "filter", "nat", "mangle", "raw", "security" };

int nft_family_from_string(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(families); i++)
                if (streq(s, families[i].name))
                        return families[i].family;
        return -EINVAL;
}

const char *nft_family_to_string(int family) {
        for (size_t i = 0; i < ELEMENTSOF(families); i++)
                if (families[i].family == family)
                        return families[i].name;
        return NULL;
}

bool nft_table_is_xtables(const char *name) {
        for (size_t i = 0; name && i < ELEMENTSOF(xtables_tables); i++)
                if (streq(name, xtables_tables[i]))
                        return true;
        return false;
}

static void table_info_done(NftTableInfo *t) {
        for (size_t i = 0; i < t->n_chains; i++)
                free(t->chains[i].name);
        for (size_t i = 0; i < t->n_rules; i++) {
                free(t->rules[i].jump);
                for (size_t j = 0; j < t->rules[i].n_comments; j++)
                        free(t->rules[i].comments[j]);
                free(t->rules[i].comments);
        }
        free(t->chains);
        free(t->rules);
        free(t->name);
}

NftRuleset *nft_ruleset_free(NftRuleset *rs) {
        if (!rs)
                return NULL;
        for (size_t i = 0; i < rs->n_tables; i++)
                table_info_done(&rs->tables[i]);
        free(rs->tables);
        return mfree(rs);
}

const NftTableInfo *nft_ruleset_find_table(const NftRuleset *rs, const char *name) {
        for (size_t i = 0; name && i < rs->n_tables; i++)
                if (streq(rs->tables[i].name, name))
                        return &rs->tables[i];
        return NULL;
}

size_t nft_ruleset_n_tables(const NftRuleset *rs) {
        return rs->n_tables;
}

const char *nft_ruleset_table_name(const NftRuleset *rs, size_t i) {
        return i < rs->n_tables ? rs->tables[i].name : NULL;
}

bool nft_ruleset_has_table(const NftRuleset *rs, const char *table) {
        return nft_ruleset_find_table(rs, table) != NULL;
}

/* ---- reading one rule: its jump target and its comments ---- */

typedef struct RuleRefs {
        const char *jump;
        const char *comments[RULE_MAX_COMMENTS];
        size_t n_comments;
} RuleRefs;

static void refs_add_comment(RuleRefs *refs, const char *s) {
        if (refs->n_comments < RULE_MAX_COMMENTS)
                refs->comments[refs->n_comments++] = s;
}

static int udata_comment_cb(const struct nftnl_udata *attr, void *data) {
        const char *s = nftnl_udata_get(attr);
        uint8_t len = nftnl_udata_len(attr);

        /* A comment nft wrote is NUL-terminated inside its TLV; anything else is not ours to read. */
        if (nftnl_udata_type(attr) == NFTNL_UDATA_RULE_COMMENT && len > 0 && s[len - 1] == '\0')
                refs_add_comment(data, s);
        return MNL_CB_OK;
}

static void expr_refs(const struct nftnl_expr *e, RuleRefs *refs) {
        const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
        const void *info;
        uint32_t len = 0;

        if (streq_ptr(name, "immediate")) {
                int32_t v;

                if (!nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT) || !nftnl_expr_is_set(e, NFTNL_EXPR_IMM_CHAIN))
                        return;
                v = (int32_t) nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT);
                if (v == NFT_JUMP || v == NFT_GOTO)
                        refs->jump = nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN);
        } else if (streq_ptr(name, "match")) {
                /* iptables-nft keeps "-m comment" as an xt match carrying struct xt_comment_info. */
                if (!streq_ptr(nftnl_expr_get_str(e, NFTNL_EXPR_MT_NAME), "comment"))
                        return;
                info = nftnl_expr_get_data(e, NFTNL_EXPR_MT_INFO, &len);
                if (info && len > 0 && memchr(info, '\0', len))
                        refs_add_comment(refs, info);
        }
}

static void rule_refs(const struct nftnl_rule *r, RuleRefs *ret) {
        struct nftnl_expr_iter *it;
        struct nftnl_expr *e;
        const void *udata;
        uint32_t len = 0;

        *ret = (RuleRefs) {};
        it = nftnl_expr_iter_create(r);
        if (it) {
                while ((e = nftnl_expr_iter_next(it)))
                        expr_refs(e, ret);
                nftnl_expr_iter_destroy(it);
        }
        udata = nftnl_rule_get_data(r, NFTNL_RULE_USERDATA, &len);
        if (udata && len > 0)
                (void) nftnl_udata_parse(udata, len, udata_comment_cb, ret);
}

bool nft_rule_owned(const struct nftnl_rule *r, const FwClass *cls) {
        RuleRefs refs;

        rule_refs(r, &refs);
        return fwclass_rule_owned(cls, refs.jump, refs.comments, refs.n_comments);
}

/* ---- the dump ---- */

/* A netfilter netlink socket. The receive timeout: a kernel that never answers must not hang a
 * reset. */
int nft_socket_open(NlSocket **ret) {
        CLEANUP(nl_freep) NlSocket *s = NULL;
        int r;

        r = nl_open(NETLINK_NETFILTER, &s);
        if (r < 0)
                return r;
        (void) nl_set_receive_timeout(s, RECV_TIMEOUT_SEC);
        *ret = TAKE_PTR(s);
        return 0;
}

typedef struct DumpState {
        NftRuleset *rs;
        const FwClass *bare; /* rules of the chains it owns are recorded without their expressions */
        size_t last_table;   /* rules arrive grouped by table and chain: remember the last */
        size_t last_chain;
        uint32_t genid;
} DumpState;

/* Send a request (a dump, or one answered by a message and an ack) and feed every reply to cb. */
static int nft_request(NlSocket *s, uint16_t type, int family, uint16_t flags, nl_message_cb cb, DumpState *st) {
        uint8_t buf[MNL_NLMSG_HDRLEN + sizeof(struct nfgenmsg)] = {};

        return nl_call(s, nftnl_nlmsg_build_hdr((char *) buf, type, (uint16_t) family, flags, 0), cb, st, NULL);
}

static int gen_cb(const struct nlmsghdr *nlh, void *data) {
        DumpState *st = data;
        struct nftnl_gen *g;

        g = nftnl_gen_alloc();
        if (!g)
                return -ENOMEM;
        if (nftnl_gen_nlmsg_parse(nlh, g) < 0) {
                nftnl_gen_free(g);
                return -EBADMSG;
        }
        st->genid = nftnl_gen_get_u32(g, NFTNL_GEN_ID);
        nftnl_gen_free(g);
        return 0;
}

static int table_cb(const struct nlmsghdr *nlh, void *data) {
        DumpState *st = data;
        NftRuleset *rs = st->rs;
        struct nftnl_table *t;
        const char *name;
        char *copy;

        t = nftnl_table_alloc();
        if (!t)
                return -ENOMEM;
        if (nftnl_table_nlmsg_parse(nlh, t) < 0 || !(name = nftnl_table_get_str(t, NFTNL_TABLE_NAME))) {
                nftnl_table_free(t);
                return -EBADMSG;
        }
        copy = strdup(name);
        nftnl_table_free(t);
        if (!copy || GREEDY_REALLOC(rs->tables, rs->allocated_tables, rs->n_tables + 1) < 0) {
                free(copy);
                return -ENOMEM;
        }
        rs->tables[rs->n_tables++] = (NftTableInfo) { .name = copy };
        return 0;
}

static int table_index(DumpState *st, const char *name, size_t *ret) {
        if (st->last_table < st->rs->n_tables && streq(st->rs->tables[st->last_table].name, name)) {
                *ret = st->last_table;
                return 0;
        }
        for (size_t i = 0; i < st->rs->n_tables; i++)
                if (streq(st->rs->tables[i].name, name)) {
                        *ret = st->last_table = i;
                        return 0;
                }
        return -ENOENT;
}

static int chain_index(DumpState *st, NftTableInfo *t, const char *name, size_t *ret) {
        /* The kernel dumps rules chain after chain, in the order it listed the chains: the last
         * chain, else the next one, is nearly always it. */
        for (size_t i = st->last_chain; i < t->n_chains && i <= st->last_chain + 1; i++)
                if (streq(t->chains[i].name, name)) {
                        *ret = st->last_chain = i;
                        return 0;
                }
        for (size_t i = 0; i < t->n_chains; i++)
                if (streq(t->chains[i].name, name)) {
                        *ret = st->last_chain = i;
                        return 0;
                }
        return -ENOENT;
}

static int chain_add(NftTableInfo *t, const struct nftnl_chain *c) {
        NftChainInfo ci = {};

        if (GREEDY_REALLOC(t->chains, t->allocated_chains, t->n_chains + 1) < 0)
                return -ENOMEM;
        ci.name = strdup(nftnl_chain_get_str(c, NFTNL_CHAIN_NAME));
        if (!ci.name)
                return -ENOMEM;
        ci.base = nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM);
        ci.has_policy = nftnl_chain_is_set(c, NFTNL_CHAIN_POLICY);
        if (ci.has_policy)
                ci.policy = nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY);
        t->chains[t->n_chains++] = ci;
        return 0;
}

static int chain_cb(const struct nlmsghdr *nlh, void *data) {
        DumpState *st = data;
        struct nftnl_chain *c;
        size_t ti;
        int r;

        c = nftnl_chain_alloc();
        if (!c)
                return -ENOMEM;
        if (nftnl_chain_nlmsg_parse(nlh, c) < 0 || !nftnl_chain_is_set(c, NFTNL_CHAIN_NAME) ||
            !nftnl_chain_is_set(c, NFTNL_CHAIN_TABLE)) {
                nftnl_chain_free(c);
                return -EBADMSG;
        }
        /* A table created between the two dumps is not part of this snapshot. */
        r = table_index(st, nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE), &ti);
        if (r >= 0)
                r = chain_add(&st->rs->tables[ti], c);
        nftnl_chain_free(c);
        return r == -ENOMEM ? r : 0;
}

static int rule_info_fill(NftRuleInfo *ri, const struct nftnl_rule *r) {
        RuleRefs refs;

        rule_refs(r, &refs);
        if (refs.jump && !(ri->jump = strdup(refs.jump)))
                return -ENOMEM;
        if (refs.n_comments == 0)
                return 0;
        ri->comments = calloc(refs.n_comments, sizeof(char *));
        if (!ri->comments)
                return -ENOMEM;
        for (size_t i = 0; i < refs.n_comments; i++) {
                ri->comments[i] = strdup(refs.comments[i]);
                if (!ri->comments[i])
                        return -ENOMEM;
                ri->n_comments++;
        }
        return 0;
}

/* r: the rule parsed, or NULL for one of a chain that goes whole (its handle only). */
static int rule_add(DumpState *st, const char *table, const char *chain, uint64_t handle, const struct nftnl_rule *r) {
        NftTableInfo *t;
        size_t ti, ci;
        int k = 0;

        /* The generation check around the dumps catches changes; skip what cannot be placed. */
        if (table_index(st, table, &ti) < 0)
                return 0;
        t = &st->rs->tables[ti];
        if (chain_index(st, t, chain, &ci) < 0)
                return 0;
        if (GREEDY_REALLOC(t->rules, t->allocated_rules, t->n_rules + 1) < 0)
                return -ENOMEM;
        t->rules[t->n_rules] = (NftRuleInfo) { .chain = ci, .handle = handle };
        /* Counted even when half filled, so that table_info_done() frees what was copied. */
        if (r)
                k = rule_info_fill(&t->rules[t->n_rules], r);
        t->n_rules++;
        if (k < 0)
                return k;
        t->chains[ci].n_rules++;
        t->has_rules = true;
        return 0;
}

/* A rule of a chain that goes whole (st->bare owns it) goes with it whatever it holds: its table,
 * chain and handle are read, its expressions are not parsed (most of a dump's cost when kube-proxy's
 * thousands of service chains are most of the rules). 1 when so recorded. */
static int rule_bare(DumpState *st, const struct nlmsghdr *nlh) {
        const char *table = NULL, *chain = NULL;
        const struct nlattr *a;
        uint64_t handle = 0;
        bool has_handle = false;
        size_t ti, ci;

        if (!st->bare)
                return 0;
        mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
                uint16_t type = mnl_attr_get_type(a);

                if (type == NFTA_RULE_TABLE && mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
                        table = mnl_attr_get_str(a);
                else if (type == NFTA_RULE_CHAIN && mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
                        chain = mnl_attr_get_str(a);
                else if (type == NFTA_RULE_HANDLE && mnl_attr_validate(a, MNL_TYPE_U64) >= 0) {
                        memcpy(&handle, mnl_attr_get_payload(a), sizeof handle);
                        has_handle = true;
                }
        }
        if (!table || !chain || !has_handle || table_index(st, table, &ti) < 0 ||
            chain_index(st, &st->rs->tables[ti], chain, &ci) < 0 ||
            !nft_chain_removed(&st->rs->tables[ti].chains[ci], st->bare, FW_MODE_OWNED))
                return 0;
        return rule_add(st, table, chain, be64toh(handle), NULL) < 0 ? -ENOMEM : 1;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data) {
        DumpState *st = data;
        struct nftnl_rule *r;
        int k;

        k = rule_bare(st, nlh);
        if (k != 0)
                return MIN(k, 0);
        r = nftnl_rule_alloc();
        if (!r)
                return -ENOMEM;
        if (nftnl_rule_nlmsg_parse(nlh, r) < 0 || !nftnl_rule_is_set(r, NFTNL_RULE_TABLE) ||
            !nftnl_rule_is_set(r, NFTNL_RULE_CHAIN) || !nftnl_rule_is_set(r, NFTNL_RULE_HANDLE)) {
                nftnl_rule_free(r);
                return -EBADMSG;
        }
        k = rule_add(st, nftnl_rule_get_str(r, NFTNL_RULE_TABLE), nftnl_rule_get_str(r, NFTNL_RULE_CHAIN),
                     nftnl_rule_get_u64(r, NFTNL_RULE_HANDLE), r);
        nftnl_rule_free(r);
        return k < 0 ? k : 0;
}

int nft_generation_read(NlSocket *s, uint32_t *ret) {
        DumpState st = {};
        int r;

        r = nft_request(s, NFT_MSG_GETGEN, AF_UNSPEC, 0, gen_cb, &st);
        if (r < 0)
                return r;
        *ret = st.genid;
        return 0;
}

static int probe_cb(const struct nlmsghdr *nlh, void *userdata) {
        if (NFNL_MSG_TYPE(nlh->nlmsg_type) != NFT_MSG_NEWRULE)
                return 0;
        *(bool *) userdata = true;
        return 1;
}

/* Whether a table has any rule, without reading them all: start a dump of its rules on a socket of
 * its own, stop at the first rule, and drop the socket (the kernel then ends the dump). */
static int probe_rules(int family, NftTableInfo *t) {
        uint8_t buf[MNL_NLMSG_HDRLEN + sizeof(struct nfgenmsg) + MNL_ATTR_HDRLEN + NFT_NAME_MAXLEN + 8] = {};
        CLEANUP(nl_freep) NlSocket *s = NULL;
        struct nlmsghdr *nlh;
        int r;

        r = nft_socket_open(&s);
        if (r < 0)
                return r;
        nlh = nftnl_nlmsg_build_hdr((char *) buf, NFT_MSG_GETRULE, (uint16_t) family, NLM_F_DUMP, 0);
        mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, t->name);
        r = nl_call(s, nlh, probe_cb, &t->has_rules, NULL);
        /* A table deleted since it was listed has no rules; the generation check says it changed. */
        return r == -ENOENT ? 0 : r;
}

/* One attempt: generation, tables, chains, rules (or whether there are any), generation again.
 * -EAGAIN when it changed in between. */
static int dump_once(NlSocket *s, int family, unsigned flags, const FwClass *bare, NftRuleset **ret) {
        CLEANUP(nft_ruleset_freep) NftRuleset *rs = NULL;
        DumpState st = { .bare = bare };
        uint32_t after;
        int r;

        rs = calloc(1, sizeof(NftRuleset));
        if (!rs)
                return -ENOMEM;
        rs->family = family;
        rs->rules_dumped = flags & NFT_DUMP_RULES;
        st.rs = rs;
        r = nft_generation_read(s, &rs->genid);
        if (r >= 0)
                r = nft_request(s, NFT_MSG_GETTABLE, family, NLM_F_DUMP, table_cb, &st);
        if (r >= 0)
                r = nft_request(s, NFT_MSG_GETCHAIN, family, NLM_F_DUMP, chain_cb, &st);
        if (r >= 0 && rs->rules_dumped)
                r = nft_request(s, NFT_MSG_GETRULE, family, NLM_F_DUMP, rule_cb, &st);
        for (size_t i = 0; r >= 0 && !rs->rules_dumped && i < rs->n_tables; i++)
                r = probe_rules(family, &rs->tables[i]);
        if (r >= 0)
                r = nft_generation_read(s, &after);
        if (r < 0)
                return r;
        if (after != rs->genid)
                return -EAGAIN;
        *ret = TAKE_PTR(rs);
        return 0;
}

/* An interrupted dump (NLM_F_DUMP_INTR) is -EAGAIN as well: both mean "read it again". */
int nft_ruleset_dump_on(NlSocket *s, int family, unsigned flags, const FwClass *bare, NftRuleset **ret,
                        char **reterr_msg) {
        int r = -EAGAIN;

        for (unsigned i = 0; i < GENERATION_RETRIES && r == -EAGAIN; i++)
                r = dump_once(s, family, flags, bare, ret);
        if (r == -EAGAIN)
                return set_errmsg(reterr_msg, r, "the %s ruleset kept changing while it was read",
                                  strna(nft_family_to_string(family)));
        if (r < 0)
                return set_errmsg(reterr_msg, r, "cannot read the nf_tables %s ruleset: %s",
                                  strna(nft_family_to_string(family)), strerror(-r));
        return 0;
}

int nft_ruleset_dump(int family, unsigned flags, const FwClass *bare, NftRuleset **ret, char **reterr_msg) {
        CLEANUP(nl_freep) NlSocket *s = NULL;
        int r;

        r = nft_socket_open(&s);
        if (r < 0)
                return set_errmsg(reterr_msg, r, "cannot open a netfilter netlink socket: %s", strerror(-r));
        return nft_ruleset_dump_on(s, family, flags, bare, ret, reterr_msg);
}

/* ---- classification of a dumped table ---- */

bool nft_chain_removed(const NftChainInfo *c, const FwClass *cls, FwMode mode) {
        if (c->base)
                return false;
        return mode == FW_MODE_FLUSH || fwclass_chain_owned(cls, c->name);
}

bool nft_rule_removed(const NftTableInfo *t, const NftRuleInfo *r, const FwClass *cls, FwMode mode) {
        if (mode == FW_MODE_FLUSH || nft_chain_removed(&t->chains[r->chain], cls, mode))
                return true;
        return fwclass_rule_owned(cls, r->jump, (const char *const *) r->comments, r->n_comments);
}

bool nft_policy_reset(const NftChainInfo *c, FwMode mode) {
        return mode == FW_MODE_FLUSH && c->base && c->has_policy && c->policy != NF_ACCEPT;
}

void nft_table_count(const NftRuleset *rs, const NftTableInfo *t, const FwClass *cls, FwMode mode, FwCounts *ret) {
        *ret = (FwCounts) {};
        for (size_t i = 0; i < t->n_chains; i++) {
                const NftChainInfo *c = &t->chains[i];

                ret->chains += !c->base;
                ret->owned_chains += nft_chain_removed(c, cls, mode);
                ret->policies += nft_policy_reset(c, mode);
        }
        if (!rs->rules_dumped) {
                /* Flush mode without the rules: all of them go, however many there are. */
                ret->rules_uncounted = true;
                ret->rules = ret->owned_rules = t->has_rules;
                return;
        }
        for (size_t i = 0; i < t->n_rules; i++) {
                ret->rules++;
                if (nft_rule_removed(t, &t->rules[i], cls, mode))
                        ret->owned_rules++;
                else
                        ret->kept_rules++;
        }
}

int nft_ruleset_count(const NftRuleset *rs, const char *table, const FwClass *cls, FwMode mode, FwCounts *ret) {
        const NftTableInfo *t = nft_ruleset_find_table(rs, table);

        if (!t)
                return -ENOENT;
        /* Telling owned rules from the others needs them all. */
        if (mode == FW_MODE_OWNED && !rs->rules_dumped)
                return -ENODATA;
        nft_table_count(rs, t, cls, mode, ret);
        return 0;
}

int nft_ruleset_table_size(const NftRuleset *rs, const char *table, FwCounts *ret) {
        const NftTableInfo *t = nft_ruleset_find_table(rs, table);

        if (!t)
                return -ENOENT;
        *ret = (FwCounts) {
                .chains = (unsigned) t->n_chains,
                .owned_chains = (unsigned) t->n_chains,
                .rules = rs->rules_dumped ? (unsigned) t->n_rules : t->has_rules,
                .owned_rules = rs->rules_dumped ? (unsigned) t->n_rules : t->has_rules,
                .rules_uncounted = !rs->rules_dumped,
        };
        return 0;
}

bool nft_ruleset_rules_dumped(const NftRuleset *rs) {
        return rs->rules_dumped;
}

int nft_ruleset_family(const NftRuleset *rs) {
        return rs->family;
}
