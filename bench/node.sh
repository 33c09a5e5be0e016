#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Parity benchmark (not a test): one synthetic kubespray worker reset twice, each time on a fresh
# copy in its own private mount and network namespaces (never the host's):
#   (a) kubespray's reset role as the shell commands it runs (roles/reset/tasks/main.yml and the
#       network plugins' reset tasks, as listed in manifests/kubespray.conf, the parity manifest):
#       "mount | grep /var/lib/kubelet/ | tac | umount -f", iptables policies ACCEPT + flush of
#       filter/nat/mangle/raw + -X through the host's iptables (and ip6tables), "ipvsadm -C",
#       "ip link del" of its device list, bird routes, "rm -rf" of its file list;
#   (b) node-reset --profile kubespray --with-runtime (kubespray removes the runtime too).
# The node: pods' mounts, CNI_CALI_PAIRS*2 cali veths, CNI_NETNS cni-* namespaces, ~5,500 rules per
# backend and family, ipsets, and every file of kubespray's list. No runtime runs: pod removal
# through the CRI (crictl in kubespray, gRPC in node-reset) is bench/pods.sh's subject; without it,
# CNI DEL never runs, so the pods' veths and namespaces are left to what each reset does itself.
# (c) the floor: the same end state by the bare kernel and file-system operations (prepare_floor).
# Before (b), outside its clock: node-reset's plan of the same node, beside the plan's floor
# (bench/plan-floor.c: the same kernel reads, answers dropped unparsed), and, with PLAN_BASE set to
# another node-reset binary (an older build), that binary's plan, in the same trial.
# Prints both residues side by side (what each leaves that the other removes), the medians of
# BENCH_TRIALS (3) interleaved trials, the ratio kubespray / node-reset and node-reset / floor.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
O=${O:-build}
case "$O" in /*) ;; *) O="$TOP/$O" ;; esac
NODE_RESET="$O/node-reset"
PARITY="$TOP/manifests/kubespray.conf"
export CNI_CALI_PAIRS=${CNI_CALI_PAIRS:-500} CNI_NETNS=${CNI_NETNS:-200}
PODS=${PODS:-50}
TRIALS=${BENCH_TRIALS:-3}
SIZE=${SIZE:-}

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# A command's wall time in ms (bash's clock: no process of its own around it), its output dropped.
wall_ms() {
        local t0=$EPOCHREALTIME t1
        "$@" > /dev/null 2>&1 || { echo "bench/node.sh: '$*' failed" >&2; return 1; }
        t1=$EPOCHREALTIME
        echo $(((${t1/./} - ${t0/./}) / 1000))
}

# The plans of the built node, each variant once, in an order that turns with the trial.
time_plans() { # root
        local r=$1 v ms vs=(plan planfloor)
        [ -n "${PLAN_BASE:-}" ] && vs+=(planbase)
        [ $(($(wc -l < "$OUT/agent.ms" 2> /dev/null || echo 0) % 2)) -eq 1 ] && vs=($(printf '%s\n' "${vs[@]}" | tac))
        for v in "${vs[@]}"; do
                case $v in
                plan) ms=$(wall_ms "$NODE_RESET" --root "$r" --profile kubespray --with-runtime=containerd \
                        --phases mounts,firewall,network,files -o json plan) ;;
                planbase) ms=$(wall_ms "$PLAN_BASE" --root "$r" --profile kubespray --with-runtime=containerd \
                        --phases mounts,firewall,network,files -o json plan) ;;
                planfloor) ms=$(wall_ms "$O/bench/plan-floor") ;;
                esac || return 1
                echo "$ms" >> "$OUT/$v.ms"
        done
}

# The lines of a manifest with one directive, literal paths only.
lines() { awk -v d="$1" '$1 == d && $2 !~ /[*?[]/ { print $2 }' "$2"; }

# Every file kubespray's reset removes, and what a node has besides: pods' volumes (mounted), a
# kubeconfig, host files.
build_files() { # root
        local r=$1 p i
        for p in $(lines remove "$PARITY"); do
                case "$p" in
                # A worker runs no etcd member: it has no etcd.env. ("x" is no environment file, and
                # node-reset rightly refuses to guess where an etcd member's data is.)
                /etc/etcd.env) ;;
                */*.*) mkdir -p "$(dirname "$r$p")"; [ -e "$r$p" ] || echo x > "$r$p" ;;
                *) mkdir -p "$r$p"; echo x > "$r$p/f" ;;
                esac
        done
        echo "KUBELET_ARGS=''" > "$r/etc/kubernetes/kubelet.env"
        echo "containerRuntimeEndpoint: unix:///var/run/containerd/containerd.sock" > "$r/etc/kubernetes/kubelet-config.yaml"
        mkdir -p "$r/etc/containerd" "$r/opt/cni/bin" "$r/var/lib/docker"
        echo x > "$r/etc/containerd/config.toml"
        echo x > "$r/opt/cni/bin/bridge"
        echo "co-hosted Docker" > "$r/var/lib/docker/keep"
        echo node-1 > "$r/etc/hostname"
        # kubespray's default network plugin, calico: node-reset removes the state of the CNI the
        # node's configuration names, kubespray every CNI's directories.
        mkdir -p "$r/etc/cni/net.d"
        echo '{"name":"k8s-pod-network","cniVersion":"0.3.1","plugins":[{"type":"calico"},{"type":"portmap"}]}' \
                > "$r/etc/cni/net.d/10-calico.conflist"
        for i in $(seq "$PODS"); do
                mkdir -p "$r/var/lib/kubelet/pods/p$i/volumes/kubernetes.io~empty-dir/v"
                mount -t tmpfs -o size=64k "nr-bench-$i" "$r/var/lib/kubelet/pods/p$i/volumes/kubernetes.io~empty-dir/v"
        done
}

build_node() { # root
        . "$TOP/tests/integration/fixtures/cni-node.sh"
        . "$TOP/tests/integration/fixtures/firewall.sh"
        cni_node_build > /dev/null || return 1
        fw_load_ipsets > /dev/null || return 1
        local b f
        for b in nft legacy; do for f in 4 6; do fw_load "$b" "$f" $SIZE || return 1; done; done
        build_files "$1"
}

# kubespray's reset, command by command, errors ignored as its "failed_when: false" does.
variant_kubespray() { # root
        local r=$1 v t c l
        mount | grep "$r/var/lib/kubelet/" | awk '{print $3}' | tac | xargs -r -n1 umount -f > /dev/null 2>&1
        for v in "" 6; do
                for c in INPUT FORWARD OUTPUT; do "ip${v}tables" -w 5 -P "$c" ACCEPT; done
                for t in filter nat mangle raw; do "ip${v}tables" -w 5 -t "$t" -F; done
                "ip${v}tables" -w 5 -X
        done > /dev/null 2>&1
        command -v ipvsadm > /dev/null && ipvsadm -C > /dev/null 2>&1
        for l in $(lines link "$PARITY"); do ip link del "$l" > /dev/null 2>&1; done
        ip route show proto bird | xargs -r -I{} sh -c 'ip route del {}' > /dev/null 2>&1
        for p in $(lines remove "$PARITY"); do rm -rf "$r$p"; done
}

variant_agent() { # root
        "$NODE_RESET" --root "$1" --profile kubespray --with-runtime=containerd \
                --phases mounts,firewall,network,files --yes -o json run > "$WORK/agent.json" 2> "$WORK/agent.log" ||
                { echo "node-reset: exit $? (see below)" >&2; tail -n 5 "$WORK/agent.log" >&2; }
}

# The floor: the same end state by the bare operations, in as few processes as they allow, their
# input prepared before the clock (prepare_floor): one umount(8) of the pods' mounts, deepest first;
# one nf_tables transaction deleting the iptables tables of both families (bench/nft-batch.c; a lower
# bound, their base chains go too) and one ip(6)tables-legacy-restore of the emptied tables per
# family; one ipset restore destroying the Kubernetes and calico sets; one group delete of the
# links (moved into the group before the clock); one "ip -all netns delete"; one rm -rf of the
# files. Not a reset anyone should run (no owner is checked, nothing is verified): the kernel's
# and the file system's share of the work, for "how close to the limit".
prepare_floor() { # root
        local r=$1 v l group=4243
        mount | grep "$r/var/lib/kubelet/" | awk '{print $3}' | tac > "$WORK/floor.mounts"
        printf 'delete table %s %s\n' ip filter ip nat ip mangle ip raw ip6 filter ip6 nat ip6 mangle ip6 raw |
                while read -r _ _ f t; do nft list table "$f" "$t" > /dev/null 2>&1 && echo "delete table $f $t"; done \
                > "$WORK/floor.nft"
        for v in "" 6; do
                "ip${v}tables-legacy-save" | awk '/^\*/ || /^COMMIT/ { print } /^:[A-Z]+ [A-Z]+ / { print $1 " ACCEPT" }' \
                        > "$WORK/floor.legacy$v"
        done
        # Newest first: a list:set goes before the sets it holds.
        ipset list -n | grep -E "^(KUBE-|cali)" | tac | sed "s/^/destroy /" > "$WORK/floor.ipset"
        { for l in $(lines link "$PARITY"); do ip link show "$l" > /dev/null 2>&1 && echo "link set $l group $group"; done
          ip -br link show | awk '$1 ~ /^cali[a-f0-9]/ { sub(/@.*/, "", $1); print "link set " $1 " group '$group'" }'
        } > "$WORK/floor.links"
        ip -batch "$WORK/floor.links"
        for l in $(lines remove "$PARITY"); do [ -e "$r$l" ] && echo "$r$l"; done > "$WORK/floor.files"
}

variant_floor() { # root
        local v
        xargs -r umount < "$WORK/floor.mounts"
        "$O/bench/nft-batch" "$WORK/floor.nft"
        for v in "" 6; do "ip${v}tables-legacy-restore" -w 5 < "$WORK/floor.legacy$v"; done
        ipset restore < "$WORK/floor.ipset"
        ip link del group 4243
        ip -all netns delete
        xargs -r rm -rf < "$WORK/floor.files"
}

# What is left, one normalised line per thing.
residue() { # root
        local r=$1 b f
        (cd "$r" && find . -mindepth 1 \( -type f -o -type l -o -type d -empty \) | sed 's|^\.|file |' |
                grep -v '^file /run/node-reset.lock$')
        findmnt -rn -o TARGET | grep -F "$r/" | sed "s|^$r|mount |"
        ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print "link " $2 }'
        ip netns list | awk '{ print "netns " $1 }'
        ip route show proto bird | sed 's/^/route4 /'
        ip -6 route show proto bird | sed 's/^/route6 /'
        ipset list -n | sed 's/^/ipset /'
        for b in nft legacy; do for f in 4 6; do fw_save "$b" "$f" | grep -v '^\*\|^COMMIT' | sed "s/^/rule-$b-v$f /"; done; done
}

trial() { # variant
        mount -t tmpfs -o mode=0755 nr-bench-run /run || exit 1
        WORK=$(mktemp -d /tmp/nr-bench-node.XXXXXX)
        mount -t tmpfs -o mode=0755 nr-bench-work "$WORK" || exit 1
        local root=$WORK/root t0 ms
        mkdir -p "$root"
        build_node "$root" || { echo "cannot build the node" >&2; exit 1; }
        [ "$1" = floor ] && prepare_floor "$root"
        if [ "$1" = agent ]; then time_plans "$root" || exit 1; fi
        t0=$(date +%s%N)
        "variant_$1" "$root"
        ms=$(ms_since "$t0")
        residue "$root" | sort > "$OUT/$1.residue"
        [ -e "$WORK/agent.json" ] && cp "$WORK/agent.json" "$OUT/agent.json"
        echo "$ms" >> "$OUT/$1.ms"
        umount -R -l "$WORK"
        rmdir "$WORK"
}

if [ -n "${NR_BENCH_TRIAL:-}" ]; then
        trial "$NR_BENCH_TRIAL"
        exit 0
fi

[ "$(id -u)" -eq 0 ] || { echo "bench/node.sh: needs root for private namespaces" >&2; exit 77; }
[ -x "$NODE_RESET" ] && [ -x "$O/bench/nft-batch" ] && [ -x "$O/bench/plan-floor" ] ||
        { echo "bench/node.sh: make bench builds $NODE_RESET, $O/bench/nft-batch and $O/bench/plan-floor" >&2; exit 1; }
[ -z "${PLAN_BASE:-}" ] || [ -x "$PLAN_BASE" ] || { echo "bench/node.sh: PLAN_BASE=$PLAN_BASE is not a program" >&2; exit 1; }
for c in iptables-nft-restore iptables-legacy-restore ipset python3 findmnt; do
        command -v "$c" > /dev/null 2>&1 || { echo "bench/node.sh: '$c' is not installed" >&2; exit 77; }
done
# What kubespray's sequence skips here is said, not hidden: its time is then for less work.
command -v ipvsadm > /dev/null 2>&1 || echo "note: ipvsadm is not installed: kubespray's 'ipvsadm -C' is not run (node-reset's IPVS action reports IPVS absent)"
echo "note: without a runtime, kubespray deletes none of the cali veths and cni-* namespaces (its crictl rmp would, through CNI DEL); node-reset deletes them: see README, 'The parity bench'"
OUT=$(mktemp -d)
export OUT
trap 'rm -rf "$OUT"' EXIT
# Trials interleaved, so that a slow spell of the machine falls on every variant alike.
for _ in $(seq "$TRIALS"); do
        for v in kubespray agent floor; do
                NR_BENCH_TRIAL=$v unshare -m -n --propagation private -- "$BASH" "$0" || { echo "$v: failed" >&2; exit 1; }
        done
done

python3 - "$OUT" <<'EOF'
import collections, os, sys
out = sys.argv[1]
res = {v: set(open(f"{out}/{v}.residue").read().split("\n")) - {""} for v in ("kubespray", "agent")}
import statistics
ms = {v: statistics.median(int(x) for x in open(f"{out}/{v}.ms").read().split()) for v in ("kubespray", "agent", "floor")}
only_k = sorted(res["kubespray"] - res["agent"])
only_a = sorted(res["agent"] - res["kubespray"])
def summary(lines):
    kinds = collections.Counter(l.split(" ", 1)[0] for l in lines)
    return ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "nothing"
print(f"{'':44} {'kubespray reset':>16} {'node-reset':>12}")
print(f"{'time (ms, median of ' + str(len(open(out + '/agent.ms').read().split())) + ')':44} {ms['kubespray']:16.0f} {ms['agent']:12.0f}")
print(f"{'residue (lines)':44} {len(res['kubespray']):16} {len(res['agent']):12}")
print(f"\nleft by kubespray, removed by node-reset: {summary(only_k)}")
for l in only_k[:12]:
    print(f"  {l}")
if len(only_k) > 12:
    print(f"  ... {len(only_k) - 12} more")
# What node-reset keeps on purpose, and why (README: "Installers, profiles and the runtime's scope").
on_purpose = [
    ("rule-", "the host's own firewall (kubespray flushes every table; node-reset removes only what Kubernetes owns)"),
    ("file /etc/nginx", "kubespray deletes /etc/nginx whoever wrote it"),
    ("file /etc/sysctl.d/99-sysctl.conf", "the host's sysctl file (a symlink to ../sysctl.conf on Debian)"),
    ("file /root/.kube", "removed only when it points at this cluster"),
    ("file /var/lib/kubelet", "emptied, the directory (often a mount point) stays"),
    ("file /opt/cni/", "only /opt/cni/bin is the runtime's scope"),
    ("file /etc/systemd/system/cri-dockerd", "cri-dockerd is removed only when it is kubelet's runtime"),
    ("file /usr/local/bin/cri-dockerd", "cri-dockerd is removed only when it is kubelet's runtime"),
    ("file /etc/flannel", "not this node's CNI (calico): kubespray removes every CNI's directories"),
    ("file /run/flannel", "not this node's CNI (calico): kubespray removes every CNI's directories"),
    ("file /var/lib/kube-router", "not this node's CNI (calico): kubespray removes every CNI's directories"),
]
def why(l):
    return next((w for p, w in on_purpose if l.startswith(p)), None)
print(f"\nleft by node-reset, removed by kubespray: {summary(only_a)}")
unexplained = [l for l in only_a if not why(l)]
for p, w in on_purpose:
    n = sum(1 for l in only_a if l.startswith(p))
    if n:
        print(f"  {n:5} {p}*: on purpose, {w}")
for l in unexplained:
    print(f"  {l}")
import json
try:
    r = json.load(open(f"{out}/agent.json"))
    phases = {p["name"]: sum(a.get("duration_ms", 0) for a in p["actions"]) for p in r["phases"]}
    # Each action of a batch carries its share of the batch's time, in whole ms: 1,000 links deleted
    # in 200 ms read 0 each. Batched phases (network above all) read low here.
    print("\nnode-reset by phase (ms, sum of its actions' whole ms, batches read low): " +
          ", ".join(f"{k} {v}" for k, v in phases.items()))
except (OSError, ValueError, KeyError):
    pass
print(f"\ntime ratio kubespray / node-reset: {ms['kubespray'] / max(ms['agent'], 1):.1f}x (target >= 5)")
print(f"floor (the bare operations, see prepare_floor): {ms['floor']:.0f} ms; node-reset / floor: "
      f"{ms['agent'] / max(ms['floor'], 1):.2f}x (target <= 1.5)")
plan = {v: statistics.median(int(x) for x in open(f"{out}/{v}.ms").read().split())
        for v in ("plan", "planfloor", "planbase") if os.path.exists(f"{out}/{v}.ms")}
print(f"plan of the node (before the reset, not on its clock): node-reset {plan['plan']:.0f} ms, its floor "
      f"(bench/plan-floor.c: the same kernel reads, one thread, nothing parsed) {plan['planfloor']:.0f} ms: "
      f"{plan['plan'] / max(plan['planfloor'], 1):.2f}x")
if "planbase" in plan:
    print(f"plan of PLAN_BASE ({os.environ.get('PLAN_BASE')}): {plan['planbase']:.0f} ms; node-reset / it: "
          f"{plan['plan'] / max(plan['planbase'], 1):.2f} (target <= 0.33)")
print("node-reset's residue a strict subset of kubespray's:", "yes" if not only_a and only_k else
      "yes, but for what it keeps on purpose" if not unexplained and only_k else "NO (see the list above)")
EOF
