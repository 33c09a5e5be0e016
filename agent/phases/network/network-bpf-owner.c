/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which "bpf-prog" line a BPF program's name falls under: where a CNI's ownership starts, never where
 * it ends (network-bpf.c). */

#include "agent/phases/network/network-bpf-owner.h"
#include "string-util.h"

const ManifestEntry *network_bpf_prog_owner(const Manifest *m, const char *name) {
        if (isempty(name))
                return NULL;
        MANIFEST_FOREACH(e, m, DIRECTIVE_BPF_PROG)
                if (startswith(name, e->args[0]))
                        return e;
        return NULL;
}
