/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firewall phase's nf_tables rows (firewall-nft.c). */
#pragma once

#include "agent/config/manifest.h"
#include "agent/engine/plan.h"
#include "agent/phases/firewall/firewall-settings.h"

/* The iptables-nft tables of each family, then the tables the manifest lists in it, each family read
 * once (v4 and v6 on two threads). */
int firewall_plan_nft(Plan *plan, const Manifest *m, const FirewallSettings *s, char **reterr);
