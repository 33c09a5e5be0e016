#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cluster-delete step: after the workloads and their claims are deleted, wait, bounded, until every
# volume they held that is to be deleted (reclaim policy Delete) is gone: the CSI driver deletes the
# disk behind it, so it must still run until then, and it is deleted after this step. A volume
# whose claim still exists is someone else's and is not waited for; one with reclaim policy Retain
# is kept by design. In: WAIT_SECONDS (the step's deadline: the wait ends 30 s before it),
# KUBECONFIG. Fails at the end of the wait naming what is left,
# and after ERRORS_MAX API errors in a row.
set -eu

ERRORS_MAX=5

fail() {
        echo "wait-volumes: $*" >&2
        exit 1
}

kc() { kubectl --request-timeout=15s "$@"; }

# pending: the volumes being reclaimed, one a line: NAME PHASE CLAIM
pending() {
        claims=$(kc get persistentvolumeclaims --all-namespaces \
                -o 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}') || return 1
        volumes=$(kc get persistentvolumes -o 'jsonpath={range .items[*]}{.metadata.name} {.spec.persistentVolumeReclaimPolicy} {.status.phase} {.spec.claimRef.namespace}/{.spec.claimRef.name}{"\n"}{end}') || return 1
        printf '%s\n' "$volumes" | while read -r pv policy phase claim; do
                if [ -z "$pv" ] || [ "$policy" != Delete ]; then
                        continue
                fi
                case $phase in
                Released | Failed) echo "$pv $phase $claim" ;;
                *)
                        # Bound to a claim that is gone: the controller has not seen it yet
                        [ "$claim" = / ] || printf '%s\n' "$claims" | grep -qxF "$claim" || echo "$pv $phase $claim"
                        ;;
                esac
        done
}

deadline=$(($(date +%s) + WAIT_SECONDS - 30))
errors=0
left=
while :; do
        if left=$(pending); then
                errors=0
                if [ -z "$left" ]; then
                        echo "wait-volumes: no volume of a deleted claim is left"
                        exit 0
                fi
                echo "wait-volumes: being reclaimed: $(printf '%s\n' "$left" | tr '\n' ';')" >&2
        else
                errors=$((errors + 1))
        fi
        [ $errors -lt $ERRORS_MAX ] || fail "the API server answered $errors times in a row with an error"
        [ "$(date +%s)" -lt "$deadline" ] ||
                fail "still there after $((WAIT_SECONDS - 30))s (the CSI driver did not delete them): $(printf '%s\n' "$left" | tr '\n' ';')"
        sleep 2
done
