#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Scenario "sigkill-pods": "node-reset run --yes" is killed with SIGKILL inside the pods phase — the
# moment the first pod's network namespace goes (its StopPodSandbox is done, the others are in
# flight, no pod is removed yet) — and then run again, as an operator would. The second run must
# converge: exit 0, every pod left by the first one stopped and removed through the CRI, nothing
# left (check.sh residue), the host's own state as it was before the first run. The same pods as the
# worker scenario (12 sandboxes, 2 on the host network, 12 running containers) and kubekey's files.

. /share/lib.sh
R=$E2E_RESULTS
EXP=$R/expected
KILL_WAIT_MS=180000     # the first pod namespace must go within this, or the scenario fails


scenario_start

lap
bash /share/worker.sh build "$EXP" files pods || { fail "build the pods"; finish; }
lap build
bash /share/check.sh snapshot "$R/before" "$EXP"
lap snapshot
mapfile -t netns <"$EXP/pod-netns"

# The first run, killed when one of the pods' namespaces disappears. Builtins only while polling.
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
rm -f "$CRI_AT_STOP"
mkfifo /run/e2e-tick
exec {tick}<>/run/e2e-tick
t0=$(now_ms)
"$NR" "${NR_RESET_ARGS[@]}" run --yes --output=json >"$R/report1.json" 2>"$R/run1.log" &
agent=$!
running() { # the agent has not exited (a zombie has)
        local state
        read -r _ _ state _ 2>/dev/null <"/proc/$agent/stat" && [ "$state" != Z ]
}
gone=
while [ -z "$gone" ] && [ $(($(now_ms) - t0)) -lt "$KILL_WAIT_MS" ] && running; do
        for n in "${netns[@]}"; do
                if [ ! -e "/run/netns/$n" ]; then gone=$n; break; fi
        done
        [ -n "$gone" ] || read -r -t 0.02 -u "$tick" || true
done
if [ -n "$gone" ]; then
        kill -KILL "$agent"
fi
t_kill=$(($(now_ms) - t0))
wait "$agent"
rc=$?
exec {tick}<&-
rm -f /run/e2e-tick
echo "$t_kill" >"$R/agent-kill-ms"
assert "the first run was killed by SIGKILL (exit status $rc, 137 expected) when $gone went" \
        test -n "$gone" -a "$rc" -eq 137

# What the kill left: containerd still runs (the services phase never stopped it), holding pods.
bash /share/worker.sh record-pods "$R/at-kill"
left=$(grep -c . "$R/at-kill/sandboxes")
ready=$(grep -c ' READY$' "$R/at-kill/pod-list")
nets=$(grep -c . "$R/at-kill/pod-netns")
note "killed after $t_kill ms: $left of $(grep -c . "$EXP/sandboxes") sandboxes left ($ready still ready)," \
        "$nets of ${#netns[@]} pod namespaces, $(grep -c . "$R/at-kill/containers-running") running containers"
assert "the kill landed inside the pods phase: pods left, containerd not yet stopped" \
        test "$left" -gt 0 -a ! -e "$CRI_AT_STOP"
assert "the kill landed after the pods phase had begun stopping pods" test "$nets" -lt "${#netns[@]}"

# The second run converges.
t1=$(ms_now)
"$NR" "${NR_RESET_ARGS[@]}" run --yes --output=json >"$R/report.json" 2>"$R/run.log"
rc=$?
t=$(($(ms_now) - t1))
echo "$t" >"$R/agent-run-ms"
echo "node-reset run (the second) took $t ms; the first was killed after $t_kill ms"
assert_agent_clean "the second node-reset run --yes --output=json exits 0" "$rc" "$R/report.json"
assert "the second run changed something (it finished the first one's work)" \
        test "$(jq -r .changed "$R/report.json")" = true

lap "run and its checks"
check residue residue "$EXP"
lap residue
bash /share/check.sh snapshot "$R/after" "$EXP"
check "host state" compare "$R/before" "$R/after"
lap "snapshot and compare"
check "report (pods left by the kill)" pods-report "$R/report.json" "$R/at-kill" none
finish
