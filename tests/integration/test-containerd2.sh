#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# containerd 2.1 (Debian's 2.1.9, fetched by make deps, never installed) without kubelet: its own
# "containerd config default" (version 3: the CRI plugin split into io.containerd.cri.v1.images and
# io.containerd.cri.v1.runtime, the sandbox API's state, NRI on) at the default paths, in a root of
# the namespace's own (tests/integration/containerd/harness.sh). Pods are made through CRI v1 by the
# test client as kubelet makes them: containers with an emptyDir and a projected volume (a tmpfs) from
# /var/lib/kubelet/pods/UID/volumes, a CNI bridge network, host-network pods, and one container whose
# process ignores SIGTERM.
#
#   1. the CNI's DEL fails (calico without its API server), --phases pods,verify: detection names
#      containerd, the runtime row says 2.1 over CRI v1 and the conf dir from the version 3 table,
#      rung 2's rescue conflist goes into that dir and away again, every pod removed;
#   2. the default scope (kubeadm's: the runtime kept), every phase: no pod, process, volume mount,
#      netns or cni0 left, containerd answers on, its state and config stay, status is clean, a second
#      run changes nothing;
#   3. --with-runtime: containerd, its shims, its config, state (/run/containerd, /var/lib/containerd)
#      and its NRI socket go; status is clean.
# The services phases have no systemd here (no bus in the namespace): containerd is stopped by the
# processes phase, as on a node in a rescue shell. The cgroups phase is left out: the namespace sees
# the host's cgroup hierarchies.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
in_private_ns "$@"
CD_RUNTIME=containerd-2.1
. "$TOP/tests/integration/containerd/harness.sh"

cd_require
require_cmd python3 pivot_root
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" > /dev/null; }

eval "set -- $(trap -p EXIT)"
trap "cd_stop; $3" EXIT

cd_setup || { echo "FAIL: cannot set up containerd"; exit 1; }
cd_start || { echo "FAIL: cannot start containerd"; cd_diag; exit 1; }
agent() { cd_enter "$NODE_RESET" "$@"; }
# The node's own preparation as kubeadm join's preflight wants it: crictl in PATH (cri-tools'
# tarball puts it in /usr/local/bin), in the namespace's overlay of "/", else the rejoin verdict
# rightly fails every full run below.
cd_enter sh -c 'printf "#!/bin/sh\n" > /usr/local/bin/crictl && chmod 755 /usr/local/bin/crictl' ||
        { echo "FAIL: cannot lay crictl into the node"; exit 1; }
KUBELET=/var/lib/kubelet
PHASES=backup,etcd,services-early,pods,services-late,processes,mounts,firewall,network,files,reload,verify

# kubelet's volumes of N pods named PREFIX-i: an emptyDir (a directory) and the service account's
# projected volume (a tmpfs with the token), as pkg/volume/emptydir and projected lay them out.
kube_volumes() { # PREFIX N
        cd_enter sh -c "for i in \$(seq 0 $(($2 - 1))); do
                v=$KUBELET/pods/uid-$1-\$i/volumes
                mkdir -p \$v/kubernetes.io~empty-dir/data \$v/kubernetes.io~projected/kube-api-access &&
                mount -t tmpfs -o size=1m tmpfs \$v/kubernetes.io~projected/kube-api-access &&
                echo token > \$v/kubernetes.io~projected/kube-api-access/token || exit 1
        done"
}
# N pods: every 4th on the host network, each with a container, pod 0 with the hung one too.
pods() { # PREFIX N
        kube_volumes "$1" "$2" && cd_cri run-pods "$2" "$1" "$CD_CGROUP_PARENT" 4 1 8 "$KUBELET" > /dev/null ||
                { cd_diag; false; }
}
volume_mounts() { cd_enter sh -c "grep -c ' $KUBELET/pods/' /proc/self/mountinfo || true"; }
pod_processes() { cd_enter sh -c 'for p in /proc/[0-9]*; do readlink $p/exe; done 2>/dev/null | grep -c "^/pause" || true'; }
runtime_processes() { cd_enter sh -c 'for p in /proc/[0-9]*; do readlink $p/exe; done 2>/dev/null | grep -c "^/usr/bin/containerd" || true'; }
runtime_kept() {
        cd_enter ctr -a "$CD_SOCK" version > /dev/null &&
                cd_enter test -s /etc/containerd/config.toml -a -d /var/lib/containerd/io.containerd.content.v1.content
}
netd() { cd_enter ls -A "$CD_NETD"; }
rescue_files() { netd | grep -c "node-reset-rescue" || true; }
t_start=$(date +%s%N)

# --- 1. the CNI's DEL fails: rung 2 in the conf dir of the version 3 config ----------------------
pods gone 8 || fail "cannot create the pods"
assert "8 sandboxes, 9 containers (one hung) before" \
        test "$(cd_count sandboxes)" -eq 8 -a "$(cd_count containers)" -eq 9
assert "... with their emptyDir and projected volumes mounted" test "$(volume_mounts)" -eq 8
cd_fail_del on
cd_cri stop-sandbox "$(cd_cri list | awk '$1 == "sandbox" && $3 == "nr-test/gone-0" { print $2 }')" > "$WORK/stopp.txt"
assert "the CRI itself fails the way crictl stopp does" grep -q "error getting ClusterInformation: connection is unauthorized" "$WORK/stopp.txt"
agent --phases pods,verify -o json plan > "$WORK/plan.json"
assert "detection names containerd, from its config at the default path" jq_ "$WORK/plan.json" \
        "r['runtime']['name'] == 'containerd' and any(e.startswith('/etc/containerd/config.toml:') for e in r['runtime']['evidence'])"
assert "the runtime row: containerd 2.1 answers CRI v1, conf dir and config at the default paths" jq_ "$WORK/plan.json" \
        "(lambda a: a['cri_api'] == 'v1' and 'containerd 2.1.' in a['detail'] and 'runtime.v1.RuntimeService' in a['detail'] and 'config /etc/containerd/config.toml, CNI conf dir /etc/cni/net.d,' in a['detail'])(actions(r, kind='runtime')[0])"
assert "the config is version 3, with the split CRI plugin and NRI" \
        grep -q -e "^version = 3" -e "io.containerd.cri.v1.runtime'.cni]" -e "io.containerd.nri.v1.nri" "$CD_CONFIG"
assert "pods only: the CNI gets its full DEL" jq_ "$WORK/plan.json" \
        "actions(r, kind='cni-teardown')[0]['detail'].startswith('full DEL by bridge,host-local:')"
t=$(date +%s%N)
agent --phases pods,verify --yes -o json run > "$WORK/gone.json"; rc=$?
echo "  DEL failing: 8 pods reset in $(elapsed_ms "$t") ms"
assert "DEL failing: exit 0" test $rc -eq 0
assert "DEL failing: no sandbox, container or cni netns left" \
        test "$(cd_count sandboxes)" -eq 0 -a "$(cd_count containers)" -eq 0 -a "$(cd_count netns)" -eq 0
assert "DEL failing: every pod-network pod went by rung 2, with containerd 2.1's CNI error" jq_ "$WORK/gone.json" \
        "all('rung 2' in a['message'] and 'Unauthorized' in a['message'] for a in actions(r, kind='remove-pod') if a['detail'].startswith('pod'))" ||
        "$REPORT" "$WORK/gone.json" "[a['message'] for a in actions(r, kind='remove-pod')]"
assert "DEL failing: the host-network pods needed no rescue" jq_ "$WORK/gone.json" \
        "all(a['message'] == 'removed' for a in actions(r, kind='remove-pod') if a['detail'].startswith('host'))"
assert "DEL failing: the runtime row says rung 2 did it, in CRI v1" jq_ "$WORK/gone.json" \
        "(lambda a: 'rung 3 not needed' in a['message'] and a['cri_api'] == 'v1')(actions(r, kind='runtime')[0])"
assert "DEL failing: the rescue conflist stood in /etc/cni/net.d and is gone again" jq_ "$WORK/gone.json" \
        "any('/etc/cni/net.d/00-node-reset-rescue.conflist' in a['message'] for a in actions(r, kind='remove-pod'))"
assert "DEL failing: no rescue conflist left, the real one untouched" \
        test "$(rescue_files)" -eq 0 -a "$(netd)" = 10-nr-test.conflist
assert "DEL failing: the hung container's process is gone too" test "$(pod_processes)" -eq 0
assert "DEL failing: verified clean" jq_ "$WORK/gone.json" "r['residue'] == []"
cd_fail_del off
# The pods phase leaves the volumes to the mounts and files phases.
cd_enter sh -c "umount $KUBELET/pods/*/volumes/kubernetes.io~projected/*; rm -rf $KUBELET/pods"

# --- 2. the default scope, every phase: the runtime kept -----------------------------------------
pods keep 8 || fail "cannot create the pods"
netd_inode=$(cd_enter stat -c %i "$CD_NETD")
t=$(date +%s%N)
agent --phases "$PHASES" --yes -o json run > "$WORK/keep.json"; rc=$?
echo "  default scope: 8 pods, every phase, in $(elapsed_ms "$t") ms"
assert "default scope: exit 0, verified clean" test $rc -eq 0
assert "... no residue" jq_ "$WORK/keep.json" "r['residue'] == [] and not r['failed']"
assert "... every pod removed through CRI v1, no DEL (the later phases remove the bridge's state)" jq_ "$WORK/keep.json" \
        "len(actions(r, kind='remove-pod', result='changed')) == 8 and actions(r, kind='cni-teardown')[0]['detail'].startswith('no DEL by bridge,host-local')"
assert "... the hung container's process killed with the rest, none alive after the kill pass" jq_ "$WORK/keep.json" \
        "(lambda a: a['result'] == 'changed' and 'none alive after' in a['message'])(actions(r, kind='kill-pods')[0])"
assert "... no sandbox, pod process, volume mount or cni netns left" test "$(cd_count sandboxes)" -eq 0 -a \
        "$(pod_processes)" -eq 0 -a "$(volume_mounts)" -eq 0 -a "$(cd_count netns)" -eq 0
assert "... no cni0 bridge" test -z "$(cd_enter ip -o link show cni0 2>/dev/null)"
assert "... kubelet's pods gone" test -z "$(cd_enter ls -A $KUBELET 2>/dev/null)"
assert "... containerd answers on, its config and image store kept" runtime_kept
assert "... the CNI conf dir containerd watches emptied in place (same inode)" \
        test "$(cd_enter stat -c %i "$CD_NETD")" = "$netd_inode" -a -z "$(netd)"
agent --phases "$PHASES" -o json status > "$WORK/keep-status.json"; rc=$?
assert "default scope: status is clean" jq_ "$WORK/keep-status.json" "r['residue'] == [] and r['verdict'] == 'clean'"
agent --phases "$PHASES" --yes -o json run > "$WORK/keep2.json"; rc=$?
assert "default scope: a second run changes nothing" jq_ "$WORK/keep2.json" "not r['changed'] and r['residue'] == []"

# --- 3. --with-runtime: containerd 2.1's own state goes too --------------------------------------
cd_write_conflist
cd_wait_network_ready || fail "containerd does not load the CNI config written again"
pods gone2 4 || fail "cannot create the pods for --with-runtime"
assert "--with-runtime: NRI's socket is there before" cd_enter test -S /run/nri/nri.sock
t=$(date +%s%N)
agent --phases "$PHASES" --with-runtime --yes -o json run > "$WORK/with.json"; rc=$?
echo "  --with-runtime: 4 pods, every phase, in $(elapsed_ms "$t") ms"
assert "--with-runtime: exit 0, no residue" jq_ "$WORK/with.json" "r['residue'] == [] and not r['failed']"
assert "... the pods went through CRI v1 first" jq_ "$WORK/with.json" \
        "len(actions(r, kind='remove-pod', result='changed')) == 4 and actions(r, kind='runtime')[0]['cri_api'] == 'v1'"
assert "... containerd and its shims were stopped (no systemd: by the processes phase)" \
        test "$(runtime_processes)" -eq 0 -a "$(pod_processes)" -eq 0
for p in /etc/containerd /var/lib/containerd /run/containerd /run/nri /var/lib/cni; do
        assert "... $p is gone" cd_enter test ! -e "$p"
done
assert "... no mount of containerd's or kubelet's left" \
        test -z "$(cd_enter grep -E ' (/run/containerd|/run/netns|/var/lib/kubelet)/' /proc/self/mountinfo)"
# Nothing of containerd is left to detect it by: the runtime is named.
agent --phases "$PHASES" --with-runtime=containerd -o json status > "$WORK/with-status.json"
assert "--with-runtime: status is clean" jq_ "$WORK/with-status.json" "r['residue'] == [] and r['verdict'] == 'clean'"

# --- teardown ---------------------------------------------------------------------------------
cd_stop_checked
echo "  whole test: $(elapsed_ms "$t_start") ms"
finish
