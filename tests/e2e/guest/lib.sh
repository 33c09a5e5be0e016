# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Helpers shared by the guest scripts (sourced). Each check prints one "ok:" or "FAIL:" line.
#
# Known product bugs (/share/known-issues, "ID  PHASE/KIND/TARGET  reason" a line): a check bound to
# an ID prints "KNOWN:" instead of failing, and "FIXED:" — a failure — once it passes, so that the
# entry is removed the day the bug is fixed; the agent's exit status 1 and its report's residue are
# tolerated only when the listed targets are all there is. The driver prints every KNOWN line.

set -u
E2E_SHARE=${E2E_SHARE:-/share}
E2E_RESULTS=${E2E_RESULTS:-$E2E_SHARE/results}
NR="$E2E_SHARE/node-reset"
# These scenarios prove the mechanisms end to end on a worker that mixes every installer's
# artifacts, so they reset with the union profile (today's default.conf), runtime included, as
# before profiles existed. Its etcd is a stand-in (sleep) that no client can reach, as on a node
# whose control plane is gone: the etcd phase is proved against a real etcd cluster by test-etcd.sh
# and left out here, and the backup runs, so that the data directory rule can let /var/lib/etcd go
# (the member did not answer its snapshot call, the backup holds a copy of member/snap/db).
NR_RESET_ARGS=(--profile all --skip-phases etcd)
# Where the backup goes: new after a run, and no part of the host's state before it.
NR_BACKUP_DIR=/var/backups/node-reset
# The pods' side (worker.sh build_cni, build_pods): containerd's CRI socket, the project's CRI test
# client, the flag that makes calico's DEL fail, and what containerd held when its unit was stopped
# (an ExecStop= probe: the helper's listing, then "ctr containers N" and "ctr tasks N").
# shellcheck disable=SC2034 # for the scripts that source this
CRI_SOCK=/run/containerd/containerd.sock CRI_HELPER="$E2E_SHARE/cri-helper" \
        CNI_FAIL_DEL=/run/e2e-cni-fail-del CNI_CONF_DIR=/etc/cni/net.d CRI_AT_STOP=/run/e2e-cri-at-stop
_failures=0

ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; _failures=$((_failures + 1)); }
note() { echo "note: $*"; }

KNOWN_ISSUES="$E2E_SHARE/known-issues"

# The reason a known issue is tolerated, or nothing.
known_reason() { # id
        [ -f "$KNOWN_ISSUES" ] || return 1
        awk -v id="$1" '!/^#/ && $1 == id { $1 = $2 = ""; sub(/^ +/, ""); print; found = 1 } END { exit !found }' \
                "$KNOWN_ISSUES"
}

# The report items ("phase/kind/target") of the known issues, as a JSON array.
known_targets_json() {
        { [ -f "$KNOWN_ISSUES" ] && awk '!/^#/ && NF > 2 && $2 != "-" { print $2 }' "$KNOWN_ISSUES"; } |
                jq -R . | jq -sc .
}

# jq over an agent report with $known bound to the known issues' items.
jqk() { # filter json
        jq -r --argjson known "$(known_targets_json)" "def item: \"\\(.phase)/\\(.kind)/\\(.target)\"; $1" "$2"
}

# The agent exited 0 — or 1 only because of residue that known issues explain, nothing failed.
assert_agent_clean() { # description exit-status json
        local known unknown
        if [ "$2" -eq 0 ]; then
                ok "$1"
                return
        fi
        known=$(jqk '[.residue[]? | item | select(IN($known[]))] | join(" ")' "$3")
        unknown=$(jqk '[.residue[]? | item | select(IN($known[]) | not)] | length' "$3")
        if [ "$2" -eq 1 ] && [ -n "$known" ] && [ "$unknown" = 0 ] &&
                [ "$(jq '[.phases[]?.counts.failed // 0] | add // 0' "$3")" = 0 ]; then
                echo "KNOWN: $1 — exit status 1 only for the known residue: $known"
        else
                fail "$1 (exit status $2)"
                jq -r '.residue[]? | "    residue: \(.phase) \(.kind) \(.target): \(.message)"' "$3" 2>/dev/null
        fi
}

assert() { # description command...
        local d=$1
        shift
        if "$@"; then ok "$d"; else fail "$d"; fi
}

# assert, for a check that a known bug may make fail.
assert_known() { # id description command...
        local id=$1 d=$2 why
        shift 2
        if why=$(known_reason "$id"); then
                if "$@"; then
                        fail "$d — FIXED: known issue '$id' no longer reproduces; remove it from tests/e2e/guest/known-issues"
                else
                        echo "KNOWN: $d — $id: $why"
                fi
        else
                assert "$d" "$@"
        fi
}

# The same text in both files; the difference is shown when not.
same() { # description file1 file2 (either may be a pipe: each is read once)
        local a b
        a=$(mktemp) b=$(mktemp)
        cat "$2" >"$a"
        cat "$3" >"$b"
        if cmp -s "$a" "$b"; then
                ok "$1"
        else
                fail "$1"
                diff -u "$a" "$b" | tail -n +3 | head -n 40 | sed 's/^/    /'
        fi
        rm -f "$a" "$b"
}

# No output from a command: its lines are shown when there are some.
none() { # description command...
        local d=$1 out
        shift
        out=$("$@" 2>&1)
        if [ -z "$out" ]; then
                ok "$d"
        else
                fail "$d"
                printf '%s\n' "$out" | head -n 20 | sed 's/^/    left: /'
        fi
}

finish() {
        if [ "$_failures" -eq 0 ]; then
                echo "all checks passed"
                exit 0
        fi
        echo "$_failures check(s) failed"
        exit 1
}

ms_now() { echo $(($(date +%s%N) / 1000000)); }

# "time: LABEL N ms" since the previous lap (or the script's start): where a scenario's time goes.
_lap_t=
lap() {
        local t=${EPOCHREALTIME/./}
        t=$((t / 1000))
        [ -n "$_lap_t" ] && echo "time: $1 $((t - _lap_t)) ms"
        _lap_t=$t
}

# The phases this build of the agent has, from its --help ("Phases, in order: a, b, ..."), less
# the ones NR_RESET_ARGS skips and node-object, which acts only with --delete-node (proved against a
# real API server by test-delete-node.sh and make e2e-k8s).
agent_phases() {
        "$NR" --help | tr '\n' ' ' | sed -E 's/.*Phases, in order: ([^.]*)\..*/\1/' | tr ',' ' ' |
                xargs -n1 | grep -vx -e verify -e etcd -e node-object -e drain | xargs
}

# A check.sh step counts as one check; its own lines say what failed.
check() {
        local what=$1
        shift
        if bash /share/check.sh "$@"; then ok "check.sh $what"; else fail "check.sh $what"; fi
}

# Every scenario starts by learning which phases the agent has (check.sh skips the others).
scenario_start() {
        E2E_PHASES=$(agent_phases)
        export E2E_PHASES
        echo "the agent's phases: $E2E_PHASES"
}
