/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firewall phase: Kubernetes-owned netfilter state in both iptables backends and both families,
 * the native nf_tables tables Kubernetes creates, ipsets and IPVS, with the host firewall kept. */

/* Network state has no file-system root: this phase observes and changes the network namespace the
 * agent runs in, and ctx->root is ignored on purpose. The xtables lock is the live /run/xtables.lock
 * for the same reason: it serializes with the iptables of this node, not of a tree.
 *
 * Modes (the last "firewall" line wins; owned when there is none):
 * - owned: user chains named with an owned prefix (fwclass.h, plus "chain-prefix" lines), every
 *   rule that jumps or goes to one, and every rule whose comment marks it; policies and all other
 *   rules stay as they are.
 * - flush: kubespray/kubekey parity: in the iptables tables (filter nat mangle raw security of
 *   ip/ip6, both backends) every base chain policy to ACCEPT, every rule, every user chain.
 * - keep: the phase does nothing.
 * "nft-table" tables are deleted whole in owned and flush mode; other native nf_tables tables (a
 * host's "table inet filter") are never touched.
 *
 * Order: nf_tables (one transaction per family), legacy x_tables (one commit per table, under the
 * lock), then ipsets (once the rules that reference them are gone), then IPVS. */

#include <linux/netfilter.h>
#include <stdarg.h>
#include <sys/param.h>
#include <sys/socket.h>

#include "agent/phases/phases.h"
#include "agent/base/parallel.h"
#include "agent/base/path.h"
#include "agent/engine/libraries.h"
#include "agent/engine/phase.h"
#include "agent/engine/cmdline.h"
#include "agent/phases/firewall/firewall-ipvs-select.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/fwclass.h"
#include "netreset/ipset.h"
#include "netreset/nft.h"
#include "netreset/xtables.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

#define PHASE "firewall"

/* The plan's observation of one nf_tables family, shared by that family's actions: the transaction
 * is built from it (the kernel refuses it if the ruleset changed since), so a run reads each
 * family once. */
typedef struct Snapshot {
        unsigned n_ref;
        NftRuleset *rs;
} Snapshot;

/* One nf_tables or legacy table, as an action's data. */
typedef struct TableData {
        int family; /* NFPROTO_IPV4/IPV6/... for nf_tables, AF_INET/AF_INET6 for legacy */
        char *table;
        bool whole; /* nf_tables: delete the whole table ("nft-table") */
        FwMode mode;
        FwClass *cls;
        Snapshot *snap; /* nf_tables only */
        XtTable *xt;    /* legacy, flush mode: the plan's observation, reused (xtables.h) */
} TableData;

/* What the manifest says for the whole phase. */
typedef struct Settings {
        const ManifestEntry *mode_entry; /* NULL: the built-in default */
        bool keep;
        FwMode mode;
        FwClass *cls;
        char *mode_reason;
} Settings;

static void settings_done(Settings *s) {
        fwclass_free(s->cls);
        free(s->mode_reason);
}

static int settings_read(const Manifest *m, Settings *ret) {
        *ret = (Settings) { .mode = FW_MODE_OWNED };
        MANIFEST_FOREACH(e, m, DIRECTIVE_FIREWALL)
                ret->mode_entry = e;
        if (ret->mode_entry) {
                ret->keep = streq(ret->mode_entry->args[0], "keep");
                if (!ret->keep)
                        ret->mode = fw_mode_from_string(ret->mode_entry->args[0]);
                if (ret->mode < 0)
                        return -EINVAL;
        }
        ret->cls = fwclass_new();
        if (!ret->cls)
                return -ENOMEM;
        MANIFEST_FOREACH(e, m, DIRECTIVE_CHAIN_PREFIX)
                if (fwclass_add_prefix(ret->cls, e->args[0]) < 0)
                        return -ENOMEM;
        ret->mode_reason =
                ret->mode_entry ? manifest_entry_reason(ret->mode_entry) : strdup("built-in default: firewall owned");
        return ret->mode_reason ? 0 : -ENOMEM;
}

static Snapshot *snapshot_unref(Snapshot *s) {
        if (s && --s->n_ref == 0) {
                nft_ruleset_free(s->rs);
                free(s);
        }
        return NULL;
}

static void table_data_free(void *p) {
        TableData *d = p;

        snapshot_unref(d->snap);
        xt_table_free(d->xt);
        fwclass_free(d->cls);
        free(d->table);
        free(d);
}

static TableData *table_data_new(int family, const char *table, bool whole, const Settings *s, Snapshot *snap) {
        TableData *d = calloc(1, sizeof(TableData));

        if (!d)
                return NULL;
        *d = (TableData) { .family = family, .whole = whole, .mode = s->mode, .snap = snap };
        if (snap)
                snap->n_ref++;
        d->table = strdup(table);
        d->cls = fwclass_dup(s->cls);
        if (!d->table || !d->cls) {
                table_data_free(d);
                return NULL;
        }
        return d;
}

static const char *legacy_family(int family) {
        return family == AF_INET6 ? "ip6" : "ip";
}

/* "5430 rules"; nf_tables flush mode does not read rules one by one, so there: "every rule". */
static const char *rules_text(const FwCounts *c, char buf[static 32]) {
        if (c->rules_uncounted)
                return c->owned_rules > 0 ? "every rule" : "no rules";
        snprintf(buf, 32, "%u rule%s", c->owned_rules, c->owned_rules == 1 ? "" : "s");
        return buf;
}

/* "11 owned chains, 322 owned rules, 8 kept rules" or "flush: 330 rules, 12 user chains, 1 policy
 * to ACCEPT": what the plan shows. */
static int set_counts_detail(Action *a, FwMode mode, const FwCounts *c) {
        char buf[32];

        if (mode == FW_MODE_FLUSH)
                return action_set_detail(a, "flush: %s, %u user chains, %u polic%s to ACCEPT", rules_text(c, buf),
                                         c->chains, c->policies, c->policies == 1 ? "y" : "ies");
        return action_set_detail(a, "%u owned chains, %u owned rules, %u kept rules", c->owned_chains, c->owned_rules,
                                 c->kept_rules);
}

/* What verify and status say is left. */
static int residue_msg(const FwCounts *c, char **ret_msg) {
        char buf[32];

        *ret_msg = strprintf("still there: %u chains, %s, %u policies to reset", c->owned_chains, rules_text(c, buf),
                             c->policies);
        return 1;
}

/* What the report shows once it is done. */
static void record_counts(Action *a, const FwCounts *c, bool changed, bool whole) {
        char buf[32];

        if (!changed)
                action_recordf(a, 0, whole ? "not present" : "nothing to remove");
        else if (whole)
                action_recordf(a, 1, "deleted the table: %u chains, %s", c->chains, rules_text(c, buf));
        else if (c->policies > 0)
                action_recordf(a, 1, "removed %s and %u chains, set %u polic%s to ACCEPT", rules_text(c, buf),
                               c->owned_chains, c->policies, c->policies == 1 ? "y" : "ies");
        else
                action_recordf(a, 1, "removed %s and %u chains", rules_text(c, buf), c->owned_chains);
}

/* ---- nf_tables ---- */

/* Owned mode reads every rule; flush mode only whether there are any (see nft.h). */
static unsigned dump_flags(FwMode mode) {
        return mode == FW_MODE_FLUSH ? 0 : NFT_DUMP_RULES;
}

static void nft_record_family(NftSession *session, Action **actions, size_t n, int family) {
        cleanup_free NftRequest *reqs = calloc(n, sizeof(NftRequest));
        cleanup_free Action **mine = calloc(n, sizeof(Action *));
        cleanup_free char *msg = NULL;
        const TableData *first = NULL;
        size_t k = 0;
        int r;

        if (!reqs || !mine) {
                for (size_t i = 0; i < n; i++)
                        if (((TableData *) actions[i]->data)->family == family)
                                action_record(actions[i], -ENOMEM, NULL);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                const TableData *d = actions[i]->data;

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
                        record_counts(mine[i], &reqs[i].done, reqs[i].changed, ((TableData *) mine[i]->data)->whole);
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
                int family = ((TableData *) actions[i]->data)->family;
                bool seen = false;

                for (size_t j = 0; j < i && !seen; j++)
                        seen = ((TableData *) actions[j]->data)->family == family;
                if (!seen)
                        nft_record_family(session, actions, n, family);
        }
}

static int nft_check(Action *a, Context *ctx, char **ret_msg) {
        CLEANUP(nft_ruleset_freep) NftRuleset *rs = NULL;
        const TableData *d = a->data;
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
        return residue_msg(&c, ret_msg);
}

static const ActionOps nft_ops = {
        .kind = "nft",
        .apply_batch = nft_apply_batch,
        .check = nft_check,
        .free_data = table_data_free,
};

/* nf_tables missing from the kernel is nothing to clean, not a failure to observe. */
static bool nft_unavailable(int r) {
        return r == -EPROTONOSUPPORT || r == -EOPNOTSUPP || r == -EAFNOSUPPORT;
}

static int plan_nft_table(Plan *plan, Snapshot *snap, int family, const char *table, bool whole, const Settings *s,
                          const char *reason) {
        cleanup_free char *target = NULL;
        const NftRuleset *rs = snap->rs;
        FwCounts c = {};
        TableData *d;
        Action *a;
        char buf[32];

        target = strprintf("nft %s %s", strna(nft_family_to_string(family)), table);
        if (!target)
                return -ENOMEM;
        d = table_data_new(family, table, whole, s, snap);
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
                return action_set_detail(a, "delete the whole table: %u chains, %s", c.chains, rules_text(&c, buf));
        }
        (void) nft_ruleset_count(rs, table, s->cls, s->mode, &c);
        a->present = fw_counts_any(&c);
        return set_counts_detail(a, s->mode, &c);
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
        TableData *d = calloc(1, sizeof(TableData));
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

static int plan_nft_family(Plan *plan, const Manifest *m, const Settings *s, NftFamilyRead *f, char **reterr) {
        static const char *const xt_tables[] = { "filter", "nat", "mangle", "raw", "security" };
        int family = f->family, r = f->r;
        bool xt_family = family == NFPROTO_IPV4 || family == NFPROTO_IPV6;
        Snapshot *snap;

        if (nft_unavailable(r))
                return plan_nft_skipped(plan, family, s->mode_reason, r);
        if (r < 0)
                return set_errmsg(reterr, r, "%s", f->err ?: strerror(-r));
        snap = calloc(1, sizeof(Snapshot));
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
        snapshot_unref(snap);
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

static int plan_nft(Plan *plan, const Manifest *m, const Settings *s, char **reterr) {
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

/* ---- legacy x_tables ---- */

static unsigned arg_xtables_wait_sec = 10; /* --xtables-wait: how long to wait for /run/xtables.lock */

/* --xtables-wait, but never past the run's --timeout; in whole seconds, as flock(2) is retried. */
static unsigned lock_wait_sec(const Context *ctx) {
        usec_t t = now(CLOCK_MONOTONIC), wait = (usec_t) arg_xtables_wait_sec * USEC_PER_SEC;

        if (ctx->deadline_usec > 0)
                wait = MIN(wait, ctx->deadline_usec > t ? ctx->deadline_usec - t : 0);
        return (unsigned) (wait / USEC_PER_SEC);
}

/* One table's reset, done on a family's thread and recorded afterwards on the phase's. */
typedef struct LegacyReset {
        Action *action;
        int r;
        FwCounts done;
        char *msg;
} LegacyReset;

typedef struct LegacyFamilyReset {
        LegacyReset *items;
        size_t n;
} LegacyFamilyReset;

/* On one of two threads (parallel.h): libip4tc and libip6tc keep their state apart, and most of a
 * large table's read is the kernel copying it out and the page faults of that copy. */
static void legacy_family_reset(void *p) {
        LegacyFamilyReset *f = p;

        for (size_t i = 0; i < f->n; i++) {
                LegacyReset *x = &f->items[i];
                TableData *d = x->action->data;

                x->r = xt_table_reset(d->family, d->table, d->cls, d->mode, &d->xt, &x->done, &x->msg);
        }
}

/* Under the held lock: the v4 tables here, the v6 tables on a second thread. */
static void legacy_reset_tables(Action **actions, size_t n) {
        cleanup_free LegacyReset *items = calloc(n, sizeof(LegacyReset));
        LegacyFamilyReset fam[2] = { { .items = items } };
        size_t k = 0;

        if (!items) {
                for (size_t i = 0; i < n; i++)
                        action_record(actions[i], -ENOMEM, NULL);
                return;
        }
        /* The plan lists every v4 table before the v6 ones. */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < n; i++)
                        if ((((TableData *) actions[i]->data)->family == AF_INET6) == pass)
                                items[k++].action = actions[i];
        while (fam[0].n < n && ((TableData *) items[fam[0].n].action->data)->family != AF_INET6)
                fam[0].n++;
        fam[1] = (LegacyFamilyReset) { .items = items + fam[0].n, .n = n - fam[0].n };
        /* A family with no table to reset gets no thread. */
        parallel_each(legacy_family_reset, fam + (fam[0].n == 0), (fam[0].n > 0) + (fam[1].n > 0),
                      sizeof(LegacyFamilyReset));
        for (size_t i = 0; i < n; i++) {
                if (items[i].r < 0)
                        action_recordf(items[i].action, items[i].r, "%s", items[i].msg ?: strerror(-items[i].r));
                else
                        record_counts(items[i].action, &items[i].done, items[i].r > 0, false);
                free(items[i].msg);
        }
}

static void legacy_apply_batch(Action **actions, size_t n, Context *ctx) {
        unsigned wait_sec = lock_wait_sec(ctx);
        cleanup_close int lock = -EBADF;
        int r;

        /* One lock for all tables: nothing is touched unless it is ours within the bound. */
        r = xt_lock_acquire(NULL, wait_sec, &lock);
        if (r >= 0) {
                legacy_reset_tables(actions, n);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                if (r == -ETIMEDOUT || r == -EWOULDBLOCK)
                        action_recordf(actions[i], r,
                                       "the xtables lock is held by another process%s%u s; nothing changed",
                                       r == -ETIMEDOUT ? ", still after waiting " : ", not waiting: bound ", wait_sec);
                else
                        /* Not a lock held by someone: a device, FIFO or directory at its name, or no /run. */
                        action_recordf(actions[i], r, "cannot take the xtables lock: %s; nothing changed",
                                       r == -EBADFD ? "not a regular file" : strerror(-r));
        }
}

static int legacy_check(Action *a, Context *ctx, char **ret_msg) {
        const TableData *d = a->data;
        cleanup_strv char **tables = NULL;
        bool listed = false;
        FwCounts c;
        int r;

        r = xt_tables_list(d->family, &tables);
        if (r < 0)
                return r;
        for (char **t = tables; *t && !listed; t++)
                listed = streq(*t, d->table);
        if (!listed)
                return 0;
        r = xt_table_count(d->family, d->table, d->cls, d->mode, &c, NULL);
        if (r < 0 || !fw_counts_any(&c))
                return r;
        return residue_msg(&c, ret_msg);
}

static const ActionOps legacy_ops = {
        .kind = "xtables",
        .apply_batch = legacy_apply_batch,
        .check = legacy_check,
        .free_data = table_data_free,
};

/* xt: this table's observation (taken). */
static int plan_legacy_table(Plan *plan, const Settings *s, int family, const char *table, XtTable *xt) {
        CLEANUP(xt_table_freep) XtTable *owned = xt;
        cleanup_free char *target = NULL;
        TableData *d;
        FwCounts c;
        Action *a;

        xt_table_get_counts(owned, &c);
        target = strprintf("legacy %s %s", legacy_family(family), table);
        if (!target)
                return -ENOMEM;
        d = table_data_new(family, table, false, s, NULL);
        if (!d)
                return -ENOMEM;
        /* Owned mode reads the table again under the lock; flush mode can use what it saw. */
        if (s->mode == FW_MODE_FLUSH)
                d->xt = TAKE_PTR(owned);
        a = plan_add(plan, &legacy_ops, PHASE, target, s->mode_reason, d);
        if (!a)
                return -ENOMEM;
        a->present = fw_counts_any(&c);
        return set_counts_detail(a, s->mode, &c);
}

/* One family's tables, read on one of two threads, as they are reset (legacy_family_reset()). */
typedef struct LegacyFamilyRead {
        int family;
        char **tables; /* the kernel's list; NULL: the family is not read */
        XtTable **xt;  /* one per table */
        const Settings *s;
        int r;
        char *err;
} LegacyFamilyRead;

static void legacy_family_read_done(LegacyFamilyRead *f) {
        for (size_t i = 0; f->xt && f->tables[i]; i++)
                xt_table_free(f->xt[i]);
        free(f->xt);
        strv_free(f->tables);
        free(f->err);
}

static void legacy_family_read(void *p) {
        LegacyFamilyRead *f = p;

        for (size_t i = 0; f->xt && f->tables[i] && f->r >= 0; i++)
                f->r = xt_table_observe(f->family, f->tables[i], f->s->cls, f->s->mode, &f->xt[i], &f->err);
}

/* The family's tables as the kernel lists them (only those: opening another would create it), and
 * whether its library loads (1: skipped with a row). */
static int legacy_family_prepare(Plan *plan, LegacyFamilyRead *f, char **reterr) {
        bool v4 = f->family == AF_INET;
        int r;

        r = xt_tables_list(f->family, &f->tables);
        if (r < 0)
                return set_errmsg(reterr, r, "cannot list the legacy %s tables: %s", legacy_family(f->family),
                                  strerror(-r));
        if (!f->tables[0])
                return 0;
        r = libraries_plan_missing(plan, PHASE, v4 ? DLIB_LIBIP4TC : DLIB_LIBIP6TC,
                                   v4 ? "legacy iptables lines" : "legacy ip6tables lines");
        if (r != 0)
                return r;
        f->xt = calloc(strv_length(f->tables) + 1, sizeof(XtTable *));
        return f->xt ? 0 : -ENOMEM;
}

static int plan_legacy(Plan *plan, const Settings *s, char **reterr) {
        LegacyFamilyRead fam[2] = { { .family = AF_INET, .s = s }, { .family = AF_INET6, .s = s } };
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(fam) && r >= 0; i++)
                r = legacy_family_prepare(plan, &fam[i], reterr);
        if (r >= 0) {
                /* A family the kernel lists no table of gets no thread. */
                parallel_each(legacy_family_read, fam + !fam[0].xt, !!fam[0].xt + !!fam[1].xt,
                              sizeof(LegacyFamilyRead));
                for (size_t i = 0; i < ELEMENTSOF(fam) && r >= 0; i++)
                        if (fam[i].r < 0)
                                r = set_errmsg(reterr, fam[i].r, "%s", fam[i].err ?: strerror(-fam[i].r));
        }
        for (size_t i = 0; i < ELEMENTSOF(fam) && r >= 0; i++)
                for (size_t k = 0; fam[i].xt && fam[i].tables[k] && r >= 0; k++)
                        r = plan_legacy_table(plan, s, fam[i].family, fam[i].tables[k], TAKE_PTR(fam[i].xt[k]));
        for (size_t i = 0; i < ELEMENTSOF(fam); i++)
                legacy_family_read_done(&fam[i]);
        return MIN(r, 0);
}

/* ---- ipsets ---- */

static void ipset_apply_batch(Action **actions, size_t n, Context *ctx) {
        cleanup_free char **names = calloc(n + 1, sizeof(char *)), **msgs = calloc(n + 1, sizeof(char *));
        cleanup_free Action **mine = calloc(n + 1, sizeof(Action *));
        cleanup_free int *results = calloc(n + 1, sizeof(int));
        size_t k = 0;

        if (!names || !msgs || !results || !mine) {
                for (size_t i = 0; i < n; i++)
                        action_record(actions[i], -ENOMEM, NULL);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                if (!actions[i]->data) {
                        action_recordf(actions[i], 0, "no set matches");
                        continue;
                }
                mine[k] = actions[i];
                names[k++] = actions[i]->data;
        }
        (void) ipset_remove_sets(names, k, results, msgs);
        for (size_t i = 0; i < k; i++) {
                if (results[i] < 0)
                        action_record(mine[i], results[i], TAKE_PTR(msgs[i]));
                else
                        action_recordf(mine[i], results[i], results[i] > 0 ? "flushed and destroyed" : "already gone");
                free(msgs[i]);
        }
}

static int ipset_check(Action *a, Context *ctx, char **ret_msg) {
        IpsetInfo info = {};
        int r;

        if (!a->data)
                return 0;
        r = ipset_get_set(a->data, &info, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        *ret_msg = strprintf("still present, %u reference%s", info.references, info.references == 1 ? "" : "s");
        ipset_info_done(&info);
        return 1;
}

static const ActionOps ipset_ops = {
        .kind = "ipset",
        .apply_batch = ipset_apply_batch,
        .check = ipset_check,
        .free_data = free,
};

static const ManifestEntry *ipset_selected_by(const Manifest *m, const char *name) {
        MANIFEST_FOREACH(e, m, DIRECTIVE_IPSET)
                if (path_name_match(e->args[0], name))
                        return e;
        return NULL;
}

static int plan_ipset(Plan *plan, const IpsetInfo *info, const ManifestEntry *e) {
        cleanup_free char *reason = manifest_entry_reason(e), *target = NULL;
        char *name = strdup(info->name);
        Action *a;

        target = strprintf("ipset %s", info->name);
        if (!reason || !name || !target) {
                free(name);
                return -ENOMEM;
        }
        a = plan_add(plan, &ipset_ops, PHASE, target, reason, name);
        if (!a)
                return -ENOMEM;
        return action_set_detail(a, "%s, %u entr%s, %u reference%s", strna(info->type), info->entries,
                                 info->entries == 1 ? "y" : "ies", info->references, info->references == 1 ? "" : "s");
}

static int plan_ipset_placeholder(Plan *plan, const ManifestEntry *e, const char *skip) {
        cleanup_free char *reason = manifest_entry_reason(e), *target = NULL;
        Action *a;

        target = strprintf("ipset %s", e->args[0]);
        if (!reason || !target)
                return -ENOMEM;
        a = plan_add(plan, &ipset_ops, PHASE, target, reason, NULL);
        if (!a)
                return -ENOMEM;
        a->present = false;
        if (skip)
                return action_set_skip(a, "%s", skip);
        return action_set_detail(a, "no set matches");
}

static bool manifest_has(const Manifest *m, DirectiveType t) {
        MANIFEST_FOREACH(e, m, t)
                return true;
        return false;
}

static int plan_ipsets(Plan *plan, const Manifest *m) {
        cleanup_free char *err = NULL, *skip = NULL;
        cleanup_free bool *used = NULL;
        IpsetInfo *sets = NULL;
        size_t n = 0;
        int r = 0;

        if (!manifest_has(m, DIRECTIVE_IPSET))
                return 0;
        r = libraries_plan_missing(plan, PHASE, DLIB_LIBIPSET, "ipset lines");
        if (r != 0)
                return MIN(r, 0);
        /* A kernel without ip_set, or a listing that fails, leaves the sets alone with the reason. */
        if (ipset_list_sets(&sets, &n, &err) < 0 && !(skip = strprintf("cannot list ipsets: %s", strna(err))))
                return -ENOMEM;
        used = calloc(m->n_entries + 1, sizeof(bool));
        if (!used)
                r = -ENOMEM;
        for (size_t i = 0; i < n && r >= 0; i++) {
                const ManifestEntry *e = ipset_selected_by(m, sets[i].name);

                if (!e)
                        continue;
                used[e - m->entries] = true;
                r = plan_ipset(plan, &sets[i], e);
        }
        ipset_infos_free(sets, n);
        for (size_t i = 0; i < m->n_entries && r >= 0; i++)
                if (m->entries[i].type == DIRECTIVE_IPSET && !used[i])
                        r = plan_ipset_placeholder(plan, &m->entries[i], skip);
        return r;
}

/* ---- the phase ---- */

static int keep_apply(Action *a, Context *ctx, char **ret_msg) {
        return 0;
}

static const ActionOps keep_ops = {
        .kind = "firewall",
        .apply = keep_apply,
};

int phase_firewall_plan(Context *ctx, Plan *plan, char **reterr) {
        CLEANUP(settings_done) Settings s = {};
        const Manifest *m = ctx->manifest;
        Action *a;
        int r;

        r = settings_read(m, &s);
        if (r < 0)
                return set_errmsg(reterr, r, "cannot read the firewall settings: %s", strerror(-r));
        if (s.keep) {
                a = plan_add(plan, &keep_ops, PHASE, "firewall", s.mode_reason, NULL);
                if (!a)
                        return -ENOMEM;
                a->present = false;
                return action_set_skip_code(a, "kept",
                                            "firewall keep: netfilter state, ipsets and IPVS left as they are");
        }
        r = plan_nft(plan, m, &s, reterr);
        if (r >= 0)
                r = plan_legacy(plan, &s, reterr);
        if (r >= 0)
                r = plan_ipsets(plan, m);
        if (r >= 0)
                r = phase_firewall_ipvs_plan(ctx, plan, m);
        return r;
}

static int parse_xtables_wait(const char *arg, char **reterr) {
        return cmdline_parse_duration("xtables-wait", arg, 0, CMDLINE_DURATION_MAX, &arg_xtables_wait_sec, reterr);
}

const PhaseOption phase_firewall_options[] = {
        { "xtables-wait", PHASE_OPTION_REQUIRED_ARG, "DURATION", "How long to wait for /run/xtables.lock (10s)",
          parse_xtables_wait },
        {},
};
