/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firewall phase's nf_tables rows: the iptables-nft tables of every family and the "nft-table"
 * tables, one transaction per family, bound to the ruleset generation the plan read. */

#include <errno.h>
#include <linux/netfilter.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>

#include "agent/base/parallel.h"
#include "agent/engine/libraries.h"
#include "agent/phases/firewall/firewall-nft.h"
#include "agent/phases/firewall/firewall-table.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/fwclass.h"
#include "netreset/nft.h"
#include "string-util.h"

#define PHASE "firewall"

/* Owned mode reads every rule; flush mode only whether there are any (see nft.h). */
static unsigned dump_flags(FwMode mode) {
        return mode == FW_MODE_FLUSH ? 0 : NFT_DUMP_RULES;
}

static void nft_record_family(NftSession *session, Action **actions, size_t n, int family) {
        cleanup_free NftRequest *reqs = calloc(n, sizeof(NftRequest));
        cleanup_free Action **mine = calloc(n, sizeof(Action *));
        cleanup_free char *msg = NULL;
        const FirewallTableData *first = NULL;
        size_t k = 0;
        int r;

        if (!reqs || !mine) {
                for (size_t i = 0; i < n; i++)
                        if (((FirewallTableData *) actions[i]->data)->family == family)
                                action_record(actions[i], -ENOMEM, NULL);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                const FirewallTableData *d = actions[i]->data;

                if (d->family != family)
                        continue;
                first = first ?: d;
                mine[k] = actions[i];
                reqs[k++] = (NftRequest) { .table = d->table, .op = d->whole ? NFT_TABLE_DELETE : NFT_TABLE_CLEAN };
        }
        r = nft_reset(session, first->snap ? first->snap->rs : NULL, family, reqs, k, first->cls, first->mode, &msg);
        for (size_t i = 0; i < k; i++) {
                if (r < 0)
                        action_recordf(mine[i], r, "nf_tables transaction for family %s refused, nothing changed: %s",
                                       strna(nft_family_to_string(family)), msg ?: strerror(-r));
                else
                        firewall_record_counts(mine[i], &reqs[i].done, reqs[i].changed,
                                               ((FirewallTableData *) mine[i]->data)->whole);
        }
}

/* One transaction per family: every action of the family goes into it. One session for them all
 * (see nft.h): the families after the first need no new observation, and the kernel's deferred
 * freeing of what they deleted is waited for once. */
static void nft_apply_batch(Action **actions, size_t n, Context *ctx) {
        CLEANUP(nft_session_freep) NftSession *session = NULL;

        /* Failing that, each transaction opens its own socket, and says so if that fails too. */
        (void) nft_session_new(&session);
        for (size_t i = 0; i < n; i++) {
                int family = ((FirewallTableData *) actions[i]->data)->family;
                bool seen = false;

                for (size_t j = 0; j < i && !seen; j++)
                        seen = ((FirewallTableData *) actions[j]->data)->family == family;
                if (!seen)
                        nft_record_family(session, actions, n, family);
        }
}

static int nft_check(Action *a, Context *ctx, char **ret_msg) {
        CLEANUP(nft_ruleset_freep) NftRuleset *rs = NULL;
        const FirewallTableData *d = a->data;
        FwCounts c;
        int r;

        r = nft_ruleset_dump(d->family, dump_flags(d->mode), d->mode == FW_MODE_OWNED ? d->cls : NULL, &rs, NULL);
        if (r < 0)
                return r;
        if (!nft_ruleset_has_table(rs, d->table))
                return 0;
        if (d->whole) {
                *ret_msg = strdup("the table is still present");
                return 1;
        }
        r = nft_ruleset_count(rs, d->table, d->cls, d->mode, &c);
        if (r < 0 || !fw_counts_any(&c))
                return r == -ENOENT ? 0 : r;
        return firewall_residue_msg(&c, ret_msg);
}

static const ActionOps nft_ops = {
        .kind = "nft",
        .apply_batch = nft_apply_batch,
        .check = nft_check,
        .free_data = firewall_table_data_free,
};

/* nf_tables missing from the kernel is nothing to clean, not a failure to observe. */
static bool nft_unavailable(int r) {
        return r == -EPROTONOSUPPORT || r == -EOPNOTSUPP || r == -EAFNOSUPPORT;
}

static int plan_nft_table(Plan *plan, NftSnapshot *snap, int family, const char *table, bool whole,
                          const FirewallSettings *s, const char *reason) {
        cleanup_free char *target = NULL;
        const NftRuleset *rs = snap->rs;
        FwCounts c = {};
        FirewallTableData *d;
        Action *a;
        char buf[32];

        target = strprintf("nft %s %s", strna(nft_family_to_string(family)), table);
        if (!target)
                return -ENOMEM;
        d = firewall_table_data_new(family, table, whole, s, snap);
        if (!d)
                return -ENOMEM;
        a = plan_add(plan, &nft_ops, PHASE, target, reason, d);
        if (!a)
                return -ENOMEM;
        if (!nft_ruleset_has_table(rs, table)) {
                a->present = false;
                return action_set_detail(a, "not present");
        }
        if (whole) {
                (void) nft_ruleset_table_size(rs, table, &c);
                return action_set_detail(a, "delete the whole table: %u chains, %s", c.chains,
                                         firewall_rules_text(&c, buf));
        }
        (void) nft_ruleset_count(rs, table, s->cls, s->mode, &c);
        a->present = fw_counts_any(&c);
        return firewall_set_counts_detail(a, s->mode, &c);
}

static bool nft_table_listed(const Manifest *m, int family, const char *table) {
        MANIFEST_FOREACH(e, m, DIRECTIVE_NFT_TABLE)
                if (nft_family_from_string(e->args[0]) == family && streq(e->args[1], table))
                        return true;
        return false;
}

/* A listed table is planned once, by its first line. */
static bool nft_entry_first(const Manifest *m, const ManifestEntry *entry) {
        MANIFEST_FOREACH(e, m, DIRECTIVE_NFT_TABLE) {
                if (e == entry)
                        return true;
                if (streq(e->args[0], entry->args[0]) && streq(e->args[1], entry->args[1]))
                        return false;
        }
        return true;
}

static int plan_nft_skipped(Plan *plan, int family, const char *reason, int r) {
        cleanup_free char *target = NULL;
        FirewallTableData *d = calloc(1, sizeof(FirewallTableData));
        Action *a;

        target = strprintf("nft %s", strna(nft_family_to_string(family)));
        if (!d || !target) {
                free(d);
                return -ENOMEM;
        }
        d->family = family;
        a = plan_add(plan, &nft_ops, PHASE, target, reason, d);
        if (!a)
                return -ENOMEM;
        a->present = false;
        return action_set_skip_code(a, "unsupported", "nf_tables not available in this kernel (%s)", strerror(-r));
}

/* The iptables-nft tables of one family, then the tables the manifest lists in it. */
/* One nf_tables family's ruleset, read on one of two threads (parallel.h): each dump has its own
 * socket, and parsing a large ruleset's rules is most of a plan's time. */
typedef struct NftFamilyRead {
        int family;
        unsigned flags;
        const FwClass *bare; /* owned mode: the rules of owned chains are not parsed */
        NftRuleset *rs;
        int r;
        char *err;
} NftFamilyRead;

static void nft_family_read(void *p) {
        NftFamilyRead *f = p;

        f->r = nft_ruleset_dump(f->family, f->flags, f->bare, &f->rs, &f->err);
}

static int plan_nft_family(Plan *plan, const Manifest *m, const FirewallSettings *s, NftFamilyRead *f, char **reterr) {
        static const char *const xt_tables[] = { "filter", "nat", "mangle", "raw", "security" };
        int family = f->family, r = f->r;
        bool xt_family = family == NFPROTO_IPV4 || family == NFPROTO_IPV6;
        NftSnapshot *snap;

        if (nft_unavailable(r))
                return plan_nft_skipped(plan, family, s->mode_reason, r);
        if (r < 0)
                return set_errmsg(reterr, r, "%s", f->err ?: strerror(-r));
        snap = calloc(1, sizeof(NftSnapshot));
        if (!snap)
                return -ENOMEM;
        snap->n_ref = 1;
        snap->rs = TAKE_PTR(f->rs);
        for (size_t i = 0; xt_family && i < ELEMENTSOF(xt_tables) && r >= 0; i++)
                if (nft_ruleset_has_table(snap->rs, xt_tables[i]) && !nft_table_listed(m, family, xt_tables[i]))
                        r = plan_nft_table(plan, snap, family, xt_tables[i], false, s, s->mode_reason);
        MANIFEST_FOREACH(e, m, DIRECTIVE_NFT_TABLE) {
                cleanup_free char *reason = NULL;

                if (r < 0 || nft_family_from_string(e->args[0]) != family || !nft_entry_first(m, e))
                        continue;
                reason = manifest_entry_reason(e);
                r = reason ? plan_nft_table(plan, snap, family, e->args[1], true, s, reason) : -ENOMEM;
        }
        firewall_snapshot_unref(snap);
        return r;
}

static bool family_wanted(const Manifest *m, int family) {
        if (family == NFPROTO_IPV4 || family == NFPROTO_IPV6)
                return true;
        MANIFEST_FOREACH(e, m, DIRECTIVE_NFT_TABLE)
                if (nft_family_from_string(e->args[0]) == family)
                        return true;
        return false;
}

int firewall_plan_nft(Plan *plan, const Manifest *m, const FirewallSettings *s, char **reterr) {
        static const int families[] = { NFPROTO_IPV4, NFPROTO_IPV6,   NFPROTO_INET,
                                        NFPROTO_ARP,  NFPROTO_BRIDGE, NFPROTO_NETDEV };
        NftFamilyRead reads[ELEMENTSOF(families)] = {};
        size_t n = 0;
        int r;

        r = libraries_plan_missing(plan, PHASE, DLIB_LIBNFTNL, "nf_tables lines");
        if (r != 0)
                return MIN(r, 0);
        for (size_t i = 0; i < ELEMENTSOF(families); i++)
                if (family_wanted(m, families[i]))
                        reads[n++] = (NftFamilyRead) { .family = families[i],
                                                       .flags = dump_flags(s->mode),
                                                       .bare = s->mode == FW_MODE_OWNED ? s->cls : NULL };
        /* v4 and v6, the large ones, first: one on each thread. */
        parallel_each(nft_family_read, reads, n, sizeof(NftFamilyRead));
        for (size_t i = 0; i < n && r >= 0; i++)
                r = plan_nft_family(plan, m, s, &reads[i], reterr);
        for (size_t i = 0; i < n; i++) {
                nft_ruleset_free(reads[i].rs);
                free(reads[i].err);
        }
        return r;
}
