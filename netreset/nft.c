/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nf_tables through libmnl + libnftnl: observe one family's ruleset, then remove owned state (or
 * everything) in one batch transaction per family. */

#include <arpa/inet.h>
#include <endian.h>
#include <libmnl/libmnl.h>
#include <libnftnl/batch.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/gen.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <limits.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/param.h>
#include <sys/socket.h>
#include <time.h>

#include "errno-util.h"
#include "macro.h"
#include "netreset/nft.h"
#include "string-util.h"

#define RECV_BUFFER_SIZE (64U * 1024U)
#define BATCH_PAGE_SIZE (128U * 1024U)
#define RULE_MAX_COMMENTS 4
/* The largest message a batch holds: header, nfgenmsg, table and chain names (NFT_NAME_MAXLEN
 * each), a handle or a policy. */
#define MSG_MAX 1024
/* How often a dump or a transaction is retried when the ruleset changed underneath. */
#define GENERATION_RETRIES 5
/* A kernel that never answers must not hang a reset. */
#define RECV_TIMEOUT_SEC 60

typedef struct NftRuleInfo {
        uint64_t handle;
        size_t chain;           /* index into the table's chains */
        char *jump;             /* chain name of a jump/goto verdict, or NULL */
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
        bool has_rules;         /* at least one rule (probed when rules are not dumped) */
        NftChainInfo *chains;
        size_t n_chains, allocated_chains;
        NftRuleInfo *rules;
        size_t n_rules, allocated_rules;
} NftTableInfo;

struct NftRuleset {
        int family;
        uint32_t genid;
        bool rules_dumped;      /* NFT_DUMP_RULES: every rule is here, not only whether there are any */
        NftTableInfo *tables;
        size_t n_tables, allocated_tables;
};

/* A netlink socket and its receive buffer, for one dump or one transaction. */
typedef struct NlConn {
        struct mnl_socket *nl;
        uint32_t portid;
        uint32_t seq;
        char *buf;
} NlConn;

static const struct {
        const char *name;
        int family;
} families[] = {
        { "ip", NFPROTO_IPV4 },    { "ip6", NFPROTO_IPV6 },     { "inet", NFPROTO_INET },
        { "arp", NFPROTO_ARP },    { "bridge", NFPROTO_BRIDGE }, { "netdev", NFPROTO_NETDEV },
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

/* Grow *p (an array of size-byte items) to hold at least need items. */
static int array_reserve(void **p, size_t *allocated, size_t need, size_t size) {
        size_t m;
        void *n;

        if (need <= *allocated)
                return 0;
        m = MAX(need, *allocated * 2);
        m = MAX(m, (size_t) 16);
        n = reallocarray(*p, m, size);
        if (!n)
                return -ENOMEM;
        *p = n;
        *allocated = m;
        return 0;
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

static NftTableInfo *find_table(const NftRuleset *rs, const char *name) {
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
        return find_table(rs, table) != NULL;
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

/* ---- netlink plumbing ---- */

static void nl_close(NlConn *c) {
        if (c->nl)
                mnl_socket_close(c->nl);
        free(c->buf);
        *c = (NlConn) {};
}

static int nl_open(NlConn *c) {
        struct timeval tv = { .tv_sec = RECV_TIMEOUT_SEC };
        int one = 1;

        *c = (NlConn) {};
        c->buf = malloc(RECV_BUFFER_SIZE);
        if (!c->buf)
                return -ENOMEM;
        c->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
        if (!c->nl)
                return negative_errno();
        if (mnl_socket_bind(c->nl, 0, MNL_SOCKET_AUTOPID) < 0)
                return negative_errno();
        c->portid = mnl_socket_get_portid(c->nl);
        c->seq = (uint32_t) time(NULL);
        /* Keep error reports small (no echo of the request) and with the kernel's text. */
        (void) mnl_socket_setsockopt(c->nl, NETLINK_CAP_ACK, &one, sizeof(one));
        (void) mnl_socket_setsockopt(c->nl, NETLINK_EXT_ACK, &one, sizeof(one));
        (void) setsockopt(mnl_socket_get_fd(c->nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        return 0;
}

static int recv_errno(void) {
        return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : negative_errno();
}

typedef struct DumpState {
        NftRuleset *rs;
        int error;
        size_t last_table;      /* rules arrive grouped by table and chain: remember the last */
        size_t last_chain;
        uint32_t genid;
} DumpState;

/* Send a request (a dump, or one answered by a message and an ack) and feed every reply to cb. */
static int nl_request(NlConn *c, uint16_t type, int family, uint16_t flags, mnl_cb_t cb, DumpState *st) {
        struct nlmsghdr *nlh;
        uint32_t seq = ++c->seq;
        ssize_t n;
        int r;

        nlh = nftnl_nlmsg_build_hdr(c->buf, type, (uint16_t) family, flags, seq);
        if (mnl_socket_sendto(c->nl, nlh, nlh->nlmsg_len) < 0)
                return negative_errno();
        for (;;) {
                n = mnl_socket_recvfrom(c->nl, c->buf, RECV_BUFFER_SIZE);
                if (n < 0)
                        return recv_errno();
                errno = 0;
                r = mnl_cb_run(c->buf, (size_t) n, seq, c->portid, cb, st);
                if (st->error < 0)
                        return st->error;
                if (r < 0)
                        return negative_errno();
                if (r == MNL_CB_STOP)
                        return 0;
        }
}

static int cb_fail(DumpState *st, int error) {
        st->error = error;
        return MNL_CB_ERROR;
}

static int gen_cb(const struct nlmsghdr *nlh, void *data) {
        DumpState *st = data;
        struct nftnl_gen *g;

        g = nftnl_gen_alloc();
        if (!g)
                return cb_fail(st, -ENOMEM);
        if (nftnl_gen_nlmsg_parse(nlh, g) < 0) {
                nftnl_gen_free(g);
                return cb_fail(st, -EBADMSG);
        }
        st->genid = nftnl_gen_get_u32(g, NFTNL_GEN_ID);
        nftnl_gen_free(g);
        return MNL_CB_OK;
}

static int table_cb(const struct nlmsghdr *nlh, void *data) {
        DumpState *st = data;
        NftRuleset *rs = st->rs;
        struct nftnl_table *t;
        const char *name;
        char *copy;

        t = nftnl_table_alloc();
        if (!t)
                return cb_fail(st, -ENOMEM);
        if (nftnl_table_nlmsg_parse(nlh, t) < 0 || !(name = nftnl_table_get_str(t, NFTNL_TABLE_NAME))) {
                nftnl_table_free(t);
                return cb_fail(st, -EBADMSG);
        }
        copy = strdup(name);
        nftnl_table_free(t);
        if (!copy || array_reserve((void **) &rs->tables, &rs->allocated_tables, rs->n_tables + 1,
                                   sizeof(NftTableInfo)) < 0) {
                free(copy);
                return cb_fail(st, -ENOMEM);
        }
        rs->tables[rs->n_tables++] = (NftTableInfo) { .name = copy };
        return MNL_CB_OK;
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
        if (st->last_chain < t->n_chains && streq(t->chains[st->last_chain].name, name)) {
                *ret = st->last_chain;
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

        if (array_reserve((void **) &t->chains, &t->allocated_chains, t->n_chains + 1, sizeof(NftChainInfo)) < 0)
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
                return cb_fail(st, -ENOMEM);
        if (nftnl_chain_nlmsg_parse(nlh, c) < 0 || !nftnl_chain_is_set(c, NFTNL_CHAIN_NAME) ||
            !nftnl_chain_is_set(c, NFTNL_CHAIN_TABLE)) {
                nftnl_chain_free(c);
                return cb_fail(st, -EBADMSG);
        }
        /* A table created between the two dumps is not part of this snapshot. */
        r = table_index(st, nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE), &ti);
        if (r >= 0)
                r = chain_add(&st->rs->tables[ti], c);
        nftnl_chain_free(c);
        return r == -ENOMEM ? cb_fail(st, r) : MNL_CB_OK;
}

static int rule_info_fill(NftRuleInfo *ri, const struct nftnl_rule *r) {
        RuleRefs refs;

        rule_refs(r, &refs);
        ri->handle = nftnl_rule_get_u64(r, NFTNL_RULE_HANDLE);
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

static int rule_add(DumpState *st, const struct nftnl_rule *r) {
        NftTableInfo *t;
        size_t ti, ci;
        int k;

        /* The generation check around the dumps catches changes; skip what cannot be placed. */
        if (table_index(st, nftnl_rule_get_str(r, NFTNL_RULE_TABLE), &ti) < 0)
                return 0;
        t = &st->rs->tables[ti];
        if (chain_index(st, t, nftnl_rule_get_str(r, NFTNL_RULE_CHAIN), &ci) < 0)
                return 0;
        if (array_reserve((void **) &t->rules, &t->allocated_rules, t->n_rules + 1, sizeof(NftRuleInfo)) < 0)
                return -ENOMEM;
        t->rules[t->n_rules] = (NftRuleInfo) { .chain = ci };
        /* Counted even when half filled, so that table_info_done() frees what was copied. */
        k = rule_info_fill(&t->rules[t->n_rules++], r);
        if (k < 0)
                return k;
        t->chains[ci].n_rules++;
        t->has_rules = true;
        return 0;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data) {
        DumpState *st = data;
        struct nftnl_rule *r;
        int k;

        r = nftnl_rule_alloc();
        if (!r)
                return cb_fail(st, -ENOMEM);
        if (nftnl_rule_nlmsg_parse(nlh, r) < 0 || !nftnl_rule_is_set(r, NFTNL_RULE_TABLE) ||
            !nftnl_rule_is_set(r, NFTNL_RULE_CHAIN) || !nftnl_rule_is_set(r, NFTNL_RULE_HANDLE)) {
                nftnl_rule_free(r);
                return cb_fail(st, -EBADMSG);
        }
        k = rule_add(st, r);
        nftnl_rule_free(r);
        return k < 0 ? cb_fail(st, k) : MNL_CB_OK;
}

static int get_genid(NlConn *c, uint32_t *ret) {
        DumpState st = {};
        int r;

        r = nl_request(c, NFT_MSG_GETGEN, AF_UNSPEC, NLM_F_ACK, gen_cb, &st);
        if (r < 0)
                return r;
        *ret = st.genid;
        return 0;
}

/* Whether a table has any rule, without reading them all: start a dump of its rules on a socket of
 * its own, read the first datagram, and drop the socket (the kernel then ends the dump). */
static int probe_rules(int family, NftTableInfo *t) {
        struct nlmsghdr *nlh;
        NlConn c;
        ssize_t n;
        int r, len;

        r = nl_open(&c);
        if (r < 0)
                goto finish;
        nlh = nftnl_nlmsg_build_hdr(c.buf, NFT_MSG_GETRULE, (uint16_t) family, NLM_F_DUMP, ++c.seq);
        mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, t->name);
        if (mnl_socket_sendto(c.nl, nlh, nlh->nlmsg_len) < 0) {
                r = negative_errno();
                goto finish;
        }
        n = mnl_socket_recvfrom(c.nl, c.buf, RECV_BUFFER_SIZE);
        if (n < 0) {
                r = recv_errno();
                goto finish;
        }
        len = (int) n;
        for (nlh = (struct nlmsghdr *) c.buf; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
                if (nlh->nlmsg_type == NLMSG_ERROR && nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(struct nlmsgerr))) {
                        r = ((const struct nlmsgerr *) mnl_nlmsg_get_payload(nlh))->error;
                        break;
                }
                if (NFNL_MSG_TYPE(nlh->nlmsg_type) == NFT_MSG_NEWRULE)
                        t->has_rules = true;
        }
finish:
        nl_close(&c);
        /* A table deleted since it was listed has no rules; the generation check says it changed. */
        return r == -ENOENT ? 0 : r;
}

/* One attempt: generation, tables, chains, rules (or whether there are any), generation again.
 * -EAGAIN when it changed in between. */
static int dump_once(NlConn *c, int family, unsigned flags, NftRuleset **ret) {
        CLEANUP(nft_ruleset_freep) NftRuleset *rs = NULL;
        DumpState st = {};
        uint32_t after;
        int r;

        rs = calloc(1, sizeof(NftRuleset));
        if (!rs)
                return -ENOMEM;
        rs->family = family;
        rs->rules_dumped = flags & NFT_DUMP_RULES;
        st.rs = rs;
        r = get_genid(c, &rs->genid);
        if (r >= 0)
                r = nl_request(c, NFT_MSG_GETTABLE, family, NLM_F_DUMP, table_cb, &st);
        if (r >= 0)
                r = nl_request(c, NFT_MSG_GETCHAIN, family, NLM_F_DUMP, chain_cb, &st);
        if (r >= 0 && rs->rules_dumped)
                r = nl_request(c, NFT_MSG_GETRULE, family, NLM_F_DUMP, rule_cb, &st);
        for (size_t i = 0; r >= 0 && !rs->rules_dumped && i < rs->n_tables; i++)
                r = probe_rules(family, &rs->tables[i]);
        if (r >= 0)
                r = get_genid(c, &after);
        if (r < 0)
                return r;
        if (after != rs->genid)
                return -EAGAIN;
        *ret = TAKE_PTR(rs);
        return 0;
}

static int dump_family(NlConn *c, int family, unsigned flags, NftRuleset **ret, char **reterr_msg) {
        int r = -EAGAIN;

        for (unsigned i = 0; i < GENERATION_RETRIES && r == -EAGAIN; i++)
                r = dump_once(c, family, flags, ret);
        if (r == -EAGAIN)
                return set_errmsg(reterr_msg, r, "the %s ruleset kept changing while it was read",
                                  strna(nft_family_to_string(family)));
        if (r < 0)
                return set_errmsg(reterr_msg, r, "cannot read the nf_tables %s ruleset: %s",
                                  strna(nft_family_to_string(family)), strerror(-r));
        return 0;
}

int nft_ruleset_dump(int family, unsigned flags, NftRuleset **ret, char **reterr_msg) {
        NlConn c;
        int r;

        r = nl_open(&c);
        if (r < 0) {
                nl_close(&c);
                return set_errmsg(reterr_msg, r, "cannot open a netfilter netlink socket: %s", strerror(-r));
        }
        r = dump_family(&c, family, flags, ret, reterr_msg);
        nl_close(&c);
        return r;
}

/* ---- classification of a dumped table ---- */

static bool chain_removed(const NftChainInfo *c, const FwClass *cls, FwMode mode) {
        if (c->base)
                return false;
        return mode == FW_MODE_FLUSH || fwclass_chain_owned(cls, c->name);
}

static bool rule_removed(const NftTableInfo *t, const NftRuleInfo *r, const FwClass *cls, FwMode mode) {
        if (mode == FW_MODE_FLUSH || chain_removed(&t->chains[r->chain], cls, mode))
                return true;
        return fwclass_rule_owned(cls, r->jump, (const char *const *) r->comments, r->n_comments);
}

static bool policy_reset(const NftChainInfo *c, FwMode mode) {
        return mode == FW_MODE_FLUSH && c->base && c->has_policy && c->policy != NF_ACCEPT;
}

static void table_count(const NftRuleset *rs, const NftTableInfo *t, const FwClass *cls, FwMode mode,
                        FwCounts *ret) {
        *ret = (FwCounts) {};
        for (size_t i = 0; i < t->n_chains; i++) {
                const NftChainInfo *c = &t->chains[i];

                ret->chains += !c->base;
                ret->owned_chains += chain_removed(c, cls, mode);
                ret->policies += policy_reset(c, mode);
        }
        if (!rs->rules_dumped) {
                /* Flush mode without the rules: all of them go, however many there are. */
                ret->rules_uncounted = true;
                ret->rules = ret->owned_rules = t->has_rules;
                return;
        }
        for (size_t i = 0; i < t->n_rules; i++) {
                ret->rules++;
                if (rule_removed(t, &t->rules[i], cls, mode))
                        ret->owned_rules++;
                else
                        ret->kept_rules++;
        }
}

int nft_ruleset_count(const NftRuleset *rs, const char *table, const FwClass *cls, FwMode mode,
                      FwCounts *ret) {
        const NftTableInfo *t = find_table(rs, table);

        if (!t)
                return -ENOENT;
        /* Telling owned rules from the others needs them all. */
        if (mode == FW_MODE_OWNED && !rs->rules_dumped)
                return -ENODATA;
        table_count(rs, t, cls, mode, ret);
        return 0;
}

int nft_ruleset_table_size(const NftRuleset *rs, const char *table, FwCounts *ret) {
        const NftTableInfo *t = find_table(rs, table);

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

/* ---- the transaction ---- */

/* What each message of the batch does, so that an error names it. */
typedef struct MsgRef {
        uint16_t type;
        const char *table;
        const char *chain;
        uint64_t handle;
} MsgRef;

typedef struct Batch {
        struct nftnl_batch *b;
        int family;
        uint32_t seq_begin;
        uint32_t seq;           /* of the last message added */
        MsgRef *refs;
        size_t n_refs, allocated_refs;
} Batch;

static void batch_done(Batch *b) {
        if (b->b)
                nftnl_batch_free(b->b);
        free(b->refs);
        *b = (Batch) {};
}

/* The batch begins with the generation observed: the kernel refuses it (ERESTART) if the ruleset
 * changed since, instead of acting on stale handles. */
static int batch_begin(Batch *b, NlConn *c, int family, uint32_t genid) {
        struct nlmsghdr *nlh;
        struct nfgenmsg *nfg;

        *b = (Batch) { .family = family };
        b->b = nftnl_batch_alloc(BATCH_PAGE_SIZE, MNL_SOCKET_BUFFER_SIZE);
        if (!b->b)
                return -ENOMEM;
        b->seq_begin = b->seq = ++c->seq;
        nlh = mnl_nlmsg_put_header(nftnl_batch_buffer(b->b));
        nlh->nlmsg_type = NFNL_MSG_BATCH_BEGIN;
        nlh->nlmsg_flags = NLM_F_REQUEST;
        nlh->nlmsg_seq = b->seq;
        nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
        nfg->nfgen_family = AF_UNSPEC;
        nfg->version = NFNETLINK_V0;
        nfg->res_id = htons(NFNL_SUBSYS_NFTABLES);
        mnl_attr_put_u32(nlh, NFNL_BATCH_GENID, htonl(genid));
        return nftnl_batch_update(b->b) < 0 ? -ENOMEM : 0;
}

static struct nlmsghdr *batch_put(Batch *b, uint16_t type, const char *table, const char *chain,
                                  uint64_t handle) {
        if (array_reserve((void **) &b->refs, &b->allocated_refs, b->n_refs + 1, sizeof(MsgRef)) < 0)
                return NULL;
        b->refs[b->n_refs++] = (MsgRef) { type, table, chain, handle };
        /* libmnl leaves attribute padding as it finds it: start from zeroes, so that no stale byte
         * goes to the kernel. A message is at most MSG_MAX bytes, and every batch page has
         * MNL_SOCKET_BUFFER_SIZE of room past its fill mark. */
        memset(nftnl_batch_buffer(b->b), 0, MSG_MAX);
        return nftnl_nlmsg_build_hdr(nftnl_batch_buffer(b->b), type, (uint16_t) b->family, 0, ++b->seq);
}

/* DELRULE: one rule by handle, every rule of a chain (handle 0), or of the table (chain NULL). */
static int batch_del_rule(Batch *b, const char *table, const char *chain, uint64_t handle) {
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

static int batch_del_chain(Batch *b, const char *table, const char *chain) {
        struct nlmsghdr *nlh = batch_put(b, NFT_MSG_DELCHAIN, table, chain, 0);

        if (!nlh)
                return -ENOMEM;
        mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, table);
        mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, chain);
        return nftnl_batch_update(b->b) < 0 ? -ENOMEM : 0;
}

/* NEWCHAIN on an existing base chain, without NLM_F_EXCL, updates its policy only. */
static int batch_policy_accept(Batch *b, const char *table, const char *chain) {
        struct nlmsghdr *nlh = batch_put(b, NFT_MSG_NEWCHAIN, table, chain, 0);

        if (!nlh)
                return -ENOMEM;
        mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, table);
        mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, chain);
        mnl_attr_put_u32(nlh, NFTA_CHAIN_POLICY, htonl(NF_ACCEPT));
        return nftnl_batch_update(b->b) < 0 ? -ENOMEM : 0;
}

static int batch_del_table(Batch *b, const char *table) {
        struct nlmsghdr *nlh = batch_put(b, NFT_MSG_DELTABLE, table, NULL, 0);

        if (!nlh)
                return -ENOMEM;
        mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, table);
        return nftnl_batch_update(b->b) < 0 ? -ENOMEM : 0;
}

static int batch_clean_owned(Batch *b, const NftTableInfo *t, const FwClass *cls) {
        int r = 0;

        /* Rules that stay behind in kept chains first, then empty the owned chains, and only then
         * delete them: a chain is deletable once nothing jumps to it any more. */
        for (size_t i = 0; i < t->n_rules && r >= 0; i++) {
                const NftRuleInfo *ri = &t->rules[i];
                const NftChainInfo *c = &t->chains[ri->chain];

                if (!chain_removed(c, cls, FW_MODE_OWNED) && rule_removed(t, ri, cls, FW_MODE_OWNED))
                        r = batch_del_rule(b, t->name, c->name, ri->handle);
        }
        for (size_t i = 0; i < t->n_chains && r >= 0; i++)
                if (chain_removed(&t->chains[i], cls, FW_MODE_OWNED) && t->chains[i].n_rules > 0)
                        r = batch_del_rule(b, t->name, t->chains[i].name, 0);
        for (size_t i = 0; i < t->n_chains && r >= 0; i++)
                if (chain_removed(&t->chains[i], cls, FW_MODE_OWNED))
                        r = batch_del_chain(b, t->name, t->chains[i].name);
        return r;
}

static int batch_clean_flush(Batch *b, const NftTableInfo *t) {
        int r = 0;

        for (size_t i = 0; i < t->n_chains && r >= 0; i++)
                if (policy_reset(&t->chains[i], FW_MODE_FLUSH))
                        r = batch_policy_accept(b, t->name, t->chains[i].name);
        if (r >= 0 && t->has_rules)
                r = batch_del_rule(b, t->name, NULL, 0);
        for (size_t i = 0; i < t->n_chains && r >= 0; i++)
                if (!t->chains[i].base)
                        r = batch_del_chain(b, t->name, t->chains[i].name);
        return r;
}

static bool table_deleted_by(const NftRequest *reqs, size_t n, const char *table) {
        for (size_t i = 0; i < n; i++)
                if (reqs[i].op == NFT_TABLE_DELETE && streq(reqs[i].table, table))
                        return true;
        return false;
}

/* Fill the batch from the requests and say in each what it will remove. */
static int batch_fill(Batch *b, const NftRuleset *rs, NftRequest *reqs, size_t n, const FwClass *cls,
                      FwMode mode) {
        int r = 0;

        for (size_t i = 0; i < n && r >= 0; i++) {
                const NftTableInfo *t = find_table(rs, reqs[i].table);

                reqs[i].done = (FwCounts) {};
                reqs[i].changed = false;
                if (!t)
                        continue;
                if (reqs[i].op == NFT_TABLE_DELETE) {
                        (void) nft_ruleset_table_size(rs, t->name, &reqs[i].done);
                        reqs[i].changed = true;
                        r = batch_del_table(b, t->name);
                        continue;
                }
                if (table_deleted_by(reqs, n, t->name))
                        continue;
                if (mode == FW_MODE_OWNED && !rs->rules_dumped)
                        return -ENODATA;
                table_count(rs, t, cls, mode, &reqs[i].done);
                if (!fw_counts_any(&reqs[i].done))
                        continue;
                reqs[i].changed = true;
                r = mode == FW_MODE_FLUSH ? batch_clean_flush(b, t) : batch_clean_owned(b, t, cls);
        }
        return r;
}

static int batch_end(Batch *b) {
        if (!nftnl_batch_end(nftnl_batch_buffer(b->b), ++b->seq))
                return -ENOMEM;
        return nftnl_batch_update(b->b) < 0 ? -ENOMEM : 0;
}

/* Only the last change asks for an ack: errors come back anyway, and that ack tells that the
 * kernel went through the whole batch. The last message of all is the batch end. */
static void batch_ack_last(const struct iovec *iov, size_t n_iov) {
        struct nlmsghdr *prev = NULL, *cur = NULL;

        for (size_t i = 0; i < n_iov; i++) {
                int len = (int) iov[i].iov_len;

                for (struct nlmsghdr *nlh = iov[i].iov_base; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
                        prev = cur;
                        cur = nlh;
                }
        }
        if (prev)
                prev->nlmsg_flags |= NLM_F_ACK;
}

static void raise_buffer(int fd, int opt, int opt_force, size_t want) {
        socklen_t l = sizeof(int);
        int cur = 0, v;

        if (getsockopt(fd, SOL_SOCKET, opt, &cur, &l) >= 0 && cur > 0 && (size_t) cur >= want)
                return;
        v = want > INT_MAX / 2 ? INT_MAX / 2 : (int) want;
        /* The forced variant ignores net.core.[wr]mem_max; without CAP_NET_ADMIN, try the plain one. */
        if (setsockopt(fd, SOL_SOCKET, opt_force, &v, sizeof(v)) < 0)
                (void) setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v));
}

/* The whole batch goes in one datagram: the kernel only runs a transaction that one skb holds. */
static int batch_send(NlConn *c, Batch *b) {
        struct sockaddr_nl snl = { .nl_family = AF_NETLINK };
        cleanup_free struct iovec *iov = NULL;
        struct msghdr msg = {};
        size_t n_iov, len = 0;
        int fd = mnl_socket_get_fd(c->nl);

        n_iov = (size_t) nftnl_batch_iovec_len(b->b);
        iov = calloc(n_iov, sizeof(struct iovec));
        if (!iov)
                return -ENOMEM;
        nftnl_batch_iovec(b->b, iov, (uint32_t) n_iov);
        for (size_t i = 0; i < n_iov; i++)
                len += iov[i].iov_len;
        batch_ack_last(iov, n_iov);
        raise_buffer(fd, SO_SNDBUF, SO_SNDBUFFORCE, len + 4096);
        /* Room for the error reports of a batch gone wrong, one per failed message. */
        raise_buffer(fd, SO_RCVBUF, SO_RCVBUFFORCE, MIN(len * 4, (size_t) 64 << 20));
        msg = (struct msghdr) { .msg_name = &snl, .msg_namelen = sizeof(snl), .msg_iov = iov, .msg_iovlen = n_iov };
        if (sendmsg(fd, &msg, 0) < 0)
                return negative_errno();
        return 0;
}

static int extack_cb(const struct nlattr *attr, void *data) {
        if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG && mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
                *(const char **) data = mnl_attr_get_str(attr);
        return MNL_CB_OK;
}

/* The kernel's extended ack text of an error report, or NULL. */
static const char *nlmsgerr_text(const struct nlmsghdr *nlh) {
        const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
        const char *text = NULL;
        size_t off = sizeof(*e);

        if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
                return NULL;
        if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
                off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
        if (off >= mnl_nlmsg_get_payload_len(nlh))
                return NULL;
        (void) mnl_attr_parse(nlh, (unsigned) off, extack_cb, &text);
        return text;
}

typedef struct BatchError {
        int error;
        uint32_t seq;
        char *text;
} BatchError;

/* Read reports until the ack of the last change, or an error on the batch itself (a refused
 * generation or a failed commit), which ends it. */
static int batch_recv(NlConn *c, const Batch *b, uint32_t seq_last, BatchError *ret) {
        for (;;) {
                ssize_t n = mnl_socket_recvfrom(c->nl, c->buf, RECV_BUFFER_SIZE);
                int len;

                if (n < 0)
                        return ret->error < 0 ? ret->error : recv_errno();
                len = (int) n;
                for (const struct nlmsghdr *nlh = (const void *) c->buf; mnl_nlmsg_ok(nlh, len);
                     nlh = mnl_nlmsg_next(nlh, &len)) {
                        const struct nlmsgerr *e;
                        const char *text;

                        if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
                                continue;
                        e = mnl_nlmsg_get_payload(nlh);
                        if (e->error < 0 && ret->error == 0) {
                                ret->error = e->error;
                                ret->seq = nlh->nlmsg_seq;
                                text = nlmsgerr_text(nlh);
                                ret->text = text ? strdup(text) : NULL;
                        }
                        if (nlh->nlmsg_seq == seq_last || (nlh->nlmsg_seq == b->seq_begin && e->error < 0))
                                return ret->error;
                }
        }
}

static char *describe_msg(const Batch *b, uint32_t seq) {
        const char *fam = strna(nft_family_to_string(b->family));
        const MsgRef *m;
        size_t i;

        if (seq <= b->seq_begin || (i = seq - b->seq_begin - 1) >= b->n_refs)
                return strdup("nf_tables transaction");
        m = &b->refs[i];
        if (m->type == NFT_MSG_DELRULE && m->handle)
                return strprintf("deleting rule %llu in chain %s of table %s %s",
                               (unsigned long long) m->handle, m->chain, fam, m->table);
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

/* Build, send and check one transaction from a snapshot. 0: nothing to do, 1: committed. */
static int transact(NlConn *c, const NftRuleset *rs, NftRequest *reqs, size_t n, const FwClass *cls,
                    FwMode mode, char **ret_msg) {
        BatchError err = {};
        uint32_t seq_last;
        Batch b;
        int r;

        r = batch_begin(&b, c, rs->family, rs->genid);
        if (r >= 0)
                r = batch_fill(&b, rs, reqs, n, cls, mode);
        if (r < 0 || b.n_refs == 0)
                goto finish;
        seq_last = b.seq;
        r = batch_end(&b);
        if (r >= 0)
                r = batch_send(c, &b);
        if (r >= 0)
                r = batch_recv(c, &b, seq_last, &err);
        if (r < 0 && err.error < 0 && ret_msg) {
                cleanup_free char *what = describe_msg(&b, err.seq);

                *ret_msg = strprintf("%s: %s%s%s", strna(what), strerror(-err.error), err.text ? ": " : "",
                                   strempty(err.text));
        }
        if (r >= 0)
                r = 1;
finish:
        free(err.text);
        batch_done(&b);
        return r;
}

int nft_reset(const NftRuleset *observed, int family, NftRequest *reqs, size_t n, const FwClass *cls,
              FwMode mode, char **reterr_msg) {
        /* Flush mode needs no rule: a table flush takes them all. */
        unsigned flags = mode == FW_MODE_FLUSH ? 0 : NFT_DUMP_RULES;
        CLEANUP(nl_close) NlConn c = {};
        int r;

        if (observed && (observed->family != family || (!observed->rules_dumped && flags)))
                observed = NULL;
        r = nl_open(&c);
        if (r < 0)
                return set_errmsg(reterr_msg, r, "cannot open a netfilter netlink socket: %s", strerror(-r));
        for (unsigned attempt = 0;; attempt++) {
                CLEANUP(nft_ruleset_freep) NftRuleset *rs = NULL;
                cleanup_free char *msg = NULL;

                /* The caller's observation first: the batch carries its generation, so the kernel
                 * refuses it if anything changed since. */
                if (!observed || attempt > 0) {
                        r = dump_family(&c, family, flags, &rs, reterr_msg);
                        if (r < 0)
                                break;
                }
                r = transact(&c, rs ?: observed, reqs, n, cls, mode, &msg);
                /* ERESTART: the ruleset changed since it was read; read it again and retry. */
                if (r == -ERESTART && attempt + 1 < GENERATION_RETRIES)
                        continue;
                if (r < 0)
                        (void) set_errmsg(reterr_msg, r, "%s", msg ?: strerror(-r));
                break;
        }
        if (r < 0)
                for (size_t i = 0; i < n; i++) {
                        reqs[i].done = (FwCounts) {};
                        reqs[i].changed = false;
                }
        return r;
}
