#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Boots the cached guest image once under QEMU (TCG) to run one scenario, and collects its results.
#
# Usage: run-vm.sh [-t SECONDS] [-f FILE]... IMAGE_DIR AGENT_BINARY OUT_DIR SCENARIO
#
# A per-run temporary directory is shared with the guest over 9p (mount tag "share"): it holds the
# agent binary, tests/e2e/guest/*, the scenario's name and every -f FILE (under its own name: the
# CRI test client and the pause image tarball). The guest's node-reset-e2e.service runs
# /share/run.sh after multi-user.target, writes out.log, rc and results/ back, and powers off.
# The disk is opened with -snapshot (the cached image is never written), the guest has no network
# (-nic none), and the serial console goes to OUT_DIR/serial.log.
#
# Exit status: the guest script's; 124 when the VM did not power off within the timeout (qemu is
# killed by its PID); 125 when the VM stopped without an exit status. Whatever happens, no qemu,
# no temporary directory and no mount is left behind (the host mounts nothing).
set -euo pipefail

TIMEOUT=600
FILES=()
while [ $# -gt 0 ]; do
        case "$1" in
        -t) TIMEOUT=$2; shift 2 ;;
        -f) FILES+=("$2"); shift 2 ;;
        *) break ;;
        esac
done
[ $# -eq 4 ] || { echo "usage: run-vm.sh [-t SECONDS] [-f FILE]... IMAGE_DIR AGENT_BINARY OUT_DIR SCENARIO" >&2; exit 2; }
for f in "${FILES[@]}"; do
        [ -f "$f" ] || { echo "run-vm: $f is missing" >&2; exit 2; }
done
IMAGE_DIR=$1 AGENT=$2 OUT=$3 SCENARIO=$4
GUEST_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/guest"
QEMU=${QEMU:-qemu-system-x86_64}
VM_MEM=${E2E_VM_MEM:-2048}
VM_CPUS=${E2E_VM_CPUS:-2}

for f in node.img vmlinuz initrd.img; do
        [ -f "$IMAGE_DIR/$f" ] || { echo "run-vm: $IMAGE_DIR/$f is missing" >&2; exit 125; }
done
[ -f "$GUEST_DIR/scenario-$SCENARIO.sh" ] || { echo "run-vm: no scenario '$SCENARIO'" >&2; exit 2; }
command -v "$QEMU" >/dev/null || { echo "run-vm: $QEMU is not installed (make deps)" >&2; exit 125; }

qpid=
tmp=$(mktemp -d /tmp/node-reset-e2e.XXXXXX)

vm_running() { # a zombie (exited, not yet reaped) is not running
        local state
        state=$(awk '{ print $3 }' "/proc/$qpid/stat" 2>/dev/null) && [ "$state" != Z ]
}

stop_vm() {
        [ -n "$qpid" ] || return 0
        if vm_running; then
                kill -TERM "$qpid" 2>/dev/null || true
                for _ in $(seq 50); do vm_running || break; sleep 0.1; done
                vm_running && kill -KILL "$qpid" 2>/dev/null
        fi
        wait "$qpid" 2>/dev/null || true
        qpid=
}

cleanup() {
        stop_vm
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

share="$tmp/share"
mkdir -p "$share/results" "$OUT"
rm -rf "${OUT:?}"/*
install -m 0755 "$AGENT" "$share/node-reset"
cp "$GUEST_DIR"/* "$share/"
for f in "${FILES[@]}"; do cp "$f" "$share/"; done
echo "$SCENARIO" >"$share/scenario"

# -snapshot keeps its overlay in $TMPDIR: our temporary directory, removed even if qemu is killed.
# -cpu qemu64: under TCG it costs ~15-25% less CPU than -cpu max here (fewer emulated vector paths
# in glibc); KVM is not usable on this kind of machine (see the VM note).
TMPDIR="$tmp" "$QEMU" \
        -nodefaults -no-user-config -display none -monitor none -no-reboot \
        -accel tcg,thread=multi -cpu qemu64 -smp "$VM_CPUS" -m "$VM_MEM" \
        -kernel "$IMAGE_DIR/vmlinuz" -initrd "$IMAGE_DIR/initrd.img" \
        -append "root=/dev/vda rw console=ttyS0 panic=1 quiet systemd.show_status=error" \
        -drive "file=$IMAGE_DIR/node.img,format=raw,if=virtio,cache=unsafe" -snapshot \
        -nic none -device virtio-rng-pci \
        -fsdev "local,id=share,path=$share,security_model=none" \
        -device virtio-9p-pci,fsdev=share,mount_tag=share \
        -serial "file:$OUT/serial.log" &
qpid=$!
echo "$qpid" >"$OUT/qemu.pid"
echo "$tmp" >"$OUT/tmpdir"

t0=$(date +%s)
deadline=$((t0 + TIMEOUT))
timed_out=0
while vm_running; do
        if [ "$(date +%s)" -ge "$deadline" ]; then
                timed_out=1
                echo "run-vm: the VM did not power off within ${TIMEOUT} s: killing qemu (pid $qpid)" >&2
                break
        fi
        sleep 0.5
done
stop_vm
echo "$(($(date +%s) - t0))" >"$OUT/vm-seconds"

cp -r "$share/results/." "$OUT/" 2>/dev/null || true
[ -f "$share/out.log" ] && cp "$share/out.log" "$OUT/out.log"
[ "$timed_out" -eq 0 ] || exit 124
[ -s "$share/rc" ] || { echo "run-vm: the guest left no exit status (see $OUT/serial.log)" >&2; exit 125; }
exit "$(cat "$share/rc")"
