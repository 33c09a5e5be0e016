#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# "make e2e-vm": the acceptance test. Builds (once) or reuses the cached guest image, then boots one
# VM per scenario (tests/e2e/run-vm.sh); each scenario builds a worker node's state inside the guest,
# resets it with the agent and checks the result (tests/e2e/guest/). Prints one line per scenario and
# a closing "N passed, N failed". Needs root (debootstrap for the image, built offline from the
# packages "make deps" downloaded); nothing runs on the host's own network, mounts or services, and
# nothing is downloaded: it passes with the network cut.
#
# The pods are made in the guest through containerd's CRI with the project's own test client
# ($O/tests/cri-helper, built here if needed) from an offline pause image built here, once per run
# (tests/integration/containerd/harness.sh's cd_build_image); both go into every VM's share.
#
# Environment: O (build directory, default build), E2E_TIMEOUT (seconds per VM, default 600),
# E2E_SCENARIOS (default: all three), E2E_CACHE (image cache, default /var/cache/node-reset-e2e).
set -u
cd "$(dirname "$0")/../.." || exit 1
O=${O:-build}
AGENT="$O/node-reset"
HELPER="$O/tests/cri-helper"
OUT="$O/e2e"
TIMEOUT=${E2E_TIMEOUT:-600}

# worker: a whole worker node reset as an operator would; master-gone: the same pods whose CNI DEL
# always fails (calico without its API server); sigkill-pods: a run killed inside the pods phase, then
# a second one.
read -r -a SCENARIOS <<<"${E2E_SCENARIOS:-worker master-gone sigkill-pods}"

passed=0 failed=0
t_start=$(date +%s)

[ "$(id -u)" -eq 0 ] || { echo "e2e-vm: needs root (sudo make e2e-vm)" >&2; exit 1; }
[ -x "$AGENT" ] || { echo "e2e-vm: $AGENT is not built" >&2; exit 1; }
mkdir -p "$OUT"

# The CRI test client (make's e2e-vm target asks only for the agent), and the pause image: a static
# program in one layer, as an OCI layout tarball named registry.local/pause:test.
if ! ${MAKE:-make} --no-print-directory O="$O" "$HELPER" >"$OUT/cri-helper.log" 2>&1 || [ ! -x "$HELPER" ]; then
        cat "$OUT/cri-helper.log"
        echo "FAIL: cannot build $HELPER"
        echo "e2e-vm: 0 passed, 1 failed"
        exit 1
fi
rm -rf "$OUT/pause-image" "$OUT/pause-image.tar"
if ! (CD_DIR="$(cd "$OUT" && pwd)/pause-image" TOP=$PWD && . tests/integration/containerd/harness.sh && cd_build_image) \
        >"$OUT/pause-image.log" 2>&1 || ! mv "$OUT/pause-image/image/image.tar" "$OUT/pause-image.tar"; then
        cat "$OUT/pause-image.log"
        echo "FAIL: cannot build the pause image"
        echo "e2e-vm: 0 passed, 1 failed"
        exit 1
fi
rm -rf "$OUT/pause-image"

t0=$(date +%s)
if ! image=$(tests/e2e/build-image.sh 2>"$OUT/build-image.log" | tail -n 1) || [ ! -f "$image/node.img" ]; then
        cat "$OUT/build-image.log"
        echo "FAIL: e2e image build"
        echo "e2e-vm: 0 passed, 1 failed"
        exit 1
fi
how="built in $(($(date +%s) - t0)) s"
grep -q "reusing" "$OUT/build-image.log" && how=cached
echo "e2e image: $image ($(grep -c . "$image/packages.txt") packages, kernel $(cat "$image/kernel-version"), $how)"

# The harness's own promise: no qemu, no temporary directory, no host mount left by a run.
harness_leftovers() { # out-dir
        local pid
        pid=$(cat "$1/qemu.pid" 2>/dev/null)
        if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = qemu-system-x86 ]; then
                echo "qemu (pid $pid) still running"
        fi
        [ -e "$(cat "$1/tmpdir" 2>/dev/null)" ] && echo "temporary directory $(cat "$1/tmpdir") left"
        findmnt -rn -o TARGET | grep -F "$(cat "$1/tmpdir" 2>/dev/null || echo /nonexistent)"
        return 0
}

for s in "${SCENARIOS[@]}"; do
        d="$OUT/$s"
        tests/e2e/run-vm.sh -t "$TIMEOUT" -f "$HELPER" -f "$OUT/pause-image.tar" "$image" "$AGENT" "$d" "$s" \
                >"$OUT/$s.log" 2>&1
        rc=$?
        left=$(harness_leftovers "$d")
        info="vm $(cat "$d/vm-seconds" 2>/dev/null || echo '?') s"
        [ -f "$d/agent-run-ms" ] && info="$info, agent run $(cat "$d/agent-run-ms") ms in the guest"
        known=$(grep -c '^KNOWN:' "$d/out.log" 2>/dev/null)
        [ "${known:-0}" -gt 0 ] && info="$info, $(grep -Ec '^[^#[:space:]]' tests/e2e/guest/known-issues)" &&
                info="$info known issue(s) reproduced in $known check(s): tests/e2e/guest/known-issues"
        if [ "$rc" -eq 0 ] && [ -z "$left" ]; then
                passed=$((passed + 1))
                echo "PASS: $s ($info)"
                grep -E '^(KNOWN|note|skip):' "$d/out.log" | sed 's/^/    /'
        else
                failed=$((failed + 1))
                echo "FAIL: $s (exit $rc; $info)"
                [ -n "$left" ] && printf '%s\n' "$left" | sed 's/^/    harness left: /'
                sed 's/^/    /' "$OUT/$s.log"
                if [ -f "$d/out.log" ]; then
                        sed 's/^/    guest: /' "$d/out.log"
                else
                        echo "    no guest output; the serial console's end ($d/serial.log):"
                        tail -n 40 "$d/serial.log" 2>/dev/null | sed 's/^/    console: /'
                fi
        fi
done
echo "e2e-vm took $(($(date +%s) - t_start)) s; results in $OUT"
echo "e2e-vm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
