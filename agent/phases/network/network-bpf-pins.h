/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's BPF pins (network-bpf-pins.c). */
#pragma once

#include "agent/config/manifest.h"
#include "agent/engine/plan.h"

/* A row for every path a "bpf-pin" line matches (a placeholder for a line that matches none). */
int network_bpf_plan_pins(Plan *plan, const Manifest *m);
