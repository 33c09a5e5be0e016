/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's BPF part: a CNI's tc and XDP programs, its cgroup programs and its pins. */

/* A name is where ownership starts, never where it ends. A "bpf-prog PREFIX" line names the programs
 * that may be a CNI's: those whose name starts with PREFIX, the one thing every CNI sets and the
 * kernel keeps. Such a program is the CNI's by where it is: on a link the phase deletes (the CNI's
 * own devices) it goes with the link; on a cgroup root a "bpf-cgroup" line names (the CNI's own
 * cgroup) it is detached; on a link that stays (a host NIC) it is the CNI's only when its BPF link,
 * itself or one of the maps it uses is pinned under a "bpf-pin" path (cilium's programs all use its
 * cilium_calls_* and cilium_* maps in /sys/fs/bpf/tc/globals, calico's its cali_* maps there).
 * Without that evidence it is a host's program that happens to share the prefix: its row says so,
 * skipped ("not-owned"), and it is never detached. The shipped prefixes, from the CNIs' sources:
 * - cilium "cil_": bpf/bpf_host.c, bpf_lxc.c, bpf_overlay.c, bpf_xdp.c and bpf_sock.c name their
 *   entry points cil_from_netdev, cil_to_netdev, cil_from_host, cil_to_host, cil_from_container,
 *   cil_xdp_entry, cil_sock4_connect, cil_sock6_sendmsg, ...; its pins are /sys/fs/bpf/tc/globals/
 *   cilium_* and /sys/fs/bpf/cilium, the maps "cilium cleanup" (cilium/cmd/cleanup.go) removes;
 * - calico "calico_" and "cali_": felix/bpf-gpl's connect-time load balancer is calico_connect_v4,
 *   calico_sendmsg_v4, ... (connect_balancer*.c), its tc programs calico_tc_*, and what it attaches
 *   to each interface is the preamble cali_tc_preamble (tc_preamble.c). Its pins live in
 *   /sys/fs/bpf/calico and /sys/fs/bpf/calico_connect4 (felix/bpf/ut, nat/connecttime.go).
 * A host's own program (any other name) is never touched, on whichever hook it sits.
 *
 * Where: tc (clsact ingress and egress), tcx (what cilium >= 1.16 uses, through BPF links) and XDP
 * on every link the node keeps, with the evidence above; an attachment a BPF link holds is detached
 * through its link; links the phase deletes take their programs with them and get no row.
 * Detaching from a guarded link (the NIC of the default route) is allowed on purpose: it gives the
 * NIC back its plain kernel path. The clsact qdisc goes too once the CNI's filters were the last on
 * it. Cgroup programs only on the cgroup
 * roots "bpf-cgroup" lines name (cilium's /run/cilium/cgroupv2, calico's /run/calico/cgroup), each
 * a cgroup2 mount point in mountinfo, and nowhere else. Pins only at the paths "bpf-pin" lines
 * name, and only on a bpf file system.
 *
 * Plan, then act: every program is a row naming the program, the link, the hook and the evidence;
 * at apply time the program id is checked again (XDP atomically, with XDP_FLAGS_REPLACE), and
 * another program in its place is left alone. */

#include <errno.h>
#include <stdlib.h>

#include "agent/engine/libraries.h"
#include "agent/phases/network/network-bpf-cgroup.h"
#include "agent/phases/network/network-bpf-mounts.h"
#include "agent/phases/network/network-bpf-netdev.h"
#include "agent/phases/network/network-bpf-pins.h"
#include "agent/phases/network/network-bpf.h"
#include "macro.h"

bool network_bpf_wanted(const Manifest *m) {
        for (size_t i = 0; i < m->n_entries; i++)
                if (m->entries[i].type == DIRECTIVE_BPF_PROG || m->entries[i].type == DIRECTIVE_BPF_CGROUP ||
                    m->entries[i].type == DIRECTIVE_BPF_PIN || m->entries[i].type == DIRECTIVE_BPF_MOUNT)
                        return true;
        return false;
}

int network_bpf_plan(Context *ctx, Plan *plan, const NetworkObservation *o, char **reterr) {
        const Manifest *m = ctx->manifest;
        cleanup_free bool *foreign = NULL;
        size_t n_roots = 0;
        int k;

        /* Pins are removed with plain unlinkat(); programs need libbpf to be read and detached. */
        k = libraries_plan_missing(plan, "network", DLIB_LIBBPF, "BPF program lines");
        if (k < 0)
                return k;
        if (k > 0) {
                k = network_bpf_plan_pins(plan, m);
                return k;
        }
        foreign = calloc(m->n_entries + 1, sizeof(bool));
        if (!foreign)
                return -ENOMEM;
        k = network_bpf_plan_netdev(plan, o, m, reterr);
        MANIFEST_FOREACH(e, m, DIRECTIVE_BPF_CGROUP) {
                if (k < 0)
                        break;
                k = network_bpf_plan_cgroup_root(ctx, plan, m, e, &foreign[n_roots++], reterr);
        }
        if (k >= 0)
                k = network_bpf_plan_pins(plan, m);
        /* Last: a mount is unmounted only after the programs and pins in it are gone. */
        if (k >= 0)
                k = network_bpf_plan_mounts(ctx, plan, m, foreign);
        return k;
}
