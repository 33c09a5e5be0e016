/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's tc, tcx and XDP programs (network-bpf-netdev.c). */
#pragma once

#include "agent/config/manifest.h"
#include "agent/phases/network/network-observation.h"

/* A row for every program a "bpf-prog" line names on a link the phase keeps: the CNI's (its BPF link,
 * itself or one of its maps pinned under a "bpf-pin" path) to detach, any other skipped ("not-owned"). */
int network_bpf_plan_netdev(Plan *plan, const NetworkObservation *o, const Manifest *m, char **reterr);
