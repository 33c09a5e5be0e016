#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Benchmark (not a test): deleting a CNI node's links and cni-* namespaces three ways, each on a fresh
# copy of the synthetic node (tests/integration/fixtures/cni-node.sh) in its own private network and
# mount namespaces — never the host's:
#   (a) kubekey's exact shell sequence ("kk delete cluster"),
#   (b) node-reset run --phases network with the equivalent manifest (kubekey's names + cali*),
#   (c) a bare group delete of the same links ("ip link del group N"; only the delete is timed).
# Prints the times and the ratios (a)/(b) (target >= 30) and (b)/(c) (target <= 1.5).
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
O=${O:-build}
case "$O" in /*) ;; *) O="$TOP/$O" ;; esac
NODE_RESET="$O/node-reset"
KUBEKEY_LINKS="kube-ipvs0 nodelocaldns cni0 flannel.1 flannel-v6.1 flannel-wg flannel-wg-v6 cilium_host cilium_vxlan vxlan.calico vxlan-v6.calico"

ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# kubekey: cmd/kk/pkg/bootstrap/os, as it runs it (errors ignored).
variant_kubekey() {
        local t0 t1
        t0=$(date +%s%N)
        for l in $KUBEKEY_LINKS; do ip link del "$l" >/dev/null 2>&1; done
        ip -br link show | grep 'cali[a-f0-9]*' | awk -F'@' '{print $1}' | xargs -r -n1 ip link del >/dev/null 2>&1
        t1=$(date +%s%N)
        ip netns show | grep cni- | awk '{print $1}' | xargs -r -n1 ip netns del >/dev/null 2>&1
        echo "links_ms=$(( (t1 - t0) / 1000000 )) netns_ms=$(ms_since "$t1") total_ms=$(ms_since "$t0")"
}

# The per-action durations in the report are whole milliseconds shared out over a batch, too coarse
# here: the agent's work is the run's time less an idle run's (same manifest, nothing left to do:
# process start, observation, report), links and namespaces together.
variant_agent() {
        local work t0 total idle
        work=$(mktemp -d)
        mkdir "$work/root"
        { for l in $KUBEKEY_LINKS; do echo "link $l"; done; echo 'link cali[a-f0-9]*'; echo 'netns cni-*'; } >"$work/m.conf"
        t0=$(date +%s%N)
        "$NODE_RESET" --root "$work/root" --manifest "$work/m.conf" --phases network --yes --output=json run \
                >"$work/r.json" 2>"$work/log" || { echo "node-reset failed:" >&2; cat "$work/log" >&2; }
        total=$(ms_since "$t0")
        t0=$(date +%s%N)
        "$NODE_RESET" --root "$work/root" --manifest "$work/m.conf" --phases network --yes --output=json run \
                >/dev/null 2>&1
        idle=$(ms_since "$t0")
        rm -rf "$work"
        echo "work_ms=$((total - idle)) idle_ms=$idle total_ms=$total"
}

variant_bare() {
        local t0 tmp group=4242
        tmp=$(mktemp)
        { for l in $KUBEKEY_LINKS; do ip link show "$l" >/dev/null 2>&1 && echo "link set $l group $group"; done
          ip -br link show | awk '$1 ~ /^cali[a-f0-9]/ { sub(/@.*/, "", $1); print "link set " $1 " group '$group'" }'
        } >"$tmp"
        ip -batch "$tmp"
        rm -f "$tmp"
        t0=$(date +%s%N)
        ip link del group "$group"
        echo "links_ms=$(ms_since "$t0") netns_ms=0 total_ms=$(ms_since "$t0")"
}

if [ -n "${NR_BENCH_VARIANT:-}" ]; then
        mount -t tmpfs -o mode=0755 nr-bench-run /run || exit 1
        . "$TOP/tests/integration/fixtures/cni-node.sh"
        cni_node_build >/dev/null || { echo "cannot build the synthetic node" >&2; exit 1; }
        "variant_$NR_BENCH_VARIANT"
        exit 0
fi

[ "$(id -u)" -eq 0 ] || { echo "bench/network-links.sh: needs root for private namespaces" >&2; exit 77; }
[ -x "$NODE_RESET" ] || { echo "bench/network-links.sh: build $NODE_RESET first" >&2; exit 1; }

declare -A res
for v in kubekey agent bare; do
        out=$(NR_BENCH_VARIANT=$v unshare -m -n --propagation private -- "$BASH" "$0") || { echo "$v: failed" >&2; exit 1; }
        res[$v]=$out
        printf '%-8s %s\n' "$v" "$out"
done

python3 - "${res[kubekey]}" "${res[agent]}" "${res[bare]}" <<'EOF'
import sys
k, a, b = ({kv.split("=")[0]: int(kv.split("=")[1]) for kv in s.split()} for s in sys.argv[1:])
print("synthetic node: 1,000 cali veth ends, 5 fixed links (+20 cni0 ports kubekey leaves), 200 cni-* netns")
print(f"(a) kubekey sequence     links {k['links_ms']:6d} ms + netns {k['netns_ms']:4d} ms = {k['total_ms']:6d} ms")
print(f"(b) node-reset network   {a['total_ms']:6d} ms whole process, of which {a['idle_ms']} ms an idle run takes:"
      f" links + netns work {a['work_ms']} ms")
print(f"(c) bare group delete    links {b['links_ms']:6d} ms")
print(f"(a)/(b) links+netns, whole agent process: {k['total_ms'] / max(a['total_ms'], 1):.1f}x  (target >= 30x)")
print(f"(b)/(c) agent work (links and netns) vs bare group delete (links): {a['work_ms'] / max(b['links_ms'], 1):.2f}"
      "  (target <= 1.5)")
print(f"(b)/(c) whole agent process vs bare group delete: {a['total_ms'] / max(b['links_ms'], 1):.2f}")
EOF
