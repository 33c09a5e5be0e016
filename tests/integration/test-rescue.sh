#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The rescue shell, as a person sees it: node-reset runs in tmux, the test reads the screen and
# types answers (yes / skip / quit per phase with --step; "yes" to confirm a whole run), then checks
# that the node's state matches what the screen said.
. "$(dirname "$0")/lib.sh"
require_cmd tmux
in_private_ns "$@"
. "$TOP/tests/integration/fixtures/node-tree.sh"

root=$WORK/node
mkdir -p "$root" "$WORK/disk"
build_node_tree "$root" "$WORK/disk"
sock=
n_sessions=0
screen() { tmux -S "$sock" capture-pane -p -J -S -200 -t rescue 2>&1; }
trap 'for s in "$WORK"/tmux.*.sock; do tmux -S "$s" kill-server > /dev/null 2>&1; done; cd /; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT

# Wait until the screen shows a line matching the pattern (or 20 s pass).
wait_for() {
        for _ in $(seq 200); do
                screen | grep -qE "$1" && return 0
                sleep 0.1
        done
        echo "--- screen, waiting for: $1"; screen; return 1
}

start() { # start COMMAND-LINE: in a fresh 200x50 terminal of its own, exit status printed at the end
        [ -n "$sock" ] && tmux -S "$sock" kill-server > /dev/null 2>&1
        n_sessions=$((n_sessions + 1))
        sock=$WORK/tmux.$n_sessions.sock
        tmux -S "$sock" new-session -d -s rescue -x 200 -y 50 \
                "env TERM=xterm NO_COLOR=1 $1; echo \"EXIT=\$?\"; sleep 600"
}

# Answer each per-phase question: the phase named in the last question decides the answer.
answer_phases() { # answer_phases "mounts=yes files=skip ..." ; unlisted phases get "yes"
        local asked=0 phase ans
        while [ $asked -lt 12 ]; do
                for _ in $(seq 200); do
                        screen | grep -qE 'EXIT=|Run it\? \[yes/skip/quit\] $' && break
                        sleep 0.1
                done
                screen | grep -q 'EXIT=' && return 0
                phase=$(screen | grep -oE 'phase [a-z-]+: [0-9]+ actions' | tail -n 1 | awk '{print $2}' | tr -d :)
                ans=yes
                for kv in $1; do [ "${kv%%=*}" = "$phase" ] && ans=${kv#*=}; done
                echo "  screen asks about '$phase': typing $ans"
                tmux -S "$sock" send-keys -t rescue "$ans" Enter
                asked=$((asked + 1))
                # the question is answered once the next line appears
                sleep 0.3
        done
}

assert "the fixture has mounts beneath the node" test -n "$(findmnt -rn -o TARGET | grep -F "$root/")"

# 1. --step: run the mounts phase, skip the files phase.
start "$NODE_RESET --root $root --step run"
assert "the plan is shown before the first question" wait_for 'actions, [0-9]+ with something to do'
answer_phases "mounts=yes files=skip"
wait_for 'EXIT=' > /dev/null
screen > "$WORK/screen1.txt"
assert "the screen asked about the mounts phase" grep -q 'phase mounts:' "$WORK/screen1.txt"
assert "the screen asked about the files phase" grep -q 'phase files:' "$WORK/screen1.txt"
assert "the mounts phase reported its progress line" grep -qE '^mounts: [0-9]+ changed' "$WORK/screen1.txt"
assert "the report shows the files phase skipped by the operator" grep -q 'the operator skipped this phase' "$WORK/screen1.txt"
assert "the residue is listed" grep -q 'residue:' "$WORK/screen1.txt"
assert "exit 1: residue remains" grep -q 'EXIT=1' "$WORK/screen1.txt"
assert "state matches: the PV is unmounted" test -z "$(findmnt -rn -o TARGET | grep -F "$root/")"
assert "state matches: files were not touched" test -e "$root/etc/kubernetes/admin.conf"

# 2. --step, quit at the first question: nothing changes.
start "$NODE_RESET --root $root --step run"
wait_for 'Run it\? \[yes/skip/quit\] $' > /dev/null
tmux -S "$sock" send-keys -t rescue "maybe" Enter
assert "an unclear answer is asked again" wait_for 'Please answer yes, skip or quit'
tmux -S "$sock" send-keys -t rescue "quit" Enter
wait_for 'EXIT=' > /dev/null
screen > "$WORK/screen2.txt"
assert "quitting is reported on every later action" grep -q 'the operator quit before this phase' "$WORK/screen2.txt"
assert "state matches after quit: files still there" test -e "$root/etc/kubernetes/admin.conf"

# 3. A whole run confirmed with "yes"; then the screen says the node is clean.
start "$NODE_RESET --root $root run"
assert "the confirmation prompt appears" wait_for "Type 'yes' to reset this node: $"
tmux -S "$sock" send-keys -t rescue "yes" Enter
wait_for 'EXIT=' > /dev/null
screen > "$WORK/screen3.txt"
assert "the screen ends with a clean node" grep -q 'residue: none, the node is clean' "$WORK/screen3.txt"
assert "exit 0 after a confirmed run" grep -q 'EXIT=0' "$WORK/screen3.txt"
# The tree is a kubeadm node: its detected profile removes the kubeconfigs and empties pki.
assert "state matches: kubeadm's files are gone" test ! -e "$root/etc/kubernetes/admin.conf" -a -z "$(ls -A "$root/etc/kubernetes/pki")"
assert "state matches: host files kept" test -s "$root/etc/hostname"

# 4. Anything but "yes" refuses, and nothing is changed.
mkdir -p "$root/etc/kubernetes" && echo x > "$root/etc/kubernetes/admin.conf"
start "$NODE_RESET --root $root run"
wait_for "Type 'yes' to reset this node: $" > /dev/null
tmux -S "$sock" send-keys -t rescue "y" Enter
wait_for 'EXIT=' > /dev/null
screen > "$WORK/screen4.txt"
assert "a bare 'y' does not confirm: exit 3" grep -q 'EXIT=3' "$WORK/screen4.txt"
assert "not confirmed: nothing changed" test -e "$root/etc/kubernetes/admin.conf"

finish
