#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# "kube-vip": the VIP that kube-vip's static pod left on the management interface goes, in a private
# network namespace with veth interfaces. Asserted: exactly the VIP (address, prefix, interface) is
# deleted, v4 and v6; the interface's other addresses, another /32, the same address on another
# interface and the default route survive; the manifest is read before the files phase removes
# /etc/kubernetes; a second run changes nothing; the management guard refuses a VIP that is the only
# address of a default-route interface; and the kubeadm, kubespray, kubekey and all profiles carry it.
. "$(dirname "$0")/lib.sh"
in_private_ns -n "$@"
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" >/dev/null; }
nr() { "$NODE_RESET" "$@"; }
require_cmd ip
ip link add nr-mgmt type veth peer name nr-mgmt-p 2>/dev/null || skip "no veth interfaces (CONFIG_VETH)"
ip link add nr-other type veth peer name nr-other-p
ip link add nr-solo type veth peer name nr-solo-p
for l in nr-mgmt nr-other nr-solo; do ip link set "$l-p" up; ip link set "$l" up; done
ip addr add 192.0.2.10/24 dev nr-mgmt
ip addr add 192.0.2.100/32 dev nr-mgmt
ip addr add 192.0.2.101/32 dev nr-mgmt
ip -6 addr add 2001:db8::10/64 dev nr-mgmt nodad
ip -6 addr add 2001:db8::100/128 dev nr-mgmt nodad
ip addr add 192.0.2.100/24 dev nr-other
ip route add default via 192.0.2.1 dev nr-mgmt
ip addr add 198.51.100.5/32 dev nr-solo
ip route add default dev nr-solo table 100

addrs() { ip -o addr show dev "$1" | awk '{print $4}' | sort | tr '\n' ' '; }
has() { ip -o addr show dev "$1" | awk '{print $4}' | grep -qx "$2"; }

root=$WORK/node
mkdir -p "$root/etc/kubernetes/manifests"
pod() { # address-env-name address interface
        cat <<EOP
apiVersion: v1
kind: Pod
metadata:
  name: kube-vip
  namespace: kube-system
spec:
  containers:
  - name: kube-vip
    image: ghcr.io/kube-vip/kube-vip:v0.8.0
    args: [manager]
    env:
    - name: vip_arp
      value: "true"
    - name: vip_interface
      value: $3
    - name: vip_cidr
      value: "32"
    - name: vip_nodename
      valueFrom:
        fieldRef:
          fieldPath: spec.nodeName
    - name: $1
      value: "$2"
    - name: cp_enable
      value: "true"
  hostNetwork: true
EOP
}
pod address "192.0.2.100,2001:db8::100" nr-mgmt > "$root/etc/kubernetes/manifests/kube-vip.yaml"
printf 'kube-vip /etc/kubernetes/manifests/kube-vip.yaml\nremove /etc/kubernetes\n' > "$WORK/m.conf"

nr --root "$root" -m "$WORK/m.conf" --phases network,files plan > "$WORK/plan.txt" 2> "$WORK/plan.err"; rc=$?
assert "plan exits 0" test $rc -eq 0
assert "plan names the v4 VIP on its interface" grep -q "192.0.2.100/32 dev nr-mgmt" "$WORK/plan.txt"
assert "plan names the v6 VIP on its interface" grep -q "2001:db8::100/128 dev nr-mgmt" "$WORK/plan.txt"
assert "plan changes nothing" has nr-mgmt 192.0.2.100/32

nr --root "$root" -m "$WORK/m.conf" --phases network,files --yes -o json run > "$WORK/run1.json" 2> "$WORK/run1.err"; rc=$?
assert "run exits 0" test $rc -eq 0
assert "the v4 VIP is gone" eval '! has nr-mgmt 192.0.2.100/32'
assert "the v6 VIP is gone" eval '! has nr-mgmt 2001:db8::100/128'
assert "the interface's own v4 address stays" has nr-mgmt 192.0.2.10/24
assert "another /32 on the interface stays" has nr-mgmt 192.0.2.101/32
assert "the interface's own v6 address stays" has nr-mgmt 2001:db8::10/64
assert "the same address on another interface stays" has nr-other 192.0.2.100/24
assert "the default route stays" test -n "$(ip route show default dev nr-mgmt)"
assert "the interface stays up" test -n "$(ip -o link show dev nr-mgmt up)"
assert "both VIPs reported changed" jq_ "$WORK/run1.json" 'len([a for a in actions(r, kind="address") if a["result"] == "changed"]) == 2'
assert "the manifest was read before /etc/kubernetes went" test ! -e "$root/etc/kubernetes"

# The manifest is gone now: a second run has nothing to look at and changes nothing.
nr --root "$root" -m "$WORK/m.conf" --phases network,files --yes -o json run > "$WORK/run2.json" 2> "$WORK/run2.err"; rc=$?
assert "second run exits 0" test $rc -eq 0
assert "second run: nothing changed" jq_ "$WORK/run2.json" 'not any(a["result"] == "changed" for a in actions(r))'
# The manifest still there, the address already gone: unchanged too.
mkdir -p "$root/etc/kubernetes/manifests"
pod address "192.0.2.100" nr-mgmt > "$root/etc/kubernetes/manifests/kube-vip.yaml"
printf 'kube-vip /etc/kubernetes/manifests/kube-vip.yaml\n' > "$WORK/m3.conf"
before=$(addrs nr-mgmt)
nr --root "$root" -m "$WORK/m3.conf" --phases network --yes -o json run > "$WORK/run3.json" 2> "$WORK/run3.err"
assert "VIP already gone: unchanged" jq_ "$WORK/run3.json" 'any(a["result"] == "unchanged" for a in actions(r, kind="address")) and not r["changed"]'
assert "VIP already gone: the addresses are as they were" test "$(addrs nr-mgmt)" = "$before"

# The guard: a VIP that is the only address of an interface with a default route stays.
pod vip_address 198.51.100.5 nr-solo > "$root/etc/kubernetes/manifests/kube-vip.yaml"
nr --root "$root" -m "$WORK/m3.conf" --phases network --yes -o json run > "$WORK/run4.json" 2> "$WORK/run4.err"
assert "guard: the only address of a default-route interface stays" has nr-solo 198.51.100.5/32
assert "guard: refused with the reason" jq_ "$WORK/run4.json" 'any(a["result"] == "skipped" and "only IPv4 address" in a["message"] for a in actions(r, kind="address"))'

# SSH arriving on the VIP: refused even with other addresses on the interface.
ip addr add 192.0.2.100/32 dev nr-mgmt
pod address 192.0.2.100 nr-mgmt > "$root/etc/kubernetes/manifests/kube-vip.yaml"
SSH_CONNECTION="203.0.113.9 50000 192.0.2.100 22" nr --root "$root" -m "$WORK/m3.conf" --phases network --yes -o json run > "$WORK/run5.json" 2> "$WORK/run5.err"
assert "guard: the VIP the SSH session arrives on stays" has nr-mgmt 192.0.2.100/32
assert "guard: SSH refusal reported" jq_ "$WORK/run5.json" 'any(a["result"] == "skipped" and "SSH" in a["message"] for a in actions(r, kind="address"))'

# A DNS name is not resolved: nothing is guessed.
pod address cp.example.internal nr-mgmt > "$root/etc/kubernetes/manifests/kube-vip.yaml"
nr --root "$root" -m "$WORK/m3.conf" --phases network --yes -o json run > "$WORK/run6.json" 2> "$WORK/run6.err"
assert "DNS name: skipped, nothing deleted" jq_ "$WORK/run6.json" 'any(a["result"] == "skipped" and "DNS name" in a["message"] for a in actions(r, kind="address")) and not r["changed"]'
assert "DNS name: the address stays" has nr-mgmt 192.0.2.100/32

# A manifest that cannot be read is a failure, never "nothing to do": the VIP may still be there.
printf 'spec:\n  containers: [\n' > "$root/etc/kubernetes/manifests/kube-vip.yaml"
nr --root "$root" -m "$WORK/m3.conf" --phases network --yes -o json run > "$WORK/run7.json" 2> "$WORK/run7.err"; rc=$?
assert "malformed manifest: the run fails" test $rc -ne 0
assert "malformed manifest: the row failed, saying why" jq_ "$WORK/run7.json" 'any(a["result"] == "failed" and "not known" in a["message"] for a in actions(r, kind="address"))'
assert "malformed manifest: the address stays" has nr-mgmt 192.0.2.100/32

# ---- the node's own addresses and what depends on them (issue 22) ----
pod2() { # address interface-or-empty subnet-or-empty
        printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-vip\nspec:\n  containers:\n  - name: kube-vip\n    env:\n'
        printf '    - name: address\n      value: "%s"\n' "$1"
        [ -z "$2" ] || printf '    - name: vip_interface\n      value: %s\n' "$2"
        [ -z "$3" ] || printf '    - name: vip_subnet\n      value: "%s"\n' "$3"
}
vip_run() { # json-file
        nr --root "$root" -m "$WORK/m3.conf" --phases network --yes -o json run > "$1" 2> "${1%.json}.err"
}
msg_has() { # json-file text: some address row's message holds text
        jq_ "$1" "any(\"$2\" in (a['message'] or '') for a in actions(r, kind='address'))"
}
M=$root/etc/kubernetes/manifests/kube-vip.yaml
ip -6 addr add 2001:db8::100/128 dev nr-mgmt nodad 2>/dev/null

# An established session on port 22 to the VIP, v4 and v6, with SSH_CONNECTION unset: the VIP stays.
python3 - "$WORK/vsess.ready" <<'PY' &
import socket, sys, time
socks = []
for fam, vip, src in ((socket.AF_INET, "192.0.2.100", "192.0.2.10"), (socket.AF_INET6, "2001:db8::100", "2001:db8::10")):
    srv = socket.socket(fam); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((vip, 22)); srv.listen(1)
    cli = socket.socket(fam); cli.bind((src, 0)); cli.connect((vip, 22)); conn, _ = srv.accept()
    socks += [srv, cli, conn]
open(sys.argv[1], "w").close(); time.sleep(60)
PY
vsess=$!
for _ in $(seq 50); do [ -e "$WORK/vsess.ready" ] && break; sleep 0.1; done
pod2 "192.0.2.100,2001:db8::100" nr-mgmt "" > "$M"
env -u SSH_CONNECTION "$NODE_RESET" --root "$root" -m "$WORK/m3.conf" --phases network --yes -o json run \
        > "$WORK/s1.json" 2> "$WORK/s1.err"
assert "session: the v4 VIP an established port-22 session arrives on stays (no SSH_CONNECTION)" has nr-mgmt 192.0.2.100/32
assert "session: the v6 VIP an established port-22 session arrives on stays" has nr-mgmt 2001:db8::100/128
assert "session: both refused, naming the session" jq_ "$WORK/s1.json" \
        "len([a for a in actions(r, kind='address') if a['result'] == 'skipped' and 'established SSH session from' in a['message']]) == 2"
kill "$vsess" 2>/dev/null
wait "$vsess" 2>/dev/null

# The manifest's address is the node's management address with vip_subnet "24": the default route
# reaches its gateway through that prefix, so it stays (the interface has other addresses).
pod2 192.0.2.10 nr-mgmt 24 > "$M"
vip_run "$WORK/n1.json"
assert "node IP /24: the management address stays" has nr-mgmt 192.0.2.10/24
assert "node IP /24: the default route stays" test -n "$(ip route show default dev nr-mgmt)"
assert "node IP /24: refused, naming the default route and its gateway" \
        msg_has "$WORK/n1.json" "the route 0.0.0.0/0 proto boot reaches its gateway through its prefix: 192.0.2.1"

# kubelet's --node-ip (kubeadm-flags.env, quoted, a commented-out line beside it) and the API server's
# --advertise-address (IPv6): refused whatever the manifest says; a commented-out address is no evidence.
mkdir -p "$root/var/lib/kubelet"
printf '# KUBELET_KUBEADM_ARGS="--node-ip=192.0.2.100"\nKUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock --node-ip=192.0.2.101"\n' \
        > "$root/var/lib/kubelet/kubeadm-flags.env"
printf 'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: kube-apiserver\n    command:\n    - kube-apiserver\n    - --advertise-address=2001:db8::100\n    - --secure-port=6443\n' \
        > "$root/etc/kubernetes/manifests/kube-apiserver.yaml"
pod2 "192.0.2.101,2001:db8::100" nr-mgmt "" > "$M"
vip_run "$WORK/n2.json"
assert "kubelet --node-ip: that address stays" has nr-mgmt 192.0.2.101/32
assert "kubelet --node-ip: refused, naming kubelet's flag" msg_has "$WORK/n2.json" "kubelet's --node-ip (/var/lib/kubelet/kubeadm-flags.env)"
assert "advertise-address: the v6 address stays" has nr-mgmt 2001:db8::100/128
assert "advertise-address: refused, naming the API server" msg_has "$WORK/n2.json" "the API server's --advertise-address"
pod2 192.0.2.100 nr-mgmt "" > "$M"
vip_run "$WORK/n3.json"
assert "a commented-out --node-ip is no evidence: that VIP goes" eval '! has nr-mgmt 192.0.2.100/32'
rm -f "$root/var/lib/kubelet/kubeadm-flags.env" "$root/etc/kubernetes/manifests/kube-apiserver.yaml"

# Without vip_interface kube-vip uses the default route's interface: the VIP there goes.
ip addr add 192.0.2.100/32 dev nr-mgmt
pod2 192.0.2.100 "" "" > "$M"
vip_run "$WORK/i1.json"; rc=$?
assert "no vip_interface: the run exits 0" test $rc -eq 0
assert "no vip_interface: the VIP on the default route's interface is gone" eval '! has nr-mgmt 192.0.2.100/32'
assert "no vip_interface: reported changed" jq_ "$WORK/i1.json" "any(a['result'] == 'changed' and a['target'] == '192.0.2.100/32 dev nr-mgmt' for a in actions(r, kind='address'))"
# ... and with no default route, the interface is not known: a failure and residue, never clean.
ip addr add 192.0.2.100/32 dev nr-mgmt
ip route del default dev nr-mgmt
nr --root "$root" -m "$WORK/m3.conf" --phases network,verify --yes -o json run > "$WORK/i2.json" 2> "$WORK/i2.err"; rc=$?
assert "no vip_interface, no default route: the run exits 1" test $rc -eq 1
assert "no vip_interface, no default route: not clean" jq_ "$WORK/i2.json" "r['verdict'] == 'residue' and len(r['residue']) == 1"
assert "no vip_interface, no default route: the address stays" has nr-mgmt 192.0.2.100/32
ip route add default via 192.0.2.1 dev nr-mgmt

# The file each tool writes: kube-vip's guide (kubeadm), kubespray's kube-vip.yml, kubekey's kube-vip.yaml (v3 and v4).
for pf in kubeadm:kube-vip.yaml kubespray:kube-vip.yml kubekey:kube-vip.yaml all:kube-vip.yaml all:kube-vip.yml all:kubevip.yaml; do
        assert "profile ${pf%%:*}: kube-vip line for ${pf#*:}" eval "nr --profile ${pf%%:*} manifest print | grep -qx 'kube-vip /etc/kubernetes/manifests/${pf#*:}'"
done
finish
