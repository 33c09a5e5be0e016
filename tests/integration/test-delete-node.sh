#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# --delete-node against a loopback HTTPS stand-in for the API server (tests/integration/https-server.py),
# in private mount and network namespaces: with admin.conf the Node object is deleted (DELETE, then
# "no Node object" on a rerun); with only the kubelet's credentials, whose DELETE the node authorizer
# refuses, its Ready condition becomes Unknown through a strategic merge patch of its status; the
# node's name comes from the kubelet's certificate, not the host name; an API server that does not
# answer is said and the run goes on (exit 0); without --delete-node nothing is asked. An API server
# that stops answering (closes without a reply, or never replies) between the plan and the act is a
# failed row, never "unchanged"; verify and the rejoin verdict then say the Node may still be there
# (unknown) or is still Ready (residue, not rejoinable).
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
# A host name that is not the node's, set in this test's own UTS namespace (in_private_ns), never
# the machine's: the node name must come from the kubelet's certificate.
[ "$(readlink /proc/self/ns/uts)" != "$(readlink /proc/1/ns/uts)" ] ||
        { echo "FAIL: no private UTS namespace: the test would rename the machine"; exit 1; }
hostname not-the-node-name || { echo "FAIL: cannot set the host name in the test's UTS namespace"; exit 1; }
"$NODE_RESET" --root "$WORK/w" --phases node-object --output=json plan > "$WORK/plan0.json"; rc=$?
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
# --- An API server that stops answering: failed, never "unchanged"; verify and the verdict see it ---
# A second server with its own state: worker-1 is Ready there. RECORD_DIR/silence names the
# connections (counted from its writing) that get no answer.
rec2=$WORK/records2
mkdir -p "$rec2"
python3 "$SERVER" serve 6444 "$pki/apiserver.crt" "$pki/apiserver.key" "$pki/ca.crt" "$rec2" worker-1 \
        2> "$WORK/server2.log" &
server2=$!
trap 'kill "$server" "$server2" 2>/dev/null; wait; cd /; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT
for _ in $(seq 100); do [ -e "$rec2/ready-6444" ] && break; sleep 0.1; done
[ -e "$rec2/ready-6444" ] || { echo "FAIL: the second test server did not start"; cat "$WORK/server2.log"; exit 1; }
silence() { echo "$*" > "$rec2/silence.tmp" && mv "$rec2/silence.tmp" "$rec2/silence"; }
row() { "$REPORT" "$1" "$2" > /dev/null; }
node_row="actions(r, phase='node-object')[0]"
node_check="[c for c in r['rejoin']['checks'] if c['name'] == 'node-object'][0]"
nrv() { # root args...: the node-object phase, then verify and the rejoin verdict
        local root=$1; shift
        "$NODE_RESET" --root "$root" --phases node-object,verify --delete-node --yes --output=json "$@"
}
make_node "$WORK/quiet" https://127.0.0.1:6444 admin

# The plan's question is answered (Ready); the act's is closed unanswered, and so is every later one.
silence close 2 3 4 5 6
nrv "$WORK/quiet" run > "$WORK/quiet1.json" 2> "$WORK/quiet1.err"; rc=$?
assert "closed unanswered while acting: exit 1" [ "$rc" -eq 1 ]
assert "... the row failed, error unreachable, saying the Node is left" row "$WORK/quiet1.json" \
        "$node_row['result'] == 'failed' and $node_row['error'] == 'unreachable' and 'Node worker-1 left' in $node_row['message']"
assert "... verify: unknown, the Node's row unobserved" row "$WORK/quiet1.json" \
        "r['verdict'] == 'unknown' and [a['target'] for a in r['unobserved']] == ['Node/worker-1'] and r['residue'] == []"
assert "... the verdict: node-object unknown, saying the API server did not answer" row "$WORK/quiet1.json" \
        "$node_check['state'] == 'unknown' and 'did not answer' in $node_check['message']"
assert "... nothing was deleted" [ -z "$(ls "$rec2"/*.json 2>/dev/null)" ]

# The act's question never gets a reply: the call's own bound (10 s) ends it, a failure.
silence hang 2
t0=$(date +%s)
"$NODE_RESET" --root "$WORK/quiet" --phases node-object --delete-node --yes --output=json run > "$WORK/quiet2.json"; rc=$?
t1=$(date +%s)
assert "never replies while acting: exit 1, within the call's bound" [ "$rc" -eq 1 -a $((t1 - t0)) -lt 30 ]
assert "... the row failed, error unreachable" row "$WORK/quiet2.json" \
        "$node_row['result'] == 'failed' and $node_row['error'] == 'unreachable'"

# The kubelet's credentials: the PATCH is closed unanswered, then the server answers again: verify
# sees the Node still Ready (residue, through the row's check) and the verdict says join refuses it.
make_node "$WORK/quiet-w" https://127.0.0.1:6444
silence close 3
nrv "$WORK/quiet-w" run > "$WORK/quiet3.json" 2> "$WORK/quiet3.err"; rc=$?
assert "PATCH unanswered: exit 1, the row failed (unreachable)" row "$WORK/quiet3.json" \
        "r['exit_status'] == 1 and $node_row['result'] == 'failed' and $node_row['error'] == 'unreachable'"
[ "$rc" -eq 1 ] || fail "PATCH unanswered: exit $rc, not 1"
assert "... verify: residue, the Node still Ready" row "$WORK/quiet3.json" \
        "r['verdict'] == 'residue' and [a['target'] for a in r['residue']] == ['Node/worker-1'] and 'is Ready' in r['residue'][0]['message']"
assert "... not rejoinable: node-object failed" row "$WORK/quiet3.json" \
        "r['rejoin']['rejoinable'] is False and $node_check['state'] == 'failed'"
assert "... and the log says why" grep -q "Not rejoinable: node-object: a Node of this name is Ready" "$WORK/quiet3.err"

# Down from the start (nothing listens): the plan skips the row, verify cannot call the node clean.
make_node "$WORK/down" https://127.0.0.1:6445 admin
nrv "$WORK/down" run > "$WORK/down.json"; rc=$?
assert "down with verify: exit 1, skipped (unreachable), verdict unknown" row "$WORK/down.json" \
        "r['exit_status'] == 1 and $node_row['result'] == 'skipped' and $node_row['error'] == 'unreachable' and r['verdict'] == 'unknown'"
[ "$rc" -eq 1 ] || fail "down with verify: exit $rc, not 1"
assert "... the verdict: node-object unknown" row "$WORK/down.json" "$node_check['state'] == 'unknown'"
rm -f "$rec2/silence"
schema_valid "$WORK"/*.json >/dev/null || fail "a report does not match docs/report.schema.json"
finish
