#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cluster-delete step: POST the cluster's status to STATUS_URL as one JSON object,
# {"status": STATUS, "cluster": CLUSTER, "workflow": WORKFLOW[, "failures": FAILURES]}.
# FAILURES is Argo's workflow.failures (a JSON list, or "null"/empty when nothing failed), sent
# as it is. A status the receiver does not take (after curl's retries) fails the step.
set -eu

fail() {
        echo "post-status: $*" >&2
        exit 1
}

name_ok() { # a Kubernetes object name: nothing a JSON string would have to escape
        case $1 in
        '' | *[!A-Za-z0-9._-]*) return 1 ;;
        esac
}

case $STATUS in
deleting | deleted | fail) ;;
*) fail "unknown status '$STATUS'" ;;
esac
name_ok "$CLUSTER" || fail "the cluster name '$CLUSTER' is not a Kubernetes name"
name_ok "$WORKFLOW" || fail "the workflow name '$WORKFLOW' is not a Kubernetes name"
case $STATUS_URL in
http://?* | https://?*) ;;
*) fail "the status URL '$STATUS_URL' is not an http(s) URL" ;;
esac

body="{\"status\":\"$STATUS\",\"cluster\":\"$CLUSTER\",\"workflow\":\"$WORKFLOW\""
if [ "$STATUS" = fail ]; then
        case ${FAILURES:-} in
        '' | null) failures='[]' ;;
        '['*']') failures=$FAILURES ;;
        *) fail "the failures are not a JSON list: $FAILURES" ;;
        esac
        body="$body,\"failures\":$failures"
fi
body="$body}"

printf '%s\n' "$body" >&2
printf '%s' "$body" | curl -fsS --retry 3 --retry-delay 2 --max-time 10 -X POST \
        -H 'Content-Type: application/json' --data-binary @- "$STATUS_URL" >/dev/null ||
        fail "the status receiver did not take '$STATUS' (curl exit $?)"
