#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The firewall phase against a real kernel in a private network namespace: a kube-proxy/calico/
# flannel fixture in iptables-nft AND iptables-legacy (v4 and v6), native nf_tables kube-proxy
# tables and ipsets. Owned mode leaves the host firewall byte for byte; flush mode empties it all;
# a held xtables lock is waited for, then reported, with the legacy ruleset untouched; a set a host
# rule still uses is reported, not forced; a second run changes nothing; absent IPVS is a skip.
. "$(dirname "$0")/lib.sh"
in_private_ns -n "$@"
require_cmd iptables-nft-restore ip6tables-nft-restore iptables-legacy-restore ip6tables-legacy-restore \
        iptables-nft-save iptables-legacy-save ipset python3 flock
REPORT="$TOP/tests/integration/report.py"
. "$TOP/tests/integration/fixtures/firewall.sh"
[ -x "$NODE_RESET" ] || skip "$NODE_RESET is not built"
HAVE_NFT=0; command -v nft > /dev/null 2>&1 && HAVE_NFT=1
[ "$HAVE_NFT" = 1 ] || echo "note: nft is not installed: the native kube-proxy tables are not part of this run"

mkdir -p "$WORK/root"
# With verify: every run observes again and reports what is left as residue.
nr() { "$NODE_RESET" --root "$WORK/root" --phases firewall,verify "$@"; }
jq_() { "$REPORT" "$@" > /dev/null; }   # jq_ FILE EXPR: true when EXPR holds
# Owned lines in the iptables rulesets (the host's nf_tables table has a KUBE- lookalike on purpose).
owned_lines() { fw_all_part | sed '/^### nft inet hostfw/,$d' | grep -E "$FW_OWNED_RE"; }

manifest() { # MODE > file
        printf 'firewall %s\n' "$1"
        printf 'nft-table ip kube-proxy\nnft-table ip6 kube-proxy\n'
        printf 'ipset KUBE-*\nipset cali40*\nipset cali60*\nipset kube-router-*\nipvs clear\n'
}
manifest owned > "$WORK/owned.conf"
manifest flush > "$WORK/flush.conf"
printf 'firewall keep\nipset KUBE-*\nipvs clear\n' > "$WORK/keep.conf"

# --- Owned mode -----------------------------------------------------------------------------------
fw_load_all || { fail "cannot load the fixture"; finish; }
fw_host_part > "$WORK/host.before"
fw_all_part > "$WORK/all.before"
[ "$HAVE_NFT" = 1 ] && nft list table inet hostfw > "$WORK/hostfw.before"
assert "the fixture is big (thousands of owned rules per backend and family)" \
        test "$(fw_save legacy 4 | grep -c '^-A KUBE-')" -gt 1000

nr --manifest "$WORK/owned.conf" --output=json plan > "$WORK/plan.json"; rc=$?
assert "plan exits 0" test $rc -eq 0
assert "plan changes nothing" cmp -s "$WORK/all.before" <(fw_all_part)
assert "plan counts owned chains, owned and kept rules per backend/family/table" jq_ "$WORK/plan.json" \
        'all(any(a["target"] == t and "owned chains" in a["detail"] and "kept rules" in a["detail"] for a in actions(r, phase="firewall")) for t in ("nft ip filter", "nft ip6 nat", "legacy ip raw", "legacy ip6 mangle"))'
assert "plan has one action per matching ipset" jq_ "$WORK/plan.json" \
        'targets(r, kind="ipset") == sorted(["ipset KUBE-CLUSTER-IP", "ipset KUBE-6-CLUSTER-IP", "ipset KUBE-LOOP-BACK", "ipset KUBE-NODE-PORT-TCP", "ipset KUBE-NODE-PORT-LIST", "ipset cali40all-hosts-net", "ipset cali40masq-ipam-pools", "ipset cali60all-hosts-net", "ipset kube-router-*"])'

nr --manifest "$WORK/owned.conf" --yes --output=json run > "$WORK/run1.json"; rc=$?
assert "owned run exits 0" test $rc -eq 0
assert "owned run: changed, nothing failed, no residue" jq_ "$WORK/run1.json" 'r["changed"] and not r["failed"] and r["residue"] == []'
fw_all_part > "$WORK/all.after"
assert "host part identical, both backends, both families (and nothing owned left)" \
        diff -u "$WORK/host.before" "$WORK/all.after"
assert "no owned chain or rule remains anywhere" test -z "$(owned_lines)"
assert "host ipsets kept, owned ones destroyed" test "$(ipset list -n | sort | tr '\n' ' ')" = "HOST-ALLOW HOST-ALLOW6 "
assert "every owned ipset reported changed" jq_ "$WORK/run1.json" \
        'len(actions(r, kind="ipset", result="changed")) == 8'
if [ "$HAVE_NFT" = 1 ]; then
        assert "native kube-proxy tables deleted" test -z "$(nft list tables | grep kube-proxy)"
        assert "the host's own nf_tables table (with a KUBE- lookalike chain) untouched" \
                diff "$WORK/hostfw.before" <(nft list table inet hostfw)
fi
if [ ! -e /proc/net/ip_vs ] && [ ! -e /sys/module/ip_vs ]; then
        assert "IPVS absent: skipped with the reason" jq_ "$WORK/run1.json" \
                'any(a["result"] == "skipped" and a["message"] == "IPVS not present in this kernel" for a in actions(r, kind="ipvs"))'
        assert "IPVS was not loaded by looking" test ! -e /proc/net/ip_vs
fi
assert "one nf_tables transaction per family: ip and ip6 actions all changed" jq_ "$WORK/run1.json" \
        'all(a["result"] == "changed" for a in actions(r, kind="nft") if a["target"].split()[1] in ("ip", "ip6"))'

nr --manifest "$WORK/owned.conf" --yes --output=json run > "$WORK/run2.json"; rc=$?
assert "second run exits 0" test $rc -eq 0
assert "second run: every action unchanged or skipped" jq_ "$WORK/run2.json" \
        'not r["changed"] and all(a["result"] in ("unchanged", "skipped") for a in actions(r))'
nr --manifest "$WORK/owned.conf" status > /dev/null; rc=$?
assert "status exits 0 after the reset" test $rc -eq 0

# --- One observation per family ------------------------------------------------------------------
# The ip6 transaction goes out bound to the generation the ip commit left (nft.h, NftSession): the
# kernel does not refuse it, so the family is not read again. Each family's rules are dumped once,
# by the plan (no verify here: it would read them again).
if command -v strace > /dev/null 2>&1; then
        fw_clear_all
        fw_load_all > /dev/null 2>&1 || fail "cannot load the fixture"
        # LeakSanitizer (sanitizer builds) cannot work in a process strace already traces.
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
                strace -f -e trace=sendto,sendmsg -o "$WORK/nft.strace" "$NODE_RESET" --root "$WORK/root" \
                --phases firewall --manifest "$WORK/owned.conf" --yes run > /dev/null 2>&1; rc=$?
        assert "one observation per family: exit 0, no owned chain or rule left" test $rc -eq 0 -a -z "$(owned_lines)"
        assert "one observation per family: ip and ip6 rules dumped once each, by the plan" \
                test "$(grep -c 'NFT_MSG_GETRULE' "$WORK/nft.strace")" -eq 2
else
        echo "note: strace is not installed: the number of nf_tables dumps is not checked"
fi

# --- A set a host rule still uses: reported, not forced, not even flushed ------------------------
ipset create KUBE-HOSTREF hash:ip && ipset add KUBE-HOSTREF 192.0.2.7
iptables-legacy -w 5 -A INPUT -m set --match-set KUBE-HOSTREF src -j ACCEPT
nr --manifest "$WORK/owned.conf" --yes --output=json run > "$WORK/busy.json"; rc=$?
assert "a set in use by a host rule makes the run exit 1" test $rc -eq 1
assert "it is reported failed: in use by a kernel component" jq_ "$WORK/busy.json" \
        'any(a["target"] == "ipset KUBE-HOSTREF" and a["result"] == "failed" and "in use by a kernel component" in a["message"] for a in actions(r, kind="ipset"))'
assert "the set and its entry are still there" ipset -q test KUBE-HOSTREF 192.0.2.7
assert "the host rule is still there" iptables-legacy -w 5 -C INPUT -m set --match-set KUBE-HOSTREF src -j ACCEPT
iptables-legacy -w 5 -D INPUT -m set --match-set KUBE-HOSTREF src -j ACCEPT
ipset destroy KUBE-HOSTREF

# --- Flush mode -----------------------------------------------------------------------------------
fw_clear_all
fw_load_all || { fail "cannot load the fixture"; finish; }
iptables-legacy -w 5 -t mangle -P FORWARD DROP
ip6tables-nft -t filter -P INPUT DROP
nr --manifest "$WORK/flush.conf" --yes --output=json run > "$WORK/flush.json"; rc=$?
assert "flush run exits 0" test $rc -eq 0
assert "flush: no rule left in either backend or family" test -z "$(fw_all_part | grep '^-A')"
assert "flush: no user chain left" test -z "$(fw_all_part | grep -E '^:[^ ]+ -$')"
assert "flush: every policy ACCEPT" test -z "$(fw_all_part | grep -E '^:[^ ]+ (DROP|REJECT)')"
assert "flush: the plan said how many rules and chains" jq_ "$WORK/flush.json" \
        'any(a["target"] == "legacy ip nat" and a["detail"].startswith("flush:") for a in actions(r))'
if [ "$HAVE_NFT" = 1 ]; then
        assert "flush: native kube-proxy tables deleted" test -z "$(nft list tables | grep kube-proxy)"
        assert "flush: tables not listed and not iptables' are left alone" nft list table inet hostfw > /dev/null
fi
assert "flush: owned ipsets destroyed" test -z "$(ipset list -n | grep -E '^(KUBE-|cali)')"
nr --manifest "$WORK/flush.conf" --yes --output=json run > "$WORK/flush2.json"; rc=$?
assert "flush: second run exits 0, all unchanged" jq_ "$WORK/flush2.json" \
        'not r["changed"] and all(a["result"] in ("unchanged", "skipped") for a in actions(r))'

# --- The xtables lock held by another process ---------------------------------------------------
fw_clear_all
fw_load_ipsets && fw_load legacy 4 20 2 2 && fw_load legacy 6 20 2 2 && fw_load nft 4 20 2 2 || fail "cannot load the small fixture"
fw_save legacy 4 > "$WORK/legacy4.before"; fw_save legacy 6 > "$WORK/legacy6.before"
# The holder execs into sleep: its PID is the only process holding the lock.
( exec 9> /run/xtables.lock; flock 9 && exec sleep 30 ) &
holder=$!
for _ in $(seq 50); do flock -n /run/xtables.lock true || break; sleep 0.1; done
t0=$(date +%s%N)
nr --manifest "$WORK/owned.conf" --xtables-wait 2 --yes --output=json run > "$WORK/lock.json"; rc=$?
elapsed_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill "$holder"; wait "$holder" 2> /dev/null
assert "lock held: exit 1" test $rc -eq 1
assert "lock held: waited its bound (2 s) and no longer (took ${elapsed_ms} ms)" \
        test "$elapsed_ms" -ge 1900 -a "$elapsed_ms" -lt 8000
assert "lock held: every legacy table reported failed, naming the lock" jq_ "$WORK/lock.json" \
        'len(actions(r, kind="xtables")) > 0 and all(a["result"] == "failed" and "xtables lock" in a["message"] for a in actions(r, kind="xtables"))'
assert "lock held: legacy v4 ruleset untouched" cmp -s "$WORK/legacy4.before" <(fw_save legacy 4)
assert "lock held: legacy v6 ruleset untouched" cmp -s "$WORK/legacy6.before" <(fw_save legacy 6)
assert "lock held: nf_tables (no lock) still cleaned" test -z "$(fw_save nft 4 | grep -E "$FW_OWNED_RE")"
nr --manifest "$WORK/owned.conf" --xtables-wait 2 --yes --output=json run > "$WORK/lock2.json"; rc=$?
assert "lock released: the next run cleans legacy and exits 0" test $rc -eq 0 -a -z "$(owned_lines)"

# --- Changes made while the agent waits for the lock are not lost or undone ------------------------
# The agent plans, then waits; meanwhile another tool (with its own lock file) changes the legacy
# tables. Owned mode reads again under the lock: a new host rule survives, a new owned rule goes.
# Flush mode reuses its observation: the kernel refuses it for the changed size and it reads again.
waiting_for_lock() { # PID: it has opened the lock file
        local _
        for _ in $(seq 100); do
                ls -l "/proc/$1/fd" 2> /dev/null | grep -q xtables.lock && return 0
                sleep 0.05
        done
        return 1
}
for mode in owned flush; do
        fw_clear_all
        fw_load_ipsets && fw_load legacy 4 20 2 2 || fail "cannot load the small fixture"
        ( exec 9> /run/xtables.lock; flock 9 && exec sleep 30 ) &
        holder=$!
        for _ in $(seq 50); do flock -n /run/xtables.lock true || break; sleep 0.1; done
        "$NODE_RESET" --root "$WORK/root" --phases firewall,verify --manifest "$WORK/$mode.conf" \
                --xtables-wait 20 --yes --output=json run > "$WORK/race-$mode.json" &
        agent=$!
        waiting_for_lock "$agent" || fail "$mode: the agent never waited for the lock"
        XTABLES_LOCKFILE=$WORK/other.lock iptables-legacy -w 5 -A INPUT -s 198.51.100.2 -j ACCEPT
        XTABLES_LOCKFILE=$WORK/other.lock iptables-legacy -w 5 -I INPUT -j KUBE-FIREWALL
        kill "$holder"; wait "$holder" 2> /dev/null
        wait "$agent"; rc=$?
        assert "$mode, table changed while waiting: exit 0" test $rc -eq 0
        if [ "$mode" = owned ]; then
                assert "owned: the host rule added meanwhile survives" \
                        iptables-legacy -w 5 -C INPUT -s 198.51.100.2 -j ACCEPT
                assert "owned: the owned rule added meanwhile is gone" test -z "$(owned_lines)"
        else
                assert "flush: what was added meanwhile is flushed too" test -z "$(fw_save legacy 4 | grep '^-A')"
        fi
done

# --- keep -----------------------------------------------------------------------------------------
fw_load nft 4 5 2 2 > /dev/null 2>&1
fw_all_part > "$WORK/keep.before"
nr --manifest "$WORK/keep.conf" --yes --output=json run > "$WORK/keep.json"; rc=$?
assert "keep: exit 0, the phase is one skipped action" jq_ "$WORK/keep.json" \
        'len(actions(r, phase="firewall")) == 1 and actions(r, phase="firewall")[0]["result"] == "skipped"'
assert "keep: nothing changed" cmp -s "$WORK/keep.before" <(fw_all_part)

# --- calico in nftables mode (felix 3.29+): its "calico" tables go with the shipped profiles --------
if [ "$HAVE_NFT" = 1 ]; then
        nft -f - <<'NFT'
table ip calico {
        set cali40this-host { type ipv4_addr; elements = { 10.0.0.1 } }
        map filter-cali-from-wl-dispatch { type ifname : verdict; }
        chain cali-fw-dispatch { ip saddr @cali40this-host accept; }
        chain filter-FORWARD { type filter hook forward priority filter; policy accept; jump cali-fw-dispatch; }
        chain nat-POSTROUTING { type nat hook postrouting priority srcnat; policy accept; }
}
table ip6 calico {
        chain filter-INPUT { type filter hook input priority filter; policy accept; }
}
table inet nr-host {
        chain input {
                type filter hook input priority filter; policy accept;
                tcp dport 22 accept
        }
}
table ip calico-site {
        chain c {
        }
}
NFT
        assert "calico nft: the fixture is loaded" eval "{ nft list table ip calico && nft list table ip6 calico && nft list table ip calico-site; } > /dev/null"
        nft list table inet nr-host > "$WORK/nr-host.before"
        "$NODE_RESET" --root "$WORK/root" --profile kubeadm --phases firewall,verify --yes --output=json run \
                > "$WORK/calico-nft.json" 2> "$WORK/calico-nft.err"; rc=$?
        assert "calico nft: exit 0" test $rc -eq 0
        assert "calico nft: ip calico is gone" test -z "$(nft list tables | grep -x 'table ip calico')"
        assert "calico nft: ip6 calico is gone" test -z "$(nft list tables | grep -x 'table ip6 calico')"
        assert "calico nft: the host's table stays byte for byte" cmp -s "$WORK/nr-host.before" <(nft list table inet nr-host)
        assert "calico nft: a host table merely named like it stays" eval "nft list table ip calico-site > /dev/null"
        assert "calico nft: the report names the shipped line" jq_ "$WORK/calico-nft.json" \
                'any(a["target"] == "nft ip calico" and a["result"] == "changed" and "profile:cni:" in a["reason"] for a in actions(r, phase="firewall"))'
        "$NODE_RESET" --root "$WORK/root" --profile kubeadm --phases firewall --yes --output=json run \
                > "$WORK/calico-nft2.json" 2> /dev/null
        assert "calico nft: a second run changes nothing" jq_ "$WORK/calico-nft2.json" \
                'not any(a["result"] == "changed" and "calico" in a["target"] for a in actions(r, phase="firewall"))'
        nft delete table inet nr-host
        nft delete table ip calico-site
else
        echo "note: nft is not installed: calico's nftables tables are not part of this run"
fi

finish
