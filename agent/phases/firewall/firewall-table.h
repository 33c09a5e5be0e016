/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One nf_tables or legacy table as a firewall row (firewall-table.c). */
#pragma once

#include <stdbool.h>

#include "agent/engine/plan.h"
#include "agent/phases/firewall/firewall-settings.h"
#include "netreset/fwclass.h"
#include "netreset/nft.h"
#include "netreset/xtables.h"

/* The plan's observation of one nf_tables family, shared by that family's actions: the transaction
 * is built from it (the kernel refuses it if the ruleset changed since), so a run reads each
 * family once. */
typedef struct NftSnapshot {
        unsigned n_ref;
        NftRuleset *rs;
} NftSnapshot;

/* One nf_tables or legacy table, as an action's data. */
typedef struct FirewallTableData {
        int family; /* NFPROTO_IPV4/IPV6/... for nf_tables, AF_INET/AF_INET6 for legacy */
        char *table;
        bool whole; /* nf_tables: delete the whole table ("nft-table") */
        FwMode mode;
        FwClass *cls;
        NftSnapshot *snap; /* nf_tables only */
        XtTable *xt;       /* legacy, flush mode: the plan's observation, reused (xtables.h) */
} FirewallTableData;

NftSnapshot *firewall_snapshot_unref(NftSnapshot *s);
/* A table row's data in the settings' mode (snap: nf_tables only, counted); NULL on OOM. */
FirewallTableData *firewall_table_data_new(int family, const char *table, bool whole, const FirewallSettings *s,
                                           NftSnapshot *snap);
void firewall_table_data_free(void *p);

/* "5430 rules"; nf_tables flush mode does not read rules one by one, so there: "every rule". */
const char *firewall_rules_text(const FwCounts *c, char buf[static 32]);
/* The plan's detail of a table row: "11 owned chains, 322 owned rules, 8 kept rules", or in flush mode
 * "flush: 330 rules, 12 user chains, 1 policy to ACCEPT". */
int firewall_set_counts_detail(Action *a, FwMode mode, const FwCounts *c);
/* What verify and status say is left: 1 with *ret_msg. */
int firewall_residue_msg(const FwCounts *c, char **ret_msg);
/* What the report shows once a table is done. */
void firewall_record_counts(Action *a, const FwCounts *c, bool changed, bool whole);
