/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firewall phase's legacy x_tables rows (firewall-xtables.c). */
#pragma once

#include "agent/engine/plan.h"
#include "agent/phases/firewall/firewall-settings.h"

/* A row per legacy table of each family the kernel lists (/proc/net/ip{,6}_tables_names). */
int firewall_plan_xtables(Plan *plan, const FirewallSettings *s, char **reterr);

/* --xtables-wait: how long to wait for /run/xtables.lock, in seconds (10). */
int firewall_xtables_parse_wait(const char *arg, char **reterr);
