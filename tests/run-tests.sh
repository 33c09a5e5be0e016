#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs the unit tests, the integration tests and the fuzz corpus replay; prints one closing line
# "N passed, N failed, N skipped". Usage: tests/run-tests.sh [unit|integration|fuzz|fast|repo|fleet]...
# Tiers: "fast" is the unit tests and the integration tests that plan or reset --root trees and
# private namespaces without real components (make check-fast, under two minutes); "repo" checks
# the repository itself (make check-repo); "integration" is every integration test, the slow
# real-component suites (containerd, etcd, systemd in nspawn, the VM) among them (make check);
# "fleet" is tests/fleet/, the Ansible playbooks over SSH against a hundred lab nodes (make
# check-fleet, a CI step of its own: not in make check).
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
what=${*:-unit integration fuzz}
FAST_TESTS="plan-phases lazy-libraries escape manifest-rules edit-block files-protect cni-state lock drain-answers examples"
REPO_TESTS="format layers structure tables ansible-lint man deb docs completion install make-deps argo-template"
# Under a sanitizer build (make check-asan sets NR_SANITIZER_RUN) each capability is proven once, by
# the plain run: the repository's own checks (REPO_TESTS) look at no agent memory, and the
# playbooks' and workflows' runs drive the same agent verbs the other integration tests run under
# the sanitizers (test-cli, test-drain, test-forget, ...), so they are not run twice.
SANITIZER_SKIP="$REPO_TESTS ansible ansible-fleet ansible-remove argo-run fleet"
passed=0 failed=0 skipped=0
failed_names=()

record() { # name rc
        case "$2" in
        0) passed=$((passed + 1)); echo "PASS: $1" ;;
        77) skipped=$((skipped + 1)); echo "SKIP: $1" ;;
        *) failed=$((failed + 1)); failed_names+=("$1"); echo "FAIL: $1 (exit $2)" ;;
        esac
}

run_unit() {
        local t rc
        for t in "$O"/tests/test-*; do
                [ -x "$t" ] || continue
                echo "=== unit $(basename "$t")"
                if [ -n "${VALGRIND:-}" ]; then
                        valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 "$t"
                else
                        "$t"
                fi
                rc=$?
                record "unit/$(basename "$t")" $rc
        done
}

run_integration() { # [NAME...]: only tests/integration/test-NAME.sh, else all of them
        TESTS_DIR=tests/integration run_scripts "$@"
}

run_scripts() { # [NAME...]: the test-*.sh of TESTS_DIR
        local t rc
        for t in "$TESTS_DIR"/test-*.sh; do
                [ -f "$t" ] || continue
                [ $# -eq 0 ] || [[ " $* " == *" $(basename "$t" .sh | sed 's/^test-//') "* ]] || continue
                n=$(basename "$t" .sh | sed 's/^test-//')
                if [ -n "${NR_SANITIZER_RUN:-}" ] && [[ " $SANITIZER_SKIP " == *" $n "* ]]; then
                        echo "SKIP: ${TESTS_DIR##*/}/test-$n: proven by the plain run; under the sanitizers it drives no agent code the others do not"
                        skipped=$((skipped + 1))
                        continue
                fi
                echo "=== ${TESTS_DIR##*/} $(basename "$t")"
                t0=$(date +%s)
                O="$O" timeout --kill-after=10 "${TEST_TIMEOUT:-900}" bash "$t"
                rc=$?
                echo "--- ${TESTS_DIR##*/}/test-$n took $(($(date +%s) - t0)) s"
                record "${TESTS_DIR##*/}/test-$n" $rc
        done
}

run_fuzz() {
        local src n bin rc
        for src in tests/fuzz/fuzz-*.c; do
                [ -f "$src" ] || continue
                n=$(basename "$src" .c)
                echo "=== fuzz corpus replay $n"
                if ! command -v "${CLANG:-clang}" >/dev/null 2>&1; then
                        echo "clang is not installed: cannot build libFuzzer targets"
                        record "fuzz/$n" 77
                        continue
                fi
                bin="$O/fuzz/$n"
                if ! make --no-print-directory -s O="$O" "$bin"; then
                        record "fuzz/$n" 1
                        continue
                fi
                "$bin" -runs=0 tests/fuzz/corpus/"$n"/* >/dev/null 2>"$O/fuzz/$n.log"
                rc=$?
                [ $rc -ne 0 ] && tail -n 30 "$O/fuzz/$n.log"
                record "fuzz/$n" $rc
        done
}

# What a test must never change on the machine that runs it: its host name, the mount points of
# this (the host's) mount namespace, its network links. Compared as sets before and after the run.
host_state() {
        {
                echo "hostname $(cat /proc/sys/kernel/hostname)"
                awk '{ print "mount " $5 }' /proc/self/mountinfo
                for l in /sys/class/net/*; do echo "link ${l##*/}"; done
        } | LC_ALL=C sort -u
}

# Each difference as "<what> added|removed: <name>", one a line.
host_state_diff() { # before after
        LC_ALL=C comm -3 <(echo "$1") <(echo "$2") |
                awk -F '\t' '{ if ($1 == "") { s = $2; how = "now" } else { s = $1; how = "no longer" }
                                i = index(s, " "); print substr(s, 1, i - 1) " " how ": " substr(s, i + 1) }'
}

host_before=$(host_state)
for w in $what; do
        case "$w" in
        unit) run_unit ;;
        integration) run_integration ;;
        fuzz) run_fuzz ;;
        fast) run_unit; run_integration $FAST_TESTS ;;
        repo) run_integration $REPO_TESTS ;;
        fleet) TESTS_DIR=tests/fleet TEST_TIMEOUT=${TEST_TIMEOUT:-2400} run_scripts ;;
        *) echo "unknown test group: $w" >&2; exit 2 ;;
        esac
done

host_changed=$(host_state_diff "$host_before" "$(host_state)")
if [ -n "$host_changed" ]; then
        echo "FAIL: the run changed the machine it ran on (host name, mounts or links):"
        echo "$host_changed" | sed 's/^/  /'
        failed=$((failed + 1))
        failed_names+=("host-state")
fi

[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
