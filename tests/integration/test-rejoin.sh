#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The rejoin proof, on the real containerd fixture (Debian's 1.6 with runc, private pid+mount+net
# namespaces): a kubeadm worker whose containerd keeps its configuration in the node's
# /etc/containerd, its images in /var/lib/containerd and its CNI plugins in /opt/cni/bin. The
# detected (kubeadm) profile resets it in the default scope; then only what a join writes comes back
# (the CNI's configuration, kubelet's files) and a new pod sandbox runs on the CNI bridge with the
# kept image and plugin binaries - nothing reinstalled, nothing re-imported, and nothing restarted:
# kubeadm join does not restart containerd, which watches its CNI conf dir by inode, so the reset
# must have emptied that directory and kept it. A second worker is reset with --with-runtime:
# containerd's configuration, images and the plugins are gone.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
in_private_ns "$@"
. "$TOP/tests/integration/containerd/harness.sh"

cd_require
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" > /dev/null; }
eval "set -- $(trap -p EXIT)"
trap "cd_stop; $3" EXIT

# The worker's tree: containerd's config, root, CNI conf and plugin dirs are the node's own paths,
# and the harness's config.toml is a link to the node's, so a restart reads what the reset left.
worker() { # dir
        NODE=$1
        mkdir -p "$NODE"/etc/containerd "$NODE"/var/lib/containerd "$NODE"/etc/cni/net.d "$NODE"/opt/cni/bin \
                "$NODE"/var/lib/cni/networks "$NODE"/etc/kubernetes/pki "$NODE"/etc/kubernetes/manifests \
                "$NODE"/etc/systemd/system/kubelet.service.d "$NODE"/var/lib/kubelet/pki
        sed -e "s|^root = .*|root = \"$NODE/var/lib/containerd\"|" \
                -e "s|bin_dir = .*|bin_dir = \"$NODE/opt/cni/bin\"|" \
                -e "s|conf_dir = .*|conf_dir = \"$NODE/etc/cni/net.d\"|" "$CD_DIR/config.toml" > "$NODE/etc/containerd/config.toml"
        ln -sf "$NODE/etc/containerd/config.toml" "$CD_DIR/config.toml"
        cp -a "$CD_DIR"/cni-bin/. "$NODE/opt/cni/bin/"
        sed "s|\"dataDir\": \"[^\"]*\"|\"dataDir\": \"$NODE/var/lib/cni/networks\"|" "$CD_DIR/net.d/10-nr-test.conflist" \
                > "$NODE/etc/cni/net.d/10-nr-test.conflist"
        cp "$NODE/etc/cni/net.d/10-nr-test.conflist" "$WORK/conflist.saved"
        echo "[Service]" > "$NODE/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"
        echo "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix://$CD_SOCK\"" > "$NODE/var/lib/kubelet/kubeadm-flags.env"
        echo "containerRuntimeEndpoint: unix://$CD_SOCK" > "$NODE/var/lib/kubelet/config.yaml"
        echo "CERT" > "$NODE/var/lib/kubelet/pki/kubelet.crt"
        echo "CERT" > "$NODE/etc/kubernetes/pki/ca.crt"
        kubeadm_programs "$NODE"
        printf 'apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://10.0.0.1:6443\n  name: k\ncontexts:\n- context:\n    cluster: k\n    user: u\n  name: c\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n' \
                > "$NODE/etc/kubernetes/kubelet.conf"
}

# Every phase that acts on the namespace the agent runs in (pods, firewall, network) or on the tree.
reset_node() { # json extra-args...
        local out=$1
        shift
        cd_enter "$NODE_RESET" --root "$NODE" --cri-endpoint "unix://$CD_SOCK" \
                --phases pods,mounts,firewall,network,files,verify "$@" --yes -o json run > "$out" 2> "$out.err"
}

images() { cd_enter timeout 10 ctr -a "$CD_SOCK" -n k8s.io images ls -q 2> /dev/null; }

cd_setup || { echo "FAIL: cannot set up containerd"; exit 1; }
worker "$WORK/node"
cd_start || { echo "FAIL: cannot start containerd"; exit 1; }
# kubeadm join refuses ip_forward 0 (the rejoin verdict's ports are this namespace's, beneath --root
# with the network phase; its sysctls are unknown there): as a node kubeadm set up, in the test's own
# network namespace only.
cd_enter sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'
netd_inode=$(stat -c %i "$WORK/node/etc/cni/net.d")
cd_cri run-pods 6 before "$CD_CGROUP_PARENT" 3 2 4 > /dev/null || { cd_diag; fail "cannot create the pods"; }
assert "before: 6 sandboxes on the bridge" test "$(cd_count sandboxes)" -eq 6
assert "before: the image was imported once" test -n "$(images)"

# --- the default scope: kubelet's state goes, the runtime stays -----------------------------------
reset_node "$WORK/reset.json"; rc=$?
assert "reset exits 0" test $rc -eq 0
[ $rc -eq 0 ] || { cat "$WORK/reset.json.err"; "$REPORT" "$WORK/reset.json" "r['residue']"; }
assert "the kubeadm profile was detected, containerd as its runtime" jq_ "$WORK/reset.json" \
        "r['profile']['name'] == 'kubeadm' and r['runtime']['name'] == 'containerd' and 'profile:runtime-keep' in r['manifests']"
assert "no sandbox left" test "$(cd_count sandboxes)" -eq 0
assert "no cni netns left" test "$(cd_count netns)" -eq 0
assert "kubelet's state is gone" test ! -e "$WORK/node/var/lib/kubelet/config.yaml" -a ! -e "$WORK/node/var/lib/kubelet/pki"
assert "the kubeconfig and the pki contents are gone" test ! -e "$WORK/node/etc/kubernetes/kubelet.conf" -a ! -e "$WORK/node/etc/kubernetes/pki/ca.crt"
assert "the CNI configuration and IPAM state are gone" \
        test ! -e "$WORK/node/etc/cni/net.d/10-nr-test.conflist" -a ! -e "$WORK/node/var/lib/cni"
assert "the CNI conf dir containerd watches stays, empty, the same inode" \
        test -d "$WORK/node/etc/cni/net.d" -a -z "$(ls -A "$WORK/node/etc/cni/net.d")" \
        -a "$(stat -c %i "$WORK/node/etc/cni/net.d" 2> /dev/null)" = "$netd_inode"
assert "the plan said why: the kept containerd watches it" jq_ "$WORK/reset.json" \
        "any(a['kind'] == 'empty' and a['target'] == '/etc/cni/net.d' and 'watches it by inode' in (a.get('detail') or '') for p in r['phases'] for a in p['actions'])"
assert "nothing restarted the runtime" jq_ "$WORK/reset.json" "not any(a['kind'] == 'runtime-restart' for p in r['phases'] for a in p['actions'])"
assert "the bridge is gone" test -z "$(cd_enter ip -br link show cni0 2> /dev/null)"
assert "containerd's config stays" test -s "$WORK/node/etc/containerd/config.toml"
assert "the CNI plugin binaries stay" test -x "$WORK/node/opt/cni/bin/bridge" -a -e "$WORK/node/opt/cni/bin/host-local" -a -x "$WORK/node/opt/cni/bin/loopback"
assert "containerd kept running" cd_enter kill -0 "$(cd_containerd_pid)"

# --- the verdict: rejoinable, each check with its reason -------------------------------------------
check_() { "$REPORT" "$1" "[c['state'] for c in r['rejoin']['checks'] if c['name'] == '$2'] == ['$3']" > /dev/null; }
assert "rejoinable: yes" jq_ "$WORK/reset.json" "r['rejoin']['rejoinable'] is True"
assert "... the kept containerd answers CRI Status, its CNI conf dir in place" jq_ "$WORK/reset.json" \
        "any(c['name'] == 'runtime' and c['state'] == 'ok' and 'answers CRI Status' in c['message'] for c in r['rejoin']['checks'])"
for c in static-pods kubelet-kubeconfig bootstrap-kubeconfig ca-cert ports; do
        assert "... $c: ok" check_ "$WORK/reset.json" $c ok
done
assert "... etcd-data: unchecked (a worker's join does not ask)" check_ "$WORK/reset.json" etcd-data unchecked
for c in swap sysctl; do
        assert "... $c: unknown beneath --root (the running kernel is not the node's)" check_ "$WORK/reset.json" $c unknown
done
assert "... no warning: no CNI link or route left, no resolv.conf in the tree" jq_ "$WORK/reset.json" \
        "r['rejoin']['warnings'] == []"
assert "... kubelet's unit: unchecked, with the reason (no services phase beneath --root)" jq_ "$WORK/reset.json" \
        "any(c['name'] == 'kubelet' and c['state'] == 'unchecked' and 'services-early' in c['message'] for c in r['rejoin']['checks'])"
# Clean but not rejoinable: something listens on kubelet's port. Exit 1, no residue, and why.
cd_spawn python3 -c 'import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 10250)); s.listen(); time.sleep(60)'
for _ in $(seq 50); do grep -q ':280A .* 0A ' <(cd_enter cat /proc/net/tcp) && break; sleep 0.1; done
cd_enter "$NODE_RESET" --root "$NODE" --cri-endpoint "unix://$CD_SOCK" --phases pods,mounts,firewall,network,files,verify \
        -o json status > "$WORK/busy.json" 2> "$WORK/busy.err"; rc=$?
assert "port 10250 in use: exit 1" test $rc -eq 1
assert "... with no residue, failed set" jq_ "$WORK/busy.json" "r['residue'] == [] and r['failed'] is True"
assert "... rejoinable: no, ports failed, saying which" jq_ "$WORK/busy.json" \
        "r['rejoin']['rejoinable'] is False and [c['message'] for c in r['rejoin']['checks'] if c['state'] == 'failed'] == ['in use (LISTEN): 10250']"
assert "... and the log says why" grep -q "Not rejoinable: ports: in use (LISTEN): 10250" "$WORK/busy.err"
cd_enter "$NODE_RESET" --root "$NODE" --cri-endpoint "unix://$CD_SOCK" --phases pods,network,files,verify status \
        > "$WORK/busy.txt" 2> /dev/null
assert "... in text too" grep -q "^rejoinable: no" "$WORK/busy.txt"
kill "$(cd_spawned_child)"
wait "$CD_SPAWNED" 2> /dev/null

# --- the rejoin: what a join writes comes back, containerd is NOT restarted, a pod runs ------------
cd_pid=$(cd_containerd_pid)
mkdir -p "$WORK/node/etc/cni/net.d" "$WORK/node/var/lib/kubelet"
cp "$WORK/conflist.saved" "$WORK/node/etc/cni/net.d/10-nr-test.conflist"
echo "containerRuntimeEndpoint: unix://$CD_SOCK" > "$WORK/node/var/lib/kubelet/config.yaml"
# containerd's CNI watch reloads within about a second of the write.
sleep 2
assert "the kept image is still there" test -n "$(images)"
# Bounded: a containerd that lost its configuration falls back to its defaults and would try to
# pull registry.k8s.io/pause from a network this namespace does not have.
cd_enter timeout 60 "$CD_HELPER" "$CD_SOCK" run-pods 1 rejoined "$CD_CGROUP_PARENT" 0 1 1 > "$WORK/rejoin.txt" 2>&1; rc=$?
assert "a new pod sandbox and its container run with the kept image and plugins" test $rc -eq 0
[ $rc -eq 0 ] || { cat "$WORK/rejoin.txt"; cd_diag; }
assert "the new pod is READY" test "$(cd_cri list | grep -c '^sandbox .*nr-test/rejoined-0.*READY')" -ge 1
assert "it is on the CNI bridge, with an address from the IPAM" \
        test -n "$(cd_enter ip -br link show master cni0)" -a -n "$(ls "$WORK/node/var/lib/cni/networks/nr-test" 2> /dev/null | grep '^198\.18\.')"
assert "the same containerd process ran it, never restarted" test "$(cd_containerd_pid)" = "$cd_pid"
# kubespray removes /etc/cni, the watched directory's parent: the plan restarts the kept runtime
# after the removal, through systemd (none beneath --root here: the plan only).
cd_enter "$NODE_RESET" --root "$NODE" --cri-endpoint "unix://$CD_SOCK" --profile kubespray --phases files \
        -o json plan > "$WORK/kubespray-plan.json" 2> /dev/null
assert "kubespray: remove /etc/cni, then restart the kept containerd" jq_ "$WORK/kubespray-plan.json" \
        "[(a['kind'], a['target']) for p in r['phases'] for a in p['actions'] if a['target'] in ('/etc/cni', 'containerd.service')] == [('remove', '/etc/cni'), ('runtime-restart', 'containerd.service')]"
cd_cri stop-remove-sequential > /dev/null

# --- --with-runtime: containerd's configuration, state and the CNI plugins go ---------------------
cd_stop
cd_setup || { echo "FAIL: cannot set up containerd again"; exit 1; }
worker "$WORK/node2"
cp "$WORK/node2/etc/containerd/config.toml" "$WORK/config2.saved"
cd_start || { echo "FAIL: cannot start containerd for --with-runtime"; exit 1; }
cd_cri run-pods 3 before "$CD_CGROUP_PARENT" 0 1 3 > /dev/null || fail "cannot create the pods"
cd_enter "$NODE_RESET" --root "$WORK/node2" --with-runtime manifest print > "$WORK/with-runtime.conf"
assert "--with-runtime: the plan stops containerd and kills its processes" \
        grep -qx "unit containerd.service stop,disable late" "$WORK/with-runtime.conf"
assert "--with-runtime: Docker is not touched" test -z "$(grep -E 'docker' "$WORK/with-runtime.conf")"
# The services and processes phases stop containerd on a node (test-services covers them); beneath
# --root its process is not the node's, so the test stops it between the pods and the files phases.
reset_node "$WORK/with-pods.json" --with-runtime --phases pods
cd_stop_containerd
reset_node "$WORK/with.json" --with-runtime; rc=$?
assert "--with-runtime reset exits 0" test $rc -eq 0
[ $rc -eq 0 ] || { cat "$WORK/with.json.err"; "$REPORT" "$WORK/with.json" "r['residue']"; }
assert "--with-runtime: the runtime fragment was used" jq_ "$WORK/with.json" "'profile:runtime-containerd' in r['manifests']"
assert "--with-runtime: /etc/containerd is gone" test ! -e "$WORK/node2/etc/containerd"
assert "--with-runtime: /var/lib/containerd is gone" test ! -e "$WORK/node2/var/lib/containerd"
assert "--with-runtime: /opt/cni/bin is gone" test ! -e "$WORK/node2/opt/cni/bin"
# The same configuration again (as a reinstall would write it): containerd starts empty.
mkdir -p "$WORK/node2/etc/containerd" "$WORK/node2/opt/cni/bin"
cp "$WORK/config2.saved" "$WORK/node2/etc/containerd/config.toml"
cd_start_containerd || fail "containerd does not start on a fresh state"
assert "--with-runtime: no image is left in the runtime's state" test -z "$(images)"
assert "--with-runtime: no sandbox is left" test "$(cd_count sandboxes)" -eq 0

cd_stop
leftovers=$(cd_leftovers)
[ -n "$leftovers" ] && echo "$leftovers"
assert "teardown left no process, cgroup or mount" test -z "$leftovers"
finish
