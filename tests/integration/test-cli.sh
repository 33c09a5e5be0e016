#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The command line and the logs hold up under automation (issue 16): a usage error exits 2 with one
# line and runs nothing ("run status" must not reset), one program name in every message, -V, -v and
# -q; logs go to the journal only when stderr is the journal stream (never because $INVOCATION_ID is
# set), and the journal gets MESSAGE_IDs for the run start, the run result and each failed action.
# One grammar (issue 42): each verb takes its own options (another verb's is a usage error naming
# the verb), "VERB --help" and "help VERB" print that verb's options only, every duration takes
# units the same way (bare seconds still), -q prints nothing but errors, -o json works on the
# manifest verbs and help.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
require_cmd python3 findmnt

nr() { "$NODE_RESET" "$@"; }
printf 'unmount /var/lib/kubelet/*\nempty /var/lib/kubelet\n' > "$WORK/m.conf"
make_tree() { # make_tree ROOT: a pod directory with a file, and a tmpfs volume with data
        mkdir -p "$1/var/lib/kubelet/pods/p1/volumes/v" "$1/etc"
        echo keep > "$1/etc/hostname"
        echo pod > "$1/var/lib/kubelet/pods/p1/state"
        mount -t tmpfs nr-cli "$1/var/lib/kubelet/pods/p1/volumes/v"
        echo data > "$1/var/lib/kubelet/pods/p1/volumes/v/data"
}
untouched() { # untouched ROOT: nothing of the tree was reset
        findmnt -rn "$1/var/lib/kubelet/pods/p1/volumes/v" > /dev/null &&
                test -f "$1/var/lib/kubelet/pods/p1/state" -a -f "$1/etc/hostname"
}
# usage CASE EXPECTED-LINE ARGS...: exit 2 (USAGE_RC), the one line and the pointer to the --help
# of the command named (USAGE_HELP, "plan" by default: the cases below name it), nothing else.
usage() {
        local what=$1 line=$2 help="node-reset ${USAGE_HELP-plan} --help"; shift 2
        nr "$@" > "$WORK/u.out" 2> "$WORK/u.err"; rc=$?
        assert "$what: exit ${USAGE_RC:-2}" test $rc -eq "${USAGE_RC:-2}"
        assert "$what: nothing on stdout" test ! -s "$WORK/u.out"
        assert "$what: says '$line'" test "$(head -n1 "$WORK/u.err")" = "node-reset: $line"
        assert "$what: points to '${help/  / }', two lines in all" \
                test "$(tail -n1 "$WORK/u.err")" = "Try '${help/  / }'." -a "$(wc -l < "$WORK/u.err")" -eq 2
}

# --- usage errors: exit 2, nothing executed -----------------------------------------------------
root=$WORK/a
make_tree "$root"
USAGE_HELP=run usage "run with an extra operand" "'run' takes no operands, got 'status'" \
        --root "$root" --manifest "$WORK/m.conf" --yes run status
assert "run status reset nothing" untouched "$root"
usage "plan with an extra operand" "'plan' takes no operands, got 'extra'" --root "$root" plan extra
USAGE_HELP=status usage "status with an extra operand" "'status' takes no operands, got 'x'" --root "$root" status x
usage "an unknown short option names node-reset, not argv[0]" "invalid option -- 'x'" --root "$root" -x plan
usage "an unknown long option" "unrecognized option '--bogus'" --root "$root" --bogus plan
usage "a missing option argument" "option '--root' requires an argument" plan --root
usage "a missing short option argument" "option requires an argument -- 'm'" plan -m
# issue 39: a --node-name that is no Node's name (not a DNS-1123 subdomain) was planned as a skipped row, exit 0.
usage "--delete-node with a --node-name that names no Node" \
        "invalid --node-name 'W1': a node name is a DNS-1123 subdomain (lower case letters, digits, '-' and '.')" \
        --root "$root" --delete-node --node-name W1 plan
# Each verb its options: another verb's is refused before anything runs, naming the verb.
USAGE_HELP=status usage "status with run's --yes" "'status' does not take --yes" --root "$root" --yes status
USAGE_HELP=run usage "run with forget's --stale-for" "'run' does not take --stale-for" \
        --root "$root" --manifest "$WORK/m.conf" --yes --stale-for=5m run
usage "plan with a short option of run's" "'plan' does not take -y (--yes)" --root "$root" -y plan
USAGE_HELP="manifest check" usage "manifest check with --root" "'manifest check' does not take --root" \
        --root "$root" manifest check "$WORK/m.conf"
USAGE_HELP=completion usage "completion with -o" "'completion' does not take --output" completion --output=json bash
USAGE_HELP=manifest usage "manifest without its subcommand" "'manifest' needs a subcommand: check or print" manifest
USAGE_HELP= usage "no command" \
        "a command is needed: plan, run, status, manifest, orphan-check, forget, drain, help or completion"
USAGE_HELP= usage "an unknown command" "unknown command 'reset'" --root "$root" reset
USAGE_RC=255 USAGE_HELP=orphan-check usage "orphan-check with forget's --force: 255, as ExecCondition= reads it" \
        "'orphan-check' does not take --force" --force orphan-check
# One duration grammar: units or bare seconds, the bound said the same way for every option.
usage "--etcd-timeout past its bound" \
        "invalid --etcd-timeout '2h': expected a duration from 1s to 1h, such as 90 (seconds), 90s, 5m or 2h" \
        --root "$root" --etcd-timeout=2h plan
usage "--timeout without a unit it knows" \
        "invalid --timeout '5x': expected a duration from 1s to 366d, such as 90 (seconds), 90s, 5m or 2h" \
        --root "$root" --timeout=5x plan
USAGE_RC=255 USAGE_HELP=orphan-check usage "orphan-check's --for the same way" \
        "invalid --for '1h30': expected a duration from 1s to 366d, such as 90 (seconds), 90s, 5m or 2h" \
        --for=1h30 orphan-check
for t in "--timeout=5m --kill-grace=1m --xtables-wait=90s --unit-timeout=2m --pods-timeout=1h" \
        "--timeout=300 --kill-grace=60 --xtables-wait=90 --unit-timeout=120 --pods-timeout=3600 --etcd-timeout=30"; do
        # shellcheck disable=SC2086
        nr --root "$root" --manifest "$WORK/m.conf" $t --drain-timeout=2m -q -o json plan > "$WORK/d.json" 2> "$WORK/d.err"
        assert "durations with units or in bare seconds ($t): the plan runs" test $? -eq 0 -a ! -s "$WORK/d.err"
done
assert "none of them reset anything" untouched "$root"

nr -V > "$WORK/v.out" 2>&1; rc=$?
assert "-V prints the version, exit 0" eval 'test $rc -eq 0 && grep -q "^node-reset [0-9]" "$WORK/v.out"'

# --- -v and -q ----------------------------------------------------------------------------------
nr --root "$root" --manifest "$WORK/m.conf" -v plan > /dev/null 2> "$WORK/verbose.err"
assert "-v logs debug messages" test -s "$WORK/verbose.err"
nr --root "$root" --manifest "$WORK/m.conf" -q plan > "$WORK/quiet.out" 2> "$WORK/quiet.err"; rc=$?
assert "-q: plan exits 0 with nothing on stderr" test $rc -eq 0 -a ! -s "$WORK/quiet.err"
assert "-q: ... and no text report" test ! -s "$WORK/quiet.out"
assert "-q plan changed nothing" untouched "$root"
nr --root "$root" --manifest "$WORK/m.conf" -q status > "$WORK/quiet.out" 2> "$WORK/quiet.err"; rc=$?
assert "-q status: residue is exit 1, said by nothing but the exit status" \
        test $rc -eq 1 -a ! -s "$WORK/quiet.out" -a ! -s "$WORK/quiet.err"
nr --root "$root" --manifest "$WORK/m.conf" -q -o json status > "$WORK/quiet.json" 2> "$WORK/quiet.err"; rc=$?
assert "-q -o json status: the JSON asked for is printed, nothing else" \
        eval 'test $rc -eq 1 -a ! -s "$WORK/quiet.err" && python3 -m json.tool "$WORK/quiet.json" > /dev/null'

# --- --help per verb, help VERB, -o json beyond the reports -------------------------------------------
nr --help > "$WORK/help.out" 2> "$WORK/help.err"; rc=$?
assert "--help: exit 0, stdout only, the commands and -V" \
        eval 'test $rc -eq 0 -a ! -s "$WORK/help.err" && grep -q "^Commands:" "$WORK/help.out" && grep -q -- "-V --version" "$WORK/help.out"'
assert "--help: no option of a verb's" eval '! grep -qE -- "--(root|stale-for|etcd-timeout)" "$WORK/help.out"'
nr status --help > "$WORK/status.help" 2> "$WORK/help.err"; rc=$?
assert "status --help: exit 0, its usage" \
        eval 'test $rc -eq 0 -a ! -s "$WORK/help.err" && head -n1 "$WORK/status.help" | grep -qx "Usage: node-reset status \[OPTIONS...\]"'
assert "status --help: its options and the phases', not run's or forget's" \
        eval 'grep -q -- "--root=DIR" "$WORK/status.help" && grep -q -- "--etcd-timeout=DURATION" "$WORK/status.help" &&
                ! grep -qE -- "--(yes|step|stale-for|report-url)" "$WORK/status.help"'
nr help status > "$WORK/help-status.out"; rc=$?
assert "help status: exit 0, the same text as status --help" eval 'test $rc -eq 0 && cmp -s "$WORK/help-status.out" "$WORK/status.help"'
nr forget --help > "$WORK/forget.help"
assert "forget --help: its own options, no phase's" \
        eval 'grep -q -- "--stale-for=DURATION" "$WORK/forget.help" && ! grep -q -- "--etcd-timeout" "$WORK/forget.help"'
nr help -o json > "$WORK/help.json"
assert "help -o json: the tables as JSON" \
        python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); assert {c["name"] for c in t["commands"]} >= {"plan", "manifest check", "forget"} and "verify" in t["phases"]' "$WORK/help.json"
nr manifest print -o json --manifest "$WORK/m.conf" --root "$root" > "$WORK/print.json"
assert "manifest print -o json: the manifest's entries with their file and line" \
        python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert [(e["directive"], e["args"], e["line"]) for e in m["entries"]] == [("unmount", ["/var/lib/kubelet/*"], 1), ("empty", ["/var/lib/kubelet"], 2)]' "$WORK/print.json"
nr manifest check -o json "$WORK/m.conf" "$WORK/none.conf" > "$WORK/check.json" 2> /dev/null; rc=$?
assert "manifest check -o json: exit 2 for the missing file, each file's verdict" \
        python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["files"]; assert sys.argv[2] == "2" and [(x["ok"], x["directives"]) for x in f] == [(True, 2), (False, None)]' \
        "$WORK/check.json" "$rc"

# --- logs: $INVOCATION_ID alone does not hide them from stderr -----------------------------------
( exec 3<"$root/var/lib/kubelet/pods/p1/volumes/v/data"; exec sleep 120 ) > /dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do [ -e "/proc/$holder/fd/3" ] && break; sleep 0.05; done
INVOCATION_ID=0123456789abcdef0123456789abcdef nr --root "$root" --manifest "$WORK/m.conf" --yes run \
        > /dev/null 2> "$WORK/inv.err"; rc=$?
assert "the run with a busy mount fails (exit 1)" test $rc -eq 1
assert "INVOCATION_ID set, stderr a file: the failure is on stderr" \
        grep -q "^node-reset: mounts unmount .*/volumes/v: failed: busy" "$WORK/inv.err"
assert "... and the run's start and result" eval 'grep -q "^node-reset: Reset of $root started" "$WORK/inv.err" &&
        grep -q "^node-reset: Reset of $root finished: .* [1-9] failed" "$WORK/inv.err"'
assert "the busy volume's data survived" test -f "$root/var/lib/kubelet/pods/p1/volumes/v/data"

# --- logs: stderr is the journal stream: structured entries with MESSAGE_IDs, nothing on stderr --
"$TOP/tests/integration/fake-journald.py" "$WORK/journal" &
journald=$!
for _ in $(seq 100); do grep -q ready "$WORK/journal" 2>/dev/null && break; sleep 0.05; done
: > "$WORK/j.err"
JOURNAL_STREAM=$(stat -c %d:%i "$WORK/j.err") nr --root "$root" --manifest "$WORK/m.conf" --yes run \
        > /dev/null 2>> "$WORK/j.err"; rc=$?
sleep 0.2
kill "$journald" "$holder"; wait "$journald" "$holder" 2>/dev/null
assert "journal stream: the run fails again (exit 1)" test $rc -eq 1
assert "journal stream: nothing on stderr" test ! -s "$WORK/j.err"
# journal ID: the entries with that MESSAGE_ID
journal() { grep -F "\"MESSAGE_ID\": \"$1\"" "$WORK/journal"; }
assert "the run start has its MESSAGE_ID" eval 'journal 979a302e64384f6493cb74ebc3148d52 | grep -q "Reset of $root started"'
assert "the run result has its MESSAGE_ID, priority err" \
        eval 'journal 07ba51c9bd9b409bbe3d77ed3da6a954 | grep "Reset of $root finished" | grep -q "\"PRIORITY\": \"3\""'
assert "the failed action has its MESSAGE_ID and fields" \
        eval 'journal 80cba3a00ece423498e2fcf09edc0139 | grep "\"NODE_RESET_RESULT\": \"failed\"" | grep -q "\"NODE_RESET_KIND\": \"unmount\""'
assert "an action that did not fail has no MESSAGE_ID" \
        eval '! grep "\"NODE_RESET_RESULT\": \"changed\"" "$WORK/journal" | grep -q MESSAGE_ID'
assert "every MESSAGE_ID the agent sends is in the catalog" eval '
        for id in $(grep -o "\"MESSAGE_ID\": \"[0-9a-f]*\"" "$WORK/journal" | cut -d\" -f4 | sort -u); do
                grep -q "^-- $id\$" "$TOP/docs/node-reset.catalog" || exit 1
        done'

# --- the JSON report as a contract: schema, error codes, skip_reason said once -----------------
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" > /dev/null; }
root=$WORK/j
make_tree "$root"
mkdir -p "$root/var/lib/kubelet/keep"
printf 'unmount /var/lib/kubelet/*\nremove /var/lib/kubelet/keep\nempty /var/lib/kubelet\nprotect /var/lib/kubelet/keep\n' > "$WORK/mj.conf"
( exec 3<"$root/var/lib/kubelet/pods/p1/volumes/v/data"; exec sleep 120 ) > /dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do [ -e "/proc/$holder/fd/3" ] && break; sleep 0.05; done
nr --root "$root" --manifest "$WORK/mj.conf" -o json plan > "$WORK/plan.json" 2> /dev/null
nr --root "$root" --manifest "$WORK/mj.conf" -o json --yes run > "$WORK/run.json" 2> /dev/null
nr --root "$root" --manifest "$WORK/mj.conf" -o json status > "$WORK/status.json" 2> /dev/null
nr --root "$root" -o json orphan-check > "$WORK/orphan.json" 2> /dev/null
kill "$holder"; wait "$holder" 2>/dev/null
for c in plan run status orphan; do
        assert "$c: the JSON matches docs/report.schema.json" schema_valid "$WORK/$c.json"
        assert "$c: schema_version 1" jq_ "$WORK/$c.json" 'r["schema_version"] == 1'
done
assert "run: the busy unmount failed with error EBUSY" \
        jq_ "$WORK/run.json" "[a['error'] for a in actions(r, kind='unmount')] == ['EBUSY']"
assert "run: the protected line skipped with error 'protected', its reason once, in message" \
        jq_ "$WORK/run.json" "any(a['result'] == 'skipped' and a['error'] == 'protected' and 'protected by' in a['message'] and 'skip_reason' not in a for a in actions(r))"
assert "run: a changed or unchanged action has error null" \
        jq_ "$WORK/run.json" "all(a['error'] is None for a in actions(r) if a['result'] in ('changed', 'unchanged'))"
assert "run: the report's counts are its actions' results, summed" jq_ "$WORK/run.json" \
        "r['counts'] == dict([('actions', len(actions(r)))] + [(k, sum(1 for a in actions(r) if a['result'] == k)) for k in ('changed', 'unchanged', 'failed', 'skipped')]) and r['counts']['failed'] == 2"
assert "plan: the report counts the plan's actions; status has no counts" \
        eval 'jq_ "$WORK/plan.json" "r[\"counts\"] == {\"actions\": len(actions(r))}" && jq_ "$WORK/status.json" "r[\"counts\"] is None"'
assert "the protected directory survived" test -d "$root/var/lib/kubelet/keep"
assert "plan: the protected line has its skip_reason, no message" \
        jq_ "$WORK/plan.json" "any(a['skip_reason'] and a['error'] is None and a['message'] is None for a in actions(r))"
assert "the validator rejects a report without schema_version" eval '
        python3 -c "import json,sys; r=json.load(open(sys.argv[1])); del r[\"schema_version\"]; json.dump(r, sys.stdout)" \
                "$WORK/run.json" > "$WORK/bad.json" && ! schema_valid "$WORK/bad.json" 2> /dev/null'
# The schema's promise: a newer report's new members pass a consumer's validation (the published
# schema is open); the project's own tests validate closed, so the agent cannot write a member the
# schema does not name.
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); r[\"a_member_of_tomorrow\"] = 1; r[\"phases\"][0][\"new_too\"] = {}; json.dump(r, sys.stdout)" \
        "$WORK/run.json" > "$WORK/newer.json"
assert "a report with members this schema does not name passes the published (open) schema" \
        schema_valid --open "$WORK/newer.json"
assert "... and fails the tests' closed validation" eval '! schema_valid "$WORK/newer.json" 2> /dev/null'
# --- the text report lists what changes; the rest is counted per phase, -v lists it, JSON keeps it --
root=$WORK/text
make_tree "$root"
printf '%s\n' 'unmount /var/lib/kubelet/*' 'empty /var/lib/kubelet' 'remove /etc/nr-absent-1' 'remove /etc/nr-absent-2' \
        'remove /etc/nr-absent-3' > "$WORK/text.conf"
nr --root "$root" --manifest "$WORK/text.conf" plan > "$WORK/text.plan" 2> /dev/null
assert "text plan: what will change is listed" grep -q "empty     /var/lib/kubelet" "$WORK/text.plan"
assert "text plan: the lines that matched nothing are not" eval '! grep -q "nr-absent" "$WORK/text.plan"'
assert "text plan: they are counted in their phase" grep -qx "  files: 3 with nothing to do (-v lists them)" "$WORK/text.plan"
nr -v --root "$root" --manifest "$WORK/text.conf" plan > "$WORK/text-v.plan" 2> /dev/null
assert "-v plan: every action is listed" test "$(grep -c "nr-absent" "$WORK/text-v.plan")" -eq 3
assert "-v plan: no count line" eval '! grep -q "with nothing to do" "$WORK/text-v.plan"'
nr --root "$root" --manifest "$WORK/text.conf" --output=json plan > "$WORK/text.json" 2> /dev/null
assert "JSON plan: every action is there" jq_ "$WORK/text.json" \
        "sum(1 for a in actions(r) if 'nr-absent' in a['target']) == 3"
nr --root "$root" --manifest "$WORK/text.conf" --yes run > "$WORK/text.run" 2> /dev/null
assert "text run: the changes are listed" grep -q "changed     empty     /var/lib/kubelet" "$WORK/text.run"
assert "text run: the unchanged ones are counted" grep -qx "  files: 3 unchanged (-v lists them)" "$WORK/text.run"
assert "text run: the closing line counts the whole run" grep -qx "summary: 2 changed, 5 unchanged, 0 failed, 0 skipped" "$WORK/text.run"
assert "text plan: the closing line counts the plan" \
        grep -qx "plan: 7 actions, 2 with something to do (dry run, nothing changed)" "$WORK/text.plan"
finish
