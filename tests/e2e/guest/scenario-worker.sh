#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Scenario "worker": a booted worker node — systemd, containerd running 12 pods made through its CRI
# (10 on a CNI bridge, 2 on the host network, each with a running container), kube-proxy in IPVS
# mode, calico, kubelet's volumes, kubekey's files — is reset with the built-in manifest, as an
# operator would:
# "node-reset run --yes --output=json", then "node-reset status". check.sh then proves, with the
# system's own tools, that nothing Kubernetes' is left, that the host's own state is exactly as it
# was, that the persistent volume's data is intact, and that the report counts what was built.
# "plan" before must change nothing; a second run after must change nothing.

. /share/lib.sh
R=$E2E_RESULTS
EXP=$R/expected


# Everything, owned or not: "plan" must not change any of it.
whole_state() {
        {
                ip -br link; ip -br addr; ip route show table all; ip -6 route show table all
                ip netns list; findmnt -rn -o TARGET; ipvsadm -Sn; ipset list -n
                iptables-nft-save; ip6tables-nft-save; iptables-legacy-save; ip6tables-legacy-save
        } 2>&1 | grep -v '^#' | sed -E 's/ expires [0-9]+sec//'
}

scenario_start

lap
bash /share/worker.sh build "$EXP" || { fail "build the worker state"; finish; }
lap build
bash /share/check.sh snapshot "$R/before" "$EXP"
lap snapshot

whole_state >"$R/state.before-plan"
"$NR" "${NR_RESET_ARGS[@]}" --output=json plan >"$R/plan.json" 2>"$R/plan.log"
assert "node-reset plan exits 0" test $? -eq 0
whole_state >"$R/state.after-plan"
same "node-reset plan changed nothing" "$R/state.before-plan" "$R/state.after-plan"
lap "plan and the whole state twice"

rm -f "$CRI_AT_STOP"
t0=$(ms_now)
"$NR" "${NR_RESET_ARGS[@]}" run --yes --output=json >"$R/report.json" 2>"$R/run.log"
rc=$?
t=$(($(ms_now) - t0))
echo "$t" >"$R/agent-run-ms"
echo "node-reset run took $t ms"
assert_agent_clean "node-reset run --yes --output=json exits 0" "$rc" "$R/report.json"

"$NR" "${NR_RESET_ARGS[@]}" status >"$R/status.txt" 2>&1
rc_text=$?
"$NR" "${NR_RESET_ARGS[@]}" --output=json status >"$R/status.json" 2>/dev/null
rc=$?
assert_agent_clean "node-reset status exits 0 and reports no residue" "$rc" "$R/status.json"
assert "node-reset status: the same exit status in text and JSON ($rc_text, $rc)" test "$rc_text" -eq "$rc"
sed 's/^/    status: /' "$R/status.txt"
lap "run and status"

check residue residue "$EXP"
lap residue
bash /share/check.sh snapshot "$R/after" "$EXP"
check "host state" compare "$R/before" "$R/after"
lap "snapshot and compare"
check report report "$R/report.json" "$EXP"
lap report

"$NR" "${NR_RESET_ARGS[@]}" run --yes --output=json >"$R/report2.json" 2>"$R/run2.log"
rc=$?
assert_agent_clean "a second run exits 0" "$rc" "$R/report2.json"
n=$(jqk '[.phases[].actions[] | select(.result == "changed" or .result == "failed") | item | select(IN($known[]) | not)] | length' "$R/report2.json")
assert "a second run changes nothing and fails nothing (known issues aside)" test "$n" = 0
jq -r '.phases[].actions[] | select(.result == "skipped") | "note: second run: \(.phase) \(.kind) \(.target) skipped: \(.skip_reason // .message)"' \
        "$R/report2.json"
lap "second run"
finish
