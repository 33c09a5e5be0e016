#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cluster-delete step: the verdict. Asks every node, over SSH, for node-reset's own status (the
# residue observed again, whatever the reset steps said) and fails naming every node that is not
# clean: "residue" (node-reset status exit 1), "unreachable" (SSH failed, 3 attempts), or what else
# its status said. In: NODES (one a line), SSH_USER, SSH_PORT, SSH_CONNECT_TIMEOUT, SSH_DIR. The
# verdict is also the container's termination message: Argo's workflow.failures carries it to
# the exit handler.
set -eu

PARALLEL=10
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

status_of() { # NODE: writes $dir/NODE: "clean", "residue", "unreachable" or "exit N"
        attempt=1
        while :; do
                rc=0
                ssh -i "$SSH_DIR/ssh-privatekey" -o IdentitiesOnly=yes -o BatchMode=yes \
                        -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$SSH_DIR/known_hosts" \
                        -o GlobalKnownHostsFile=/dev/null -o ConnectTimeout="$SSH_CONNECT_TIMEOUT" \
                        -p "$SSH_PORT" -l "$SSH_USER" -- "$1" node-reset --output=json status \
                        >"$dir/$1.json" 2>"$dir/$1.err" || rc=$?
                if [ $rc -ne 255 ] || [ $attempt -ge 3 ]; then
                        break
                fi
                attempt=$((attempt + 1))
                sleep 2
        done
        case $rc in
        0) echo clean ;;
        1) echo residue ;;
        255) echo unreachable ;;
        *) echo "exit $rc" ;;
        esac >"$dir/$1"
}

n=0
for node in $NODES; do
        case $node in
        [A-Za-z0-9]*) ;;
        *) echo "summary: '$node' is not a node name or address" >&2 && exit 2 ;;
        esac
        status_of "$node" &
        n=$((n + 1))
        [ $((n % PARALLEL)) -ne 0 ] || wait
done
wait

bad=
for node in $NODES; do
        verdict=$(cat "$dir/$node")
        echo "summary: $node: $verdict" >&2
        [ "$verdict" = clean ] || bad="$bad${bad:+, }$node ($verdict)"
done
if [ -n "$bad" ]; then
        msg="not clean: $bad"
        echo "summary: $msg" >&2
        printf '%s\n' "$msg" >/dev/termination-log 2>/dev/null || true
        exit 1
fi
echo "summary: all $n nodes clean"
