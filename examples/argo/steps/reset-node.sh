#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cluster-delete step: reset one node with node-reset over SSH. In: NODE (as ssh reaches it),
# SSH_USER, SSH_PORT, SSH_CONNECT_TIMEOUT, REPORT_URL (node-reset POSTs its start and its report to
# REPORT_URL/NODE), RESET_TIMEOUT (the step's deadline; node-reset's --timeout is 60 s less, so
# that it ends and reports first); the key (ssh-privatekey) and the nodes'
# host keys (known_hosts) in SSH_DIR. The JSON report is this step's output and log. The exit
# status is node-reset's own (0 clean, 1 not clean, 3 refused: see node-reset(8)), or 255 when SSH
# itself failed (no connection, a host key that does not match): the only one the workflow retries.
set -eu

case $NODE in
[A-Za-z0-9]*) ;;
*) echo "reset-node: '$NODE' is not a node name or address" >&2 && exit 2 ;;
esac
case $REPORT_URL in
http://?* | https://?*) ;;
*) echo "reset-node: the report URL '$REPORT_URL' is not an http(s) URL" >&2 && exit 2 ;;
esac

# The remote command is one string the node's shell splits: each word in single quotes.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

exec ssh -i "$SSH_DIR/ssh-privatekey" -o IdentitiesOnly=yes -o BatchMode=yes \
        -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$SSH_DIR/known_hosts" -o GlobalKnownHostsFile=/dev/null \
        -o ConnectTimeout="$SSH_CONNECT_TIMEOUT" -o ServerAliveInterval=15 -o ServerAliveCountMax=4 \
        -p "$SSH_PORT" -l "$SSH_USER" -- "$NODE" \
        node-reset --yes --output=json --timeout="$((RESET_TIMEOUT - 60))" \
        --report-url="$(quote "$REPORT_URL/$NODE")" run
