#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/ansible/cluster-delete.yml driven by the real ansible-playbook against three local nodes
# (connection=local; --root trees in this test's private mount namespace, a network namespace each,
# as test-ansible.sh builds them) and a status endpoint in this test's network namespace that records
# every update: check mode changes nothing and sends nothing; the deletion sends "deleting", then
# the workers, then the control plane, then "deleted"; the fleet summary matches the nodes' own
# reports; a second run changes nothing; a worker with a held emptyDir makes the status "fail"
# naming it while the others stay clean. remove-node.yml needs a live cluster: test-ansible-remove.sh
# runs it against kube-apiserver 1.20, make e2e-k8s (remove-node-live, forget-dead-control-plane)
# over SSH.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_cmd ansible-playbook nsenter ip iptables python3
in_private_ns "$@"
. "$TOP/tests/integration/fixtures/node-tree.sh"

pids=()
eval "$(trap -p EXIT | sed 's/^trap -- /lib_exit=/; s/ EXIT$//')"
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; eval "${lib_exit:-}"' EXIT

NODES="cp1 w1 w2"
EX=$TOP/examples/ansible
mkdir -p "$WORK"/{home,tmp,ansible,bin,nodes,disks}
export HOME=$WORK/home TMPDIR=$WORK/tmp ANSIBLE_LOCAL_TEMP=$WORK/ansible/local \
        ANSIBLE_REMOTE_TEMP=$WORK/ansible/remote ANSIBLE_CONFIG=$WORK/ansible.cfg ANSIBLE_NOCOLOR=1
printf '[defaults]\nretry_files_enabled = False\ninterpreter_python = /usr/bin/python3\n[connection]\npipelining = True\n' > "$ANSIBLE_CONFIG"

ansible-playbook -i "$EX/inventory.example.yml" --syntax-check "$EX/cluster-delete.yml" > "$WORK/syntax.log" 2>&1
assert "cluster-delete.yml: ansible-playbook --syntax-check" test $? -eq 0 || cat "$WORK/syntax.log"

for n in $NODES; do
        build_node_tree "$WORK/nodes/$n" "$WORK/disks/$n"
        echo "$n" > "$WORK/nodes/$n/etc/hostname"
        ip netns add "nr-$n"
        ip -n "nr-$n" -batch - <<-EOF
	link set lo up
	link add cni0 type bridge
	link add veth0a1 type veth peer name veth0b1
	link set veth0a1 master cni0
	EOF
        nsenter --net="/run/netns/nr-$n" -- iptables -t nat -N KUBE-SERVICES
        printf '#!/bin/sh\nexec nsenter --net=/run/netns/nr-%s -- %q "$@"\n' "$n" "$NODE_RESET" > "$WORK/bin/$n"
        chmod 0755 "$WORK/bin/$n"
done

# The cluster's status endpoint: every update, one JSON line, in the order received.
python3 "$TOP/tests/integration/status-endpoint.py" "$WORK/updates" 127.0.0.1 8089 "$WORK/status.ready" &
pids+=($!)
for _ in $(seq 50); do [ -e "$WORK/status.ready" ] && break; sleep 0.1; done

cat > "$WORK/inventory.yml" <<EOF
all:
  vars:
    ansible_connection: local
    ansible_become: false
    node_reset_report_dir: $WORK/reports
    node_reset_phases: [mounts, firewall, network, files]
    node_reset_status_url: http://127.0.0.1:8089/clusters/c1/status
    node_reset_status_method: PUT
    node_reset_status_fields: {cluster: c1}
    node_reset_summary_file: $WORK/summary.json
  children:
    kube_control_plane:
      hosts:
        cp1: { node_reset_binary: $WORK/bin/cp1, node_reset_root: $WORK/nodes/cp1 }
    kube_node:
      hosts:
        w1: { node_reset_binary: $WORK/bin/w1, node_reset_root: $WORK/nodes/w1 }
        w2: { node_reset_binary: $WORK/bin/w2, node_reset_root: $WORK/nodes/w2 }
EOF

delete() { # NAME ARGS...: cluster-delete.yml, output in $WORK/NAME.log; the updates of this run in $WORK/NAME.updates
        local name=$1 rc
        shift
        : > "$WORK/updates"
        rm -f "$WORK/summary.json"
        ansible-playbook -i "$WORK/inventory.yml" "$EX/cluster-delete.yml" "$@" > "$WORK/$name.log" 2>&1
        rc=$?
        cp "$WORK/updates" "$WORK/$name.updates"
        echo "$name: ansible-playbook exit $rc"
        return $rc
}
# u.py FILE EXPR: EXPR over the updates u (a list of dicts), true when it holds
cat > "$WORK/u.py" <<'EOF'
import json, sys
u = [json.loads(l) for l in open(sys.argv[1])]
s = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else None
v = eval(sys.argv[2])
if not v:
    print("  false: %s\n  updates: %s" % (sys.argv[2], [(x.get("status"), x.get("node"), x.get("result")) for x in u]), file=sys.stderr)
sys.exit(0 if v else 1)
EOF
u() { python3 "$WORK/u.py" "$@"; }
intact() { test -e "$WORK/nodes/$1/etc/kubernetes/admin.conf" -a -n "$(ip -n "nr-$1" -br link show cni0 2>/dev/null)"; }
# the summary's line for NODE agrees with the node's own report: counts and residue
matches_report() { # NODE
        python3 - "$WORK/summary.json" "$WORK/reports/$1.json" "$1" <<'EOF'
import json, sys
s, r, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
acts = [a for p in r["phases"] for a in p["actions"]]
counts = {k: sum(1 for a in acts if a["result"] == k) for k in ("changed", "unchanged", "failed", "skipped")}
line = s["per_node"][n]
ok = line["actions"] == counts and line["residue"] == [x["target"] for x in r["residue"]] and line["changed"] == r["changed"]
if not ok:
    print("  %s: summary %s, report %s %s" % (n, line, counts, r["residue"]), file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}

# --- Check mode: the plans, nothing changes, nothing is sent -------------------------------------
delete check --check; rc=$?
assert "check mode: exit 0" test $rc -eq 0 || tail -n 30 "$WORK/check.log"
assert "check mode: no status update sent" test ! -s "$WORK/check.updates"
for n in $NODES; do assert "check mode: $n untouched" intact "$n"; done
assert "check mode: the summary says each node would be reset" \
        u "$WORK/check.updates" 's["check_mode"] and sorted(x["result"] for x in s["per_node"].values()) == ["would reset"] * 3' "$WORK/summary.json"

# --- Without confirmation: refused before anything is sent ---------------------------------------
delete refuse; rc=$?
assert "without node_reset_confirm: refused, nothing sent, nodes untouched" \
        test $rc -ne 0 -a ! -s "$WORK/refuse.updates" -a "$(intact cp1 && intact w1 && intact w2 && echo y)" = y

# --- The deletion: deleting, the workers, the control plane, deleted -----------------------------
delete first -e node_reset_confirm=yes; rc=$?
assert "deletion: exit 0" test $rc -eq 0 || tail -n 30 "$WORK/first.log"
assert "deletion: updates in order: deleting, w1, w2, cp1, deleted (PUT, with the cluster's fields)" \
        u "$WORK/first.updates" '[(x["status"], x.get("node")) for x in u] == [("deleting", None), ("deleting", "w1"), ("deleting", "w2"), ("deleting", "cp1"), ("deleted", None)] and all(x["_method"] == "PUT" and x["cluster"] == "c1" for x in u)'
assert "deletion: every node's update says clean" u "$WORK/first.updates" '[x["result"] for x in u if x.get("node")] == ["clean"] * 3'
assert "deletion: the last update names no failed node" u "$WORK/first.updates" 'u[-1]["failed"] == [] and u[-1]["clean"] == 3 and all(x["residue"] == 0 for x in u if x.get("node"))'
assert "deletion: the summary: 3 nodes, 3 clean, 3 changed, no failure, no residue" \
        u "$WORK/first.updates" 's["nodes"] == 3 and s["clean"] == 3 and s["changed"] == 3 and s["failed"] == [] and s["residue"] == {}' "$WORK/summary.json"
for n in $NODES; do
        assert "deletion: the summary's $n matches $n's own report" matches_report "$n"
        assert "deletion: $n reset (admin.conf, cni0 and KUBE-SERVICES gone; its PV data kept)" \
                test ! -e "$WORK/nodes/$n/etc/kubernetes/admin.conf" -a -z "$(ip -n "nr-$n" -br link show cni0 2>/dev/null)" \
                -a -s "$WORK/disks/$n/pv-data/important.db"
        nsenter --net="/run/netns/nr-$n" -- "$NODE_RESET" --root "$WORK/nodes/$n" --phases mounts,firewall,network,files,verify status > /dev/null 2>&1
        assert "deletion: node-reset status on $n exits 0 (clean)" test $? -eq 0
done
assert "deletion: the summary's totals are the sum of the nodes'" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if all(s["actions"][k] == sum(v["actions"][k] for v in s["per_node"].values()) for k in s["actions"]) else 1)' "$WORK/summary.json"

# --- Again on clean nodes: nothing changes -------------------------------------------------------
delete again -e node_reset_confirm=yes; rc=$?
assert "second run: exit 0, deleted" eval 'test $rc -eq 0 && u "$WORK/again.updates" "u[-1][\"status\"] == \"deleted\""'
assert "second run: nothing changed (summary and ansible's recap)" \
        eval 'u "$WORK/again.updates" "s[\"changed\"] == 0 and s[\"clean\"] == 3" "$WORK/summary.json" && grep -Eq "^cp1 .* changed=0 " "$WORK/again.log" && grep -Eq "^w1 .* changed=0 " "$WORK/again.log"'

# --- w2 holds an emptyDir open: the reset must not force it; the status ends "fail", naming w2 --
busy=$WORK/nodes/w2/var/lib/kubelet/pods/0b5e7a2c-1111-4b4b-8c8c-abcdefabcdef/volumes/kubernetes.io~empty-dir/busy
mkdir -p "$busy" && mount -t tmpfs -o size=1m nr-busy "$busy" && echo held > "$busy/f"
( exec 3<"$busy/f"; exec sleep 300 ) > /dev/null 2>&1 &
holder=$!
pids+=("$holder")
delete busy -e node_reset_confirm=yes; rc=$?
assert "busy worker: exit 2 (the summary fails the play)" test $rc -eq 2 || tail -n 20 "$WORK/busy.log"
assert "busy worker: updates: deleting, w1 clean, w2 failed, cp1 clean, then fail naming w2" \
        u "$WORK/busy.updates" '[(x["status"], x.get("node"), x.get("result")) for x in u] == [("deleting", None, None), ("deleting", "w1", "clean"), ("deleting", "w2", "failed"), ("deleting", "cp1", "clean"), ("fail", None, None)] and u[-1]["failed"] == ["w2"]'
assert "busy worker: the summary names w2 with its residue (the held emptyDir), the others clean" \
        u "$WORK/busy.updates" 's["failed"] == ["w2"] and list(s["residue"]) == ["w2"] and any(t.endswith("empty-dir/busy") for t in s["residue"]["w2"]) and s["per_node"]["w1"]["result"] == s["per_node"]["cp1"]["result"] == "clean"' "$WORK/summary.json"
assert "busy worker: the summary's w2 matches its report" matches_report w2
assert "busy worker: w2's held emptyDir is still mounted, its data there" grep -qx held "$busy/f"
assert "busy worker: the play's failure names w2 and the agent's reason" grep -q 'not clean: w2 (failed: node-reset run exited' "$WORK/busy.log"
kill "$holder"; wait "$holder" 2> /dev/null

# --- A worker that does not answer (SSH to a closed port): counted as failed, the others go on --
sed 's|^        w2: .*|&\n        w9: { ansible_connection: ssh, ansible_host: 127.0.0.1, ansible_port: 9, node_reset_connect_timeout: 4 }|' \
        "$WORK/inventory.yml" > "$WORK/inventory9.yml" && cp "$WORK/inventory9.yml" "$WORK/inventory.yml"
delete unreachable -e node_reset_confirm=yes; rc=$?
assert "unreachable worker: exit 2" test $rc -eq 2 || tail -n 20 "$WORK/unreachable.log"
assert "unreachable worker: updates: deleting, w1, w2 (its mount free now), w9 unreachable, cp1, then fail naming w9" \
        u "$WORK/unreachable.updates" '[(x["status"], x.get("node"), x.get("result")) for x in u] == [("deleting", None, None), ("deleting", "w1", "clean"), ("deleting", "w2", "clean"), ("deleting", "w9", "unreachable"), ("deleting", "cp1", "clean"), ("fail", None, None)] and u[-1]["failed"] == ["w9"]'
assert "unreachable worker: w2 converged, its busy emptyDir unmounted" test -z "$(findmnt -n -r -o TARGET | grep -F "$busy")"

# NR_DEBUG_DIR=DIR keeps the playbook outputs, the updates and the reports for a look after the test.
[ -n "${NR_DEBUG_DIR:-}" ] && cp -r "$WORK"/*.log "$WORK"/*.updates "$WORK"/reports "$NR_DEBUG_DIR"/
finish
