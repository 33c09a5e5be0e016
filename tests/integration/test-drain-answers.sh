#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What answers a drain when kube-apiserver 1.20 does not (tests/integration/kube-impostor.py, plain
# HTTP on loopback in a private network namespace):
# - a dashboard's or default backend's HTML at the server URL (issue 39, 3: it read as a schedulable
#   Node, an empty PodList, a pod gone): the plan says the API does not answer, the run fails before
#   anything is evicted or reset, and the Node is never called absent, --delete-node included;
# - kube-apiserver 1.21's discovery (issue 39, 4: its policy group prefers policy/v1, its
#   pods/eviction takes only policy/v1beta1): the Eviction goes out as policy/v1beta1, as the
#   subresource says, and the pod is evicted.
. "$(dirname "$0")/lib.sh"
require_cmd python3 unshare
in_private_ns -n "$@"
kill_at_exit
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" > /dev/null; }

serve() { # MODE PORT
        "$TOP/tests/integration/kube-impostor.py" "$1" "$2" "$WORK/$1.log" &
        PIDS+=($!)
        for _ in $(seq 100); do grep -q ready "$WORK/$1.log" 2> /dev/null && break; sleep 0.05; done
        cat > "$WORK/$1.conf" <<-EOF
	apiVersion: v1
	kind: Config
	current-context: c
	contexts: [{name: c, context: {cluster: c, user: u}}]
	clusters: [{name: c, cluster: {server: 'http://127.0.0.1:$2'}}]
	users: [{name: u, user: {token: secret-token}}]
	EOF
}
R=$WORK/node
mkdir -p "$R/etc"
echo w1 > "$R/etc/hostname"
nr() { "$NODE_RESET" --root "$R" --kubeconfig "$WORK/$1.conf" --node-name w1 -o json "${@:2}"; }

# --- HTML at the server URL ------------------------------------------------------------------------
serve html 18080
nr html --phases drain,node-object --drain plan > "$WORK/html-plan.json"; rc=$?
assert "HTML: plan exits 0 (a plan changes nothing)" test $rc -eq 0
assert "HTML: the cordon row says the API does not answer as Kubernetes, and that the drain will fail" jq_ "$WORK/html-plan.json" \
        "[('not an answer of the Kubernetes API' in a['detail'] and 'text/html' in a['detail'] and 'will fail' in a['detail']) for a in actions(r, phase='drain')] == [True]"
assert "HTML: no pod row, no 'nothing to drain'" jq_ "$WORK/html-plan.json" \
        "not any('nothing' in a['detail'] for a in actions(r, phase='drain')) and not actions(r, kind='evict')"
assert "HTML: --delete-node does not call the Node absent: it is left to the operator, saying why" jq_ "$WORK/html-plan.json" \
        "[('not an answer of the Kubernetes API' in a['skip_reason'] and 'left to the operator' in a['skip_reason']) for a in actions(r, phase='node-object')] == [True]"
nr html --phases drain,node-object --drain --yes run > "$WORK/html-run.json"; rc=$?
assert "HTML: the run fails (exit 1)" test $rc -eq 1
assert "HTML: the cordon failed, the drain did not evict" jq_ "$WORK/html-run.json" \
        "[a['result'] for a in actions(r, phase='drain')] == ['failed'] and not actions(r, kind='evict')"
assert "HTML: nothing after the drain ran" jq_ "$WORK/html-run.json" \
        "all(a['result'] == 'skipped' for a in actions(r, phase='node-object'))"
assert "HTML: only GETs were sent: no PATCH, no Eviction, no DELETE" eval \
        '! grep -qE "^(PATCH|POST|DELETE)" "$WORK/html.log"'

# --- kube-apiserver 1.21's discovery ---------------------------------------------------------------
serve v121 18081
nr v121 --phases drain --drain --yes run > "$WORK/v121.json"; rc=$?
assert "1.21: exit 0" test $rc -eq 0
assert "1.21: the Eviction version is the pods/eviction subresource's, policy/v1beta1" grep -q "^GET /api/v1$" "$WORK/v121.log"
assert "1.21: the pod was evicted as policy/v1beta1 (the policy group's preferred v1 would be refused)" jq_ "$WORK/v121.json" \
        "[a['result'] + ' ' + a['message'].split(' Eviction')[0] for a in actions(r, kind='evict')] == ['changed evicted (policy/v1beta1']"
assert "1.21: one Eviction was asked, none refused" test "$(grep -c "^POST /api/v1/namespaces/default/pods/web-1/eviction$" "$WORK/v121.log")" -eq 1
schema_valid "$WORK"/html-plan.json "$WORK"/html-run.json "$WORK"/v121.json
assert "every report matches the schema" [ $? -eq 0 ]
finish
