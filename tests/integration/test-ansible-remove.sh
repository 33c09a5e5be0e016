#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/ansible/remove-node.yml driven by the real ansible-playbook against a real kube-apiserver
# 1.20 (with kube-controller-manager's disruption controller) in this test's private namespaces: the
# surviving control plane cp1 is a --root tree holding the cluster's admin.conf; the nodes to remove
# are w1 (answers: a --root tree reached with connection=local) and w2, w3, w4, which do not answer
# (ssh to a closed port). The Nodes' Ready conditions are set through the API, as their kubelets or
# the node lifecycle controller would (issue 39, 7):
# - w1, Ready: drained from cp1 (node-reset drain w1 there), reset on itself with its own files only,
#   then forgotten from cp1; no administrator credential is ever written on it, nor anywhere else;
# - w2, Ready, unreachable, its pod under a budget that allows none: drained through the API anyway;
#   the drain fails, and w2 is neither forgotten nor its Node deleted;
# - w3, NotReady for an hour, unreachable: the drain is refused (not Ready), w3 is forgotten;
# - w4, NotReady for seconds, unreachable: not forgotten before node_reset_forget_after.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_cmd ansible-playbook openssl python3 unshare curl
command -v etcd > /dev/null 2>&1 || skip "etcd is not installed (apt-get install etcd-server)"
in_private_ns "$@"
KUBE_NEED_KCM=1 . "$TOP/tests/integration/fixtures/kube-api.sh"
. "$TOP/tests/integration/fixtures/node-tree.sh"

start_kube_cluster || { echo "FAIL: kube-apiserver"; exit 1; }

EX=$TOP/examples/ansible
mkdir -p "$WORK"/{home,tmp,ansible,nodes/cp1/etc/kubernetes,disks}
export HOME=$WORK/home TMPDIR=$WORK/tmp ANSIBLE_LOCAL_TEMP=$WORK/ansible/local \
        ANSIBLE_REMOTE_TEMP=$WORK/ansible/remote ANSIBLE_CONFIG=$WORK/ansible.cfg ANSIBLE_NOCOLOR=1
printf '[defaults]\nretry_files_enabled = False\ninterpreter_python = /usr/bin/python3\n[connection]\npipelining = True\n' > "$ANSIBLE_CONFIG"
cp "$WORK/admin.conf" "$WORK/nodes/cp1/etc/kubernetes/admin.conf"
# A control plane knows its own name (forget never forgets the node it runs on, and must tell).
echo cp1 > "$WORK/nodes/cp1/etc/hostname"
build_node_tree "$WORK/nodes/w1" "$WORK/disks/w1"
echo w1 > "$WORK/nodes/w1/etc/hostname"
# what no file outside cp1 may hold: the administrator's key and certificate, as admin.conf has them
admin_key=$(grep client-key-data "$WORK/admin.conf" | awk '{print $2}' | cut -c1-40)

ready() { # NODE True|Unknown SECONDS-AGO: the Ready condition as kubelet or the node lifecycle controller sets it
        local t
        t=$(date -u -d "@$(($(date +%s) - $3))" +%Y-%m-%dT%H:%M:%SZ)
        kube_raw PATCH "/api/v1/nodes/$1/status" \
                "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"$2\",\"reason\":\"Test\",\"lastHeartbeatTime\":\"$t\",\"lastTransitionTime\":\"$t\"}]}}" \
                application/strategic-merge-patch+json > /dev/null
}
pod() { # NAME NODE APP
        printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, labels: {app: %s}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: %s, uid: %s, controller: true}]}\nspec:\n  nodeName: %s\n  terminationGracePeriodSeconds: 0\n  containers: [{name: c, image: k8s.gcr.io/pause:3.2}]\n  volumes: [{name: scratch, emptyDir: {}}]\n---\n' \
                "$1" "$3" "$3" "$(kc get rs "$3" -o jsonpath='{.metadata.uid}')" "$2"
}
running() { kube_raw PATCH "/api/v1/namespaces/default/pods/$1/status" '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' > /dev/null; }
exists() { kc get "$@" > /dev/null 2>&1; }
{
        for n in w1 w2 w3 w4; do printf 'apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n---\n' $n; done
        for a in web held; do
                printf 'apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: %s}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n    spec: {containers: [{name: c, image: k8s.gcr.io/pause:3.2}]}\n---\n' $a $a $a
        done
        printf 'apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: held}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: held}}\n'
} | kc apply -f - > /dev/null || { echo "FAIL: cannot create the nodes"; exit 1; }
{ pod web-w1 w1 web; pod held-w2 w2 held; } | kc apply -f - > /dev/null || { echo "FAIL: cannot create the pods"; exit 1; }
running web-w1; running held-w2
ready w1 True 0; ready w2 True 0; ready w3 Unknown 3600; ready w4 Unknown 5
for _ in $(seq 60); do [ "$(kc get pdb held -o jsonpath='{.status.currentHealthy}/{.status.disruptionsAllowed}')" = 1/0 ] && break; sleep 0.5; done

cat > "$WORK/inventory.yml" << EOF
all:
  vars:
    node_reset_report_dir: $WORK/reports
    node_reset_connect_timeout: 3
    node_reset_drain_timeout: 6s
  children:
    kube_control_plane:
      hosts:
        cp1: { ansible_connection: local, node_reset_binary: $NODE_RESET, node_reset_root: $WORK/nodes/cp1 }
    kube_node:
      hosts:
        w1: { ansible_connection: local, node_reset_binary: $NODE_RESET, node_reset_root: $WORK/nodes/w1,
              node_reset_phases: [mounts, files] }
        w2: { ansible_host: 127.0.0.1, ansible_port: 1 }
        w3: { ansible_host: 127.0.0.1, ansible_port: 1 }
        w4: { ansible_host: 127.0.0.1, ansible_port: 1 }
EOF
remove() { # NAME NODE ARGS...: remove-node.yml, output in $WORK/NAME.log
        local name=$1 node=$2
        shift 2
        ansible-playbook -i "$WORK/inventory.yml" "$EX/remove-node.yml" -e "node=$node" "$@" > "$WORK/$name.log" 2>&1
}
report() { "$TOP/tests/integration/report.py" "$@" > /dev/null; }

ansible-playbook -i "$WORK/inventory.yml" --syntax-check "$EX/remove-node.yml" > "$WORK/syntax.log" 2>&1
assert "remove-node.yml: ansible-playbook --syntax-check" test $? -eq 0 || cat "$WORK/syntax.log"

# --- w1 answers and is Ready: check mode, then drained from cp1, reset, forgotten --------------------
remove check w1 --check; rc=$?
assert "w1, check mode: exit 0" test $rc -eq 0 || tail -n 30 "$WORK/check.log"
assert "w1, check mode: the drain's plan, made on cp1, lists web-w1" report "$WORK/reports/w1.drain.plan.json" \
        "r['command'] == 'drain' and 'Pod/default/web-w1' in targets(r, kind='evict')"
assert "w1, check mode: nothing changed (schedulable, its pod there, its tree intact)" \
        eval '[ -z "$(kc get node w1 -o jsonpath={.spec.unschedulable})" ] && exists pod web-w1 && test -e "$WORK/nodes/w1/etc/kubernetes/kubelet.conf"'
remove w1 w1 -e node_reset_confirm=yes; rc=$?
assert "w1: exit 0" test $rc -eq 0 || tail -n 30 "$WORK/w1.log"
assert "w1: the drain ran on cp1 (delegated) and evicted web-w1" eval \
        'grep -Eq "\[w1 -> cp1\]" "$WORK/w1.log" && report "$WORK/reports/w1.drain.json" "[a[\"result\"] for a in actions(r, kind=\"evict\") if a[\"target\"] == \"Pod/default/web-w1\"] == [\"changed\"]"'
assert "w1: web-w1 is gone" eval '! exists pod web-w1'
assert "w1: reset on itself" eval 'report "$WORK/reports/w1.json" "r[\"command\"] == \"run\" and r[\"changed\"]" && test ! -e "$WORK/nodes/w1/etc/kubernetes/kubelet.conf"'
assert "w1: forgotten from cp1: its Node is gone" eval \
        'report "$WORK/reports/w1.forget.json" "[a[\"result\"] for a in actions(r, kind=\"node-object\")] == [\"changed\"]" && ! exists node w1'
assert "w1: the administrator's credentials were written nowhere but cp1" \
        test -z "$(grep -rlF "$admin_key" "$WORK/nodes/w1" "$WORK/ansible" "$WORK/tmp" "$WORK/home" 2> /dev/null)"
remove w1-again w1 -e node_reset_confirm=yes; rc=$?
assert "w1 again: exit 0 (no Node left to drain, nothing to reset or forget)" test $rc -eq 0 || tail -n 30 "$WORK/w1-again.log"

# --- w2 does not answer, but its Node is Ready with a pod a budget holds: drained, never forgotten ---
remove w2 w2 -e node_reset_confirm=yes; rc=$?
assert "w2: the play fails (exit 2)" test $rc -eq 2
assert "w2: the drain was asked through the API, and the budget refused it" report "$WORK/reports/w2.drain.json" \
        "[a['error'] for a in actions(r, kind='evict')] == ['disruption-budget']"
assert "w2: it says the drain failed" grep -q "node-reset drain w2 on cp1 exited 1" "$WORK/w2.log"
assert "w2: not forgotten: its Node and its pod stay" eval 'exists node w2 && exists pod held-w2 && test ! -e "$WORK/reports/w2.forget.json"'

# --- w3 and w4 do not answer: NotReady for an hour, forgotten; NotReady for seconds, kept -----------
remove w34 w3,w4 -e node_reset_confirm=yes; rc=$?
assert "w3, w4: the play fails for w4 (exit 2)" test $rc -eq 2
assert "w3: the drain was refused, not Ready" report "$WORK/reports/w3.drain.json" \
        "r['exit_status'] == 3 and all(a['error'] == 'not-ready' for a in actions(r))"
assert "w3: forgotten from cp1: its Node is gone" eval '! exists node w3'
assert "w4: it says it waits for node_reset_forget_after" grep -q "has been NotReady for only [0-9]* s" "$WORK/w34.log"
assert "w4: its Node stays" exists node w4
schema_valid "$WORK"/reports/*.json
assert "every report matches the schema" [ $? -eq 0 ]
finish
