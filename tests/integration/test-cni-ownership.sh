#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A policy rule and a conntrack entry are the CNI's only by evidence of ownership, tested with real
# rules and entries in a private network namespace. The tree's pod ranges come from the CNI
# configuration the runtime loads (the first of /etc/cni/net.d by name; none when containerd's first
# file does not load), kubelet's --pod-cidr and kube-proxy's clusterCIDR; a second CNI file (a macvlan
# network naming the host's LAN) is never read.
# Kept: the host's rule with a selector node-reset does not read ("dscp 46", added by a raw netlink
# message: this iproute2 may not know the keyword), the host's "from 10.0.0.0/24" rule, a rule from
# the macvlan file's LAN, each with its table's route, and the LAN's connections. Gone: the
# kube-router-shaped rule from the pod range with its table's route, and the pod ranges' entries.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
require_cmd ip conntrack python3
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" > /dev/null; }

ct_has() { conntrack -L 2> /dev/null | grep -q -- "$1"; } # a "src=... dst=..." fragment
ct_gone() { ! ct_has "$1"; }
rule_has() { ip rule show | grep -q -- "$1"; }
route_has() { [ -n "$(ip route show table "$1" 2> /dev/null)" ]; }

# "dscp 46 lookup 80" (FRA_DSCP, Linux 6.13+) at pref 200, by one RTM_NEWRULE.
add_dscp_rule() {
        python3 - << 'PY'
import socket, struct
def attr(t, payload):
    n = 4 + len(payload)
    return struct.pack("HH", n, t) + payload + b"\0" * ((4 - n % 4) % 4)
FRA_PRIORITY, FRA_TABLE, FRA_DSCP = 6, 15, 25
body = struct.pack("BBBBBBBBI", socket.AF_INET, 0, 0, 0, 80, 0, 0, 1, 0)  # FR_ACT_TO_TBL
body += attr(FRA_TABLE, struct.pack("I", 80)) + attr(FRA_PRIORITY, struct.pack("I", 200)) + attr(FRA_DSCP, bytes([46]))
msg = struct.pack("IHHII", 16 + len(body), 32, 0x1 | 0x4 | 0x400 | 0x200, 1, 0) + body  # RTM_NEWRULE, ACK|CREATE|EXCL
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.bind((0, 0))
s.send(msg)
err = struct.unpack("i", s.recv(4096)[16:20])[0]
raise SystemExit(0 if err == 0 else 77 if err in (-22, -95) else 1)
PY
}

# The tree: the CNI configuration containerd loads first, a macvlan one it never loads, kubelet's
# --pod-cidr and kube-proxy's configuration as kubelet projects its ConfigMap.
root=$WORK/root
mkdir -p "$root/etc/cni/net.d" "$root/var/lib/kubelet/pods/0a1b/volumes/kubernetes.io~configmap/kube-proxy"
printf '{"cniVersion":"0.4.0","name":"k8s","plugins":[{"type":"bridge","ipam":{"type":"host-local","ranges":[[{"subnet":"10.244.0.0/16"}]]}}]}\n' \
        > "$root/etc/cni/net.d/10-bridge.conflist"
printf '{"cniVersion":"0.4.0","name":"lan","type":"macvlan","master":"eth1","ipam":{"type":"host-local","subnet":"192.168.77.0/24"}}\n' \
        > "$root/etc/cni/net.d/20-lan.conf"
printf 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock --pod-cidr=10.60.0.0/24"\n' \
        > "$root/var/lib/kubelet/kubeadm-flags.env"
printf 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.50.0.0/16\nmode: iptables\n' \
        > "$root/var/lib/kubelet/pods/0a1b/volumes/kubernetes.io~configmap/kube-proxy/config.conf"
printf 'rule-table 77\nrule-table 78\nrule-table 80\nrule-table 81\nconntrack cluster\n' > "$WORK/m.conf"

# ---- policy rules ----
ip link add eth1 type bridge && ip link set eth1 up && ip addr add 192.168.77.2/24 dev eth1 ||
        fail "cannot make the fixture's link"
ip rule add pref 100 from 10.244.1.0/24 lookup 78 # kube-router's shape, in the pod range
ip route add 10.244.2.0/24 dev eth1 table 78
ip rule add pref 110 from 10.0.0.0/24 lookup 77 # the host's
ip route add 10.9.0.0/24 dev eth1 table 77
ip rule add pref 120 from 192.168.77.0/24 lookup 81 # the LAN of the file the runtime never loads
ip route add 10.8.0.0/24 dev eth1 table 81
add_dscp_rule
case $? in
0) ;;
77) skip "the kernel refuses FRA_DSCP (Linux < 6.13): the rule with a newer selector cannot be made" ;;
*) fail "cannot add the dscp rule" ;;
esac
ip route add 10.7.0.0/24 dev eth1 table 80
assert "fixture: four rules, each table with its route" \
        sh -c "[ \$(ip rule show | grep -cE 'lookup (77|78|80|81)\$') -eq 4 ] && [ \$(for t in 77 78 80 81; do ip route show table \$t; done | wc -l) -eq 4 ]"

# ---- conntrack entries: a pod range of each source, and the host LAN's ----
for pair in "10.244.3.3 203.0.113.9" "10.60.0.7 203.0.113.9" "10.50.0.9 203.0.113.9" "192.168.77.20 192.168.77.30"; do
        set -- $pair
        conntrack -I -p tcp -s "$1" -d "$2" --sport 40000 --dport 443 --state ESTABLISHED -t 120 > /dev/null 2>&1 ||
                fail "cannot insert the entry $1 -> $2"
done
assert "fixture: four entries" test "$(conntrack -L 2> /dev/null | wc -l)" -eq 4

env -u SSH_CONNECTION "$NODE_RESET" --root "$root" --manifest "$WORK/m.conf" --phases network -o json plan \
        > "$WORK/plan.json" 2> "$WORK/plan.err"
assert "plan: the conntrack rows are the loaded CNI file's, kubelet's and kube-proxy's ranges, not the LAN's" \
        jq_ "$WORK/plan.json" "sorted((a['target'], a['detail'].split(';')[0]) for a in actions(r, kind='conntrack')) == [
          ('10.244.0.0/16', 'pod range from /etc/cni/net.d/10-bridge.conflist: ipam subnet'),
          ('10.50.0.0/16', 'pod range from /var/lib/kubelet/pods/0a1b/volumes/kubernetes.io~configmap/kube-proxy/config.conf: clusterCIDR'),
          ('10.60.0.0/24', 'pod range from /var/lib/kubelet/kubeadm-flags.env: --pod-cidr')]"
assert "plan: one rule row, kube-router's in the pod range" \
        jq_ "$WORK/plan.json" "sorted(a['target'] for a in actions(r, kind='rule')) == ['ipv4 pref 100 from 10.244.1.0/24 lookup 78',
          'rules looking up table 77', 'rules looking up table 80', 'rules looking up table 81']"

env -u SSH_CONNECTION "$NODE_RESET" --root "$root" --manifest "$WORK/m.conf" --phases network,verify --yes -o json run \
        > "$WORK/run.json" 2> "$WORK/run.err"
rc=$?
assert "run exits 0" test $rc -eq 0
[ $rc -eq 0 ] || cat "$WORK/run.err"
assert "run: nothing is left of what it planned" jq_ "$WORK/run.json" "r['residue'] == []"

assert "gone: the rule from the pod range" sh -c "! ip rule show | grep -q 'lookup 78\$'"
assert "gone: its table's route" sh -c "[ -z \"\$(ip route show table 78)\" ]"
assert "stays: the host's rule with dscp 46" rule_has "^200:.*lookup 80$"
assert "stays: its table's route" route_has 80
assert "stays: the host's rule from 10.0.0.0/24" rule_has "^110:.*from 10.0.0.0/24 lookup 77$"
assert "stays: its table's route" route_has 77
assert "stays: the rule from the LAN of the CNI file the runtime does not load" rule_has "^120:.*from 192.168.77.0/24 lookup 81$"
assert "stays: its table's route" route_has 81

assert "gone: the loaded CNI file's pod range's entry" ct_gone "src=10.244.3.3 "
assert "gone: kubelet's --pod-cidr's entry" ct_gone "src=10.60.0.7 "
assert "gone: kube-proxy's clusterCIDR's entry" ct_gone "src=10.50.0.9 "
assert "stays: the host LAN's connection" ct_has "src=192.168.77.20 dst=192.168.77.30 "

env -u SSH_CONNECTION "$NODE_RESET" --root "$root" --manifest "$WORK/m.conf" --phases network --yes -o json run \
        > "$WORK/run2.json" 2> /dev/null
assert "a second run changes nothing" jq_ "$WORK/run2.json" "not r['changed']"
assert "the second run keeps the host's rules" sh -c "[ \$(ip rule show | grep -cE 'lookup (77|80|81)\$') -eq 3 ]"

# ---- containerd stops at a first file that does not load (go-cni loadFromConfDir) ----
# A half-written file sorting first: containerd loads no CNI configuration at all, so the bridge
# file's range is no pod range; kubelet's --pod-cidr and kube-proxy's clusterCIDR still are.
printf '{"cniVersion":"0.4.0","name":"cilium","plugins":[{"type":"cilium-cni"}' > "$root/etc/cni/net.d/05-cilium.conflist"
ip rule add pref 100 from 10.244.1.0/24 lookup 78
ip route add 10.244.2.0/24 dev eth1 table 78
for src in 10.244.3.3 10.60.0.7; do
        conntrack -I -p tcp -s "$src" -d 203.0.113.9 --sport 40000 --dport 443 --state ESTABLISHED -t 120 > /dev/null 2>&1 ||
                fail "cannot insert the entry $src -> 203.0.113.9"
done
env -u SSH_CONNECTION "$NODE_RESET" --root "$root" --manifest "$WORK/m.conf" --phases network -o json plan \
        > "$WORK/plan3.json" 2> "$WORK/plan3.err"
assert "invalid first file: the conntrack rows are kubelet's and kube-proxy's ranges only" \
        jq_ "$WORK/plan3.json" "sorted(a['target'] for a in actions(r, kind='conntrack')) == ['10.50.0.0/16', '10.60.0.0/24']"
assert "invalid first file: the evidence says containerd loads none" \
        jq_ "$WORK/plan3.json" "any('05-cilium.conflist: not valid JSON' in e and 'loads no CNI configuration' in e
          for e in r['cni']['evidence'])"
env -u SSH_CONNECTION "$NODE_RESET" --root "$root" --manifest "$WORK/m.conf" --phases network --yes -o json run \
        > "$WORK/run3.json" 2> "$WORK/run3.err"
rc=$?
assert "invalid first file: run exits 0" test $rc -eq 0
[ $rc -eq 0 ] || cat "$WORK/run3.err"
assert "invalid first file: gone, kubelet's --pod-cidr's entry" ct_gone "src=10.60.0.7 "
assert "invalid first file: stays, the entry in the bridge file's range" ct_has "src=10.244.3.3 "
assert "invalid first file: stays, the rule from the bridge file's range" rule_has "^100:.*from 10.244.1.0/24 lookup 78$"
assert "invalid first file: stays, its table's route" route_has 78
finish
