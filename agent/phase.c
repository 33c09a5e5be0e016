/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fixed order of reset phases: adding a phase is one row here plus its module. */

#include "agent/phase.h"
#include "macro.h"
#include "string-util.h"

/* services-early, pods, services-late and processes come before mounts once they exist;
 * "verify" is not a row: it re-runs the observation of the selected phases (engine_verify). */
static const Phase phases[] = {
        { "mounts", "unmount what kubelet and the runtime left, deepest first", phase_mounts_plan },
        { "firewall", "remove Kubernetes-owned netfilter state, ipsets and IPVS", phase_firewall_plan },
        { "network", "delete CNI links, cni network namespaces and CNI routes", phase_network_plan },
        { "files", "apply the file-removal manifest", phase_files_plan },
};

const Phase *phase_table(size_t *ret_n) {
        *ret_n = ELEMENTSOF(phases);
        return phases;
}

const Phase *phase_find(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(phases); i++)
                if (streq(phases[i].name, name))
                        return &phases[i];
        return NULL;
}
