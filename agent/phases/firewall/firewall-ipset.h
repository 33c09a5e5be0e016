/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firewall phase's ipset rows (firewall-ipset.c). */
#pragma once

#include "agent/config/manifest.h"
#include "agent/engine/plan.h"

/* A row per set an "ipset" line names (a placeholder for a line that names none). */
int firewall_plan_ipsets(Plan *plan, const Manifest *m);
