#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Benchmark (not a test): removing a kube-proxy node's iptables state, per backend (iptables-nft and
# iptables-legacy), v4 and v6 together. Every trial runs in its own private network and mount
# namespaces on a fresh copy of the same fixture (tests/integration/fixtures/firewall.sh: ~5,500
# rules in ~500 chains per backend and family, calico/flannel chains, host rules) — never the host's:
#   (a) kubekey: iptables -F; iptables -X; iptables -t nat -F; iptables -t nat -X (+ ip6tables,
#       + ipvsadm -C when installed),
#   (b) k3s-killall: iptables-save | grep -v KUBE- | grep -v CNI- | grep -iv flannel | iptables-restore
#       (+ ip6tables),
#   (c) node-reset run --yes --phases firewall, "firewall flush" and "firewall owned".
# Whole processes are timed (the agent's start, observation and plan included); the median of
# BENCH_TRIALS (5) trials is shown, then the ratios: (a)/(c flush) (target >= 2) and (b)/(c owned)
# (target >= 2), node-reset against the floor (the bare operation, see prepare_floor), and whether
# each left the host's rules as they were.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
O=${O:-build}
case "$O" in /*) ;; *) O="$TOP/$O" ;; esac
NODE_RESET="$O/node-reset"
NFT_BATCH="$O/bench/nft-batch"
TRIALS=${BENCH_TRIALS:-5}
# 95 services x (1 KUBE-SVC + 4 KUBE-SEP chains with 13 rules each): 499 chains, ~5,550 rules.
SIZE="95 4 13"

ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

variant_kubekey() { # BACKEND
        local v t
        for v in "" 6; do
                for t in filter nat; do
                        "ip${v}tables-$1" -w 5 -t "$t" -F
                        "ip${v}tables-$1" -w 5 -t "$t" -X
                done
        done
        if command -v ipvsadm > /dev/null 2>&1; then ipvsadm -C; fi
}

variant_k3s() { # BACKEND
        local v
        for v in "" 6; do
                "ip${v}tables-$1-save" | grep -v KUBE- | grep -v CNI- | grep -iv flannel | "ip${v}tables-$1-restore"
        done
}

# Each variant's input is made before the clock starts: only the reset itself is timed.
prepare_agent() { # BACKEND MODE
        mkdir "$PREP/root"
        echo "firewall $2" > "$PREP/m.conf"
}

variant_agent() { # BACKEND MODE
        "$NODE_RESET" --root "$PREP/root" --manifest "$PREP/m.conf" --phases firewall --yes --output=json run \
                > "$PREP/r.json" 2> "$PREP/log" || { echo "node-reset failed:" >&2; cat "$PREP/log" >&2; }
}

# The floors: the bare operation each backend offers for the same work, its input prepared before
# the clock. nft, flush: one batch (bench/nft-batch.c: libnftnl, one transaction) deleting the four iptables tables of each family (a
# lower bound: their base chains go too). nft, owned: one batch deleting the owned chains (flushed
# first) and, by handle, the rules of kept chains that jump to them (rules owned by their comment
# alone are not in it). legacy: one ip(6)tables-legacy-restore per family of the tables emptied
# (flush) or of the saved rules without the owned lines (owned): a read and a replace of each
# table, libiptc's least.
prepare_floor() { # BACKEND MODE
        local v
        if [ "$1" = nft ]; then
                nft -a list ruleset 2> /dev/null | awk -v mode="$2" -v re="^(${FW_OWNED_RE//|/|^})" '
                        /^table (ip|ip6) (filter|nat|mangle|raw) / { t = $2 " " $3; if (mode == "flush") print "delete table " t; next }
                        /^table / { t = "" }
                        mode != "owned" || t == "" { next }
                        /^\tchain / { c = $2; if (c ~ re) { fl = fl "flush chain " t " " c "\n"; dl = dl "delete chain " t " " c "\n" }; next }
                        c !~ re && / (jump|goto) / { for (i = 1; i < NF; i++) if (($i == "jump" || $i == "goto") && $(i + 1) ~ re)
                                                       print "delete rule " t " " c " " $NF }
                        END { printf "%s%s", fl, dl }' > "$PREP/batch"
                return
        fi
        for v in "" 6; do
                if [ "$2" = flush ]; then
                        "ip${v}tables-$1-save" | awk '/^\*/ || /^COMMIT/ { print } /^:[A-Z]+ [A-Z]+ / { print $1 " ACCEPT" }' \
                                > "$PREP/restore$v"
                else
                        "ip${v}tables-$1-save" | grep -v -E "$FW_OWNED_RE" > "$PREP/restore$v"
                fi
        done
}

variant_floor() { # BACKEND MODE
        local v
        if [ "$1" = nft ]; then
                "$NFT_BATCH" "$PREP/batch"
                return
        fi
        for v in "" 6; do "ip${v}tables-$1-restore" -w 5 < "$PREP/restore$v"; done
}

prepare_kubekey() { :; }
prepare_k3s() { :; }

# One trial, inside the namespaces: build the fixture for one backend, prepare and time the
# variant, then say what it left: "ms=N host_intact=0|1 owned_left=N".
trial() { # BACKEND VARIANT [MODE]
        local backend=$1 variant=$2 mode=${3:-} t0 ms intact owned
        mount -t tmpfs -o mode=0755 nr-bench-run /run || exit 1
        . "$TOP/tests/integration/fixtures/firewall.sh"
        fw_load_ipsets > /dev/null && fw_load "$backend" 4 $SIZE && fw_load "$backend" 6 $SIZE ||
                { echo "cannot load the fixture" >&2; exit 1; }
        before=$(for f in 4 6; do fw_save "$backend" "$f" | grep -v -E "$FW_OWNED_RE"; done)
        PREP=$(mktemp -d)
        "prepare_$variant" "$backend" "$mode"
        t0=$(date +%s%N)
        "variant_$variant" "$backend" "$mode" > /dev/null 2>&1
        ms=$(ms_since "$t0")
        rm -rf "$PREP"
        after=$(for f in 4 6; do fw_save "$backend" "$f"; done)
        owned=$(grep -c -E "$FW_OWNED_RE" <<< "$after")
        intact=0
        [ "$before" = "$(grep -v -E "$FW_OWNED_RE" <<< "$after")" ] && intact=1
        echo "ms=$ms host_intact=$intact owned_left=$owned"
}

if [ -n "${NR_BENCH_TRIAL:-}" ]; then
        # shellcheck disable=SC2086
        trial $NR_BENCH_TRIAL
        exit 0
fi

[ "$(id -u)" -eq 0 ] || { echo "bench/firewall.sh: needs root for private namespaces" >&2; exit 77; }
[ -x "$NODE_RESET" ] && [ -x "$NFT_BATCH" ] || { echo "bench/firewall.sh: make bench builds $NODE_RESET and $NFT_BATCH" >&2; exit 1; }
for c in iptables-nft-restore iptables-legacy-restore ipset python3; do
        command -v "$c" > /dev/null 2>&1 || { echo "bench/firewall.sh: '$c' is not installed" >&2; exit 77; }
done

results=$(mktemp)
trap 'rm -f "$results"' EXIT
# Trials interleaved (every variant once, then again), so that a slow spell of the machine falls on
# all variants alike.
for _ in $(seq "$TRIALS"); do
        for backend in nft legacy; do
                for spec in "kubekey" "k3s" "agent flush" "agent owned" "floor flush" "floor owned"; do
                        set -- $spec
                        out=$(NR_BENCH_TRIAL="$backend $*" unshare -m -n --propagation private -- "$BASH" "$0") ||
                                { echo "$backend $spec: failed" >&2; exit 1; }
                        echo "$backend ${spec// /-} $out" >> "$results"
                done
        done
done

python3 - "$results" "$TRIALS" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    backend, variant, *kv = line.split()
    d = {k: int(v) for k, v in (x.split("=") for x in kv)}
    rows.setdefault((backend, variant), []).append(d)
names = {"kubekey": "(a) kubekey -F/-X filter+nat", "k3s": "(b) k3s save|grep|restore",
         "agent-flush": "(c) node-reset firewall flush", "agent-owned": "(c) node-reset firewall owned",
         "floor-flush": "floor: flush, bare operation", "floor-owned": "floor: owned, bare operation"}
print(f"fixture per backend: ~5,550 rules in ~500 chains for each of v4 and v6; median of {sys.argv[2]} trials")
print(f"{'backend':8} {'variant':32} {'ms':>6}  host rules intact  owned lines left")
med = {}
for (backend, variant), ds in rows.items():
    m = statistics.median(d["ms"] for d in ds)
    med[(backend, variant)] = m
    print(f"{backend:8} {names[variant]:32} {m:6.0f}  {'yes' if ds[0]['host_intact'] else 'NO':17}  {ds[0]['owned_left']}")
def ratios(label, backends):
    a, b, f, o, ff, fo = (sum(med[(x, v)] for x in backends)
                          for v in ("kubekey", "k3s", "agent-flush", "agent-owned", "floor-flush", "floor-owned"))
    print(f"{label:16} (a)/(c flush) = {a / max(f, 1):.2f}x (target >= 2)   (b)/(c owned) = {b / max(o, 1):.2f}x (target >= 2)")
    print(f"{'':16} (c flush)/floor = {f / max(ff, 1):.2f}x             (c owned)/floor = {o / max(fo, 1):.2f}x")
ratios("nft:", ["nft"])
ratios("legacy:", ["legacy"])
ratios("both backends:", ["nft", "legacy"])
EOF
