#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The network phase on a synthetic CNI node, in private namespaces: the group delete, the one-by-one
# fallback (--no-group-delete), the management guard (default route, SSH_CONNECTION, an established
# session on port 22, the route back to an SSH client) and idempotence.
#
# Decision asserted here: both ends of a veth pair that match are both planned and both reported
# "changed" — by the group delete (the second, which its peer took along, as "deleted with its veth
# peer X by group delete"), or, one by one, the second as "deleted with its peer X".

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/fixtures/cni-node.sh"

require_cmd ip python3 unshare

PATTERNS="cali* vxlan.calico flannel.1 cni0 kube-ipvs0 nodelocaldns"

write_manifest() { # file
        cat >"$1" <<-'EOF'
	# the CNI state of the synthetic node
	link cali*
	link vxlan.calico
	link flannel.1
	link-master cni0
	link cni0
	link kube-ipvs0
	link nodelocaldns
	netns cni-*
	route-proto bird
	EOF
}

# Report queries: report.py FILE count KIND RESULT [MESSAGE_PREFIX] | targets KIND RESULT | get KEY
write_report_py() {
        cat >"$WORK/report.py" <<-'EOF'
	import json, sys
	r = json.load(open(sys.argv[1]))
	acts = [a for p in r["phases"] if p["name"] == "network" for a in p["actions"]]
	def sel(kind, result, prefix=""):
	    return [a for a in acts if kind in ("*", a["kind"]) and result in ("*", a["result"])
	            and (a.get("message") or "").startswith(prefix)]
	cmd = sys.argv[2]
	if cmd == "count":
	    print(len(sel(*sys.argv[3:])))
	elif cmd == "targets":
	    print("\n".join(sorted(a["target"] for a in sel(*sys.argv[3:]))))
	elif cmd == "message":
	    print("\n".join(a.get("message") or a.get("skip_reason") or "" for a in acts if a["target"] == sys.argv[3]))
	elif cmd == "get":
	    print(json.dumps(r.get(sys.argv[3])))
	EOF
}
rq() { python3 "$WORK/report.py" "$@"; }

# The links the manifest selects, from the kernel's own JSON view.
expected_links() {
        ip -j link show | python3 -c '
import fnmatch, json, sys
pats = sys.argv[1].split()
for l in json.load(sys.stdin):
    if any(fnmatch.fnmatchcase(l["ifname"], p) for p in pats) or l.get("master") == "cni0":
        print(l["ifname"])' "$PATTERNS" | sort
}

bird_routes() { { ip -4 route show table all proto bird; ip -6 route show table all proto bird; } | grep -c .; }
cni_netns() { ls /run/netns 2>/dev/null | grep -c '^cni-'; }

host_state() {
        ip -br link show dev eth1 | awk '{print $1}'
        ip -br link show dev eth1p | awk '{print $1}'
        ip -br link show dev docker0-keep | awk '{print $1}'
        ip -br addr show dev eth1 | awk '{$2=""; print}'
        ip -br addr show dev docker0-keep | awk '{$2=""; print}'
        ip -4 route show default
        ip -6 route show default | sed 's/ expires.*//'
        ip -4 route show 198.51.100.0/24
        ip -4 route show 203.0.113.0/24
}

run_agent() { # json-file args...
        local out=$1
        shift
        "$NODE_RESET" --root "$WORK/root" --yes --output=json "$@" run >"$out" 2>"$out.log"
}

assert_cni_state_gone() {
        assert "no matching link left" test -z "$(expected_links)"
        assert "no cni-* namespace left" test "$(cni_netns)" -eq 0
        assert "no proto bird route left (IPv4, IPv6, all tables)" test "$(bird_routes)" -eq 0
}

# ---- one-by-one fallback, run in a fresh network namespace of its own ----
scenario_fallback() {
        local r n_links
        WORK="$WORK/fallback"
        mkdir -p "$WORK/root"
        write_manifest "$WORK/m.conf"
        write_report_py
        cni_node_build || { fail "fixture (fallback)"; return; }
        host_state >"$WORK/host.before"
        n_links=$(expected_links | wc -l)

        run_agent "$WORK/r.json" --manifest "$WORK/m.conf" --phases network,verify --no-group-delete
        r=$?
        assert "fallback: run exits 0" test "$r" -eq 0
        assert_cni_state_gone
        host_state >"$WORK/host.after"
        assert "fallback: host links, addresses and routes intact" cmp -s "$WORK/host.before" "$WORK/host.after"
        assert "fallback: every link changed" test "$(rq "$WORK/r.json" count link changed)" -eq "$n_links"
        assert "fallback: 500 veth ends reported 'deleted with its peer'" \
                test "$(rq "$WORK/r.json" count link changed 'deleted with its peer ')" -eq "$CNI_CALI_PAIRS"
        assert "fallback: the rest 'deleted one by one: group delete is disabled'" \
                test "$(rq "$WORK/r.json" count link changed 'deleted one by one: group delete is disabled')" \
                -eq $((n_links - CNI_CALI_PAIRS))
        assert "fallback: no failure, no residue" \
                test "$(rq "$WORK/r.json" count '*' failed):$(rq "$WORK/r.json" get residue)" = "0:[]"
}

if [ "${1:-}" = --scenario ]; then
        "scenario_$2"
        finish
fi

in_private_ns -n "$@"
[ -x "$NODE_RESET" ] || { echo "FAIL: $NODE_RESET is not built"; exit 1; }
export WORK
mkdir -p "$WORK/root"
write_manifest "$WORK/m.conf"
write_report_py

# ---- the group delete ----
t0=$(date +%s%N)
cni_node_build || { echo "FAIL: cannot build the synthetic node"; exit 1; }
echo "fixture built in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
expected_links >"$WORK/links.expected"
n_links=$(wc -l <"$WORK/links.expected")
n_netns=$(cni_netns)
n_routes=$(bird_routes)
host_state >"$WORK/host.before"
assert "fixture: 1,025 links, 200 namespaces, 7 bird routes" test "$n_links:$n_netns:$n_routes" = "1025:200:7"

# A process inside one namespace: the plan names it (from the one /proc table the plan reads).
inside_ns=$(ls /run/netns | grep '^cni-' | head -n 1)
ip netns exec "$inside_ns" sleep 300 &
inside_pid=$!
for _ in $(seq 50); do [ "$(readlink /proc/$inside_pid/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.1; done
"$NODE_RESET" --root "$WORK/root" --manifest "$WORK/m.conf" --phases network --output=json plan >"$WORK/plan.json"
assert "the plan names the process inside $inside_ns (pid $inside_pid), none in the others" python3 - "$WORK/plan.json" "$inside_ns" "$inside_pid" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rows = [a for p in r["phases"] for a in p["actions"] if a["kind"] == "netns"]
mine = [a["detail"] for a in rows if a["target"].endswith("/" + sys.argv[2])]
others = [a["detail"] for a in rows if not a["target"].endswith("/" + sys.argv[2])]
sys.exit(not (mine == [f"1 process still inside (pid {sys.argv[3]}): the name goes, the namespace lives on until they exit"]
              and others and all(d == "no process inside" for d in others)))
PY
kill "$inside_pid"; wait "$inside_pid" 2>/dev/null
rq "$WORK/plan.json" targets link planned >"$WORK/links.planned"
assert "the plan lists exactly the matching links" cmp -s "$WORK/links.expected" "$WORK/links.planned"
assert "the plan lists every namespace and route" \
        test "$(rq "$WORK/plan.json" count netns planned):$(rq "$WORK/plan.json" count route planned)" = "$n_netns:$n_routes"
assert "the plan changed nothing" test "$(expected_links | wc -l):$(cni_netns):$(bird_routes)" = "$n_links:$n_netns:$n_routes"

t0=$(date +%s%N)
run_agent "$WORK/r.json" --manifest "$WORK/m.conf" --phases network,verify
r=$?
echo "agent run (network, verify) took $(( ($(date +%s%N) - t0) / 1000000 )) ms"
assert "run exits 0" test "$r" -eq 0
assert_cni_state_gone
host_state >"$WORK/host.after"
assert "host links, addresses and routes intact" cmp -s "$WORK/host.before" "$WORK/host.after"
rq "$WORK/r.json" targets link changed >"$WORK/links.changed"
assert "the report lists exactly the deleted links" cmp -s "$WORK/links.expected" "$WORK/links.changed"
# Of two veth peers, only the first is moved into the group: it takes the other along.
assert "every link but one end of each cali pair 'deleted by group delete'" \
        test "$(rq "$WORK/r.json" count link changed 'deleted by group delete')" -eq "$((n_links - CNI_CALI_PAIRS))"
assert "the other end of each cali pair 'deleted with its veth peer ... by group delete'" \
        test "$(rq "$WORK/r.json" count link changed 'deleted with its veth peer cali')" -eq "$CNI_CALI_PAIRS"
assert "every namespace and route deleted" \
        test "$(rq "$WORK/r.json" count netns changed):$(rq "$WORK/r.json" count route changed)" = "$n_netns:$n_routes"
assert "nothing else: no failure, no skip, no residue" \
        test "$(rq "$WORK/r.json" count '*' '*'):$(rq "$WORK/r.json" get residue)" = "$((n_links + n_netns + n_routes)):[]"

run_agent "$WORK/r2.json" --manifest "$WORK/m.conf" --phases network,verify
r=$?
assert "second run exits 0" test "$r" -eq 0
assert "second run: everything unchanged" \
        test "$(rq "$WORK/r2.json" count '*' unchanged):$(rq "$WORK/r2.json" get changed)" = "$(rq "$WORK/r2.json" count '*' '*'):false"

# ---- the management guard ----
printf 'link eth*\nlink docker0-keep\n' >"$WORK/guard.conf"
SSH_CONNECTION="198.51.100.7 50000 172.17.0.1 22" \
        run_agent "$WORK/g.json" --manifest "$WORK/guard.conf" --phases network,verify
r=$?
assert "guard: run exits 0 (a refusal is reported, not residue)" test "$r" -eq 0
assert "guard: eth1 refused: carries the default route" \
        test "$(rq "$WORK/g.json" message eth1)" = "refused: carries the default route"
assert "guard: eth1p refused through its veth peer" \
        test "$(rq "$WORK/g.json" message eth1p)" = "refused: its veth peer eth1 carries the default route"
assert "guard: docker0-keep refused: the SSH session arrives through it" \
        test "$(rq "$WORK/g.json" message docker0-keep)" = "refused: the SSH session arrives through it"
assert "guard: three skipped, nothing changed" \
        test "$(rq "$WORK/g.json" count link skipped):$(rq "$WORK/g.json" get changed)" = "3:false"
host_state >"$WORK/host.after"
assert "guard: host links, addresses and routes intact" cmp -s "$WORK/host.before" "$WORK/host.after"

# An established TCP session on port 22 (no SSH_CONNECTION): its local address's link is guarded.
python3 - "$WORK/sess.ready" <<-'EOF' &
	import socket, sys, time
	srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	srv.bind(("172.17.0.1", 22)); srv.listen(1)
	cli = socket.create_connection(("172.17.0.1", 22)); conn, _ = srv.accept()
	open(sys.argv[1], "w").close(); time.sleep(60)
	EOF
sess=$!
for _ in $(seq 50); do [ -e "$WORK/sess.ready" ] && break; sleep 0.1; done
printf 'link docker0-keep\n' >"$WORK/tcp.conf"
env -u SSH_CONNECTION "$NODE_RESET" --root "$WORK/root" --manifest "$WORK/tcp.conf" --phases network \
        --yes --output=json run >"$WORK/t.json" 2>"$WORK/t.log"
assert "guard: an established session on port 22 protects docker0-keep" \
        test "$(rq "$WORK/t.json" message docker0-keep)" = "refused: the SSH session arrives through it"
kill "$sess" 2>/dev/null
wait "$sess" 2>/dev/null

# The route back to the SSH client is guarded even when its protocol is listed.
ip route add 10.0.7.0/26 via 192.0.2.20 dev eth1 proto bird
ip route add 10.0.8.0/26 via 192.0.2.20 dev eth1 proto bird
printf 'route-proto bird\n' >"$WORK/route.conf"
SSH_CONNECTION="10.0.7.5 50000 192.0.2.10 22" \
        run_agent "$WORK/rt.json" --manifest "$WORK/route.conf" --phases network
assert "guard: the route to the SSH client is refused" \
        test "$(rq "$WORK/rt.json" message '10.0.7.0/26 proto bird')" = "refused: the SSH session from 10.0.7.5 is routed through it"
assert "guard: that route survives, the other bird route goes" \
        test "$(ip -4 route show 10.0.7.0/26 proto bird | grep -c .):$(ip -4 route show 10.0.8.0/26 | grep -c .)" = "1:0"
ip route del 10.0.7.0/26

# ---- the fallback, in a fresh network namespace ----
unshare -n -- "$BASH" "$0" --scenario fallback
r=$?
assert "fallback scenario passed" test "$r" -eq 0

# A phase that cannot observe makes the verdict "unknown", never clean: a libmnl.so.0 that lacks the
# symbols used (first on the loader's path) skips the network and firewall phases; status and a run
# exit 1 with verdict "unknown" while cni0 is left, and the text never says "the node is clean".
command -v cc >/dev/null || skip "no C compiler for the broken libmnl.so.0"
mkdir -p "$WORK/badlib"
printf 'int mnl_socket_open(int bus) { return bus; }\n' >"$WORK/badlib/mnl.c"
cc -shared -fPIC -Wl,-soname,libmnl.so.0 -o "$WORK/badlib/libmnl.so.0" "$WORK/badlib/mnl.c" ||
        { fail "cannot build the broken libmnl.so.0"; finish; }
ip link add cni0 type bridge 2>/dev/null
printf 'link cni0\n' >"$WORK/unobs.conf"
jget() { python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])).get(sys.argv[2])))' "$@"; }
badlib() { LD_LIBRARY_PATH="$WORK/badlib" "$NODE_RESET" --root "$WORK/root" --manifest "$WORK/unobs.conf" \
        --phases network,firewall "$@"; }
badlib status >"$WORK/unobs.txt" 2>&1
assert "unobserved: status exits 1" test $? -eq 1
assert "unobserved: status does not say clean" sh -c "! grep -q 'the node is clean' '$WORK/unobs.txt'"
assert "unobserved: status says the verdict is unknown" grep -qx "verdict: unknown" "$WORK/unobs.txt"
assert "unobserved: status names the network phase's library" \
        grep -q "network library libmnl.so.0: libmnl.so.0 lacks the symbol" "$WORK/unobs.txt"
badlib --output=json status >"$WORK/unobs.json" 2>/dev/null
assert "unobserved: JSON status exits 1" test $? -eq 1
assert "unobserved: the JSON report is valid" schema_valid "$WORK/unobs.json"
assert "unobserved: JSON verdict unknown, failed, exit 1, both phases unobserved, residue empty" \
        python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "unknown" and r["failed"] is True and r["exit_status"] == 1 and r["residue"] == []
assert sorted((u["phase"], u["kind"]) for u in r["unobserved"]) == [("firewall", "library"), ("network", "library")]' \
        "$WORK/unobs.json"
LD_LIBRARY_PATH="$WORK/badlib" "$NODE_RESET" --root "$WORK/root" --manifest "$WORK/unobs.conf" \
        --phases network,verify --yes --output=json run >"$WORK/unobs-run.json" 2>/dev/null
assert "unobserved: a verified run exits 1 with verdict unknown" \
        test "$?:$(jget "$WORK/unobs-run.json" verdict)" = '1:"unknown"'
assert "unobserved: cni0 is still there" sh -c 'ip link show cni0 >/dev/null'
"$NODE_RESET" --root "$WORK/root" --manifest "$WORK/unobs.conf" --phases network --output=json status \
        >"$WORK/obs.json" 2>/dev/null
assert "observed: status with the real libmnl says residue, exit 1" \
        test "$?:$(jget "$WORK/obs.json" verdict)" = '1:"residue"'
ip link del cni0
"$NODE_RESET" --root "$WORK/root" --manifest "$WORK/unobs.conf" --phases network --output=json status \
        >"$WORK/obs2.json" 2>/dev/null
assert "observed: status with cni0 gone says clean, exit 0" \
        test "$?:$(jget "$WORK/obs2.json" verdict):$(jget "$WORK/obs2.json" unobserved)" = '0:"clean":[]'

finish
