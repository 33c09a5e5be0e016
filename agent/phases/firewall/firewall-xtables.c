/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firewall phase's legacy x_tables rows (libip4tc, libip6tc): only the tables the kernel lists,
 * one commit per table under /run/xtables.lock, the two families on two threads. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <sys/socket.h>

#include "agent/base/parallel.h"
#include "agent/engine/cmdline.h"
#include "agent/engine/context.h"
#include "agent/engine/libraries.h"
#include "agent/phases/firewall/firewall-table.h"
#include "agent/phases/firewall/firewall-xtables.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/fwclass.h"
#include "netreset/xtables.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

#define PHASE "firewall"

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
                FirewallTableData *d = x->action->data;

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
                        if ((((FirewallTableData *) actions[i]->data)->family == AF_INET6) == pass)
                                items[k++].action = actions[i];
        while (fam[0].n < n && ((FirewallTableData *) items[fam[0].n].action->data)->family != AF_INET6)
                fam[0].n++;
        fam[1] = (LegacyFamilyReset) { .items = items + fam[0].n, .n = n - fam[0].n };
        /* A family with no table to reset gets no thread. */
        parallel_each(legacy_family_reset, fam + (fam[0].n == 0), (fam[0].n > 0) + (fam[1].n > 0),
                      sizeof(LegacyFamilyReset));
        for (size_t i = 0; i < n; i++) {
                if (items[i].r < 0)
                        action_recordf(items[i].action, items[i].r, "%s", items[i].msg ?: strerror(-items[i].r));
                else
                        firewall_record_counts(items[i].action, &items[i].done, items[i].r > 0, false);
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
        const FirewallTableData *d = a->data;
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
        return firewall_residue_msg(&c, ret_msg);
}

static const ActionOps legacy_ops = {
        .kind = "xtables",
        .apply_batch = legacy_apply_batch,
        .check = legacy_check,
        .free_data = firewall_table_data_free,
};

static const char *legacy_family(int family) {
        return family == AF_INET6 ? "ip6" : "ip";
}

/* xt: this table's observation (taken). */
static int plan_legacy_table(Plan *plan, const FirewallSettings *s, int family, const char *table, XtTable *xt) {
        CLEANUP(xt_table_freep) XtTable *owned = xt;
        cleanup_free char *target = NULL;
        FirewallTableData *d;
        FwCounts c;
        Action *a;

        xt_table_get_counts(owned, &c);
        target = strprintf("legacy %s %s", legacy_family(family), table);
        if (!target)
                return -ENOMEM;
        d = firewall_table_data_new(family, table, false, s, NULL);
        if (!d)
                return -ENOMEM;
        /* Owned mode reads the table again under the lock; flush mode can use what it saw. */
        if (s->mode == FW_MODE_FLUSH)
                d->xt = TAKE_PTR(owned);
        a = plan_add(plan, &legacy_ops, PHASE, target, s->mode_reason, d);
        if (!a)
                return -ENOMEM;
        a->present = fw_counts_any(&c);
        return firewall_set_counts_detail(a, s->mode, &c);
}

/* One family's tables, read on one of two threads, as they are reset (legacy_family_reset()). */
typedef struct LegacyFamilyRead {
        int family;
        char **tables; /* the kernel's list; NULL: the family is not read */
        XtTable **xt;  /* one per table */
        const FirewallSettings *s;
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

int firewall_plan_xtables(Plan *plan, const FirewallSettings *s, char **reterr) {
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

int firewall_xtables_parse_wait(const char *arg, char **reterr) {
        return cmdline_parse_duration("xtables-wait", arg, 0, CMDLINE_DURATION_MAX, &arg_xtables_wait_sec, reterr);
}
