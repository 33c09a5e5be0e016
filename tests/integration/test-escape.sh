#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Names a pod can choose reach the operator's terminal escaped (issue 15, hole 5): a mount point
# whose name holds newlines, a forged "residue:" line, OSC/CSI sequences, C1 controls and invalid
# UTF-8 forges no report line and sends no control byte in plan, run, the logs or the errors, while
# --output=json keeps JSON's own escaping and the exact name.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
REPORT="$TOP/tests/integration/report.py"

nr() { "$NODE_RESET" "$@"; }
jq_() { "$REPORT" "$@" >/dev/null; }
# has FILE BYTES: FILE holds BYTES (no newline in BYTES), compared as bytes.
has() { LC_ALL=C grep -qF -- "$2" "$1"; }
# clean_text FILE...: no ESC, no BEL, no C1 control, no stray invalid UTF-8 byte from the names.
clean_text() {
        local f
        for f in "$@"; do
                ! has "$f" $'\e' && ! has "$f" $'\a' && ! has "$f" $'\xc2\x9b' && ! has "$f" $'\xff' || return 1
        done
}
residue_lines() { LC_ALL=C grep -c '^residue:' "$1"; }

N=$'x\n\nresidue: none, the node is clean\n\e]0;owned\a\e[2K'
N_ESC='x\n\nresidue: none, the node is clean\n\x1b]0;owned\a\x1b[2K'
N_JSON='x\n\nresidue: none, the node is clean\n\u001b]0;owned\u0007\u001b[2K'
C=$'c1-\xc2\x9b2K-bad-\xff-back\\slash'
C_ESC='c1-\xc2\x9b2K-bad-\xff-back\\slash'

printf 'unmount /var/lib/kubelet/*\nempty /var/lib/kubelet\n' > "$WORK/m.conf"
make_tree() { # make_tree ROOT: the hostile names as directories and tmpfs mount points
        mkdir -p "$1/var/lib/kubelet/pods/$N" "$1/var/lib/kubelet/pods/$C/volumes/v" "$1/etc"
        echo keep > "$1/etc/hostname"
        mount -t tmpfs nr-hostile "$1/var/lib/kubelet/pods/$N"
        mount -t tmpfs nr-c1 "$1/var/lib/kubelet/pods/$C/volumes/v"
        echo data > "$1/var/lib/kubelet/pods/$C/volumes/v/data"
}
mounted() { findmnt -rn -o TARGET | LC_ALL=C grep -qF "$1/var/lib/kubelet/"; }

# --- plan and run in text: every name escaped, the one "residue:" line is the real one ------------
root=$WORK/a
make_tree "$root"
nr --root "$root" --manifest "$WORK/m.conf" plan > "$WORK/plan.out" 2> "$WORK/plan.err"; rc=$?
assert "plan exits 0" test $rc -eq 0
assert "plan: no ESC, BEL, C1 or invalid byte on stdout or stderr" clean_text "$WORK/plan.out" "$WORK/plan.err"
assert "plan: no report line forged (a plan has no residue line)" test "$(residue_lines "$WORK/plan.out")" -eq 0
assert "plan: the hostile mount point shown escaped" has "$WORK/plan.out" "unmount   /var/lib/kubelet/pods/$N_ESC"
assert "plan: the C1 and invalid-UTF-8 name shown escaped" has "$WORK/plan.out" "/var/lib/kubelet/pods/$C_ESC/volumes/v"
assert "plan changed nothing" mounted "$root"

NODE_RESET_LOG_LEVEL=debug nr --root "$root" --manifest "$WORK/m.conf" --yes run > "$WORK/run.out" 2> "$WORK/run.err"; rc=$?
assert "run exits 0" test $rc -eq 0
assert "run: no ESC, BEL, C1 or invalid byte on stdout or stderr" clean_text "$WORK/run.out" "$WORK/run.err"
assert "run: exactly one residue line, the genuine one" \
        test "$(residue_lines "$WORK/run.out")" -eq 1 -a "$(grep '^residue:' "$WORK/run.out")" = "residue: none, the node is clean"
assert "run: the unmount line names the escaped mount point" has "$WORK/run.out" "unmount   /var/lib/kubelet/pods/$N_ESC"
assert "run: the debug log names it escaped, on one line" has "$WORK/run.err" "node-reset: mounts unmount /var/lib/kubelet/pods/$N_ESC: changed"
assert "run: nothing on stderr starts a forged line" test "$(LC_ALL=C grep -vc '^node-reset: ' "$WORK/run.err")" -eq 0
assert "the hostile mounts are gone" eval '! mounted "$root"'
assert "/var/lib/kubelet is emptied" test -d "$root/var/lib/kubelet" -a -z "$(ls -A "$root/var/lib/kubelet")"
assert "a file outside the manifest survives" grep -q keep "$root/etc/hostname"

# --- A failure on a hostile name: the error and the residue are escaped -------------------------
root=$WORK/b
make_tree "$root"
( exec 3<"$root/var/lib/kubelet/pods/$C/volumes/v/data"; exec sleep 120 ) > /dev/null 2>&1 &
holder=$!
for _ in $(seq 50); do [ -e "/proc/$holder/fd/3" ] && break; sleep 0.1; done
nr --root "$root" --manifest "$WORK/m.conf" --yes run > "$WORK/fail.out" 2> "$WORK/fail.err"; rc=$?
assert "run with a busy hostile mount exits 1" test $rc -eq 1
assert "failed run: no ESC, BEL, C1 or invalid byte on stdout or stderr" clean_text "$WORK/fail.out" "$WORK/fail.err"
assert "failed run: the only residue line is the real one, not 'none'" \
        test "$(residue_lines "$WORK/fail.out")" -eq 1 -a "$(grep '^residue:' "$WORK/fail.out")" = "residue: "
assert "failed run: the error names the busy mount escaped" has "$WORK/fail.err" "/var/lib/kubelet/pods/$C_ESC/volumes/v: failed"
assert "failed run: the residue names it escaped" has "$WORK/fail.out" "/var/lib/kubelet/pods/$C_ESC/volumes/v"
assert "the busy mount's data is kept" grep -q data "$root/var/lib/kubelet/pods/$C/volumes/v/data"
nr --root "$root" --manifest "$WORK/m.conf" status > "$WORK/status.out" 2> "$WORK/status.err"; rc=$?
assert "status sees the residue (exit 1)" test $rc -eq 1
assert "status: no ESC, BEL, C1 or invalid byte" clean_text "$WORK/status.out" "$WORK/status.err"
kill "$holder"; wait "$holder" 2>/dev/null

# --- JSON keeps its own escaping and the exact name ----------------------------------------------
root=$WORK/c
make_tree "$root"
nr --root "$root" --manifest "$WORK/m.conf" --yes --output=json run > "$WORK/run.json" 2> "$WORK/json.err"; rc=$?
assert "JSON run exits 0" test $rc -eq 0
assert "JSON: the name is escaped the JSON way" has "$WORK/run.json" "\"/var/lib/kubelet/pods/$N_JSON\""
assert "JSON: an invalid byte is U+FFFD (never \\u00ff, which is a real ÿ), a C1 control passes as valid UTF-8" \
        has "$WORK/run.json" $'"/var/lib/kubelet/pods/c1-\xc2\x9b2K-bad-\\ufffd-back\\\\slash/volumes/v"'
assert "JSON: target_b64 beside it gives the exact bytes back" \
        jq_ "$WORK/run.json" "any(raw(a, 'target') == b'/var/lib/kubelet/pods/c1-\\xc2\\x9b2K-bad-\\xff-back\\\\slash/volumes/v' and a['result'] == 'changed' for a in actions(r, kind='unmount'))"
assert "JSON: a valid name has no _b64 twin" \
        jq_ "$WORK/run.json" "all(('target_b64' in a) == ('bad-' in a['target']) for a in actions(r))"
assert "JSON: no raw ESC or BEL" eval '! has "$WORK/run.json" $'"'"'\e'"'"' && ! has "$WORK/run.json" $'"'"'\a'"'"
assert "JSON: no text-style escape leaked in" eval '! has "$WORK/run.json" "\\x1b"'
assert "JSON: the parsed target is the exact name" \
        jq_ "$WORK/run.json" "any(a['target'] == '/var/lib/kubelet/pods/x\\n\\nresidue: none, the node is clean\\n\\x1b]0;owned\\x07\\x1b[2K' and a['result'] == 'changed' for a in actions(r, kind='unmount'))"
assert "JSON: the residue is empty" jq_ "$WORK/run.json" 'r["residue"] == []'
assert "JSON run: stderr has no control bytes either" clean_text "$WORK/json.err"

# --- Errors and lines that echo what was typed or a file name -------------------------------------
nr --output="json$N" plan > /dev/null 2> "$WORK/usage.err"; rc=$?
assert "a hostile option value: exit 2" test $rc -eq 2
assert "a hostile option value is echoed escaped" has "$WORK/usage.err" "invalid --output 'json$N_ESC'"
assert "usage error: no ESC or BEL, two lines" \
        eval 'clean_text "$WORK/usage.err" && test "$(wc -l < "$WORK/usage.err")" -eq 2'
cp "$WORK/m.conf" "$WORK/$N.conf"
nr manifest check "$WORK/$N.conf" > "$WORK/check.out" 2>&1; rc=$?
assert "manifest check of a hostile file name: exit 0" test $rc -eq 0
assert "manifest check echoes the name escaped on one line" \
        eval 'has "$WORK/check.out" "$N_ESC.conf: ok, 2 directives" && test "$(wc -l < "$WORK/check.out")" -eq 1'
assert "manifest check: no ESC or BEL" clean_text "$WORK/check.out"
mkdir -p "$WORK/d/etc"
nr --root "$WORK/d" --kubeconfig "/etc/$N" orphan-check > "$WORK/orphan.out" 2>&1; rc=$?
assert "orphan-check without a kubeconfig: not a node (exit 1)" test $rc -eq 1
assert "orphan-check: the kubeconfig path escaped in both lines" \
        test "$(LC_ALL=C grep -cF "/etc/$N_ESC" "$WORK/orphan.out")" -eq 2 -a "$(wc -l < "$WORK/orphan.out")" -eq 3
assert "orphan-check: no ESC or BEL" clean_text "$WORK/orphan.out"

finish
