#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# --drain against a real kube-apiserver 1.20 (its Eviction API and PodDisruptionBudget checks) with
# kube-controller-manager's disruption controller computing the budgets, on an etcd 3.4, in private
# namespaces; no kubelet: the pods are API objects, made Running through their status, and the test
# plays the kubelet that ends a pod whose grace period has begun. The node is a k3s agent's tree whose
# config.yaml names it w1 (its host name is another): the drain is w1's (issue 39, 2).
#
# On w1: pods of two ReplicaSets (one with emptyDir data, one slow to end), one a PodDisruptionBudget
# (minAvailable 1) covers, a DaemonSet's pod, a mirror pod, a pod no controller manages, one whose
# DaemonSet is gone; on w2 a pod that must not move. The plan lists every pod and changes nothing; a
# Node that is not there fails the drain (kubectl's NotFound). Without flags the bare pod, the orphan
# and the emptyDir pod refuse the drain and nothing is evicted; with --drain-force and
# --drain-delete-emptydir-data a 429 is retried until --drain-timeout and fails the drain. Then, at the
# confirmation prompt, a pod is bound to w1 after the plan was shown, and another during the drain
# under a budget of its own: both are evicted (and the budgets asked) once the budgets allow, the
# DaemonSet's and the mirror pod are untouched, and the Node is deleted at the end.
#
# Side by side with kubectl 1.20's drain on the same cluster: nodes k1 (kubectl drain) and n1
# (node-reset --drain) carry the same pods; with the same flags and the same credentials (a user
# who may not read the DaemonSets of one namespace) both refuse for the same pods, and both evict
# the same ones.
. "$(dirname "$0")/lib.sh"
require_cmd openssl python3 unshare curl
command -v etcd > /dev/null 2>&1 || skip "etcd is not installed (apt-get install etcd-server)"
in_private_ns -n "$@"
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" > /dev/null; }
KUBE_NEED_KCM=1 . "$TOP/tests/integration/fixtures/kube-api.sh"

start_kube_cluster || { echo "FAIL: kube-apiserver"; exit 1; }

# --- the cluster's objects --------------------------------------------------------------------------
node() { printf 'apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n---\n' "$1"; }
owner_of() { kc get -n "${NS:-default}" "$1" "$2" -o jsonpath='{.metadata.uid}' 2> /dev/null || echo 00000000-0000-0000-0000-00000000dead; }
pod() { # NAME NODE LABEL OWNER-KIND OWNER-NAME; NS, GRACE, EMPTY=1 (an emptyDir volume), EXTRA (metadata)
        local meta="name: $1, namespace: ${NS:-default}, labels: {app: $3}"
        [ -z "$4" ] || meta="$meta, ownerReferences: [{apiVersion: apps/v1, kind: $4, name: '$5', uid: $(owner_of "$4" "$5"), controller: true}]"
        [ -z "${EXTRA:-}" ] || meta="$meta, $EXTRA"
        cat <<-EOF
	apiVersion: v1
	kind: Pod
	metadata: {$meta}
	spec:
	  nodeName: $2
	  terminationGracePeriodSeconds: ${GRACE:-0}
	  containers: [{name: c, image: k8s.gcr.io/pause:3.2}]
	  volumes: [$([ -n "${EMPTY:-}" ] && echo '{name: scratch, emptyDir: {}}')]
	---
	EOF
}
rs() { printf 'apiVersion: apps/v1\nkind: %s\nmetadata: {name: %s, namespace: %s}\nspec:\n  %s\n  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n    spec: {containers: [{name: c, image: k8s.gcr.io/pause:3.2}]}\n---\n' \
        "$1" "$2" "${NS:-default}" "$([ "$1" = ReplicaSet ] && echo 'replicas: 2' || echo 'updateStrategy: {type: OnDelete}')" "$3" "$3"; }
pdb() { printf 'apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: %s}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: %s}}\n---\n' "$1" "$1"; }
running() { # NS NAME [PHASE]: what the kubelet would report
        kube_raw PATCH "/api/v1/namespaces/$1/pods/$2/status" \
                "{\"status\":{\"phase\":\"${3:-Running}\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}" > /dev/null
}
exists() { kc get pod -n "${2:-default}" "$1" > /dev/null 2>&1; }
gone() { ! exists "$@"; }
all_exist() { local p; for p; do exists "${p#*/}" "${p%/*}" || return 1; done; } # NS/NAME...
budget_computed() { # NAME HEALTHY/ALLOWED: the disruption controller has counted
        for _ in $(seq 60); do
                [ "$(kc get pdb "$1" -o jsonpath='{.status.currentHealthy}/{.status.disruptionsAllowed}')" = "$2" ] && return 0
                sleep 0.5
        done
        return 1
}

{ node w1; node w2; rs ReplicaSet web web; rs ReplicaSet db db; rs ReplicaSet late late; rs DaemonSet agent agent; } |
        kc apply -f - > /dev/null || { echo "FAIL: cannot create the nodes and controllers"; exit 1; }
{
        EMPTY=1 pod web-1 w1 web ReplicaSet web
        GRACE=30 pod slow-1 w1 web ReplicaSet web
        pod db-1 w1 db ReplicaSet db
        pod agent-w1 w1 agent DaemonSet agent
        pod bare-1 w1 bare "" ""
        pod ghost-1 w1 ghost DaemonSet gone-agent
        pod web-2 w2 web ReplicaSet web
        NS=kube-system EXTRA="annotations: {kubernetes.io/config.mirror: 3f2a}" pod etcd-w1 w1 etcd "" ""
        pdb db
        pdb late
} | kc apply -f - > /dev/null || { echo "FAIL: cannot create the pods"; exit 1; }
for p in web-1 slow-1 db-1 agent-w1 bare-1 ghost-1 web-2; do running default $p; done
running kube-system etcd-w1
# The budget is computed (observed, db-1 healthy: no disruption allowed) before anything is asked.
assert "the disruption controller computed the budget: 1 healthy, 0 disruptions allowed" budget_computed db 1/0

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

# A k3s agent's tree: its config.yaml names the node w1, its host name is another; k3s.yaml holds the
# admin's credentials (this test's).
R=$WORK/w1
mkdir -p "$R/etc/rancher/k3s"
cp "$WORK/admin.conf" "$R/etc/rancher/k3s/k3s.yaml"
printf 'node-name: w1\ntoken: x\n' > "$R/etc/rancher/k3s/config.yaml"
echo k3s-host-7 > "$R/etc/hostname"
nr() { "$NODE_RESET" --root "$R" --phases drain,node-object --yes -o json "$@"; }
unschedulable() { [ "$(kc get node "${1:-w1}" -o jsonpath='{.spec.unschedulable}')" = true ]; }
schedulable() { ! unschedulable "$@"; }
no_node() { ! kc get node "$1" > /dev/null 2>&1; }
has_node() { kc get node "$@" > /dev/null 2>&1; }
result_of() { "$REPORT" "$1" "[a['result'] + ':' + str(a['error']) for a in actions(r, phase='drain') if a['target'] == '$2'][0]"; }
row() { "$REPORT" "$1" "[a for a in actions(r, phase='drain') if a['target'] == '$2'][0]$3"; }

# --- the plan: every pod and what will happen to it; nothing changes ---------------------------------
"$NODE_RESET" --root "$R" --phases drain,node-object -o json --drain plan > "$WORK/plan.json"; rc=$?
assert "plan: exit 0" [ "$rc" -eq 0 ]
assert "plan: the node is w1, as k3s's config.yaml names it (not its host name)" jq_ "$WORK/plan.json" \
        "[a['target'] for a in actions(r, phase='drain') if a['kind'] in ('cordon', 'drain')] == ['Node/w1', 'Node/w1']"
assert "plan: cordon, the drain, then one row per pod on w1 (none of w2's)" jq_ "$WORK/plan.json" \
        "[a['kind'] for a in actions(r, phase='drain')][:2] == ['cordon', 'drain'] and targets(r, phase='drain', kind='evict') == sorted(['Pod/default/web-1', 'Pod/default/slow-1', 'Pod/default/db-1', 'Pod/default/agent-w1', 'Pod/default/bare-1', 'Pod/default/ghost-1', 'Pod/kube-system/etcd-w1'])"
assert "plan: the DaemonSet's and the mirror pod will be skipped, and say why" jq_ "$WORK/plan.json" \
        "sorted(a['target'] for a in actions(r, phase='drain') if a.get('skip_reason')) == ['Pod/default/agent-w1', 'Pod/kube-system/etcd-w1'] and 'DaemonSet/agent' in [a for a in actions(r, phase='drain') if a['target'] == 'Pod/default/agent-w1'][0]['skip_reason'] and 'mirror' in [a for a in actions(r, phase='drain') if a['target'] == 'Pod/kube-system/etcd-w1'][0]['skip_reason']"
assert "plan: the bare pod will refuse the drain (--drain-force)" jq_ "$WORK/plan.json" \
        "'refused' in [a for a in actions(r, phase='drain') if a['target'] == 'Pod/default/bare-1'][0]['detail']"
assert "plan: so will the pod whose DaemonSet is gone, and the one with emptyDir data" jq_ "$WORK/plan.json" \
        "'DaemonSet gone-agent is gone' in [a for a in actions(r, phase='drain') if a['target'] == 'Pod/default/ghost-1'][0]['detail'] and '--drain-delete-emptydir-data' in [a for a in actions(r, phase='drain') if a['target'] == 'Pod/default/web-1'][0]['detail']"
assert "plan: --drain implies --delete-node" jq_ "$WORK/plan.json" "targets(r, phase='node-object') == ['Node/w1']"
assert "plan: the node is not cordoned" schedulable

# --- a Node that is not there: kubectl drain's NotFound, exit 1, never "nothing to drain" -----------
nr --drain --node-name nosuch run > "$WORK/nosuch.json" 2> "$WORK/nosuch.err"; rc=$?
assert "no such Node: exit 1" [ "$rc" -eq 1 ]
assert "no such Node: the cordon failed, not found" [ "$(result_of "$WORK/nosuch.json" Node/nosuch)" = failed:not-found ]
assert "no such Node: the node-object phase did not run" jq_ "$WORK/nosuch.json" \
        "all(a['result'] == 'skipped' for a in actions(r, phase='node-object'))"
assert "no such Node: w1 untouched" schedulable

# --- no flags: three pods refuse the drain, nothing is evicted, nothing after the drain runs ----------
nr --drain --drain-timeout 20s run > "$WORK/run1.json" 2> "$WORK/run1.err"; rc=$?
assert "refused drain: exit 1" [ "$rc" -eq 1 ]
assert "refused drain: the node is cordoned (first, as kubectl drain)" unschedulable
assert "refused drain: the bare pod failed as unmanaged" [ "$(result_of "$WORK/run1.json" Pod/default/bare-1)" = failed:unmanaged ]
assert "refused drain: the pod of a gone DaemonSet failed as unmanaged" [ "$(result_of "$WORK/run1.json" Pod/default/ghost-1)" = failed:unmanaged ]
assert "refused drain: the pod with emptyDir data failed as emptydir" [ "$(result_of "$WORK/run1.json" Pod/default/web-1)" = failed:emptydir ]
assert "refused drain: the others were not evicted (skipped, refused)" jq_ "$WORK/run1.json" \
        "all(a['result'] == 'skipped' and a['error'] == 'refused' for a in actions(r, phase='drain') if a['target'] in ('Pod/default/slow-1', 'Pod/default/db-1'))"
assert "refused drain: the drain row failed" jq_ "$WORK/run1.json" "[a['result'] for a in actions(r, phase='drain', kind='drain')] == ['failed']"
assert "refused drain: the node-object phase did not run, and says why" jq_ "$WORK/run1.json" \
        "all(a['result'] == 'skipped' and 'drain did not finish' in a['message'] for a in actions(r, phase='node-object'))"
for p in web-1 slow-1 db-1 bare-1 ghost-1 agent-w1; do assert "refused drain: $p is still there" exists $p; done
assert "refused drain: the Node is still there" has_node w1

# --- --drain-force --drain-delete-emptydir-data with the budget in place: 429s until --drain-timeout --
t0=$(date +%s)
nr --drain --drain-force --drain-delete-emptydir-data --drain-timeout 12s run > "$WORK/run2.json" 2> "$WORK/run2.err"; rc=$?
t=$(($(date +%s) - t0))
assert "budget: exit 1" [ "$rc" -eq 1 ]
assert "budget: db-1 failed with disruption-budget" [ "$(result_of "$WORK/run2.json" Pod/default/db-1)" = failed:disruption-budget ]
assert "budget: it was asked again and again (5 s apart) until the timeout" jq_ "$WORK/run2.json" \
        "[int(a['message'].split('asked ')[1].split(' ')[0]) >= 2 and 'disruption budget' in a['message'] for a in actions(r, phase='drain') if a['target'] == 'Pod/default/db-1'][0]"
assert "budget: the drain took about --drain-timeout (${t}s)" test "$t" -ge 10 -a "$t" -le 40
assert "budget: web-1, the bare pod and the slow pod were evicted and are gone" jq_ "$WORK/run2.json" \
        "all(a['result'] == 'changed' and 'gone from the node' in a['message'] for a in actions(r, phase='drain') if a['target'] in ('Pod/default/web-1', 'Pod/default/slow-1', 'Pod/default/bare-1'))"
assert "budget: each is recorded when it went (web-1 at once, slow-1 after the kubelet ended it)" jq_ "$WORK/run2.json" \
        "all((float(a['message'].split('node ')[1].split(' s')[0]) < 1.5) == (a['target'] == 'Pod/default/web-1') for a in actions(r, phase='drain') if a['target'] in ('Pod/default/web-1', 'Pod/default/slow-1'))"
assert "budget: the pod of a gone DaemonSet was evicted with --drain-force" [ "$(result_of "$WORK/run2.json" Pod/default/ghost-1)" = changed:None ]
for p in web-1 slow-1 bare-1 ghost-1; do assert "budget: $p is gone" gone $p; done
assert "budget: db-1 stays, and so do the DaemonSet's and the mirror pod" all_exist default/db-1 default/agent-w1 kube-system/etcd-w1
assert "budget: the node-object phase did not run; the Node stays" has_node w1

# --- pods bound after the plan: at the prompt, and during the drain under a budget of their own ------
arrivals() { # during the drain: late-1 on w1 (its budget allows nothing), db-2 then late-2 on w2
        sleep 2; pod late-1 w1 late ReplicaSet late | kc apply -f - > /dev/null && running default late-1
        sleep 2; pod db-2 w2 db ReplicaSet db | kc apply -f - > /dev/null && running default db-2
        sleep 2; pod late-2 w2 late ReplicaSet late | kc apply -f - > /dev/null && running default late-2
}
{ # what a colleague does while the prompt waits: a pod bound to w1
        declare -p KBIN WORK pki KUBE_SERVER
        declare -f pod owner_of kc running kube_raw
        echo 'pod prompt-1 w1 web ReplicaSet web | kc apply -f - > /dev/null && running default prompt-1'
} > "$WORK/at-prompt.sh"
( arrivals ) &
PIDS+=($!)
"$TOP/tests/integration/confirm-after.py" "bash $WORK/at-prompt.sh" -- \
        "$NODE_RESET" --root "$R" --phases drain,node-object -o json --drain --drain-timeout 90s run \
        > "$WORK/run3.json" 2> "$WORK/run3.err"; rc=$?
assert "drained: exit 0" [ "$rc" -eq 0 ]
assert "drained: the prompt was answered, and prompt-1 bound while it waited" grep -q "Type 'yes'" "$WORK/run3.err"
assert "drained: prompt-1, bound after the plan was shown, has its row and was evicted" jq_ "$WORK/run3.json" \
        "[(a['result'], 'after the plan' in a['detail']) for a in actions(r, phase='drain') if a['target'] == 'Pod/default/prompt-1'] == [('changed', True)]"
assert "drained: late-1, bound during the drain, was evicted once its budget allowed" jq_ "$WORK/run3.json" \
        "[(a['result'], 'after the plan' in a['detail']) for a in actions(r, phase='drain') if a['target'] == 'Pod/default/late-1'] == [('changed', True)]"
assert "drained: late-1's budget was asked, and refused it first" grep -q "late-1: .*disruption budget.*asking again every 5 s" "$WORK/run3.err"
assert "drained: db-1 was refused at first, then evicted" [ "$(result_of "$WORK/run3.json" Pod/default/db-1)" = changed:None ]
assert "drained: the drain row counts them" jq_ "$WORK/run3.json" \
        "[a['message'] for a in actions(r, phase='drain', kind='drain')][0].startswith('Node w1 drained: 3 pods evicted (2 of them bound after the plan)')"
for p in db-1 prompt-1 late-1; do assert "drained: $p is gone" gone $p; done
assert "drained: the DaemonSet's pod and the mirror pod were not touched" all_exist default/agent-w1 kube-system/etcd-w1
assert "drained: the pods of w2 are still there" all_exist default/web-2 default/db-2 default/late-2
assert "drained: the Node was deleted at the end" jq_ "$WORK/run3.json" \
        "[a['result'] for a in actions(r, phase='node-object')] == ['changed']"
assert "drained: no Node w1" no_node w1
assert "drained: the Node w2 is still there" has_node w2
schema_valid "$WORK"/plan.json "$WORK"/nosuch.json "$WORK"/run1.json "$WORK"/run2.json "$WORK"/run3.json
assert "every report matches the schema" [ $? -eq 0 ]

# --- side by side with kubectl 1.20's drain -----------------------------------------------------------
# A user who may drain but not read the DaemonSets of namespace "locked" (client-go and node-reset get
# 403 for them there), and the same pods on k1 and n1.
mkleaf drainer kca "/CN=drainer" "extendedKeyUsage=clientAuth" || fail "cannot make the drainer's certificate"
kubeconfig_pem "$KUBE_SERVER" drainer kca > "$WORK/drainer.conf"
cat << 'EOF' | kc apply -f - > /dev/null || fail "cannot make the drainer's roles"
apiVersion: v1
kind: Namespace
metadata: {name: locked}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: drainer}
rules:
- {apiGroups: [""], resources: [nodes], verbs: [get, list, patch]}
- {apiGroups: [""], resources: [pods], verbs: [get, list]}
- {apiGroups: [""], resources: [pods/eviction], verbs: [create]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: drainer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: drainer}
subjects: [{kind: User, name: drainer}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: daemonsets, namespace: default}
rules: [{apiGroups: [apps], resources: [daemonsets], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: drainer, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: daemonsets}
subjects: [{kind: User, name: drainer}]
EOF
NS=locked rs DaemonSet agent agent | kc apply -f - > /dev/null || fail "cannot make the locked DaemonSet"
side_pods() { # X: the same pods on node X, each named X-...
        pod "$1-rs" "$1" web ReplicaSet web
        EMPTY=1 pod "$1-empty" "$1" web ReplicaSet web
        pod "$1-bare" "$1" bare "" ""
        pod "$1-ds" "$1" agent DaemonSet agent
        NS=kube-system EXTRA="annotations: {kubernetes.io/config.mirror: x}" pod "$1-mirror" "$1" etcd "" ""
        pod "$1-done" "$1" job "" ""
        pod "$1-ghost" "$1" ghost DaemonSet gone-agent
        NS=locked pod "$1-locked" "$1" agent DaemonSet agent
        pod "$1-weird" "$1" agent DaemonSet '../../healthz?watch=1'
}
{ node k1; node n1; side_pods k1; side_pods n1; } | kc apply -f - > /dev/null || fail "cannot make the side-by-side pods"
for x in k1 n1; do
        for p in rs empty bare ds done ghost weird; do running default "$x-$p" "$([ $p = done ] && echo Succeeded)"; done
        running kube-system "$x-mirror"; running locked "$x-locked"
done
Rn=$WORK/n1
mkdir -p "$Rn"
on_node() { # X: the pods on X, as NS/NAME without the node's prefix, sorted
        kc get pods -A --field-selector "spec.nodeName=$1" -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}' |
                sed "s|/$1-|/|" | sort | tr '\n' ' '
}
refused_k() { grep "cannot delete" "$1" | grep -oE "[a-z-]+/k1-[a-z]+" | sed 's|/k1-|/|' | sort -u | tr '\n' ' '; }
refused_n() {
        "$REPORT" "$1" "''.join(t + ' ' for t in sorted(a['target'][4:].replace('/n1-', '/') for a in actions(r, phase='drain', result='failed') if a['kind'] == 'evict' and a['error'] in ('unmanaged', 'emptydir', 'daemonset-lookup')))"
}
side() { # CASE KUBECONFIG FLAGS...: kubectl drain k1 and node-reset --drain n1, the same flags
        local what=$1 conf=$2 kflags=() nflags=() f; shift 2
        for f; do
                kflags+=("$f")
                case $f in --force) nflags+=(--drain-force) ;; --delete-emptydir-data) nflags+=(--drain-delete-emptydir-data) ;; esac
        done
        "$KBIN/kubectl" --kubeconfig "$conf" drain k1 --ignore-daemonsets --timeout=60s "${kflags[@]}" \
                > "$WORK/k-$what.out" 2> "$WORK/k-$what.err"; rck=$?
        "$NODE_RESET" --root "$Rn" --kubeconfig "$conf" --node-name n1 --phases drain --yes -o json --drain \
                --drain-timeout 60s "${nflags[@]}" run > "$WORK/n-$what.json" 2> "$WORK/n-$what.err"; rcn=$?
        assert "side by side, $what: kubectl exits $rck, node-reset $rcn: both fail or both succeed" \
                test $((rck != 0)) -eq $((rcn != 0))
        assert "side by side, $what: the same pods refuse the drain ($(refused_k "$WORK/k-$what.err"))" \
                test "$(refused_k "$WORK/k-$what.err")" = "$(refused_n "$WORK/n-$what.json")"
        assert "side by side, $what: the same pods are left ($(on_node k1))" test "$(on_node k1)" = "$(on_node n1)"
}
side "no flags" "$WORK/drainer.conf"
assert "side by side, no flags: both refused for emptyDir, unmanaged, a gone, a forbidden, a weird DaemonSet" \
        test "$(refused_k "$WORK/k-no flags.err")" = "default/bare default/empty default/ghost default/weird locked/locked "
side "--force --delete-emptydir-data" "$WORK/drainer.conf" --force --delete-emptydir-data
assert "side by side, --force: a DaemonSet lookup refused (403) or of a name no path takes still refuses" \
        test "$(refused_k "$WORK/k---force --delete-emptydir-data.err")" = "default/weird locked/locked "
kc delete pod k1-weird n1-weird --wait=false > /dev/null
side "admin, --force --delete-emptydir-data" "$WORK/admin.conf" --force --delete-emptydir-data
assert "side by side, admin: both drained, the DaemonSets' and the mirror pods left" \
        test "$(on_node k1)" = "default/ds kube-system/mirror locked/locked "
schema_valid "$WORK"/n-*.json
assert "every side-by-side report matches the schema" [ $? -eq 0 ]
finish
