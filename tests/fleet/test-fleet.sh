#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The fleet tier (make check-fleet, its own step in .ci/run): examples/ansible driven by the real
# ansible-playbook over SSH against FLEET_TEST_NODES (100) nodes of the fleet lab (tests/lab/), with
# the status receiver recording every POST.
#   - fleet.yml in check mode: every node would be reset, none is touched, nothing is posted.
#   - fleet.yml resetting, with four nodes in the middle that must stay local failures: one does not
#     answer (its link cut), one is slow (its link held to 128 kbit/s), one cannot be
#     cleaned (an emptyDir held open by a process of the node), one is left not rejoinable (a process
#     listening on kubelet's port). Every other node is reset and clean, with its volume's data and
#     the operator's file kept, and posted its start and end; the slow one too; the summary names
#     each node by its state (clean, residue, failed, unreachable); the exit status says so.
#   - Mended (link up, holder and listener gone), a second run changes those two nodes only
#     (changed 0 on every other) and ends clean, exit 0.
#   - The role's full path (reset.yml, the agent staged from the controller) on FLEET_TEST_ROLE (30)
#     nodes made again: check mode changes nothing, the reset leaves every one clean.
. "$(dirname "$0")/../integration/lib.sh"
require_cmd ansible-playbook ssh python3
N=${FLEET_TEST_NODES:-100}
R=${FLEET_TEST_ROLE:-30}
in_private_ns "$@"
. "$TOP/tests/lab/lab.sh"
lab_init "$WORK/lab" || exit $?
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; lab_down; cd /; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT
lab_up "$N" || exit 1
lab_status_start || exit 1
EX=$TOP/examples/ansible
POD=/var/lib/kubelet/pods/6f1c2d3e-0000-4a4a-9b9b-123456789abc/volumes

# The four nodes that go wrong, in the middle of the fleet.
m=$((N / 2))
DOWN=$(lab_name "$m") SLOW=$(lab_name $((m + 1))) BUSY=$(lab_name $((m + 2))) PORT=$(lab_name $((m + 3)))

play() { # NAME PLAYBOOK ARGS...: as the controller; output in $WORK/NAME.log, the summary in $WORK/NAME.json
        local name=$1 pb=$2 rc t0=$SECONDS
        shift 2
        : >"$LAB_STATUS_LOG"
        lab_controller ansible-playbook -f 20 "$EX/$pb" -e node_reset_hosts=kube_node \
                -e node_reset_summary_file="$WORK/$name.json" "$@" >"$WORK/$name.log" 2>&1
        rc=$?
        echo "fleet: ansible-playbook $pb ($name): exit $rc in $((SECONDS - t0)) s, controller $(lab_cpu ctl) CPU-s so far"
        return $rc
}
# s.py FILE EXPR: EXPR over the summary s and the status log u (a list of dicts), true when it holds
cat >"$WORK/s.py" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
u = [json.loads(l) for l in open(sys.argv[3])] if len(sys.argv) > 3 else []
v = eval(sys.argv[2])
if not v:
    print("  false: %s\n  states: %s" % (sys.argv[2], {k: (len(h) if k == "clean" else h) for k, h in s["states"].items()}), file=sys.stderr)
sys.exit(0 if v else 1)
EOF
s() { python3 "$WORK/s.py" "$@"; }
recap_changed() { # LOG HOST
        awk -v h="$2" '$1 == h && $2 == ":" { for (i = 3; i <= NF; i++) if ($i ~ /^changed=/) { sub(/changed=/, "", $i); print $i } }' "$1"
}
# What a worker has before a reset, and what must outlive it.
intact() { lab_exec "$1" sh -c "test -e /etc/kubernetes/kubelet.conf && mountpoint -q $POD/kubernetes.io~empty-dir/cache && ip link show vxlan.calico >/dev/null 2>&1"; }
kept() { lab_exec "$1" sh -c 'grep -q must /mnt/disks/pv-data/important.db && grep -q must /var/lib/site/keep.txt && test -s /root/.bashrc'; }
# node-reset status in every given node: the names of those not clean
not_clean() { local n; for n; do lab_exec "$n" node-reset status >/dev/null 2>&1 || echo "$n"; done; }

# --- Check mode: what each node would lose; nothing changes, nothing is posted --------------------
s0=$(lab_sessions)
play check fleet.yml --check; rc=$?
assert "check mode: exit 0" test $rc -eq 0 || tail -n 20 "$WORK/check.log"
assert "check mode: the summary says every node would be reset" \
        s "$WORK/check.json" "s['check_mode'] and s['states'] == {'would reset': s['states']['would reset']} and len(s['states']['would reset']) == $N"
assert "check mode: one SSH session per node" test $(($(lab_sessions) - s0)) -eq "$N"
assert "check mode: two tasks per node, the argument check and the one node-reset call" \
        test "$(grep -c '^n[0-9]* *: ok=2 *changed=1 *unreachable=0 *failed=0 *skipped=0' "$WORK/check.log")" -eq "$N"
assert "check mode: nothing posted" test ! -s "$LAB_STATUS_LOG"
for n in n0001 "$DOWN" "$(lab_name "$N")"; do assert "check mode: $n untouched" intact "$n"; done

# --- The reset, four nodes going wrong in the middle ---------------------------------------------
lab_link_down "$DOWN"
lab_link_slow "$SLOW"
lab_spawn "$BUSY" sh -c "exec 3<$POD/kubernetes.io~empty-dir/cache/scratch; exec sleep 3600" && PIDS+=("$LAB_SPAWNED")
busy_holder=$LAB_SPAWNED
lab_spawn "$PORT" python3 -c 'import socket, time; s = socket.socket(); s.bind(("0.0.0.0", 10250)); s.listen(); time.sleep(3600)' &&
        PIDS+=("$LAB_SPAWNED")
port_holder=$LAB_SPAWNED
play first fleet.yml -e node_reset_confirm=yes -e node_reset_report_url="$LAB_STATUS_URL"; rc=$?
cp "$LAB_STATUS_LOG" "$WORK/first.posts"
others=()
for n in "${LAB_NAMES[@]}"; do case "$n" in "$DOWN" | "$BUSY" | "$PORT") ;; *) others+=("$n") ;; esac; done
assert "reset: exit 4 (Ansible's: a host did not answer; 2 when hosts only failed)" test $rc -eq 4 || tail -n 30 "$WORK/first.log"
assert "reset: the summary names each node by its state" \
        s "$WORK/first.json" "s['states']['unreachable'] == ['$DOWN'] and s['states']['failed'] == ['$BUSY'] and s['states']['residue'] == ['$PORT'] and len(s['states']['clean']) == $N - 3 and '$SLOW' in s['states']['clean']"
assert "reset: the failed node's line gives the agent's reason (the busy unmount)" \
        s "$WORK/first.json" "any(f['kind'] == 'unmount' and f['target'].endswith('empty-dir/cache') for f in s['per_node']['$BUSY']['failures'])"
assert "reset: the node left not rejoinable says why (kubelet's port)" \
        s "$WORK/first.json" "'10250' in s['per_node']['$PORT']['error']"
assert "reset: the play's last word names the four nodes' states" \
        grep -q "not clean: .*$DOWN (unreachable).*$BUSY (failed).*$PORT (residue)" "$WORK/first.log"
assert "reset: every other node changed and clean (node-reset status in each)" \
        eval "test -z \"\$(not_clean "${others[*]}")\""
left=0
for n in "${others[@]}" "$BUSY" "$PORT"; do kept "$n" || left=$((left + 1)); done
assert "reset: every node reached kept its volume's data, the operator's file, root's start-up files" test $left -eq 0
assert "reset: the unreachable node untouched" intact "$DOWN"
assert "reset: the failed node's held emptyDir still mounted, its data there" \
        lab_exec "$BUSY" sh -c "mountpoint -q $POD/kubernetes.io~empty-dir/cache && grep -q scratch $POD/kubernetes.io~empty-dir/cache/scratch"
assert "reset: each node reached posted its start and its end, the unreachable one nothing" \
        s "$WORK/first.json" "sorted(x['hostname'] for x in u if x['status'] == 'deleting') == sorted(x['hostname'] for x in u if x['status'] != 'deleting') == sorted(set(s['per_node']) - {'$DOWN'})" "$WORK/first.posts"
assert "reset: the posted ends say deleted (verdict clean) for the clean nodes, failed for the two others" \
        s "$WORK/first.json" "sorted(x['hostname'] for x in u if x['status'] == 'failed') == sorted(['$BUSY', '$PORT']) and all(x['report']['verdict'] == 'clean' for x in u if x['status'] == 'deleted')" "$WORK/first.posts"

# --- Mended: a second run touches those nodes only, and ends clean -------------------------------
lab_link_up "$DOWN"
lab_link_fast "$SLOW"
kill "$busy_holder" "$port_holder"
play second fleet.yml -e node_reset_confirm=yes; rc=$?
assert "second run: exit 0, every node clean" \
        eval "test $rc -eq 0 && s '$WORK/second.json' \"len(s['states']['clean']) == $N and s['not_clean'] == []\""
assert "second run: the two nodes with something left changed" \
        test "$(recap_changed "$WORK/second.log" "$DOWN")/$(recap_changed "$WORK/second.log" "$BUSY")" = 1/1
changed_elsewhere=$(for n in "${LAB_NAMES[@]}"; do
        case "$n" in "$DOWN" | "$BUSY") ;; *) [ "$(recap_changed "$WORK/second.log" "$n")" = 0 ] || echo "$n" ;; esac
done)
assert "second run: changed 0 on every other node" test -z "$changed_elsewhere" || echo "  changed: $changed_elsewhere"
assert "second run: the mended nodes are clean" eval "test -z \"\$(not_clean "$DOWN" "$BUSY" "$PORT")\""

# --- The role's full path on $R nodes made again (the agent staged from the controller) ----------
sample=("${LAB_NAMES[@]:0:$R}")
lab_restate "${sample[@]}" || fail "the sample's state could not be made again"
lab_inventory "$WORK/sample.yml" "${sample[@]}"
role() { # NAME ARGS...
        local name=$1 rc
        shift
        lab_controller ansible-playbook -f 20 -i "$WORK/sample.yml" "$EX/reset.yml" -e node_reset_hosts=kube_node \
                -e node_reset_serial=100% -e node_reset_binary_src="$NODE_RESET" "$@" >"$WORK/$name.log" 2>&1
        rc=$?
        echo "fleet: ansible-playbook reset.yml ($name): exit $rc"
        return $rc
}
role role-check --check; rc=$?
assert "full role, check mode: exit 0, every node would change, none touched" \
        eval "test $rc -eq 0 && test \$(grep -c ' changed=1 ' '$WORK/role-check.log') -eq $R && intact n0001 && intact '${sample[-1]}'"
role role-run -e node_reset_confirm=yes; rc=$?
assert "full role: exit 0, every node changed" \
        eval "test $rc -eq 0 && test \$(grep -c ' changed=1 ' '$WORK/role-run.log') -eq $R" || tail -n 20 "$WORK/role-run.log"
assert "full role: every node clean" eval "test -z \"\$(not_clean "${sample[*]}")\""

[ -n "${NR_DEBUG_DIR:-}" ] && cp "$WORK"/*.log "$WORK"/*.json "$WORK"/*.posts "$NR_DEBUG_DIR"/ 2>/dev/null
finish
