#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# --delete-node against a loopback HTTPS stand-in for the API server (tests/integration/https-server.py),
# in private mount and network namespaces: with admin.conf the Node object is deleted (DELETE, then
# "no Node object" on a rerun); with only the kubelet's credentials, whose DELETE the node authorizer
# refuses, its Ready condition becomes Unknown through a strategic merge patch of its status; the
# node's name comes from the kubelet's certificate, not the host name; an API server that does not
# answer is said and the run goes on (exit 0); without --delete-node nothing is asked.
. "$(dirname "$0")/lib.sh"
require_cmd openssl python3 unshare
in_private_ns -n "$@"
REPORT="$TOP/tests/integration/report.py"
SERVER="$TOP/tests/integration/https-server.py"
jq_() { "$REPORT" "$@" >/dev/null; }

pki=$WORK/pki
mkdir -p "$pki"
. "$TOP/tests/integration/fixtures/pki.sh"
server_ext="subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth"
mkca ca kubernetes &&
mkleaf apiserver ca "/CN=kube-apiserver" "$server_ext" &&
mkleaf worker1 ca "/O=system:nodes/CN=system:node:worker-1" "extendedKeyUsage=clientAuth" &&
mkleaf admin ca "/O=system:masters/CN=kubernetes-admin" "extendedKeyUsage=clientAuth" ||
        { echo "FAIL: cannot make the test PKI with openssl"; exit 1; }

records=$WORK/records
mkdir -p "$records"
python3 "$SERVER" serve 6443 "$pki/apiserver.crt" "$pki/apiserver.key" "$pki/ca.crt" "$records" worker-1 cp-1 \
        2> "$WORK/server.log" &
server=$!
trap 'kill "$server" 2>/dev/null; wait; cd /; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT
for _ in $(seq 100); do [ -e "$records/ready-6443" ] && break; sleep 0.1; done
[ -e "$records/ready-6443" ] || { echo "FAIL: the test server did not start"; cat "$WORK/server.log"; exit 1; }

kubeconfig() { kubeconfig_pem "$@"; } # server client-name
make_node() { # root server [admin]
        mkdir -p "$1/etc/kubernetes"
        kubeconfig "$2" worker1 > "$1/etc/kubernetes/kubelet.conf"
        [ -z "${3:-}" ] || kubeconfig "$2" admin > "$1/etc/kubernetes/admin.conf"
}
nr() { # root args...: the node-object phase alone
        local root=$1; shift
        "$NODE_RESET" --root "$root" --phases node-object --yes --output=json "$@"
}
requests() { ls "$records"/*.json 2>/dev/null | wc -l; }

# --- The kubelet's own credentials: Ready=Unknown, never a DELETE --------------------------------
make_node "$WORK/w" https://127.0.0.1:6443
hostname not-the-node-name 2>/dev/null || true
nr "$WORK/w" plan > "$WORK/plan0.json"; rc=$?
assert "plan without --delete-node: exit 0" [ "$rc" -eq 0 ]
assert "plan without --delete-node: no node-object row" jq_ "$WORK/plan0.json" "len(actions(r, phase='node-object')) == 0"
nr "$WORK/w" --delete-node run > "$WORK/w1.json" 2> "$WORK/w1.err"; rc=$?
assert "kubelet credentials: run exits 0" [ "$rc" -eq 0 ]
assert "kubelet credentials: the Node's Ready condition was set (changed)" jq_ "$WORK/w1.json" \
        "[a['result'] for a in actions(r, phase='node-object')] == ['changed'] and actions(r, phase='node-object')[0]['target'] == 'Node/worker-1'"
last=$(ls "$records"/*.json | tail -1)
assert "kubelet credentials: one PATCH of /status, a strategic merge patch, Ready Unknown" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
b = json.loads(r["body"])
c = b["status"]["conditions"]
assert r["method"] == "PATCH" and r["path"] == "/api/v1/nodes/worker-1/status", r
assert r["headers"]["Content-Type"] == "application/strategic-merge-patch+json", r["headers"]
assert len(c) == 1 and c[0]["type"] == "Ready" and c[0]["status"] == "Unknown", c
' "$last"
assert "kubelet credentials: no DELETE was sent" bash -c "! grep -l '\"method\": \"DELETE\"' $records/*.json"
n=$(requests)
nr "$WORK/w" --delete-node run > "$WORK/w2.json"; rc=$?
assert "kubelet credentials, rerun: exit 0, unchanged (the Node is not Ready)" jq_ "$WORK/w2.json" \
        "[a['result'] for a in actions(r, phase='node-object')] == ['unchanged'] and 'not Ready' in actions(r, phase='node-object')[0]['detail']"
assert "kubelet credentials, rerun: nothing written" [ "$(requests)" -eq "$n" ]

# --- admin.conf: the Node object is deleted ------------------------------------------------------
make_node "$WORK/cp" https://127.0.0.1:6443 admin
nr "$WORK/cp" --delete-node run > "$WORK/cp1.json"; rc=$?
assert "admin.conf: run exits 0" [ "$rc" -eq 0 ]
assert "admin.conf: the Node object was deleted (changed)" jq_ "$WORK/cp1.json" \
        "[a['result'] for a in actions(r, phase='node-object')] == ['changed'] and 'deleted Node worker-1' in actions(r, phase='node-object')[0]['message']"
assert "admin.conf: the DELETE named the node of the kubelet's certificate" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["method"] == "DELETE" and r["path"] == "/api/v1/nodes/worker-1", r
' "$(ls "$records"/*.json | tail -1)"
nr "$WORK/cp" --delete-node run > "$WORK/cp2.json"; rc=$?
assert "admin.conf, rerun: exit 0, unchanged, no Node object" jq_ "$WORK/cp2.json" \
        "[a['result'] for a in actions(r, phase='node-object')] == ['unchanged']"

# --- --kubeconfig names the credentials; --node-name the node -----------------------------------
kubeconfig https://127.0.0.1:6443 admin > "$WORK/operator.conf"
nr "$WORK/w" --delete-node --kubeconfig "$WORK/operator.conf" --node-name cp-1 run > "$WORK/op.json"; rc=$?
assert "--kubeconfig + --node-name: cp-1 deleted with the operator's credentials" jq_ "$WORK/op.json" \
        "[a['result'] for a in actions(r, phase='node-object')] == ['changed'] and actions(r, phase='node-object')[0]['target'] == 'Node/cp-1'"

# --- No answer: said, and the run goes on --------------------------------------------------------
make_node "$WORK/gone" https://127.0.0.1:6445
nr "$WORK/gone" --delete-node run > "$WORK/gone.json"; rc=$?
assert "API server down: run exits 0" [ "$rc" -eq 0 ]
assert "API server down: the row is skipped and says the API server did not answer" jq_ "$WORK/gone.json" \
        "[a['result'] for a in actions(r, phase='node-object')] == ['skipped'] and 'did not answer' in actions(r, phase='node-object')[0]['message']"
mkdir -p "$WORK/none"
nr "$WORK/none" --delete-node run > "$WORK/none.json"; rc=$?
assert "no kubeconfig at all: exit 0, skipped, says why" jq_ "$WORK/none.json" \
        "[a['result'] for a in actions(r, phase='node-object')] == ['skipped'] and 'cannot be asked' in actions(r, phase='node-object')[0]['message']"
schema_valid "$WORK"/*.json >/dev/null || fail "a report does not match docs/report.schema.json"
finish
