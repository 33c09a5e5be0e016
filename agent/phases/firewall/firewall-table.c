/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One nf_tables or legacy table as a firewall row: its data, and the words of its counts in the plan,
 * the report and verify. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/phases/firewall/firewall-table.h"
#include "macro.h"
#include "netreset/fwclass.h"
#include "netreset/nft.h"
#include "netreset/xtables.h"
#include "string-util.h"

NftSnapshot *firewall_snapshot_unref(NftSnapshot *s) {
        if (s && --s->n_ref == 0) {
                nft_ruleset_free(s->rs);
                free(s);
        }
        return NULL;
}

void firewall_table_data_free(void *p) {
        FirewallTableData *d = p;

        firewall_snapshot_unref(d->snap);
        xt_table_free(d->xt);
        fwclass_free(d->cls);
        free(d->table);
        free(d);
}

FirewallTableData *firewall_table_data_new(int family, const char *table, bool whole, const FirewallSettings *s,
                                           NftSnapshot *snap) {
        FirewallTableData *d = calloc(1, sizeof(FirewallTableData));

        if (!d)
                return NULL;
        *d = (FirewallTableData) { .family = family, .whole = whole, .mode = s->mode, .snap = snap };
        if (snap)
                snap->n_ref++;
        d->table = strdup(table);
        d->cls = fwclass_dup(s->cls);
        if (!d->table || !d->cls) {
                firewall_table_data_free(d);
                return NULL;
        }
        return d;
}

/* "5430 rules"; nf_tables flush mode does not read rules one by one, so there: "every rule". */
const char *firewall_rules_text(const FwCounts *c, char buf[static 32]) {
        if (c->rules_uncounted)
                return c->owned_rules > 0 ? "every rule" : "no rules";
        snprintf(buf, 32, "%u rule%s", c->owned_rules, c->owned_rules == 1 ? "" : "s");
        return buf;
}

/* "11 owned chains, 322 owned rules, 8 kept rules" or "flush: 330 rules, 12 user chains, 1 policy
 * to ACCEPT": what the plan shows. */
int firewall_set_counts_detail(Action *a, FwMode mode, const FwCounts *c) {
        char buf[32];

        if (mode == FW_MODE_FLUSH)
                return action_set_detail(a, "flush: %s, %u user chains, %u polic%s to ACCEPT",
                                         firewall_rules_text(c, buf), c->chains, c->policies,
                                         c->policies == 1 ? "y" : "ies");
        return action_set_detail(a, "%u owned chains, %u owned rules, %u kept rules", c->owned_chains, c->owned_rules,
                                 c->kept_rules);
}

/* What verify and status say is left. */
int firewall_residue_msg(const FwCounts *c, char **ret_msg) {
        char buf[32];

        *ret_msg = strprintf("still there: %u chains, %s, %u policies to reset", c->owned_chains,
                             firewall_rules_text(c, buf), c->policies);
        return 1;
}

/* What the report shows once it is done. */
void firewall_record_counts(Action *a, const FwCounts *c, bool changed, bool whole) {
        char buf[32];

        if (!changed)
                action_recordf(a, 0, whole ? "not present" : "nothing to remove");
        else if (whole)
                action_recordf(a, 1, "deleted the table: %u chains, %s", c->chains, firewall_rules_text(c, buf));
        else if (c->policies > 0)
                action_recordf(a, 1, "removed %s and %u chains, set %u polic%s to ACCEPT", firewall_rules_text(c, buf),
                               c->owned_chains, c->policies, c->policies == 1 ? "y" : "ies");
        else
                action_recordf(a, 1, "removed %s and %u chains", firewall_rules_text(c, buf), c->owned_chains);
}
