#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The conntrack flush over nfnetlink_conntrack, in a private network namespace with real entries:
# UDP traffic to addresses of the cluster's pod and service ranges and to NodeLocal DNS's address,
# tracked by the kernel (an nf_tables rule that uses conntrack turns tracking on in the namespace),
# plus entries inserted with the conntrack CLI (a pod talking out, an IPv6 service). The ranges come
# from the tree's own configuration: a control plane's static pod manifests, kubespray's
# kubeadm-config.yaml, a worker's kubelet config and CNI configuration. The cluster's entries go; the
# host's own (192.0.2.7, 2001:db8::7) stay; a second run changes nothing; verify finds no residue.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
require_cmd conntrack nft
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" > /dev/null; }

ct_has() { conntrack -L 2> /dev/null | grep -q -- "$1"; } # a "src=... dst=..." fragment
ct_gone() { ! ct_has "$1"; }

traffic() {
        local a
        for a in 10.96.0.10 10.244.1.5 169.254.25.10 192.0.2.7; do echo x > "/dev/udp/$a/53"; done
        conntrack -I -p udp -s 10.244.3.3 -d 203.0.113.9 --sport 1000 --dport 443 -t 120 > /dev/null 2>&1
        conntrack -I -p udp -s 2001:db8::5 -d fd00:10:96::a --sport 1000 --dport 53 -t 120 > /dev/null 2>&1
        conntrack -I -p tcp -s 2001:db8::7 -d 2001:db8::8 --sport 1000 --dport 22 --state ESTABLISHED -t 120 \
                > /dev/null 2>&1
}

for a in 10.96.0.10/32 10.244.1.5/32 169.254.25.10/32 192.0.2.7/32; do ip addr add "$a" dev lo; done
nft add table ip nrct && nft add chain ip nrct out '{ type filter hook output priority 0; }' &&
        nft add rule ip nrct out ct state new counter || fail "cannot turn conntrack on in the namespace"
printf 'conntrack cluster\nconntrack 169.254.25.10\n' > "$WORK/m.conf"

# A control plane: kube-controller-manager's and kube-apiserver's flags (dual-stack service range).
cp_root=$WORK/cp
mkdir -p "$cp_root/etc/kubernetes/manifests"
cat > "$cp_root/etc/kubernetes/manifests/kube-controller-manager.yaml" << 'Y'
apiVersion: v1
kind: Pod
spec:
  containers:
  - command:
    - kube-controller-manager
    - --cluster-cidr=10.244.0.0/16
    # - --cluster-cidr=192.0.2.0/24 is a comment: not read
    - --service-cluster-ip-range=10.96.0.0/12,fd00:10:96::/112
Y

traffic
assert "before: 7 entries" test "$(conntrack -L 2> /dev/null | wc -l)" -eq 7
"$NODE_RESET" --root "$cp_root" --manifest "$WORK/m.conf" --phases network -o json plan > "$WORK/plan.json" 2> "$WORK/plan.err"
assert "the plan has one row per range, with its source and count" jq_ "$WORK/plan.json" \
        "sorted((a['target'], a['detail']) for a in actions(r, kind='conntrack')) == [
          ('10.244.0.0/16', 'pod range from /etc/kubernetes/manifests/kube-controller-manager.yaml: --cluster-cidr; 2 entries'),
          ('10.96.0.0/12', 'service range from /etc/kubernetes/manifests/kube-controller-manager.yaml: --service-cluster-ip-range; 1 entry'),
          ('169.254.25.10', \"the manifest's range; 1 entry\"),
          ('fd00:10:96::/112', 'service range from /etc/kubernetes/manifests/kube-controller-manager.yaml: --service-cluster-ip-range; 1 entry')]"
assert "the dry run deleted nothing" test "$(conntrack -L 2> /dev/null | wc -l)" -eq 7
"$NODE_RESET" --root "$cp_root" --manifest "$WORK/m.conf" --phases network,verify --yes -o json run \
        > "$WORK/run.json" 2> "$WORK/run.err"
rc=$?
assert "run exits 0" test $rc -eq 0
[ $rc -eq 0 ] || cat "$WORK/run.err"
assert "every conntrack row changed, 5 entries deleted" jq_ "$WORK/run.json" \
        "len(actions(r, kind='conntrack', result='changed')) == 4 and r['residue'] == []"
assert "gone: the service address's entry" ct_gone "dst=10.96.0.10 "
assert "gone: the pod address's entry" ct_gone "dst=10.244.1.5 "
assert "gone: a pod's connection out (matched by its source)" ct_gone "src=10.244.3.3 "
assert "gone: NodeLocal DNS's entry" ct_gone "dst=169.254.25.10 "
assert "gone: the IPv6 service's entry" ct_gone "dst=fd00:10:96::a "
assert "stays: the host's own IPv4 entry" ct_has "dst=192.0.2.7 "
assert "stays: the host's own IPv6 entry" ct_has "dst=2001:db8::8 "
"$NODE_RESET" --root "$cp_root" --manifest "$WORK/m.conf" --phases network --yes -o json run > "$WORK/run2.json" 2> /dev/null
assert "a second run changes nothing" jq_ "$WORK/run2.json" "not r['changed'] and all(a['result'] == 'unchanged' for a in actions(r, kind='conntrack'))"

# kubespray: kubeadm-config.yaml's ClusterConfiguration (the InitConfiguration before it is skipped).
ks_root=$WORK/ks
mkdir -p "$ks_root/etc/kubernetes"
printf 'apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nnetworking:\n  podSubnet: 192.0.2.0/24\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nnetworking:\n  podSubnet: 10.233.64.0/18\n  serviceSubnet: 10.233.0.0/18\n' \
        > "$ks_root/etc/kubernetes/kubeadm-config.yaml"
"$NODE_RESET" --root "$ks_root" --manifest "$WORK/m.conf" --phases network -o json plan > "$WORK/ks.json" 2> /dev/null
assert "kubespray: both ranges from kubeadm-config.yaml's ClusterConfiguration, nothing from another kind" \
        jq_ "$WORK/ks.json" "sorted(a['target'] for a in actions(r, kind='conntrack')) == ['10.233.0.0/18', '10.233.64.0/18', '169.254.25.10']"

# A kubeadm worker: kubelet's clusterDNS and the CNI's host-local ranges; a stale entry of each.
wk_root=$WORK/wk
mkdir -p "$wk_root/var/lib/kubelet" "$wk_root/etc/cni/net.d"
printf 'kind: KubeletConfiguration\nclusterDNS:\n- 10.96.0.10\n' > "$wk_root/var/lib/kubelet/config.yaml"
printf '{"cniVersion":"0.4.0","name":"k8s","plugins":[{"type":"bridge","ipam":{"type":"host-local","ranges":[[{"subnet":"10.244.1.0/24"}]]}},{"type":"portmap","subnet":"192.0.2.0/24"}]}\n' \
        > "$wk_root/etc/cni/net.d/10-bridge.conflist"
traffic
"$NODE_RESET" --root "$wk_root" --manifest "$WORK/m.conf" --phases network,verify --yes -o json run > "$WORK/wk.json" 2> /dev/null
rc=$?
assert "worker: exit 0" test $rc -eq 0
assert "worker: the ranges are clusterDNS and the IPAM's subnet (not a subnet outside ipam)" jq_ "$WORK/wk.json" \
        "sorted(a['target'] for a in actions(r, kind='conntrack')) == ['10.244.1.0/24', '10.96.0.10', '169.254.25.10']"
assert "worker: gone: the DNS service's entry" ct_gone "dst=10.96.0.10 "
assert "worker: gone: the pod's entry" ct_gone "dst=10.244.1.5 "
assert "worker: stays: a pod range the node's configuration does not name (10.244.3.3)" ct_has "src=10.244.3.3 "
assert "worker: stays: the host's own" ct_has "dst=192.0.2.7 "

# No range in the tree: one row says so and does nothing.
mkdir -p "$WORK/empty"
printf 'conntrack cluster\n' > "$WORK/m2.conf"
"$NODE_RESET" --root "$WORK/empty" --manifest "$WORK/m2.conf" --phases network -o json plan > "$WORK/none.json" 2> /dev/null
assert "no range: one row that has nothing to do" jq_ "$WORK/none.json" \
        "[(a['target'], a['detail']) for a in actions(r, kind='conntrack')] == [('cluster', \"no pod or service range in the node's configuration\")]"
# ... and running it (a kubeadm worker whose files name no range, as on a real one) changes nothing.
"$NODE_RESET" --root "$WORK/empty" --manifest "$WORK/m2.conf" --phases network,verify --yes -o json run \
        > "$WORK/none-run.json" 2> "$WORK/none-run.err"; rc=$?
assert "no range: the run exits 0" test "$rc" -eq 0
assert "no range: the row is unchanged" jq_ "$WORK/none-run.json" \
        "[(a['target'], a['result']) for a in actions(r, kind='conntrack')] == [('cluster', 'unchanged')]"
printf 'conntrack 10.0.0.0/33\n' > "$WORK/bad.conf"
"$NODE_RESET" manifest check "$WORK/bad.conf" > /dev/null 2>&1
assert "manifest check refuses a prefix longer than the family's" test $? -ne 0
finish
