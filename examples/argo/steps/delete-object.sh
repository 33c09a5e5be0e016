#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cluster-delete step: delete one object of the cluster without waiting on kubectl, then wait,
# cluster-delete step: delete one object of the cluster without waiting on kubectl, then wait,
# bounded, until the API server says it is gone. In: OBJECT (KIND/NAME, or NAMESPACE/KIND/NAME),
# WAIT_SECONDS (the step's deadline: the wait ends 30 s before it), KUBECONFIG. Gone (NotFound) is
# done, also when it was gone before: a workflow submitted again passes the objects the last one
# deleted. An error of the API server (anything but NotFound) is asked again, 2 s apart, and fails
# the step after ERRORS_MAX in a row; an object still there at the end of the wait fails it too,
# saying so. Never is an error taken for "deleted".
set -eu

ERRORS_MAX=5

fail() {
        echo "delete-object: $OBJECT: $*" >&2
        exit 1
}

case $OBJECT in
*/*/*/*) fail "not KIND/NAME or NAMESPACE/KIND/NAME" ;;
*/*/*)
        namespace=${OBJECT%%/*}
        ref=${OBJECT#*/}
        ;;
*/*)
        namespace=
        ref=$OBJECT
        ;;
*) fail "not KIND/NAME or NAMESPACE/KIND/NAME" ;;
esac
kind=${ref%/*}
name=${ref#*/}
if [ -z "$kind" ] || [ -z "$name" ]; then
        fail "not KIND/NAME or NAMESPACE/KIND/NAME"
fi

kc() {
        if [ -n "$namespace" ]; then
                kubectl --request-timeout=15s --namespace "$namespace" "$@"
        else
                kubectl --request-timeout=15s "$@"
        fi
}

deadline=$(($(date +%s) + WAIT_SECONDS - 30))
errors=0
asked=no
while :; do
        if [ $asked = no ]; then
                # --ignore-not-found: an object already gone is no error; --wait=false: the wait is ours
                if out=$(kc delete "$kind" "$name" --wait=false --ignore-not-found 2>&1); then
                        asked=yes
                        errors=0
                        echo "delete-object: $OBJECT: delete asked${out:+: $out}" >&2
                else
                        errors=$((errors + 1))
                        echo "delete-object: $OBJECT: delete: $out" >&2
                fi
        fi
        if [ $asked = yes ]; then
                # exit 0 with nothing printed: NotFound; exit 0 with the name: still there; else an error
                if out=$(kc get "$kind" "$name" --ignore-not-found -o name 2>&1); then
                        errors=0
                        if [ -z "$out" ]; then
                                echo "delete-object: $OBJECT: gone"
                                exit 0
                        fi
                else
                        errors=$((errors + 1))
                        echo "delete-object: $OBJECT: get: $out" >&2
                fi
        fi
        [ $errors -lt $ERRORS_MAX ] || fail "the API server answered $errors times in a row with an error; last: $out"
        [ "$(date +%s)" -lt "$deadline" ] || fail "still there after $((WAIT_SECONDS - 30))s"
        sleep 2
done
