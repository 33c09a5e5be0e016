/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of node-reset's phases, in their order (see phases.h). */

#include "agent/engine/libraries.h"
#include "agent/node/etcd.h"
#include "agent/node/phase-options.h"
#include "agent/phases/phases.h"
#include "macro.h"

/* The backup comes before anything changes and takes the etcd snapshot while the member still
 * serves; the member leaves its cluster next, before kubelet stops and the pods phase removes a static
 * pod etcd (kubeadm reset runs remove-etcd-member before cleanup-node). Units that feed pods stop
 * before the pods phase, the runtime after it; processes that outlive their services die before
 * anything they hold is unmounted, and their cgroups go after them; systemd reloads after unit files
 * are gone. "verify" is not a row: it re-runs the observation of the selected phases (engine_verify). */
/* name, summary, acts on the tree (--root applies), planning function, libraries needed, done hook,
 * options, gate */
static const Phase phases[] = {
        { "backup", "save the node's PKI, kubeconfigs, configs and an etcd snapshot before anything is deleted", true,
          phase_backup_plan, 0, NULL, phase_backup_options,
          "the backup failed, and nothing is deleted without one (--no-backup to go on without)",
          backup_failure_goes_on },
        /* While the kubelet still runs to stop the evicted pods, and the API server (on a control
         * plane, its etcd member) still serves. */
        { "drain", "cordon this node and evict its pods through the Eviction API (--drain)", false, phase_drain_plan,
          DLIB_MASK(DLIB_LIBCURL), NULL, phase_drain_options,
          "the drain did not finish, and the node is not reset with pods on it (it stays cordoned)", NULL },
        { "etcd", "remove this node's member from its etcd cluster (never the last one, never external etcd)", false,
          phase_etcd_plan, DLIB_MASK(DLIB_LIBCURL), NULL, node_etcd_options, NULL, NULL },
        { "services-early", "stop, disable and mask kubelet and the agents that feed pods", false,
          phase_services_early_plan, DLIB_MASK(DLIB_LIBSYSTEMD), NULL, phase_unit_options, NULL, NULL },
        /* After kubelet, which would register the Node again; before the pods, the static pods of a
         * control plane's API server among them, and before the files phase removes the credentials. */
        { "node-object", "delete this node's Node object from the API server (--delete-node)", false,
          phase_node_object_plan, 0, NULL, phase_node_object_options, NULL, NULL },
        { "pods", "stop and remove every pod and container through the CRI, with the rescue ladder", false,
          phase_pods_plan, DLIB_MASK(DLIB_LIBCURL), NULL, phase_pods_options, NULL, NULL },
        { "services-late", "stop, disable and mask the container runtime, etcd and the timers", false,
          phase_services_late_plan, DLIB_MASK(DLIB_LIBSYSTEMD), NULL, NULL, NULL, NULL },
        { "processes", "kill the process trees that outlive their services (shims, conmon)", false,
          phase_processes_plan, 0, NULL, phase_processes_options, NULL, NULL },
        /* Not a tree phase: the cgroups are the running system's (its cgroup namespace), whatever --root
         * says, so a rescue system names the phase to have them removed. */
        { "cgroups", "remove the cgroup trees kubelet and the runtime left, once their processes are gone", false,
          phase_cgroups_plan, 0, NULL, NULL, NULL, NULL },
        { "mounts", "unmount what kubelet and the runtime left, deepest first", true, phase_mounts_plan, 0, NULL, NULL,
          NULL, NULL },
        { "firewall", "remove Kubernetes-owned netfilter state, ipsets and IPVS", false, phase_firewall_plan,
          DLIB_MASK(DLIB_LIBMNL), NULL, phase_firewall_options, NULL, NULL },
        { "network", "detach CNI BPF programs, remove their pins, policy rules, routes, links and network namespaces",
          false, phase_network_plan, DLIB_MASK(DLIB_LIBMNL), NULL, phase_network_options, NULL, NULL },
        { "files", "apply the file-removal manifest", true, phase_files_plan, 0, NULL, NULL, NULL, NULL },
        { "reload", "reload systemd once unit files are gone, reset the units' failed state, restart the host resolver",
          false, phase_reload_plan, DLIB_MASK(DLIB_LIBSYSTEMD), NULL, NULL, NULL, NULL },
};

void reset_phases_register(void) {
        phase_table_register(phases, ELEMENTSOF(phases));
}
