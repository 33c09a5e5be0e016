#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Scenario "master-gone": the control plane is gone, and with it calico's API server: the CNI plugin's
# DEL fails for every pod ("error getting ClusterInformation: connection is unauthorized:
# Unauthorized"), so StopPodSandbox and RemovePodSandbox fail for every pod-network pod, every time
# (what strands "kubeadm reset" and "crictl rmp" on such a node). The same pods as the worker
# scenario (12 sandboxes, 2 on the host network, 12 running containers) and kubekey's files;
# "node-reset run --yes --output=json" must still end clean within the pods budget, through the
# rung 2 rescue (a loopback-only conflist standing in for calico's while the pods go), which the
# report names and which is gone again before the run ends — seen by a watcher on the CNI conf dir.

. /share/lib.sh
R=$E2E_RESULTS
EXP=$R/expected
PODS_BUDGET_MS=120000   # the pods phase's built-in budget (120 s)


scenario_start

lap
bash /share/worker.sh build "$EXP" files pods || { fail "build the pods"; finish; }
lap build
bash /share/check.sh snapshot "$R/before" "$EXP"
lap snapshot

# The master goes: from now on every CNI DEL fails as calico's does without its API server. kubelet
# (or an operator with crictl stopp) has tried one pod already: the CRI answers with calico's error.
: >"$CNI_FAIL_DEL"
sb=$(awk 'FILENAME == ARGV[1] { host[$1]; next } $1 == "sandbox" && !($3 in host) { print $2; exit }' \
        "$EXP/pods-host" "$EXP/pod-list")
"$CRI_HELPER" "$CRI_SOCK" stop-sandbox "$sb" >"$R/stopp.txt" 2>&1
assert "the CRI fails StopPodSandbox with calico's message, as crictl stopp does ($(sed -E 's/.*(plugin type=)/\1/' "$R/stopp.txt"))" \
        grep -q "error getting ClusterInformation: connection is unauthorized: Unauthorized" "$R/stopp.txt"
bash /share/worker.sh record-pods "$R/at-reset"

# The watcher: the rescue conflist's appearance and disappearance in the CNI conf dir, and whether
# the directory (removed by the files phase at the end) and calico's conflist were still there when it
# went. Builtins only (a process costs ~0.1 s here); EPOCHREALTIME for the times.
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
watch_rescue() { # t0
        local fd f seen=
        mkfifo /run/e2e-tick
        exec {fd}<>/run/e2e-tick
        while [ ! -e /run/e2e-watch-stop ]; do
                f=
                for f in "$CNI_CONF_DIR"/*node-reset-rescue*; do [ -e "$f" ] && break; f=; done
                if [ -n "$f" ] && [ -z "$seen" ]; then
                        seen=$f
                        echo "appeared $f +$(($(now_ms) - $1)) ms"
                elif [ -z "$f" ] && [ -n "$seen" ]; then
                        echo "gone $seen +$(($(now_ms) - $1)) ms conf-dir=$([ -d "$CNI_CONF_DIR" ] && echo present || echo gone)" \
                                "calico=$([ -e "$CNI_CONF_DIR/10-calico.conflist" ] && echo present || echo gone)"
                        seen=
                fi
                read -r -t 0.05 -u "$fd" || true
        done
        exec {fd}<&-
}
rm -f "$CRI_AT_STOP" /run/e2e-watch-stop
t0=$(ms_now)
watch_rescue "$t0" >"$R/rescue-watch" &
watcher=$!
"$NR" "${NR_RESET_ARGS[@]}" run --yes --output=json >"$R/report.json" 2>"$R/run.log"
rc=$?
t=$(($(ms_now) - t0))
: >/run/e2e-watch-stop
wait "$watcher"
rm -f /run/e2e-watch-stop /run/e2e-tick
echo "$t" >"$R/agent-run-ms"
echo "node-reset run took $t ms"
assert_agent_clean "node-reset run --yes --output=json exits 0" "$rc" "$R/report.json"
sed 's/^/    rescue watch: /' "$R/rescue-watch"

pods_ms=$(jq '[.phases[] | select(.name == "pods") | .actions[].duration_ms // 0] | add' "$R/report.json")
note "the pods phase took $pods_ms ms of its $PODS_BUDGET_MS ms budget"
assert "the pods phase ended within its budget ($pods_ms ms < $PODS_BUDGET_MS ms)" test "$pods_ms" -lt "$PODS_BUDGET_MS"
assert "the rescue conflist appeared in $CNI_CONF_DIR while the pods went" grep -q '^appeared ' "$R/rescue-watch"
assert "the rescue conflist went again before the run ended, calico's conflist beside it (not with the directory)" \
        test "$(grep -c '^gone .* conf-dir=present calico=present$' "$R/rescue-watch")" -eq "$(grep -c '^appeared ' "$R/rescue-watch")" \
        -a "$(grep -c '^gone ' "$R/rescue-watch")" -eq "$(grep -c '^appeared ' "$R/rescue-watch")"
n=$(jq '[.phases[] | select(.name == "pods") | .actions[] | select(.kind == "remove-pod" and (.detail | startswith("pod network")))
        | select((.message | contains("rung 2")) and (.message | contains("Unauthorized")) | not)] | length' "$R/report.json")
assert "report: every pod-network pod stopped with rung 2, calico's error quoted" test "$n" -eq 0
n=$(jq '[.phases[] | select(.name == "pods") | .actions[] | select(.kind == "remove-pod" and (.detail | startswith("host network")))
        | select(.message != "removed")] | length' "$R/report.json")
assert "report: the host-network pods needed no rescue" test "$n" -eq 0
jq -r '.phases[] | select(.name == "pods") | .actions[] | select(.kind == "remove-pod") | .message' "$R/report.json" |
        grep -m1 'rung 2' | sed 's/^/note: a remove-pod row: /'

lap "run and its checks"
check residue residue "$EXP"
lap residue
bash /share/check.sh snapshot "$R/after" "$EXP"
check "host state" compare "$R/before" "$R/after"
lap "snapshot and compare"
check "report (pods)" pods-report "$R/report.json" "$R/at-reset" rung2
finish
