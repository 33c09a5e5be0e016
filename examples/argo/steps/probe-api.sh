#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cluster-delete step: ask the cluster's API server once, with a short timeout, whether it answers.
# Prints "up" (it answered) or "down" (no connection: refused, unreachable, no such host, timed
# out): the workflow deletes the cluster's apps only when it is up. An API server that answers but
# refuses the request (expired credentials, forbidden, a certificate that does not match) is
# neither: the step fails, and nothing is deleted or reset, rather than treating an error as a
# cluster that is gone. In: KUBECONFIG, PROBE_TIMEOUT (kubectl's --request-timeout).
set -eu

if out=$(kubectl --request-timeout="$PROBE_TIMEOUT" get namespace kube-system -o name 2>&1); then
        echo "probe-api: the API server answers: $out" >&2
        echo up
        exit 0
fi
echo "probe-api: $out" >&2
case $out in
*x509:* | *certificate*)
        echo "probe-api: the API server's certificate does not match the kubeconfig: not deleting anything" >&2
        exit 1
        ;;
*"Unable to connect to the server"* | *"was refused"* | *"connection refused"* | *"no such host"* | \
        *"no route to host"* | *"network is unreachable"* | *"i/o timeout"* | *"Client.Timeout"* | \
        *"context deadline exceeded"* | *"TLS handshake timeout"* | *"connection reset by peer"*)
        echo "probe-api: the API server does not answer: the cluster's apps cannot be deleted, the nodes will be reset" >&2
        echo down
        exit 0
        ;;
esac
echo "probe-api: the API server answered with an error: not deleting anything" >&2
exit 1
