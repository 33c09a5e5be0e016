#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The pods phase against a real containerd (Debian's 1.6 with runc) in private pid+mount+net
# namespaces: 20 pods with running containers and host-network pods; with every CNI DEL failing like
# calico without its API server (the master-gone incident; rung 2 itself is test-containerd2.sh's),
# the rescue conflist removed on SIGTERM and SIGINT; kill -9 mid-phase, then convergence; a hung runtime, a dead runtime and a
# missing one; a hostile gRPC server. Teardown leaves no process, mount, netns or cgroup.
#
# Decisions asserted here: a missing socket is "skipped", not a failure; a socket that does not answer
# sends the phase down the ladder and exits 1; the rescue conflist never outlives the run.

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
in_private_ns "$@"
. "$TOP/tests/integration/containerd/harness.sh"

cd_require
require_cmd python3 timeout env prlimit ldd
REPORT="$TOP/tests/integration/report.py"
HOSTILE="$O/tests/grpc-hostile"
[ -x "$HOSTILE" ] || skip "$HOSTILE is not built (make check builds it)"
jq_() { "$REPORT" "$@" > /dev/null; }  # jq_ FILE EXPR: true when EXPR holds
count_() { "$REPORT" "$1" "len(actions(r, $2))"; }
elapsed_ms() { echo $((($(date +%s%N) - $1) / 1000000)); }

eval "set -- $(trap -p EXIT)"
trap "cd_stop; $3" EXIT

cd_setup || { echo "FAIL: cannot set up containerd"; exit 1; }
cd_start || { echo "FAIL: cannot start containerd"; exit 1; }
agent() { cd_enter "$NODE_RESET" "$@"; }
pods() { cd_cri run-pods "$1" "$2" "$CD_CGROUP_PARENT" "$3" "$4" 8 > /dev/null || { cd_diag; false; }; }
rescue_files() { ls "$CD_DIR/net.d" | grep -c "node-reset-rescue" || true; }
t_start=$(date +%s%N)

# --- 20 pods: containers, host network, endpoint discovery, order, idempotence -------------------
pods 20 healthy 5 3 || fail "cannot create 20 pods"
assert "20 sandboxes before" test "$(cd_count sandboxes)" -eq 20
agent --phases pods -o json plan > "$WORK/plan.json"; rc=$?
assert "plan exits 0" test $rc -eq 0
assert "plan found containerd by probing and read its config from its command line" \
        jq_ "$WORK/plan.json" "any('$CD_DIR/net.d' in a['detail'] for a in actions(r, kind='runtime'))"
assert "plan: 4 host-network pods" test "$("$REPORT" "$WORK/plan.json" "len([a for a in actions(r, kind='remove-pod') if a['detail'].startswith('host network')])")" -eq 4
assert "plan: one RemovePodSandbox per pod, nothing the runtime's RemovePodSandbox does itself" jq_ "$WORK/plan.json" \
        "len(actions(r, kind='remove-pod')) == 20 and not [a for a in actions(r) if a['kind'] in ('stop-pod', 'stop-container', 'remove-container')]"
assert "plan: the kill pass counts the processes of all 20 pods" jq_ "$WORK/plan.json" \
        "(lambda a: a['detail'].split(' processes of ')[1].startswith('20 pods'))(actions(r, kind='kill-pods')[0])"
assert "plan: the CNI gets its full DEL here, and the row says which plugins" jq_ "$WORK/plan.json" \
        "actions(r, kind='cni-teardown')[0]['detail'].startswith('full DEL by bridge,host-local:')"
assert "plan: concurrency from the IPAM lock (host-local), not a constant" jq_ "$WORK/plan.json" \
        "'%d CRI calls in flight (the IPAM' % (2 * $(nproc) + 1) in actions(r, kind='cni-teardown')[0]['detail']"
agent --phases pods,network,firewall,files -o json plan > "$WORK/plan-all.json"
assert "plan: with the phases that remove the CNI's node state, still a DEL: host-local's dataDir is not /var/lib/cni" jq_ "$WORK/plan-all.json" \
        "'host-local keeps its addresses in $CD_DIR/ipam' in actions(r, kind='cni-teardown')[0]['detail']"
assert "plan changed nothing" test "$(cd_count sandboxes)" -eq 20

t=$(date +%s%N)
agent --phases pods,verify --yes -o json run > "$WORK/run1.json"; rc=$?
echo "  20 pods reset in $(elapsed_ms "$t") ms"
assert "run exits 0" test $rc -eq 0
assert "zero sandboxes left" test "$(cd_count sandboxes)" -eq 0
assert "zero containers left" test "$(cd_count containers)" -eq 0
assert "zero cni netns left" test "$(cd_count netns)" -eq 0
assert "every pod removed, none failed" jq_ "$WORK/run1.json" \
        "len(actions(r, kind='remove-pod', result='changed')) == 20 and not actions(r, result='failed')"
assert "pod-network pods go before host-network ones" jq_ "$WORK/run1.json" \
        "(lambda s: max(i for i, a in enumerate(s) if a['detail'].startswith('pod')) < min(i for i, a in enumerate(s) if a['detail'].startswith('host')))(actions(r, kind='remove-pod'))"
assert "the kill pass comes before the first CRI call" jq_ "$WORK/run1.json" \
        "(lambda k: k.index('cni-teardown') < k.index('kill-pods') < k.index('remove-pod'))([a['kind'] for a in actions(r)])"
assert "the kill pass killed the pods' processes and sampled when none was alive" jq_ "$WORK/run1.json" \
        "(lambda a: a['result'] == 'changed' and 'none alive after' in a['message'] and isinstance(a['pods_gone_ms'], int))(actions(r, kind='kill-pods')[0])"
assert "no rescue was needed" jq_ "$WORK/run1.json" "'no rescue needed' in actions(r, kind='runtime')[0]['message']"
assert "verified: no residue" jq_ "$WORK/run1.json" "r['residue'] == []"
agent --phases pods,verify --yes -o json run > "$WORK/run2.json"; rc=$?
assert "second run exits 0 with nothing to do" test $rc -eq 0
assert "second run: no pod actions" jq_ "$WORK/run2.json" "not actions(r, kind='remove-pod') and not r['changed']"

# --- SIGTERM and SIGINT while the rescue conflist stands in: it goes with the agent -------------
# (The master-gone incident itself, every CNI DEL failing and rung 2 removing the pods, is
# test-containerd2.sh's, on containerd 2.1 with its version 3 config.)
cd_fail_del on
cd_slow_del on
for sig in TERM INT; do
        pods 4 "sig$sig" 0 0 || fail "cannot create pods for SIG$sig"
        cd_spawn env --default-signal=INT "$NODE_RESET" --phases pods --yes run > /dev/null 2>&1
        agent_pid=$(cd_spawned_child)
        for _ in $(seq 400); do [ "$(rescue_files)" -gt 0 ] && break; sleep 0.025; done
        assert "SIG$sig: the rescue conflist was in place" test "$(rescue_files)" -gt 0
        kill -"$sig" "$agent_pid"
        wait "$CD_SPAWNED"; rc=$?
        assert "SIG$sig: the agent died of it" test $rc -ne 0
        assert "SIG$sig: the rescue conflist is gone" test "$(rescue_files)" -eq 0
done
cd_slow_del off
cd_fail_del off
agent --phases pods --yes run > /dev/null; rc=$?
assert "after the interrupted runs a run converges" test $rc -eq 0 -a "$(cd_count sandboxes)" -eq 0

# --- kill -9 mid-phase, a stale rescue conflist, then the second run converges ------------------
pods 10 killed 0 2 || fail "cannot create pods for kill -9"
cd_slow_del on
cd_spawn "$NODE_RESET" --phases pods --concurrency 1 --yes run > /dev/null 2>&1
agent_pid=$(cd_spawned_child)
# Kill it once the kill pass has made the pods NOTREADY (each remove then takes a second of DEL):
# mid-phase however loaded the machine is, where a fixed sleep raced the plan on a busy one.
for _ in $(seq 300); do
        cd_cri list | grep -q '^sandbox .* NOTREADY' && break
        sleep 0.1
done
kill -KILL "$agent_pid"
wait "$CD_SPAWNED"
cd_slow_del off
left=$(cd_count sandboxes)
echo "  killed with $left of 10 sandboxes left"
assert "kill -9 left some pods behind (mid-phase)" test "$left" -gt 0
assert "kill -9 came after some pods were stopped" test "$(cd_cri list | grep -c '^sandbox .* NOTREADY')" -gt 0
printf '{"cniVersion":"0.4.0","name":"node-reset-rescue","plugins":[{"type":"loopback"}]}\n' \
        > "$CD_DIR/net.d/00-node-reset-rescue.conflist"
agent --phases pods,verify --yes -o json run > "$WORK/converge.json"; rc=$?
assert "the second run exits 0" test $rc -eq 0
assert "the second run converges: zero sandboxes" test "$(cd_count sandboxes)" -eq 0
assert "the stale rescue conflist was planned and removed" jq_ "$WORK/converge.json" \
        "len(actions(r, kind='cni-rescue', result='changed')) == 1"
assert "no rescue conflist left" test "$(rescue_files)" -eq 0

# --- hostile servers: errors, never a crash or an unbounded allocation -------------------------
# 1 GiB of address space at most; a sanitizer build reserves terabytes for its shadow, so there the
# allocator's own bound stands in.
bounded() {
        if ldd "$1" 2> /dev/null | grep -q libasan; then
                ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=256" "$@"
        else
                prlimit --as=1073741824 "$@"
        fi
}
hostile() { # mode ok_first command...
        local mode=$1 ok=$2 pid
        shift 2
        "$HOSTILE" "$WORK/hostile.sock" "$mode" "$ok" &
        pid=$!
        for _ in $(seq 100); do [ -S "$WORK/hostile.sock" ] && break; sleep 0.02; done
        "$@"
        kill "$pid"
        wait "$pid" 2> /dev/null
        rm -f "$WORK/hostile.sock"
}
for c in "huge:EMSGSIZE:4294967295 bytes is over the limit" "truncated:EBADMSG:inside a message" \
        "garbage:EBADMSG:malformed Version response" "content-type:EPROTO:content-type 'text/html'" \
        "two:EBADMSG:more than one message" "compressed:EPROTONOSUPPORT:compressed"; do
        IFS=: read -r mode err text <<< "$c"
        hostile "$mode" 0 eval "bounded '$CD_HELPER' '$WORK/hostile.sock' --timeout-ms 3000 version > '$WORK/h.txt' 2>&1; echo \$? >> '$WORK/h.txt'"
        assert "hostile $mode: a clean $err" grep -q "^error $err: .*$text" "$WORK/h.txt"
        assert "hostile $mode: exit 1, no crash" test "$(tail -n 1 "$WORK/h.txt")" = 1
done
hostile garbage 1 eval "bounded '$NODE_RESET' --cri-endpoint 'unix://$WORK/hostile.sock' --phases pods -o json plan > '$WORK/hostile-plan.json'"
assert "a garbage listing is reported in the plan, not a crash" jq_ "$WORK/hostile-plan.json" \
        "'malformed ListPodSandbox response' in actions(r, kind='runtime')[0]['detail']"
hostile huge 1 eval "bounded '$NODE_RESET' --cri-endpoint 'unix://$WORK/hostile.sock' --phases pods -o json plan > '$WORK/hostile-plan.json'"
assert "a 4 GiB length prefix is refused before allocating" jq_ "$WORK/hostile-plan.json" \
        "'over the limit' in actions(r, kind='runtime')[0]['detail']"

# --- a hung runtime: bounded time, a clear report, exit 1 ------------------------------------
# In a pid namespace of its own, so that rung 3 sees no process but the test's.
t=$(date +%s%N)
unshare -p -f --mount-proc sh -c "'$HOSTILE' '$WORK/hung.sock' hang & sleep 0.3
        '$NODE_RESET' --cri-endpoint 'unix://$WORK/hung.sock' --phases pods,verify --yes -o json run > '$WORK/hung.json'
        echo \$? > '$WORK/hung.rc'"
ms=$(elapsed_ms "$t")
echo "  hung runtime: $ms ms"
assert "hung: exit 1" test "$(cat "$WORK/hung.rc")" -eq 1
assert "hung: bounded (two 5 s probes, plan and verify)" test "$ms" -lt 30000
assert "hung: the report says it does not answer and what rung 3 did" jq_ "$WORK/hung.json" \
        "(lambda a: a['result'] == 'failed' and 'no answer within' in a['message'] and 'rung 3' in a['message'])(actions(r, kind='runtime')[0])"
assert "hung: the runtime is residue" jq_ "$WORK/hung.json" "any(x['kind'] == 'runtime' for x in r['residue'])"

# --- a flood of empty HTTP/2 DATA frames: the Version probe keeps its 5 s deadline, cheaply -----
# libcurl alone spent seconds past the deadline at ~100% CPU here; the bounds are 2x the deadline
# and a tenth of it in CPU time (correctness bounds, not performance figures).
"$HOSTILE" "$WORK/flood.sock" flood &
flood_pid=$!
for _ in $(seq 100); do [ -S "$WORK/flood.sock" ] && break; sleep 0.02; done
TIMEFORMAT='%R %U %S'
{ time "$NODE_RESET" --cri-endpoint "unix://$WORK/flood.sock" --phases pods -o json plan > "$WORK/flood.json" 2> /dev/null; } 2> "$WORK/flood.time"
unset TIMEFORMAT
kill "$flood_pid"
wait "$flood_pid" 2> /dev/null
read -r f_wall f_user f_sys < "$WORK/flood.time"
f_cpu_ms=$(awk -v u="$f_user" -v s="$f_sys" 'BEGIN { printf "%d", (u + s) * 1000 }')
f_wall_ms=$(awk -v w="$f_wall" 'BEGIN { printf "%d", w * 1000 }')
echo "  empty DATA flood: $f_wall_ms ms, $f_cpu_ms ms of CPU"
assert "flood: the 5 s probe ends within 10 s ($f_wall_ms ms)" test "$f_wall_ms" -lt 10000
assert "flood: CPU time stays bounded ($f_cpu_ms ms < 500)" test "$f_cpu_ms" -lt 500
assert "flood: the runtime is reported not answering, with the reason" jq_ "$WORK/flood.json" \
        "(lambda a: 'not answering' in a['detail'] and ('flood' in a['detail'] or 'no answer within' in a['detail']))(actions(r, kind='runtime')[0])"

# --- --timeout and --pods-timeout bound planning: Version answers, the listing hangs -----------
# Each in a pid namespace of its own, so that rung 3 (for --pods-timeout) sees no process but the
# test's. Running out of time is a failure (exit 1), never "skipped".
for opt in "--timeout:the run's --timeout:not run: the run's --timeout was reached" \
        "--pods-timeout:the pods budget (--pods-timeout):rung 3 (no answer within"; do
        IFS=: read -r flag cut why <<< "$opt"
        t=$(date +%s%N)
        unshare -p -f --mount-proc sh -c "'$HOSTILE' '$WORK/half.sock' hang 1 & sleep 0.3
                '$NODE_RESET' --cri-endpoint 'unix://$WORK/half.sock' --phases pods $flag 3 --yes -o json run > '$WORK/half.json'
                echo \$? > '$WORK/half.rc'"
        ms=$(elapsed_ms "$t")
        echo "  $flag 3, the listing hangs: $ms ms"
        assert "$flag 3: the run ends in time, planning included ($ms ms < 6000)" test "$ms" -lt 6000
        assert "$flag 3: exit 1" test "$(cat "$WORK/half.rc")" -eq 1
        assert "$flag 3: the listing was cut, and the plan says by what" jq_ "$WORK/half.json" \
                "\"cut by $cut\" in actions(r, kind='runtime')[0]['detail']"
        assert "$flag 3: the runtime action failed, not skipped, and counts as failed" jq_ "$WORK/half.json" \
                "actions(r, kind='runtime')[0]['result'] == 'failed' and not actions(r, result='skipped') and r['failed'] and r['exit_status'] == 1"
        assert "$flag 3: the action says why" jq_ "$WORK/half.json" \
                "actions(r, kind='runtime')[0]['message'].startswith(\"$why\")"
done

# --- no runtime: skipped, not a failure --------------------------------------------------------
# The verdict asks kubeadm join's sysctls of the namespace the run acts on: set as a node is
# prepared, in this test's private network namespace only.
echo 1 > /proc/sys/net/ipv4/ip_forward
"$NODE_RESET" --cri-endpoint "unix://$WORK/none.sock" --phases pods,verify --yes -o json run > "$WORK/none.json"; rc=$?
assert "no socket: exit 0" test $rc -eq 0
assert "no socket: skipped, no container runtime" jq_ "$WORK/none.json" \
        "actions(r, kind='runtime')[0]['result'] == 'skipped' and 'no container runtime' in actions(r, kind='runtime')[0]['message']"
"$NODE_RESET" --phases pods -o json plan > "$WORK/probe.json"
assert "probing finds no runtime on a node without one" jq_ "$WORK/probe.json" \
        "'/run/containerd/containerd.sock' in actions(r, kind='runtime')[0]['detail'] and actions(r, kind='runtime')[0]['skip_reason'] == 'no container runtime'"

# --- --pods-timeout: a slow CNI, one call at a time; the budget ends the phase, rung 3 follows ---
# Every DEL takes a second, so 20 pods one by one would take 20 s at least; 5 s of budget stops the
# calls that were not started and hands the rest to rung 3 (no unit here: it says to stop the
# runtime by hand, kills the shims and unmounts what they left).
pods 20 budget 0 0 || fail "cannot create the pods for --pods-timeout"
cd_slow_del on
t=$(date +%s%N)
agent --phases pods --pods-timeout 5 --concurrency 1 --yes -o json run > "$WORK/budget.json"; rc=$?
ms=$(elapsed_ms "$t")
cd_slow_del off
echo "  --pods-timeout 5 with a 1 s DEL: $ms ms"
assert "--pods-timeout: exit 1, pods left" test $rc -eq 1
assert "--pods-timeout: the phase ended at its budget, not after 20 DELs ($ms ms)" test "$ms" -lt 15000
# (How many finish before the budget depends on the machine's load: a RemovePodSandbox with a 1 s DEL
# took over 5 s at a load average of 30; what matters is that the calls in flight were cut by it.)
assert "--pods-timeout: the calls in flight were removed or cut by the budget, none left hanging" jq_ "$WORK/budget.json" \
        "any(a['result'] == 'changed' or 'cut off when the pods budget ran out' in (a['message'] or '') for a in actions(r, kind='remove-pod'))"
assert "--pods-timeout: the others say the budget is spent" jq_ "$WORK/budget.json" \
        "any('the pods budget is spent' in (a['message'] or '') for a in actions(r, kind='remove-pod', result='failed'))"
assert "--pods-timeout: the runtime row is rung 3, for the budget" jq_ "$WORK/budget.json" \
        "(lambda a: 'rung 3 (the pods budget was spent)' in a['message'] and 'killed' in a['message'])(actions(r, kind='runtime')[0])"
assert "--pods-timeout: no call was taken for a hung runtime" jq_ "$WORK/budget.json" \
        "not any('did not answer' in (a['message'] or '') for a in actions(r))"

# --- a dead runtime (SIGKILL) that left shims, rootfs, shm and netns: rung 3 cleans up ---------
pods 3 dead 0 1 || fail "cannot create pods for the dead runtime"
cd_enter kill -KILL "$(cd_containerd_pid)"
sleep 0.2
agent --phases pods,verify --yes -o json run > "$WORK/dead.json"; rc=$?
assert "dead runtime: rung 3 ran" jq_ "$WORK/dead.json" \
        "(lambda a: a['result'] == 'changed' and 'rung 3' in a['message'] and 'not running' in a['message'])(actions(r, kind='runtime')[0])"
assert "dead runtime: its shims were killed" jq_ "$WORK/dead.json" "'killed 0 shims' not in actions(r, kind='runtime')[0]['message']"
assert "dead runtime: no shim left" test -z "$(cd_enter pgrep -f containerd-shim)"
assert "dead runtime: no cni netns mounted" test -z "$(cd_enter grep -E '/run/netns/cni-' /proc/self/mountinfo)"
assert "dead runtime: no rootfs or shm mounted" test -z "$(cd_enter grep -E '/run/containerd/io.containerd.(runtime.v2.task|grpc.v1.cri)/' /proc/self/mountinfo)"
assert "dead runtime: exit 0, nothing left for the verify" test $rc -eq 0

# --- teardown ---------------------------------------------------------------------------------
cd_stop_checked
echo "  whole test: $(elapsed_ms "$t_start") ms"
finish
