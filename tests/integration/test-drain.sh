#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# --drain against a real kube-apiserver 1.20 (its Eviction API and PodDisruptionBudget checks) with
# kube-controller-manager's disruption controller computing the budget, on an etcd 3.4, in private
# namespaces; no kubelet: the pods are API objects, made Running through their status, and the test
# plays the kubelet that ends a pod whose grace period has begun. On node w1: pods of two ReplicaSets
# (one with emptyDir data, one slow to end), one a PodDisruptionBudget (minAvailable 1) covers, a
# DaemonSet's pod, a mirror pod and a pod no controller manages; on w2 a pod that must not move.
# The plan lists every pod and changes nothing; without --drain-force the bare pod is refused and
# nothing is evicted (the node stays cordoned, the Node stays); with it, a 429 is retried until
# --drain-timeout and fails the drain; once a second ready replica makes the budget allow it, the
# eviction goes through, every evicted pod is gone, the DaemonSet's and the mirror pod are untouched
# and the Node is deleted at the end.
. "$(dirname "$0")/lib.sh"
require_cmd openssl python3 unshare curl
command -v etcd > /dev/null 2>&1 || skip "etcd is not installed (apt-get install etcd-server)"
in_private_ns -n "$@"
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" > /dev/null; }
KUBE_NEED_KCM=1 . "$TOP/tests/integration/fixtures/kube-api.sh"


etcd --name kube --data-dir "$WORK/etcd" --listen-client-urls http://127.0.0.1:2379 \
        --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
        > "$WORK/etcd.log" 2>&1 &
PIDS+=($!)
start_kube_apiserver "$WORK/apiserver.log" --etcd-servers=http://127.0.0.1:2379 ||
        { echo "FAIL: kube-apiserver"; exit 1; }
start_kube_controller_manager "$WORK/kcm.log"

# --- the cluster's objects --------------------------------------------------------------------------
node() { printf 'apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n---\n' "$1"; }
owner_of() { kc get "$1" "$2" -o jsonpath='{.metadata.uid}' 2> /dev/null || echo 00000000-0000-0000-0000-00000000dead; }
pod() { # NAME NODE LABEL OWNER-KIND OWNER-NAME [GRACE [EXTRA-YAML]]
        local meta="name: $1, namespace: ${NS:-default}, labels: {app: $3}"
        [ -z "$4" ] || meta="$meta, ownerReferences: [{apiVersion: apps/v1, kind: $4, name: $5, uid: $(owner_of "$4" "$5"), controller: true}]"
        [ -z "${7:-}" ] || meta="$meta, $7"
        cat <<-EOF
	apiVersion: v1
	kind: Pod
	metadata: {$meta}
	spec:
	  nodeName: $2
	  terminationGracePeriodSeconds: ${6:-0}
	  containers: [{name: c, image: k8s.gcr.io/pause:3.2}]
	  volumes: [{name: scratch, emptyDir: {}}]
	---
	EOF
}
rs() { printf 'apiVersion: apps/v1\nkind: %s\nmetadata: {name: %s}\nspec:\n  %s\n  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n    spec: {containers: [{name: c, image: k8s.gcr.io/pause:3.2}]}\n---\n' \
        "$1" "$2" "$([ "$1" = ReplicaSet ] && echo 'replicas: 2' || echo 'updateStrategy: {type: OnDelete}')" "$3" "$3"; }
running() { # NS NAME: what the kubelet would report
        kube_raw PATCH "/api/v1/namespaces/$1/pods/$2/status" \
                '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' > /dev/null
}
exists() { kc get pod -n "${2:-default}" "$1" > /dev/null 2>&1; }
gone() { ! exists "$@"; }
all_exist() { local p; for p; do exists "${p#*/}" "${p%/*}" || return 1; done; } # NS/NAME...

{ node w1; node w2; rs ReplicaSet web web; rs ReplicaSet db db; rs DaemonSet agent agent; } | kc apply -f - > /dev/null ||
        { echo "FAIL: cannot create the nodes and controllers"; exit 1; }
{
        pod web-1 w1 web ReplicaSet web
        pod slow-1 w1 web ReplicaSet web 30
        pod db-1 w1 db ReplicaSet db
        pod agent-w1 w1 agent DaemonSet agent
        pod bare-1 w1 bare "" ""
        pod ghost-1 w1 ghost DaemonSet gone-agent
        pod web-2 w2 web ReplicaSet web
        NS=kube-system pod etcd-w1 w1 etcd "" "" 0 "annotations: {kubernetes.io/config.mirror: 3f2a}"
        printf 'apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: db}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: db}}\n'
} | kc apply -f - > /dev/null || { echo "FAIL: cannot create the pods"; exit 1; }
for p in web-1 slow-1 db-1 agent-w1 bare-1 ghost-1 web-2; do running default $p; done
running kube-system etcd-w1
# The budget is computed (observed, db-1 healthy: no disruption allowed) before anything is asked.
for _ in $(seq 60); do
        [ "$(kc get pdb db -o jsonpath='{.status.currentHealthy}/{.status.disruptionsAllowed}')" = 1/0 ] && break
        sleep 0.5
done
assert "the disruption controller computed the budget: 1 healthy, 0 disruptions allowed" \
        [ "$(kc get pdb db -o jsonpath='{.status.currentHealthy}/{.status.disruptionsAllowed}')" = 1/0 ]

# The kubelet's part: a pod whose graceful deletion began is ended (after 2 s) by the kubelet.
kubelet_stand_in() {
        while :; do
                for p in $(kc get pods -A --field-selector spec.nodeName=w1 \
                        -o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{.metadata.namespace}/{.metadata.name} {end}' 2> /dev/null); do
                        sleep 2
                        kc delete pod -n "${p%/*}" "${p#*/}" --grace-period=0 --force > /dev/null 2>&1
                done
                sleep 0.5
        done
}
kubelet_stand_in &
PIDS+=($!)

R=$WORK/w1
mkdir -p "$R/etc/kubernetes"
cp "$WORK/admin.conf" "$R/etc/kubernetes/admin.conf"
nr() { "$NODE_RESET" --root "$R" --phases drain,node-object --node-name w1 --yes -o json "$@"; }
unschedulable() { [ "$(kc get node w1 -o jsonpath='{.spec.unschedulable}')" = true ]; }
schedulable() { ! unschedulable; }
no_node() { ! kc get node "$1" > /dev/null 2>&1; }
has_node() { kc get node "$@" > /dev/null 2>&1; }
result_of() { "$REPORT" "$1" "[a['result'] + ':' + str(a['error']) for a in actions(r, phase='drain') if a['target'] == '$2'][0]"; }

# --- the plan: every pod and what will happen to it; nothing changes ---------------------------------
nr --drain plan > "$WORK/plan.json"; rc=$?
assert "plan: exit 0" [ "$rc" -eq 0 ]
assert "plan: cordon Node/w1, then one row per pod on w1 (none of w2's)" jq_ "$WORK/plan.json" \
        "targets(r, phase='drain') == sorted(['Node/w1', 'Pod/default/web-1', 'Pod/default/slow-1', 'Pod/default/db-1', 'Pod/default/agent-w1', 'Pod/default/bare-1', 'Pod/default/ghost-1', 'Pod/kube-system/etcd-w1'])"
assert "plan: the DaemonSet's and the mirror pod will be skipped, and say why" jq_ "$WORK/plan.json" \
        "sorted(a['target'] for a in actions(r, phase='drain') if a.get('skip_reason')) == ['Pod/default/agent-w1', 'Pod/kube-system/etcd-w1'] and 'DaemonSet/agent' in [a for a in actions(r, phase='drain') if a['target'] == 'Pod/default/agent-w1'][0]['skip_reason'] and 'mirror' in [a for a in actions(r, phase='drain') if a['target'] == 'Pod/kube-system/etcd-w1'][0]['skip_reason']"
assert "plan: the bare pod will be refused (--drain-force)" jq_ "$WORK/plan.json" \
        "'refused' in [a for a in actions(r, phase='drain') if a['target'] == 'Pod/default/bare-1'][0]['detail']"
assert "plan: a pod whose DaemonSet is gone will be refused too" jq_ "$WORK/plan.json" \
        "'its DaemonSet is gone: refused' in [a for a in actions(r, phase='drain') if a['target'] == 'Pod/default/ghost-1'][0]['detail']"
assert "plan: --drain implies --delete-node" jq_ "$WORK/plan.json" "targets(r, phase='node-object') == ['Node/w1']"
assert "plan: the node is not cordoned" schedulable

# --- without --drain-force: the bare pod is refused, nothing is evicted, nothing after the drain runs
nr --drain --drain-timeout 20s run > "$WORK/run1.json" 2> "$WORK/run1.err"; rc=$?
assert "refused drain: exit 1" [ "$rc" -eq 1 ]
assert "refused drain: the node is cordoned" unschedulable
assert "refused drain: the bare pod failed as unmanaged" [ "$(result_of "$WORK/run1.json" Pod/default/bare-1)" = failed:unmanaged ]
assert "refused drain: the pod of a gone DaemonSet failed as unmanaged" [ "$(result_of "$WORK/run1.json" Pod/default/ghost-1)" = failed:unmanaged ]
assert "refused drain: the others were not evicted (skipped, refused)" jq_ "$WORK/run1.json" \
        "all(a['result'] == 'skipped' and a['error'] == 'refused' and 'bare-1' in a['message'] for a in actions(r, phase='drain') if a['target'] in ('Pod/default/web-1', 'Pod/default/slow-1', 'Pod/default/db-1'))"
assert "refused drain: the node-object phase did not run, and says why" jq_ "$WORK/run1.json" \
        "all(a['result'] == 'skipped' and 'drain did not finish' in a['message'] for a in actions(r, phase='node-object'))"
for p in web-1 slow-1 db-1 bare-1 ghost-1 agent-w1; do assert "refused drain: $p is still there" exists $p; done
assert "refused drain: the Node is still there" has_node w1

# --- --drain-force with the budget in place: 429s retried until --drain-timeout -----------------------
t0=$(date +%s)
nr --drain --drain-force --drain-timeout 12s run > "$WORK/run2.json" 2> "$WORK/run2.err"; rc=$?
t=$(($(date +%s) - t0))
assert "budget: exit 1" [ "$rc" -eq 1 ]
assert "budget: db-1 failed with disruption-budget" [ "$(result_of "$WORK/run2.json" Pod/default/db-1)" = failed:disruption-budget ]
assert "budget: it was asked again and again (5 s apart) until the timeout" jq_ "$WORK/run2.json" \
        "[int(a['message'].split('asked ')[1].split(' ')[0]) >= 2 and 'disruption budget' in a['message'] for a in actions(r, phase='drain') if a['target'] == 'Pod/default/db-1'][0]"
assert "budget: the drain took about --drain-timeout (${t}s)" test "$t" -ge 10 -a "$t" -le 40
assert "budget: web-1, the bare pod and the slow pod were evicted and are gone" jq_ "$WORK/run2.json" \
        "all(a['result'] == 'changed' and 'gone from the node' in a['message'] for a in actions(r, phase='drain') if a['target'] in ('Pod/default/web-1', 'Pod/default/slow-1', 'Pod/default/bare-1'))"
assert "budget: each is recorded when it went (web-1 at once, slow-1 after the kubelet ended it)" jq_ "$WORK/run2.json" \
        "[float(a['message'].split('node ')[1].split(' s')[0]) for a in actions(r, phase='drain') if a['target'] in ('Pod/default/web-1', 'Pod/default/slow-1')] and all((float(a['message'].split('node ')[1].split(' s')[0]) < 1.5) == (a['target'] == 'Pod/default/web-1') for a in actions(r, phase='drain') if a['target'] in ('Pod/default/web-1', 'Pod/default/slow-1'))"
assert "budget: the pod of a gone DaemonSet was evicted with --drain-force" [ "$(result_of "$WORK/run2.json" Pod/default/ghost-1)" = changed:None ]
for p in web-1 slow-1 bare-1 ghost-1; do assert "budget: $p is gone" gone $p; done
assert "budget: db-1 stays, and so do the DaemonSet's and the mirror pod" all_exist default/db-1 default/agent-w1 kube-system/etcd-w1
assert "budget: the node-object phase did not run; the Node stays" has_node w1

# --- a second ready replica elsewhere: the budget allows the eviction; the drain and the reset end ---
( sleep 6; pod db-2 w2 db ReplicaSet db | kc apply -f - > /dev/null && running default db-2 ) &
PIDS+=($!)
nr --drain --drain-timeout 90s run > "$WORK/run3.json" 2> "$WORK/run3.err"; rc=$?
assert "drained: exit 0" [ "$rc" -eq 0 ]
assert "drained: db-1 was refused at first, then evicted" [ "$(result_of "$WORK/run3.json" Pod/default/db-1)" = changed:None ]
assert "drained: the refusal was logged and retried" grep -q "disruption budget.*asking again every 5 s" "$WORK/run3.err"
assert "drained: db-1 is gone" gone db-1
assert "drained: the DaemonSet's pod and the mirror pod were not touched" all_exist default/agent-w1 kube-system/etcd-w1
assert "drained: the pods of w2 are still there" all_exist default/web-2 default/db-2
assert "drained: the Node was deleted at the end" jq_ "$WORK/run3.json" \
        "[a['result'] for a in actions(r, phase='node-object')] == ['changed']"
assert "drained: no Node w1" no_node w1
assert "drained: the Node w2 is still there" has_node w2
schema_valid "$WORK"/plan.json "$WORK"/run1.json "$WORK"/run2.json "$WORK"/run3.json
assert "every report matches the schema" [ $? -eq 0 ]
finish
