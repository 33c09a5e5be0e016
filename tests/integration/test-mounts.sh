#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The mounts phase unmounts only what the plan saw (issue 15, hole 1). Between the plan and the
# "yes", a pod-writable directory on the way to a planned mount point is swapped for a symlink to a
# directory outside --root whose volumes/v is another tmpfs: that mount and its data must survive,
# and the action must fail with the reason. node-reset runs in tmux, as a person would run it, so
# the test gets the real window between plan and confirmation.
. "$(dirname "$0")/lib.sh"
require_cmd tmux
in_private_ns "$@"
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" >/dev/null; }   # jq_ FILE EXPR: true when EXPR holds

sock= n_runs=0
trap 'for s in "$WORK"/tmux.*.sock; do tmux -S "$s" kill-server > /dev/null 2>&1; done; cd /; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT
screen() { tmux -S "$sock" capture-pane -p -J -S -200 -t t 2>&1; }
wait_for() { # wait_for REGEX: until the screen shows it (20 s at most)
        for _ in $(seq 200); do
                screen | grep -qE "$1" && return 0
                sleep 0.1
        done
        echo "--- screen, waiting for: $1"; screen; return 1
}
# run_paused ROOT MANIFEST JSON HOOK: "run" without --yes; HOOK runs while it waits for "yes".
# Sets rc to the exit status (empty when the run never ended).
run_paused() {
        [ -n "$sock" ] && tmux -S "$sock" kill-server > /dev/null 2>&1
        n_runs=$((n_runs + 1))
        sock=$WORK/tmux.$n_runs.sock    # a fresh server each time: a dying one may still hold the old
        tmux -S "$sock" new-session -d -s t -x 200 -y 50 \
                "env TERM=xterm NO_COLOR=1 $NODE_RESET ${OPTS:-} --root $1 --manifest $2 --output=json run > $3; echo \"EXIT=\$?\"; sleep 600"
        rc=
        wait_for "Type 'yes' to reset this node: $" || return 1
        "$4"
        tmux -S "$sock" send-keys -t t "yes" Enter
        wait_for 'EXIT=[0-9]+' > /dev/null || return 1
        rc=$(screen | sed -n 's/.*EXIT=\([0-9]*\).*/\1/p' | tail -1)
}
mount_id() { findmnt -rn -o ID --mountpoint "$1" | tail -1; }

printf 'unmount /var/lib/kubelet/*\n' > "$WORK/m.conf"

# --- 1. A symlink swapped in on the way after the plan ---------------------------------------------
root=$WORK/node outside=$WORK/outside
mkdir -p "$root/var/lib/kubelet/pods/p1/volumes/v" "$outside/volumes/v"
mount -t tmpfs nr-planned "$root/var/lib/kubelet/pods/p1/volumes/v"
echo "planned" > "$root/var/lib/kubelet/pods/p1/volumes/v/f"
mount -t tmpfs nr-outside "$outside/volumes/v"
echo "precious data outside --root" > "$outside/volumes/v/data"
planned_id=$(mount_id "$root/var/lib/kubelet/pods/p1/volumes/v")
outside_id=$(mount_id "$outside/volumes/v")

swap_symlink() {
        mv "$root/var/lib/kubelet/pods/p1" "$root/var/lib/kubelet/pods/p1.old"
        ln -s "$outside" "$root/var/lib/kubelet/pods/p1"
}
run_paused "$root" "$WORK/m.conf" "$WORK/r1.json" swap_symlink
echo "  unmount said: $("$REPORT" "$WORK/r1.json" '[a["message"] for a in actions(r, kind="unmount")]')"
assert "symlink swap: exit status 1" test "$rc" = 1
assert "the mount outside --root is still mounted" mountpoint -q "$outside/volumes/v"
assert "it is the same mount (id $outside_id)" test "$(mount_id "$outside/volumes/v")" = "$outside_id"
assert "its data is intact" grep -q "precious data outside --root" "$outside/volumes/v/data"
assert "the unmount failed, naming the symlink" jq_ "$WORK/r1.json" \
        'any(a["result"] == "failed" and "changed since the plan" in a["message"] and "symlink" in a["message"] for a in actions(r, kind="unmount"))'
assert "the report does not say clean" jq_ "$WORK/r1.json" 'r["failed"] and r["residue"] != []'
assert "the planned mount (moved aside) was left alone" test "$(mount_id "$root/var/lib/kubelet/pods/p1.old/volumes/v")" = "$planned_id"

# --- 2. The planned mount replaced by another at the same place -----------------------------------
# Someone unmounted the planned tmpfs and moved another one there: the plan never saw that one, so
# it stays; the planned one is really gone, so the action is "already clean", and verify reports the
# newcomer as residue.
root=$WORK/node2
mkdir -p "$root/var/lib/kubelet/pods/p1/volumes/v" "$WORK/staging"
mount -t tmpfs nr-planned2 "$root/var/lib/kubelet/pods/p1/volumes/v"
mount -t tmpfs nr-newcomer "$WORK/staging"
echo "newcomer data" > "$WORK/staging/data"
swap_mount() {
        umount "$root/var/lib/kubelet/pods/p1/volumes/v"
        mount --move "$WORK/staging" "$root/var/lib/kubelet/pods/p1/volumes/v"
}
run_paused "$root" "$WORK/m.conf" "$WORK/r2.json" swap_mount
echo "  unmount said: $("$REPORT" "$WORK/r2.json" '[a["message"] for a in actions(r, kind="unmount")]')"
assert "replaced mount: exit status 1 (residue)" test "$rc" = 1
assert "the mount the plan never saw is still mounted" grep -q "newcomer data" "$root/var/lib/kubelet/pods/p1/volumes/v/data"
assert "the planned (gone) mount is reported already clean" jq_ "$WORK/r2.json" \
        'any(a["result"] == "unchanged" for a in actions(r, kind="unmount"))'
assert "the newcomer is residue" jq_ "$WORK/r2.json" 'any(x["target"].endswith("/volumes/v") for x in r["residue"])'

# --- 3. The same tree without interference: unmounted, clean --------------------------------------
root=$WORK/node3
mkdir -p "$root/var/lib/kubelet/pods/p1/volumes/v" "$root/var/lib/kubelet/pods/p1/volumes/file"
mount -t tmpfs nr-plain "$root/var/lib/kubelet/pods/p1/volumes/v"
mount -t tmpfs nr-stacked "$root/var/lib/kubelet/pods/p1/volumes/v"
touch "$root/f" "$root/var/lib/kubelet/pods/p1/volumes/file/x"
mount --bind "$root/f" "$root/var/lib/kubelet/pods/p1/volumes/file/x"
nothing() { :; }
run_paused "$root" "$WORK/m.conf" "$WORK/r3.json" nothing
assert "undisturbed: exit 0" test "$rc" = 0
assert "undisturbed: stacked and file mounts all unmounted" jq_ "$WORK/r3.json" \
        'len(actions(r, kind="unmount", result="changed")) == 3 and r["residue"] == []'
assert "undisturbed: nothing mounted beneath the root" test -z "$(findmnt -rn -o TARGET | grep -F "$root/")"

# --- 4. --lazy-unmount: a busy planned mount behind a swapped symlink is not detached ---------------
root=$WORK/node4 outside=$WORK/outside4
mkdir -p "$root/var/lib/kubelet/pods/p1/volumes/v" "$outside/volumes/v"
mount -t tmpfs nr-planned4 "$root/var/lib/kubelet/pods/p1/volumes/v"
mount -t tmpfs nr-outside4 "$outside/volumes/v"
echo "busy outside" > "$outside/volumes/v/data"
( exec 3<"$outside/volumes/v/data"; exec sleep 120 ) > /dev/null 2>&1 &
holder=$!
swap_symlink4() {
        mv "$root/var/lib/kubelet/pods/p1" "$root/var/lib/kubelet/pods/p1.old"
        ln -s "$outside" "$root/var/lib/kubelet/pods/p1"
}
OPTS=--lazy-unmount
run_paused "$root" "$WORK/m.conf" "$WORK/r4.json" swap_symlink4
assert "lazy: exit status 1" test "$rc" = 1
assert "lazy: the busy mount outside --root is not detached" mountpoint -q "$outside/volumes/v"
assert "lazy: the unmount failed, naming the symlink" jq_ "$WORK/r4.json" \
        'any(a["result"] == "failed" and "symlink" in a["message"] for a in actions(r, kind="unmount"))'
kill "$holder"; wait "$holder" 2>/dev/null
OPTS=

# --- 5. Named network namespaces: neither the directory nor the name followed when swapped ---------
# "netns cni-*" deletes /run/netns/cni-x (a lazy unmount and an unlink). A namespace bound outside
# /run/netns must survive /run/netns or the name itself becoming a symlink to it.
if touch "$WORK/probe-ns" && unshare --net="$WORK/probe-ns" true 2>/dev/null && umount "$WORK/probe-ns"; then
        printf 'netns cni-*\n' > "$WORK/n.conf"
        mkdir -p "$WORK/nroot" "$WORK/elsewhere"
        bound() { findmnt -rn -o FSTYPE --mountpoint "$1" | grep -q nsfs; }
        fresh_netns() {
                for m in /run/netns.old/cni-x /run/netns/cni-x "$WORK/elsewhere/cni-x"; do
                        umount -l "$m" 2>/dev/null
                done
                rm -rf /run/netns /run/netns.old
                mkdir -p /run/netns && touch /run/netns/cni-x && unshare --net=/run/netns/cni-x true
                touch "$WORK/elsewhere/cni-x" && unshare --net="$WORK/elsewhere/cni-x" true
        }
        swap_dir() { mv /run/netns /run/netns.old; ln -s "$WORK/elsewhere" /run/netns; }
        swap_name() { umount /run/netns/cni-x; rm /run/netns/cni-x; ln -s "$WORK/elsewhere/cni-x" /run/netns/cni-x; }
        OPTS=--phases=network
        for swap in swap_dir swap_name; do
                fresh_netns
                assert "$swap: fixture: two bound namespaces" eval 'bound /run/netns/cni-x && bound "$WORK/elsewhere/cni-x"'
                run_paused "$WORK/nroot" "$WORK/n.conf" "$WORK/n-$swap.json" $swap
                echo "  netns said: $("$REPORT" "$WORK/n-$swap.json" '[a["message"] for a in actions(r, kind="netns")]')"
                assert "$swap: exit status 1" test "$rc" = 1
                assert "$swap: the namespace bound outside /run/netns is still bound" bound "$WORK/elsewhere/cni-x"
                assert "$swap: the netns action failed, naming the symlink" jq_ "$WORK/n-$swap.json" \
                        'any(a["result"] == "failed" and "symlink" in a["message"] for a in actions(r, kind="netns"))'
        done
        OPTS=
else
        echo "SKIP (netns part): cannot bind a network namespace to a file here"
fi

# --- a busy mount names its holder, whatever holds it (issue 16) --------------------------------
# A process whose working directory, root directory or only memory mapping is on a mount keeps it
# as busy as an open file does: each failure names the PID and how it holds the mount.
hroot=$WORK/holders
hk=$hroot/var/lib/kubelet/pods/p
for how in cwd root map fd; do
        mkdir -p "$hk/$how"
        mount -t tmpfs "nr-hold-$how" "$hk/$how"
        echo "$how data" > "$hk/$how/data"
done
( cd "$hk/cwd" && exec sleep 120 ) > /dev/null 2>&1 &
h_cwd=$!
# chroot without chdir: the working directory stays outside, only the root is on the mount.
( cd / && exec python3 -c 'import os, sys, time; os.chroot(sys.argv[1]); time.sleep(120)' "$hk/root" ) &
h_root=$!
# The executable is on the mount: only its mapping holds it (exec leaves no fd open on it).
cp /bin/sleep "$hk/map/sleep"
( cd / && exec "$hk/map/sleep" 120 ) > /dev/null 2>&1 &
h_map=$!
( exec 3<"$hk/fd/data"; exec sleep 120 ) > /dev/null 2>&1 &
h_fd=$!
for _ in $(seq 100); do
        [ "$(readlink /proc/$h_cwd/cwd)" = "$hk/cwd" ] && [ "$(readlink /proc/$h_root/root)" = "$hk/root" ] &&
                grep -q "$hk/map/sleep" /proc/$h_map/maps && [ -e /proc/$h_fd/fd/3 ] && break
        sleep 0.05
done
printf 'unmount /var/lib/kubelet/*\n' > "$WORK/holders.conf"
"$NODE_RESET" --root "$hroot" --manifest "$WORK/holders.conf" --phases mounts --yes -o json run \
        > "$WORK/holders.json" 2> /dev/null; rc=$?
kill "$h_cwd" "$h_root" "$h_map" "$h_fd"; wait "$h_cwd" "$h_root" "$h_map" "$h_fd" 2> /dev/null
assert "holders: the run exits 1" test "$rc" = 1
for how in cwd root map fd; do
        pid=$(eval echo "\$h_$how")
        assert "holders: the $how-held mount failed busy, naming PID $pid ($how)" jq_ "$WORK/holders.json" \
                "any(a['target'].endswith('/p/$how') and a['result'] == 'failed' and a['error'] == 'EBUSY' and 'held by PID $pid ($how)' in a['message'] for a in actions(r, kind='unmount'))"
        assert "holders: the $how-held mount and its data stay" grep -q "$how data" "$hk/$how/data"
done

# --- 6. The files phase takes its target again (issue 22) -------------------------------------------
# The plan saw /etc/kubernetes as a plain directory. Between the plan and the "yes" an outside
# directory is bind-mounted over it: that is another tree, and "a mount point itself, so emptied"
# must not empty it. The same for a line whose target was not there when planned.
froot=$WORK/files-node fout=$WORK/files-outside
mkdir -p "$froot/etc/kubernetes/pki" "$fout/keep" "$froot/var/lib/cni"
echo "kubeadm's" > "$froot/etc/kubernetes/admin.conf"
echo "precious outside data" > "$fout/keep/data"
printf 'remove /etc/kubernetes\nremove /var/lib/calico\n' > "$WORK/files.conf"
bind_over() {
        mount --bind "$fout" "$froot/etc/kubernetes"
        mkdir -p "$froot/var/lib/calico" && mount --bind "$fout" "$froot/var/lib/calico"
}
OPTS=--phases=files
run_paused "$froot" "$WORK/files.conf" "$WORK/f6.json" bind_over
OPTS=
echo "  files said: $("$REPORT" "$WORK/f6.json" '[a["message"] for a in actions(r, phase="files")]')"
assert "files: exit status 1" test "$rc" = 1
assert "files: the directory mounted over the target after the plan keeps its data" \
        grep -q "precious outside data" "$fout/keep/data"
assert "files: the row failed, saying the mount is not the planned one" jq_ "$WORK/f6.json" \
        'any(a["target"] == "/etc/kubernetes" and a["result"] == "failed" and "than the plan saw" in a["message"] for a in actions(r, phase="files"))'
assert "files: a mount where the plan saw nothing is refused too" jq_ "$WORK/f6.json" \
        'any(a["target"] == "/var/lib/calico" and a["result"] == "failed" and "not there when planned" in a["message"] for a in actions(r, phase="files"))'
umount "$froot/etc/kubernetes" "$froot/var/lib/calico"
assert "files: the planned directory itself is untouched" grep -q "kubeadm's" "$froot/etc/kubernetes/admin.conf"

finish
