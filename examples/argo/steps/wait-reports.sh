#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cluster-delete step (nodes that reset themselves): wait, bounded, until every node posted its final
# cluster-delete step (nodes that reset themselves): wait, bounded, until every node posted its
# final report to REPORT_URL/NODE, reading each back from the status receiver (GET REPORT_URL/NODE
# answers the last body posted there, as posted; 404 while there is none). node-reset's body begins
# {"status": "deleted"} (clean) or {"status": "failed"}; {"status": "deleting"} is a run that has
# not ended. In: NODES (one a line), REPORT_URL, REPORT_WAIT_SECONDS (the step's deadline: the wait
# ends 30 s before it). Fails naming every node whose run failed and, at the end of the wait, every
# node that posted no final report; the verdict is also the container's termination message.
set -eu

case $REPORT_URL in
http://?* | https://?*) ;;
*) echo "wait-reports: the report URL '$REPORT_URL' is not an http(s) URL" >&2 && exit 2 ;;
esac

status_of() { # NODE: the status of the last body posted for NODE, or nothing
        curl -fsS --max-time 10 "$REPORT_URL/$1" 2>/dev/null | head -n 1 |
                sed -n 's/^[[:space:]]*{[[:space:]]*"status"[[:space:]]*:[[:space:]]*"\([a-z]*\)".*/\1/p'
}

deadline=$(($(date +%s) + REPORT_WAIT_SECONDS - 30))
while :; do
        waiting='' failed='' done=0
        for node in $NODES; do
                case $(status_of "$node") in
                deleted) done=$((done + 1)) ;;
                failed) failed="$failed${failed:+, }$node (failed)" ;;
                *) waiting="$waiting${waiting:+, }$node" ;;
                esac
        done
        [ -n "$waiting" ] || break
        if [ "$(date +%s)" -ge "$deadline" ]; then
                failed="$failed${failed:+, }$(echo "$waiting" | sed 's/, / (no final report), /g') (no final report)"
                break
        fi
        echo "wait-reports: $done clean, waiting for: $waiting" >&2
        sleep 5
done
if [ -n "$failed" ]; then
        msg="not clean: $failed"
        echo "wait-reports: $msg" >&2
        printf '%s\n' "$msg" >/dev/termination-log 2>/dev/null || true
        exit 1
fi
echo "wait-reports: every node posted its final report, clean ($done)"
