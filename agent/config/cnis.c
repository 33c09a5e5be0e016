/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CNIs' table: one row per CNI, each fact with the CNI's own source beside it. */

#include "agent/config/cnis.h"
#include "macro.h"
#include "string-util.h"

const CniInfo cni_table[] = {
        /* cilium: cilium/cilium pkg/defaults/defaults.go (RuntimePath /var/run/cilium, StateDir
         * /var/lib/cilium, BPFFSRoot /sys/fs/bpf and its tc/globals pins), pkg/datapath/linux/
         * devices (cilium_host, cilium_net, cilium_vxlan), pkg/datapath/iptables (CILIUM_ chains). */
        {
                .name = "cilium",
                .fragment = true,
                .types = { "cilium-cni", "cilium" },
                .marks = {
                        { "cilium's host link", NULL, "cilium_host" },
                        { "cilium's link", NULL, "cilium_net" },
                        { "cilium's tunnel link", NULL, "cilium_vxlan" },
                        { "cilium's BPF pins", "/sys/fs/bpf/tc/globals", "cilium_*" },
                        { "cilium's state directory", "/var/run/cilium", NULL },
                        { "cilium's state directory", "/run/cilium", NULL },
                        { "cilium's state directory", "/var/lib/cilium", NULL },
                },
                .chain_prefixes = { "CILIUM_" },
                .agent = true,
        },
        /* calico: projectcalico/calico felix/dataplane/linux (cali + 11 hex digits of a hash per
         * workload, vxlan.calico, vxlan-v6.calico), felix/bpf (cali_ pins), felix's state in
         * /var/lib/calico and /run/calico, felix/iptables (cali- chains). */
        {
                .name = "calico",
                .fragment = true,
                .types = { "calico" },
                .marks = {
                        { "a calico workload link", NULL,
                          "cali[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]" },
                        { "calico's VXLAN link", NULL, "vxlan.calico" },
                        { "calico's VXLAN link", NULL, "vxlan-v6.calico" },
                        { "calico's BPF pins", "/sys/fs/bpf/tc/globals", "cali_*" },
                        { "calico's state directory", "/var/lib/calico", NULL },
                        { "calico's state directory", "/run/calico", NULL },
                },
                .chain_prefixes = { "cali-" },
                .agent = true,
        },
        /* flannel: flannel-io/flannel pkg/backend/vxlan (flannel.<VNI>, flannel-v6.<VNI>),
         * pkg/backend/wireguard (flannel-wg, flannel-wg-v6), the subnet lease /run/flannel/subnet.env,
         * the cni plugin's delegate state in /var/lib/cni/flannel, pkg/trafficmngr/iptables
         * (FLANNEL-POSTRTG, FLANNEL-FWD). Its plugin delegates to bridge: node-local. canal is
         * calico's plugin on flannel's network: its configuration file names it. */
        {
                .name = "flannel",
                .fragment = true,
                .types = { "flannel" },
                .file_names = { "canal" },
                .marks = {
                        { "flannel's VXLAN link", NULL, "flannel.*" },
                        { "flannel's VXLAN link", NULL, "flannel-v6.*" },
                        { "flannel's WireGuard link", NULL, "flannel-wg*" },
                        { "flannel's subnet lease", "/run/flannel", NULL },
                        { "the flannel plugin's state", CNI_CACHE_DIR "/flannel", NULL },
                },
                .chain_prefixes = { "FLANNEL-" },
                .node_local = true,
        },
        /* weave: weaveworks/weave prog/weaver (the weave bridge, vethwe-* links), /var/lib/weave. */
        {
                .name = "weave",
                .fragment = true,
                .types = { "weave-net", "weave" },
                .marks = {
                        { "weave's bridge", NULL, "weave" },
                        { "a weave link", NULL, "vethwe-*" },
                        { "weave's state directory", "/var/lib/weave", NULL },
                },
                .agent = true,
        },
        /* kube-router: cloudnativelabs/kube-router pkg/controllers/routing (kube-bridge, kube-dummy-if),
         * /var/lib/kube-router, pkg/controllers/netpol (KUBE-ROUTER-, KUBE-POD-FW- chains); it
         * configures the plain bridge plugin, so its configuration's file name tells it. */
        {
                .name = "kube-router",
                .fragment = true,
                .types = { "kube-router" },
                .file_names = { "kuberouter", "kube-router" },
                .marks = {
                        { "kube-router's bridge", NULL, "kube-bridge" },
                        { "kube-router's dummy link", NULL, "kube-dummy-if" },
                        { "kube-router's state directory", "/var/lib/kube-router", NULL },
                },
                .chain_prefixes = { "KUBE-ROUTER-" },
        },
        /* The CNI project's reference plugins (containernetworking/plugins): their DEL undoes what
         * they made on the node only; portmap's, bridge's and firewall's chains are CNI-. */
        {
                .name = "plugins",
                .types = { "bridge", "host-local", "portmap", "loopback", "ptp", "tuning", "static" },
                .chain_prefixes = { "CNI-" },
                .node_local = true,
        },
        /* CNIs with no profile of their own, whose DEL needs their agent (antrea-io/antrea,
         * kubeovn/kube-ovn, k8snetworkplumbingwg/multus-cni). */
        { .name = "antrea", .types = { "antrea" }, .agent = true },
        { .name = "kube-ovn", .types = { "kube-ovn" }, .agent = true },
        { .name = "multus", .types = { "multus" }, .agent = true },
};

const size_t cni_table_n = ELEMENTSOF(cni_table);

const CniInfo *cni_by_type(const char *type) {
        CNI_FOREACH(c)
                CNI_LIST_FOREACH(t, c->types)
                        if (streq(*t, type))
                                return c;
        return NULL;
}

const CniInfo *cni_by_name(const char *name) {
        CNI_FOREACH(c)
                if (streq(c->name, name))
                        return c;
        return NULL;
}
