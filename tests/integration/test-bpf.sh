#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The network phase on a cilium-shaped node, with real kernel objects in private namespaces: tc
# (clsact) programs and generic XDP on a veth "host NIC", programs on a cgroup2 root, pins in a
# private bpffs, cilium's, calico's and kube-router's policy rules and tables. The CNI's objects go;
# the host's own filter, pin, cgroup program, rules, NIC and default route stay, and so does the
# host's program named like cilium's (cil_impostor) that nothing pinned under cilium's directories
# ties to cilium; a second run changes nothing.
#
# Cgroups: nothing is ever attached to the machine's own cgroups. A throwaway child cgroup is made
# under the machine's cgroup2 mount (from mountinfo), this shell moves into it, "unshare -C" makes
# it the root of a new cgroup namespace, and cgroup2 mounted there shows that child as its root
# (checked by inode before anything is attached). The child is removed by its name at the end.

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_cmd ip tc bpftool clang python3 unshare

# ---- outside: the throwaway child cgroup, then the private namespaces ----
if [ -z "${NR_IN_NS:-}" ]; then
        require_root
        cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
        [ -n "$cg2" ] || skip "no cgroup2 mount in /proc/self/mountinfo"
        child="$cg2/nr-test-bpf-$$"
        orig="$cg2$(sed -n 's/^0:://p' /proc/self/cgroup)"
        mkdir "$child" || skip "cannot make a child cgroup under $cg2"
        echo $$ >"$child/cgroup.procs" || { rmdir "$child"; skip "cannot enter the child cgroup $child"; }
        NR_IN_NS=1 NR_BPF_CHILD="$child" NR_BPF_CG2="$cg2" \
                unshare -C -m -n --propagation private -- "$BASH" "$0" "$@"
        rc=$?
        echo $$ >"$orig/cgroup.procs" 2>/dev/null || echo $$ >"$cg2/cgroup.procs"
        rmdir "$child" || { echo "FAIL: cannot remove the child cgroup $child"; rc=1; }
        exit "$rc"
fi

in_private_ns -n "$@"
[ -x "$NODE_RESET" ] || { echo "FAIL: $NODE_RESET is not built"; exit 1; }

CGROOT=/run/cilium/cgroupv2
mkdir -p "$CGROOT"
mount -t cgroup2 none "$CGROOT" || { echo "FAIL: cannot mount cgroup2 in the cgroup namespace"; exit 1; }
# The safety check: the mount's root must be the throwaway child, never the machine's root.
if [ "$(stat -c %d:%i "$CGROOT")" != "$(stat -c %d:%i "$NR_BPF_CHILD")" ] ||
        [ "$(stat -c %i "$CGROOT")" = "$(stat -c %i "$NR_BPF_CG2")" ]; then
        echo "FAIL: the cgroup2 mount at $CGROOT is not the throwaway child $NR_BPF_CHILD: refusing"
        umount "$CGROOT"
        exit 1
fi
mount -t bpf bpf /sys/fs/bpf || { echo "FAIL: cannot mount a private bpffs"; exit 1; }
trap 'cd /; umount /sys/fs/bpf/tc /run/cilium/bpffs /sys/fs/bpf "$CGROOT" 2>/dev/null; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT

clang -O2 -g -target bpf -I/usr/include/"$(uname -m)"-linux-gnu \
        -c "$TOP/tests/integration/fixtures/bpf-progs.c" -o "$WORK/progs.o" ||
        { echo "FAIL: clang cannot build the BPF programs"; exit 1; }

build_node() {
        local o=$WORK/progs.o
        set -e
        # The host: eth0 with the default route, eth1 a second NIC; cilium's cilium_host/cilium_net.
        ip link add eth0 type veth peer name eth0p
        ip link add eth1 type veth peer name eth1p
        ip link add cilium_host type veth peer name cilium_net
        for l in eth0 eth0p eth1 eth1p cilium_host cilium_net; do ip link set "$l" up; done
        ip addr add 192.0.2.10/24 dev eth0
        ip route add default via 192.0.2.1 dev eth0
        ip addr add 10.0.0.1/32 dev cilium_host
        # tc and XDP: cilium's on both NICs and on cilium_host, the host's own accounting on eth0,
        # and the host's cil_impostor there. tc and ip pin the map cilium's programs use by name at
        # /sys/fs/bpf/tc/globals/cilium_calls_fixture (/sys/fs/bpf/xdp is tc's symlink to tc).
        for l in eth0 eth1 cilium_host; do tc qdisc add dev "$l" clsact; done
        tc filter add dev eth0 ingress bpf da obj "$o" sec tc program cil_from_netdev
        tc filter add dev eth0 egress bpf da obj "$o" sec tc program cil_to_netdev
        tc filter add dev eth0 ingress bpf da obj "$o" sec tc program host_acct
        tc filter add dev eth0 ingress bpf da obj "$o" sec tc program cil_impostor
        test -e /sys/fs/bpf/tc/globals/cilium_calls_fixture
        tc filter add dev eth1 ingress bpf da obj "$o" sec tc program cil_from_netdev
        tc filter add dev cilium_host ingress bpf da obj "$o" sec tc program cil_to_host
        ip link set dev eth0 xdpgeneric obj "$o" sec xdp
        # Pins: cilium's maps and directory, the host's own map beside them.
        mkdir -p /sys/fs/bpf/tc/globals /sys/fs/bpf/cilium/devices/eth0 /sys/fs/bpf/fixture
        bpftool map create /sys/fs/bpf/tc/globals/cilium_lb4_services type hash key 4 value 4 entries 8 name cilium_lb4_svc
        bpftool map create /sys/fs/bpf/tc/globals/cilium_calls_hostns type hash key 4 value 4 entries 8 name cilium_calls
        bpftool map create /sys/fs/bpf/cilium/devices/eth0/cilium_calls type hash key 4 value 4 entries 8 name cilium_calls
        bpftool map create /sys/fs/bpf/tc/globals/host_map type hash key 4 value 4 entries 8 name host_map
        # cilium's own bpffs (where the host has none): emptied of its pins, then unmounted.
        mkdir -p /run/cilium/bpffs
        mount -t bpf bpf /run/cilium/bpffs
        mkdir -p /run/cilium/bpffs/tc/globals
        bpftool map create /run/cilium/bpffs/tc/globals/cilium_ct4_global type hash key 4 value 4 entries 8 name cilium_ct4
        # Cgroup programs on the (throwaway) cgroup root: cilium's socket LB and the host's own.
        # bpftool pins by name at /sys/fs/bpf: there it finds and reuses cilium's map.
        bpftool map pin pinned /sys/fs/bpf/tc/globals/cilium_calls_fixture /sys/fs/bpf/cilium_calls_fixture
        bpftool prog loadall "$o" /sys/fs/bpf/fixture/progs
        rm /sys/fs/bpf/cilium_calls_fixture
        # A program cilium pinned in its own directory is cilium's whatever maps it uses: this copy of
        # cil_impostor, pinned under /sys/fs/bpf/cilium, goes from eth0 egress.
        mkdir -p /sys/fs/bpf/cilium/progs
        bpftool prog pin pinned /sys/fs/bpf/fixture/progs/cil_impostor /sys/fs/bpf/cilium/progs/cil_impostor
        tc filter add dev eth0 egress bpf da pinned /sys/fs/bpf/cilium/progs/cil_impostor
        bpftool cgroup attach "$CGROOT" connect4 pinned /sys/fs/bpf/fixture/progs/cil_sock4_connect multi
        bpftool cgroup attach "$CGROOT" sendmsg4 pinned /sys/fs/bpf/fixture/progs/cil_sock4_sendmsg multi
        bpftool cgroup attach "$CGROOT" connect4 pinned /sys/fs/bpf/fixture/progs/host_connect4 multi
        # cilium >= 1.16: tcx (through a pinned BPF link, or without one) and XDP through a link on
        # eth1, its socket LB through a cgroup link; the host's own tcx program on eth0.
        progs=/sys/fs/bpf/fixture/progs links=/sys/fs/bpf/cilium/devices/eth1/links
        mkdir -p "$links" /sys/fs/bpf/cilium/socketlb/links/cgroup
        "$ATTACH" xdp-link $progs/cil_xdp_entry eth1 $links/cil_xdp_entry
        "$ATTACH" cgroup-link $progs/cil_sock4_link "$CGROOT" /sys/fs/bpf/cilium/socketlb/links/cgroup/cil_sock4_link
        if [ "$HAS_TCX" = 1 ]; then
                "$ATTACH" tcx-link $progs/cil_from_netdev eth1 ingress $links/cil_from_netdev
                "$ATTACH" tcx $progs/cil_to_netdev eth1 egress
                "$ATTACH" tcx $progs/host_acct eth0 ingress
        fi
        # Policy routing: cilium's proxy rules and tables (v4 and v6), calico's WireGuard rule and
        # table, kube-router's table 77; the host's own rules, one with cilium's mark.
        ip rule add pref 9 fwmark 0x200/0xf00 lookup 2004
        ip -6 rule add pref 9 fwmark 0x200/0xf00 lookup 2004
        ip route add local 0.0.0.0/0 dev lo table 2004
        ip -6 route add local ::/0 dev lo table 2004
        ip rule add pref 10 fwmark 0xa00/0xf00 lookup 2005
        ip route add 10.0.0.1/32 dev cilium_host table 2005
        ip route add default via 10.0.0.2 dev cilium_host onlink table 2005
        ip rule add pref 99 not fwmark 0x100000/0x100000 lookup 1
        ip route add 10.244.1.0/24 dev eth1 table 1
        ip rule add pref 100 from 10.244.0.0/24 lookup 77
        ip route add 10.244.2.0/24 dev eth1 table 77
        ip rule add pref 500 from 192.0.2.0/24 lookup 100
        ip route add default via 192.0.2.1 dev eth0 table 100
        ip rule add pref 600 fwmark 0x200/0xf00 lookup 300
        # kube-router's external-IP table, which here also carries the route back to the SSH client
        # (SSH_CONNECTION below): the guard keeps that rule and that route.
        ip rule add pref 30000 lookup 79
        ip route add 198.18.0.0/24 via 192.0.2.1 dev eth0 table 79
        ip route add 198.51.100.0/24 via 192.0.2.1 dev eth0 table 300
        set +e
}

tcx_progs() { "$ATTACH" tcx-query "$1" "$2" | sort | tr '\n' ' '; }
tc_progs() { # dev hook
        tc filter show dev "$1" "$2" | sed -n 's/.* name \([^ ]*\) .*/\1/p' | sort | tr '\n' ' '
}
cgroup_progs() { bpftool cgroup show "$CGROOT" | awk 'NR > 1 { print $2 ":" $NF }' | sort | tr '\n' ' '; }
host_cgroup_progs() { cgroup_progs | tr ' ' '\n' | grep -v cil_; }
rules() { { ip rule show; ip -6 rule show; } | grep -v -e 'lookup local' -e 'lookup main' -e 'lookup default'; }

host_state() {
        echo "eth0: $(tc_progs eth0 ingress | sed 's/cil_[a-z_]* //g')| $(tc_progs eth0 egress | sed 's/cil_[a-z_]* //g')"
        [ "$HAS_TCX" = 0 ] || echo "eth0 tcx: $(tcx_progs eth0 ingress)"
        ip -br link show dev eth0 | awk '{print $1, $2}'
        ip -br link show dev eth1 | awk '{print $1, $2}'
        ip route show default
        ip route show table 100
        ip route show table 300
        ls /sys/fs/bpf/tc/globals | grep -v '^cilium_'
        ls /sys/fs/bpf/fixture/progs
        host_cgroup_progs
        rules | grep -e 'lookup 100' -e 'lookup 300' -e 'lookup 79'
        ip route show table 79
        ip rule show | grep -c -e 'lookup local' -e 'lookup main' -e 'lookup default'
}

write_report_py() {
        cat >"$WORK/report.py" <<-'PY'
	import json, sys
	r = json.load(open(sys.argv[1]))
	acts = [a for p in r["phases"] if p["name"] == "network" for a in p["actions"]]
	cmd = sys.argv[2]
	if cmd == "count":
	    kind, result = sys.argv[3:5]
	    print(len([a for a in acts if kind in ("*", a["kind"]) and result in ("*", a["result"])]))
	elif cmd == "targets":
	    kind, result = sys.argv[3:5]
	    print("|".join(sorted(a["target"] for a in acts if a["kind"] == kind and result in ("*", a["result"]))))
	elif cmd == "row":
	    kind, target = sys.argv[3:5]
	    print("|".join("%s %s %s" % (a["result"], a.get("error"), a.get("message")) for a in acts
	                   if a["kind"] == kind and a["target"] == target))
	elif cmd == "get":
	    print(json.dumps(r.get(sys.argv[3])))
	PY
}
rq() { python3 "$WORK/report.py" "$@"; }

# The shipped manifest's BPF and policy routing lines, and cilium's links.
grep -E '^(bpf-|rule-table |link cilium_)' "$TOP/manifests/default.conf" >"$WORK/m.conf"
write_report_py
# The tree names the pod range kube-router's "from 10.244.0.0/24" rule must lie in (kubelet's podCIDR).
mkdir -p "$WORK/root/var/lib/kubelet"
printf 'kind: KubeletConfiguration\npodCIDR: 10.244.0.0/16\n' >"$WORK/root/var/lib/kubelet/config.yaml"
ATTACH=$O/tests/bpf-attach
[ -x "$ATTACH" ] || { echo "FAIL: $ATTACH is not built"; exit 1; }
# tcx needs Linux >= 6.6: without it the tcx part is left out, said so, and the rest runs.
ip link add tcxprobe type veth peer name tcxprobe1
"$ATTACH" tcx-query tcxprobe ingress >/dev/null 2>&1
case $? in
0) HAS_TCX=1 ;;
77) HAS_TCX=0; echo "note: the kernel has no tcx (Linux < 6.6): the tcx attachments are not tested" ;;
*) echo "FAIL: cannot query tcx"; exit 1 ;;
esac
ip link del tcxprobe

(set -x; build_node) 2>"$WORK/fixture.log" || { tail -5 "$WORK/fixture.log"; echo "FAIL: cannot build the fixture"; exit 1; }
host_state >"$WORK/host.before"
assert "fixture: cilium's programs on eth0" test "$(tc_progs eth0 ingress)" = "cil_from_netdev cil_impostor host_acct "
assert "fixture: XDP on eth0" sh -c "ip link show eth0 | grep -q 'prog/xdp.*cil_xdp_entry'"
assert "fixture: four cgroup programs" test "$(cgroup_progs | wc -w)" -eq 4
assert "fixture: XDP through a link on eth1" sh -c "ip link show eth1 | grep -q 'prog/xdp'"
[ "$HAS_TCX" = 0 ] || assert "fixture: tcx programs on eth1 and eth0" \
        test "$(tcx_progs eth1 ingress)|$(tcx_progs eth1 egress)|$(tcx_progs eth0 ingress)" = "cil_from_netdev |cil_to_netdev |host_acct "

SSH_CONNECTION="198.18.0.5 50022 192.0.2.10 22" "$NODE_RESET" --root "$WORK/root" --manifest "$WORK/m.conf" --phases network plan >"$WORK/plan.txt" 2>&1
for row in "cil_from_netdev from eth0 ingress" "cil_to_netdev from eth0 egress" "cil_xdp_entry from eth0 xdp" \
        "cil_from_netdev from eth1 ingress" "cil_sock4_connect from $CGROOT connect4" \
        "/sys/fs/bpf/tc/globals/cilium_lb4_services" "/sys/fs/bpf/cilium" "0.0.0.0/0 table 2005" \
        "ipv4 pref 9 fwmark 0x200/0xf00 lookup 2004" "ipv6 pref 9 fwmark 0x200/0xf00 lookup 2004" \
        "ipv4 pref 99 not fwmark 0x100000/0x100000 lookup 1" "cil_xdp_entry from eth1 xdp" \
        "cil_sock4_link from $CGROOT connect4"; do
        assert "plan lists '$row'" grep -qF -- "$row" "$WORK/plan.txt"
done
assert "plan keeps the cgroup2 mount, which a foreign program uses" \
        grep -qF "kept: a program that is not the CNI's is attached to its cgroup" "$WORK/plan.txt"
assert "plan: eth1's XDP program is held by a BPF link" grep -q "XDP program id [0-9]*, generic mode, held by BPF link" "$WORK/plan.txt"
if [ "$HAS_TCX" = 1 ]; then
        for row in "cil_from_netdev from eth1 tcx_ingress" "cil_to_netdev from eth1 tcx_egress"; do
                assert "plan lists '$row'" grep -qF -- "$row" "$WORK/plan.txt"
        done
        assert "plan: the tcx link and the link-less attachment" \
                sh -c "grep -q 'tcx program id [0-9]*, held by BPF link' '$WORK/plan.txt' && grep -q 'tcx program id [0-9]*, attached without a link' '$WORK/plan.txt'"
fi
assert "plan has no row for host_acct, host_connect4 or host_map" \
        sh -c "! grep -e host_acct -e host_connect4 -e host_map '$WORK/plan.txt'"
assert "plan has no row for cilium_host's program (the link goes)" sh -c "! grep -q 'from cilium_host' '$WORK/plan.txt'"
assert "plan: eth0's cil_from_netdev is cilium's by its pinned map" \
        grep -q "program id [0-9]*; the CNI's: it uses map id [0-9]*, pinned under the CNI's pin paths" "$WORK/plan.txt"
assert "plan: the cil_impostor pinned under /sys/fs/bpf/cilium is cilium's" \
        sh -c "grep -F 'cil_impostor from eth0 egress' '$WORK/plan.txt' | grep -qF \"the CNI's: it is pinned under the CNI's pin paths\""
assert "plan: eth1's XDP program is cilium's by its pinned BPF link" \
        grep -q "held by BPF link \([0-9]*\); the CNI's: its BPF link \1 is pinned under the CNI's pin paths" "$WORK/plan.txt"
IMPOSTOR_WHY="named like the CNI's (cil_) but neither it, its BPF link nor any of its maps is pinned under the CNI's pin paths: left alone"
assert "plan: cil_impostor on eth0 is left alone, and says why" \
        sh -c "grep -A3 -F 'cil_impostor from eth0 ingress' '$WORK/plan.txt' | grep -qF \"$IMPOSTOR_WHY\""

SSH_CONNECTION="198.18.0.5 50022 192.0.2.10 22" "$NODE_RESET" --root "$WORK/root" --yes --output=json --manifest "$WORK/m.conf" --phases network,verify run \
        >"$WORK/r1.json" 2>"$WORK/r1.log"
r=$?
assert "run exits 0" test "$r" -eq 0
[ "$r" -eq 0 ] || cat "$WORK/r1.log"

# Gone: every CNI object.
assert "eth0 keeps only the host's ingress filters" test "$(tc_progs eth0 ingress)|$(tc_progs eth0 egress)" = "cil_impostor host_acct |"
assert "cil_impostor's row is skipped as not cilium's" \
        test "$(rq "$WORK/r1.json" row bpf-netdev "cil_impostor from eth0 ingress")" = "skipped not-owned $IMPOSTOR_WHY"
assert "no XDP on eth0" sh -c "! ip link show eth0 | grep -q prog/xdp"
assert "eth1's clsact qdisc, left empty, is gone" sh -c "! tc qdisc show dev eth1 | grep -q clsact"
assert "eth0's clsact qdisc, still holding host_acct, stays" sh -c "tc qdisc show dev eth0 | grep -q clsact"
assert "only the host's cgroup program is left" test "$(cgroup_progs)" = "cgroup_inet4_connect:host_connect4 "
assert "no XDP on eth1 (its link detached)" sh -c "! ip link show eth1 | grep -q prog/xdp"
[ "$HAS_TCX" = 0 ] || assert "tcx: eth1 has none left, eth0 keeps the host's" \
        test "$(tcx_progs eth1 ingress)|$(tcx_progs eth1 egress)|$(tcx_progs eth0 ingress)" = "||host_acct "
assert "cilium's pins are gone" sh -c "! ls /sys/fs/bpf/tc/globals/cilium_* 2>/dev/null && [ ! -e /sys/fs/bpf/cilium ]"
no_cni_rules() { ! rules | grep -E 'lookup (2004|2005|1|77)$'; }
assert "no rule looks up 2004, 2005, 1 or 77" no_cni_rules
assert "tables 2004, 2005, 1 and 77 are empty" test -z "$(for t in 2004 2005 1 77; do ip route show table $t; ip -6 route show table $t 2>/dev/null; done)"
assert "cilium_host is deleted (its table-2005 default route no longer guards it)" sh -c "! ip link show cilium_host 2>/dev/null"
is_mount() { awk -v p="$1" '$5 == p { f = 1 } END { exit !f }' /proc/self/mountinfo; }
assert "cilium's own bpffs, emptied, is unmounted" sh -c "! grep -q ' /run/cilium/bpffs ' /proc/self/mountinfo"
assert "the host's /sys/fs/bpf stays mounted" is_mount /sys/fs/bpf
assert "the cgroup2 mount stays: host_connect4 is attached to its cgroup" is_mount "$CGROOT"
# Kept: the host's own objects.
host_state >"$WORK/host.after"
assert "the host's filter, pins, rules, NICs and default route are intact" cmp -s "$WORK/host.before" "$WORK/host.after"
[ -s "$WORK/host.after" ] && ! cmp -s "$WORK/host.before" "$WORK/host.after" && diff "$WORK/host.before" "$WORK/host.after"
assert "no failed action, no residue" test "$(rq "$WORK/r1.json" count '*' failed):$(rq "$WORK/r1.json" get residue)" = "0:[]"
[ "$(rq "$WORK/r1.json" get residue)" = "[]" ] || { cat "$WORK/r1.log"; python3 -c "import json,sys; [print(a) for p in json.load(open(sys.argv[1]))[\"phases\"] for a in p[\"actions\"] if a[\"kind\"] == \"bpf-mount\"]" "$WORK/r1.json"; }
assert "$((6 + 2 * HAS_TCX)) tc/tcx/XDP programs detached" test "$(rq "$WORK/r1.json" count bpf-netdev changed)" -eq $((6 + 2 * HAS_TCX))
assert "3 cgroup programs detached" test "$(rq "$WORK/r1.json" count bpf-cgroup changed)" -eq 3
assert "the rule and route carrying the SSH session are refused" \
        test "$(rq "$WORK/r1.json" targets rule skipped)/$(rq "$WORK/r1.json" targets route skipped)" = \
        "ipv4 pref 30000 lookup 79/198.18.0.0/24 table 79 proto boot"
assert "5 policy rules deleted" test "$(rq "$WORK/r1.json" count rule changed)" -eq 5

# Again: nothing left to do.
SSH_CONNECTION="198.18.0.5 50022 192.0.2.10 22" "$NODE_RESET" --root "$WORK/root" --yes --output=json --manifest "$WORK/m.conf" --phases network,verify run \
        >"$WORK/r2.json" 2>"$WORK/r2.log"
r=$?
assert "second run exits 0" test "$r" -eq 0
assert "second run changes nothing" test "$(rq "$WORK/r2.json" count '*' changed)" -eq 0
assert "second run: no failure" test "$(rq "$WORK/r2.json" count '*' failed)" -eq 0
host_state >"$WORK/host.again"
assert "second run: host state intact" cmp -s "$WORK/host.before" "$WORK/host.again"
assert "second run: cil_impostor still attached to eth0, its row skipped again" \
        test "$(tc_progs eth0 ingress)|$(rq "$WORK/r2.json" row bpf-netdev "cil_impostor from eth0 ingress")" = \
        "cil_impostor host_acct |skipped not-owned $IMPOSTOR_WHY"

# The CNI's cgroup2 mount goes only once nothing uses it: first a process working in it keeps it,
# then, that process gone, it is unmounted; the machine's cgroup2 mount and /sys/fs/bpf stay.
run_net() { # name
        "$NODE_RESET" --root "$WORK/root" --yes --output=json --manifest "$WORK/m.conf" --phases network run \
                >"$WORK/$1.json" 2>"$WORK/$1.log"
}
mount_row() { # report: "result message" of the cgroup2 mount's row
        python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(*["%s %s" % (a["result"], a.get("message")) for p in r["phases"] for a in p["actions"]
        if a["kind"] == "bpf-mount" and a["target"] == sys.argv[2]])' "$1" "$CGROOT"
}
bpftool cgroup detach "$CGROOT" connect4 pinned /sys/fs/bpf/fixture/progs/host_connect4
(cd "$CGROOT" && exec sleep 60) &
holder=$!
sleep 0.2
run_net r3
assert "run 3 (a process works in the mount) exits 0" test $? -eq 0
assert "run 3: the report names the holder" grep -qF "held by PID $holder (cwd)" "$WORK/r3.json"
assert "run 3: the cgroup2 mount stays" is_mount "$CGROOT"
kill "$holder"
wait "$holder" 2>/dev/null
run_net r4
assert "run 4 exits 0" test $? -eq 0
assert "run 4: the unused cgroup2 mount is unmounted" test "$(mount_row "$WORK/r4.json")" = "changed unmounted"
assert "run 4: $CGROOT is no longer a mount point" sh -c "! grep -q ' $CGROOT ' /proc/self/mountinfo"
assert "run 4: the machine's cgroup2 mount stays" is_mount "$NR_BPF_CG2"
assert "run 4: /sys/fs/bpf stays" is_mount /sys/fs/bpf
run_net r5
assert "run 5 changes nothing" test "$(rq "$WORK/r5.json" count '*' changed):$(rq "$WORK/r5.json" count '*' failed)" = "0:0"

# Policy rules of another shape than the CNI's are the host's: "not fwmark" with cilium's mark, the
# same mark behind an iif (IPv6). They stay, and so does the host's default route in table 2004,
# which they make the host's table too; cilium's own IPv6 rule goes. (The "not" rule comes after the
# main table, so the management path does not run through table 2004 and the guard alone would not
# keep it.)
ip rule add pref 9 fwmark 0x200/0xf00 lookup 2004
ip rule add pref 32800 not fwmark 0x200/0xf00 lookup 2004
ip -6 rule add pref 9 fwmark 0x200/0xf00 lookup 2004
ip -6 rule add pref 51 iif eth1 fwmark 0x200/0xf00 lookup 2004
ip route add default via 192.0.2.1 dev eth0 table 2004
run_net r6
assert "run 6 exits 0" test $? -eq 0
assert "run 6: the host's 'not fwmark 0x200/0xf00 lookup 2004' stays" \
        sh -c "ip rule show | grep -q '^32800:.*not from all fwmark 0x200/0xf00 lookup 2004'"
assert "run 6: the host's IPv6 'iif eth1 fwmark 0x200/0xf00 lookup 2004' stays" \
        sh -c "ip -6 rule show | grep -q '^51:.*fwmark 0x200/0xf00 iif eth1 lookup 2004'"
assert "run 6: the host's default route in table 2004 stays" \
        test "$(ip route show table 2004)" = "default via 192.0.2.1 dev eth0 "
assert "run 6: cilium's IPv6 rule goes" sh -c "! ip -6 rule show | grep -q '^9:'"
assert "run 6: cilium's IPv4 rule, whose table holds the host's default route, is refused" \
        test "$(rq "$WORK/r6.json" targets rule skipped)" = "ipv4 pref 9 fwmark 0x200/0xf00 lookup 2004"

# A bpffs is the CNI's only where the manifest says cilium mounts its own ("bpf-mount
# /run/cilium/bpffs"): the host's bpffs nested at /sys/fs/bpf/tc, which a cilium pin pattern lies
# in, loses that pin and stays mounted, empty as it is.
mkdir -p /sys/fs/bpf/tc
mount -t bpf bpf /sys/fs/bpf/tc
mkdir -p /sys/fs/bpf/tc/globals
bpftool map create /sys/fs/bpf/tc/globals/cilium_nested type hash key 4 value 4 entries 8 name cilium_nested
run_net r7
assert "run 7 exits 0" test $? -eq 0
assert "run 7: cilium's pin in the nested bpffs is gone" test ! -e /sys/fs/bpf/tc/globals/cilium_nested
assert "run 7: the host's nested bpffs at /sys/fs/bpf/tc stays mounted" is_mount /sys/fs/bpf/tc
assert "run 7: no bpf-mount row for it" test "$(rq "$WORK/r7.json" targets bpf-mount '*')" = ""
umount /sys/fs/bpf/tc
finish
