/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which "bpf-prog" line a BPF program's name falls under (network-bpf-owner.c). */
#pragma once

#include "agent/config/manifest.h"

/* The first "bpf-prog PREFIX" line whose prefix starts name, or NULL (for an empty name too). */
const ManifestEntry *network_bpf_prog_owner(const Manifest *m, const char *name);
