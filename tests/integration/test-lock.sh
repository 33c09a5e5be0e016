#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The lock file beneath --root is never written into when node-reset cannot account for it: with
# --root on a node's disk, DIR/run is an ordinary directory of that disk, and its node-reset.lock may
# be a hard link to a PV's file, a device, a FIFO or a symlink. Each is refused (exit 3, the reason
# named), nothing is changed, nothing hangs; a lock file node-reset left itself is reused.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
require_cmd timeout mknod mkfifo sha256sum

nr() { timeout 20 "$NODE_RESET" "$@"; }

# A node's disk: a PV's file, and something the default manifest would remove.
new_root() {
        root=$WORK/$1
        mkdir -p "$root/run" "$root/var/openebs/pvc-1" "$root/etc/kubernetes"
        head -c 65536 /dev/urandom > "$root/var/openebs/pvc-1/data"
        echo "kubeconfig" > "$root/etc/kubernetes/admin.conf"
        pv_sum=$(sha256sum < "$root/var/openebs/pvc-1/data")
}

# refused NAME REASON: the run exits 3 quickly with REASON on stderr and the tree untouched.
refused() {
        local name=$1 reason=$2 rc
        nr --root "$root" --yes run > "$WORK/$name.out" 2> "$WORK/$name.err"; rc=$?
        assert "$name: refused with exit 3 (not a timeout)" test $rc -eq 3
        assert "$name: the refusal says '$reason'" grep -qF "$reason" "$WORK/$name.err"
        assert "$name: the refusal names the lock file" grep -qF "$root/run/node-reset.lock" "$WORK/$name.err"
        assert "$name: nothing else was changed" test -s "$root/etc/kubernetes/admin.conf"
        assert "$name: the PV's data kept every byte" test "$(sha256sum < "$root/var/openebs/pvc-1/data")" = "$pv_sum"
}

# --- The issue's case: the lock's name is a hard link to a PV's file ------------------------------
new_root hardlink
ln "$root/var/openebs/pvc-1/data" "$root/run/node-reset.lock"
refused hardlink "is a hard link (2 names): refusing to write into it"
assert "hardlink: the lock name still is the PV's file" test "$root/run/node-reset.lock" -ef "$root/var/openebs/pvc-1/data"

# --- A character device, a FIFO, a symlink, a directory ------------------------------------------
new_root chardev
mknod "$root/run/node-reset.lock" c 1 3
refused chardev "is a character device"
assert "chardev: the device node is left" test -c "$root/run/node-reset.lock"

new_root fifo
mkfifo "$root/run/node-reset.lock"
refused fifo "is a FIFO"
assert "fifo: the FIFO is left" test -p "$root/run/node-reset.lock"

new_root symlink
ln -s ../var/openebs/pvc-1/data "$root/run/node-reset.lock"
refused symlink "is a symbolic link"

new_root dir
mkdir "$root/run/node-reset.lock"
refused dir "is a directory"

new_root rundir
mkdir "$WORK/elsewhere"
rmdir "$root/run" && ln -s "$WORK/elsewhere" "$root/run"
refused rundir "cannot open the directory run/"
assert "rundir: nothing was created through the symlinked run/" test -z "$(ls -A "$WORK/elsewhere")"

# --- A regular file with one name that holds someone's data --------------------------------------
new_root data
echo "not a PID: somebody's file moved here" > "$root/run/node-reset.lock"
refused data "holds data that is not a PID"
assert "data: the file's content is unchanged" grep -q "somebody's file" "$root/run/node-reset.lock"

# --- What node-reset leaves there itself is reused ------------------------------------------------
new_root stale
echo 4242 > "$root/run/node-reset.lock"
nr --root "$root" --yes run > /dev/null 2> "$WORK/stale.err"; rc=$?
assert "stale: a lock file holding an old PID is taken (the run goes on)" test $rc -ne 3
assert "stale: the old PID is replaced" test "$(cat "$root/run/node-reset.lock")" != 4242
assert "stale: the run did its work" test ! -e "$root/etc/kubernetes/admin.conf"
assert "stale: the PV's data kept every byte" test "$(sha256sum < "$root/var/openebs/pvc-1/data")" = "$pv_sum"

new_root fresh
rmdir "$root/run"
nr --root "$root" --yes run > /dev/null 2> "$WORK/fresh.err"; rc=$?
assert "fresh: no run/ at all: it is made and the run goes on" test $rc -ne 3 -a -f "$root/run/node-reset.lock"
finish
