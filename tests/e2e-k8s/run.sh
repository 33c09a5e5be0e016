#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# "make e2e-k8s": real Kubernetes 1.20 (built by tools/k8s-build.sh from Debian's source package) in
# systemd-nspawn nodes, each with its own systemd, containerd and kubelet; node-reset resets a node
# that a real kubeadm and kubelet built, and a real "kubeadm join" follows. Prints one line per check
# and a closing "N passed, N failed". Needs root; runs in its own mount and network namespaces (the
# latter is the nodes' switch), nothing is downloaded, and only what it made is removed at the end,
# on failure too.
#
# Scenarios (tests/e2e-k8s/cluster.sh), in this order: "rejoin" (kubeadm init on cp1, join of w1,
# pods with every kind of volume; node-reset run --delete-node; status clean; kubeadm join again,
# nothing restarted or cleaned by hand; a new pod runs; the PV's data is intact), "side-by-side"
# (kubeadm reset -f and the manual steps against node-reset, residue and time), "rejoin-removed-netd"
# (a manifest removes /etc/cni; containerd is restarted; the rejoin works), "control-plane" (a
# second control plane with stacked etcd leaves and joins again; the last one passes kubeadm init's
# preflight) and "master-gone" (the control plane stopped for good; the orphan unit resets a worker).
# "dockershim" (a worker whose runtime is Docker through kubelet's dockershim, Debian's docker.io
# laid into it, beside an operator's container with a volume; the reset removes kubelet's containers
# through Docker and keeps the rest; kubeadm join again) runs before "control-plane", which resets
# cp1 last. "external-etcd" (tests/e2e-k8s/external-etcd.sh: its own control plane xe1, kubeadm init
# with etcd.external naming an etcd the node runs as the site's own etcd.service, data in
# /var/lib/etcd, certificates in /etc/etcd/pki; after node-reset that etcd still runs with its member,
# its keys, its data and its certificates, and kubeadm init's preflight passes) needs no other node.
#
# Environment: O (build directory with node-reset, default build), E2E_K8S_SCENARIOS (default
# "rejoin side-by-side rejoin-removed-netd dockershim external-etcd control-plane master-gone"), E2E_K8S_DIR (a Kubernetes
# build other than tools/k8s-build.sh's cache directory), E2E_K8S_NETD=empty (see scenario_rejoin),
# E2E_K8S_XE_CONFIG (where external-etcd's kubeadm configuration lives; see external-etcd.sh),
# E2E_K8S_KEEP=1 (keep the nodes running at the end until $W/release exists, for debugging),
# E2E_K8S_WORK (parent of the work directory, default /var/tmp). Reports and logs are copied to
# $O/e2e-k8s at the end.
#
# The fleet scenarios (tests/e2e-k8s/fleet.sh: the real ansible-playbook over SSH into the nodes),
# not in the default list, in this order when together: "remove-node-live" (remove-node.yml drains
# w1 behind a PodDisruptionBudget, resets it, w1 joins again), "forget-dead-control-plane" (cp3 of
# three stacked control planes gone for good, forgotten from cp1, a new cp3 joins) and
# "cluster-delete" (cluster-delete.yml with a status endpoint, clean and with a busy worker).
# "argo-cluster-delete" (examples/argo/cluster-delete.yaml run by tests/argo/argo_runner.py: its app
# deletes and waits against this cluster's API, its resets over SSH) also ends the cluster: alone.
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD
E2E_DIR=$TOP/tests/e2e-k8s
O=${O:-build}
case "$O" in /*) ;; *) O="$TOP/$O" ;; esac
AGENT=$O/node-reset

if [ -z "${NR_E2E_K8S_NS:-}" ]; then
        [ "$(id -u)" -eq 0 ] || { echo "e2e-k8s: needs root (sudo make e2e-k8s)" >&2; exit 1; }
        # private mount and network namespaces: every mount and link made below dies with them
        NR_E2E_K8S_NS=1 exec unshare -m -n --propagation private -- "$BASH" "$0" "$@"
fi

. "$E2E_DIR/node.sh"
. "$E2E_DIR/cluster.sh"
. "$E2E_DIR/external-etcd.sh"
. "$E2E_DIR/fleet.sh"

passed=0 failed=0
for n in "${!ALL_NODE_IP[@]}"; do NODE_IP[$n]=${ALL_NODE_IP[$n]}; done
check() { # check "description" command...
        local d=$1
        shift
        if "$@"; then
                echo "ok: $d"
                passed=$((passed + 1))
        else
                echo "FAIL: $d"
                failed=$((failed + 1))
                return 1
        fi
}

skip() { echo "SKIP: $*"; exit 77; }
for c in systemd-nspawn nsenter ctr containerd runc ip; do
        command -v "$c" >/dev/null 2>&1 || skip "'$c' is not installed (make deps)"
done
[ -x /usr/lib/cni/bridge ] || skip "containernetworking-plugins is not installed (make deps)"
[ -x "$AGENT" ] || { echo "e2e-k8s: $AGENT is not built" >&2; exit 1; }
K8S_DIR=${E2E_K8S_DIR:-$("$TOP/tools/k8s-build.sh" --print-dir)} ||
        skip "Kubernetes is not built for this version of tools/k8s-build.sh (sudo make deps builds it)"

t_start=$SECONDS
W=$(mktemp -d "${E2E_K8S_WORK:-/var/tmp}/nr-e2e-k8s.XXXXXX")
OUT=$W/out
mkdir -p "$OUT" "$W/nodes"
SWITCH_IP=10.240.0.1

cleanup() {
        local n
        trap - EXIT INT TERM
        if [ "${E2E_K8S_KEEP:-0}" = 1 ]; then
                # the nodes live in this process's namespaces: hold them until asked to clean up
                echo "e2e-k8s: E2E_K8S_KEEP=1: nodes kept; nsenter -t $$ -m -n for the switch; touch $W/release to clean up"
                while [ ! -e "$W/release" ]; do sleep 2; done
        fi
        # the reports and logs outlive the work directory, as e2e-vm's do
        rm -rf "$O/e2e-k8s" && cp -r "$OUT" "$O/e2e-k8s" && echo "e2e-k8s: reports and logs in $O/e2e-k8s"
        # bash reports each SIGKILLed node as a "Killed" job on stderr; cleanup reports on stdout
        exec 2>/dev/null
        fleet_kill "${FLEET_PIDS[@]}"
        for n in "${NODES[@]}"; do
                node_stop "$n"
        done
        umount -R -l "$W" 2>/dev/null
        rm -rf --one-file-system "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# /run of our own: "ip netns add" binds its files there, never in the host's /run.
mount -t tmpfs -o mode=0755 nr-e2e-k8s-run /run || { echo "e2e-k8s: cannot mount /run" >&2; exit 1; }
ip link set lo up
ip link add nr-switch type bridge && ip addr add "$SWITCH_IP/24" dev nr-switch && ip link set nr-switch up ||
        { echo "e2e-k8s: cannot make the switch bridge" >&2; exit 1; }

echo "e2e-k8s: Kubernetes from $K8S_DIR, work directory $W"
node_layer

# rejoin first: it makes the cluster (cp1) the others join
read -r -a SCENARIOS <<<"${E2E_K8S_SCENARIOS:-rejoin side-by-side rejoin-removed-netd dockershim external-etcd control-plane master-gone}"
for s in "${SCENARIOS[@]}"; do
        case "$s" in
        remove-node-live) scenario_remove_node_live ;;
        forget-dead-control-plane) scenario_forget_dead_control_plane ;;
        cluster-delete) scenario_cluster_delete ;;
        argo-cluster-delete) scenario_argo_cluster_delete ;;
        rejoin) scenario_rejoin ;;
        side-by-side) scenario_side_by_side ;;
        rejoin-removed-netd) scenario_rejoin_removed_netd ;;
        control-plane) scenario_control_plane ;;
        master-gone) scenario_master_gone ;;
        dockershim) scenario_dockershim ;;
        external-etcd) scenario_external_etcd ;;
        *) echo "e2e-k8s: unknown scenario $s" >&2; exit 2 ;;
        esac
done
nodes_peak_ram

echo "e2e-k8s: wall time $((SECONDS - t_start)) s; peak RAM used by the nodes ${PEAK_RAM_MB:-?} MB"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
