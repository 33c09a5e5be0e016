#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# forget NODE on a surviving control plane against real components, in private namespaces: a
# 3-member etcd 3.4 cluster with kubeadm's TLS layout (cp1, cp2, cp3 on 127.0.0.11-13; cp1's files
# are the node's, beneath --root, with its /etc/hostname) and a real kube-apiserver 1.20 (its own
# datastore, so that the cluster's quorum is the test's to break) holding control-plane Nodes cp1-3
# whose Ready heartbeats are old, their Leases in kube-node-lease (cp1's and cp2's fresh), and kubeadm
# 1.20's kube-system/kubeadm-config with ClusterStatus endpoints for all three. Refused (exit 3,
# nothing changed): the node forget runs on, by its name (also beside an external etcd); a member that
# still answers, --force or not; a Node heard from within --stale-for. --plan without credentials
# exits 1, as the run would. Then cp3's etcd is stopped for good: the plan lists three rows; the run
# leaves a healthy 2-member cluster, ClusterStatus without cp3, no Node cp3 (cp1, cp2 kept); a second
# run finds nothing to do. cp3's address then belongs to a live cp4 (member added on it): forget cp3
# deletes the stale Node and never cp4's member (name AND peer URL). cp4 goes too; in the 2-member
# cluster left, forget of a just-dead cp2 is refused: its removal could not commit.
. "$(dirname "$0")/lib.sh"
# kube-apiserver 1.20's etcd is 3.4; forget's calls on 3.5 are test-forget-k3s's
etcd_matrix 3.4 "$@"
require_cmd openssl python3 unshare curl etcdctl
command -v etcd > /dev/null 2>&1 || skip "etcd is not installed (apt-get install etcd-server)"
in_private_ns -n "$@"
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" > /dev/null; }
. "$TOP/tests/integration/fixtures/kube-api.sh"

# --- etcd: kubeadm's layout for cp1 beneath $R, the others beside it ---------------------------------
R=$WORK/cp1
EP=$R/etc/kubernetes/pki/etcd
mkdir -p "$EP" "$R/etc/kubernetes/manifests" "$R/var/lib/etcd"
echo cp1 > "$R/etc/hostname"
ip_of() { echo "127.0.0.1${1#cp}"; }
etcd_certs() { # DIR IP
        mkdir -p "$1" && cp "$pki/eca.crt" "$1/ca.crt" &&
        mkleaf_in "$1" server "/CN=$(basename "$1")" "subjectAltName=IP:$2,IP:127.0.0.1
extendedKeyUsage=serverAuth,clientAuth" &&
        mkleaf_in "$1" peer "/CN=$(basename "$1")" "subjectAltName=IP:$2,IP:127.0.0.1
extendedKeyUsage=serverAuth,clientAuth"
}
mkleaf_in() { mkleaf "$2-$(basename "$1")" eca "$3" "$4" && mv "$pki/$2-$(basename "$1").crt" "$1/$2.crt" &&
        mv "$pki/$2-$(basename "$1").key" "$1/$2.key"; }
mkca eca etcd-ca && cp "$pki/eca.key" "$EP/ca.key" || { echo "FAIL: etcd CA"; exit 1; }
mkleaf apiserver-etcd-client eca "/O=system:masters/CN=kube-apiserver-etcd-client" "extendedKeyUsage=clientAuth" &&
        cp "$pki/apiserver-etcd-client.crt" "$pki/apiserver-etcd-client.key" "$R/etc/kubernetes/pki/" ||
        { echo "FAIL: etcd client certificate"; exit 1; }
CLUSTER=cp1=https://127.0.0.11:2380,cp2=https://127.0.0.12:2380,cp3=https://127.0.0.13:2380
dir_of() { if [ "$1" = cp1 ]; then echo "$EP"; else echo "$WORK/$1/pki"; fi; }
data_of() { if [ "$1" = cp1 ]; then echo "$R/var/lib/etcd"; else echo "$WORK/$1/data"; fi; }
start_etcd() { # NAME [STATE]
        local n=$1 ip d listen
        ip=$(ip_of "$n"); d=$(dir_of "$n"); listen="https://$ip:2379"
        [ "$n" = cp1 ] && listen="https://127.0.0.1:2379,$listen"
        etcd --name "$n" --data-dir "$(data_of "$n")" --listen-client-urls "$listen" \
                --advertise-client-urls "https://$ip:2379" --listen-peer-urls "https://$ip:2380" \
                --initial-advertise-peer-urls "https://$ip:2380" --initial-cluster "$CLUSTER" \
                --initial-cluster-state "${2:-new}" --initial-cluster-token forget \
                --client-cert-auth --trusted-ca-file "$d/ca.crt" --cert-file "$d/server.crt" --key-file "$d/server.key" \
                --peer-client-cert-auth --peer-trusted-ca-file "$d/ca.crt" --peer-cert-file "$d/peer.crt" \
                --peer-key-file "$d/peer.key" --logger zap --log-outputs stderr >> "$WORK/$n.log" 2>&1 &
        PIDS+=($!)
        eval "PID_$n=$!"
}
stop_etcd() { local v="PID_$1"; kill "${!v}" 2> /dev/null; wait "${!v}" 2> /dev/null; }
ctl() { ETCDCTL_API=3 etcdctl --endpoints "$1" --cacert "$pki/eca.crt" --cert "$pki/apiserver-etcd-client.crt" \
        --key "$pki/apiserver-etcd-client.key" --dial-timeout 2s --command-timeout 5s "${@:2}"; }
ALL=https://127.0.0.11:2379,https://127.0.0.12:2379,https://127.0.0.13:2379
members() { ctl https://127.0.0.11:2379 member list -w simple 2> /dev/null | awk -F', ' '{print $3}' | sort | tr '\n' ' '; }
healthy() { ctl "$1" endpoint health > /dev/null 2>&1; }
wait_healthy() { for _ in $(seq 100); do healthy "$1" && return 0; sleep 0.2; done; return 1; }

for n in cp1 cp2 cp3; do etcd_certs "$(dir_of "$n")" "$(ip_of "$n")" || { echo "FAIL: certificates of $n"; exit 1; }; done
mkdir -p "$WORK/cp2/data" "$WORK/cp3/data"
for n in cp1 cp2 cp3; do start_etcd $n; done
wait_healthy "$ALL" || { echo "FAIL: the etcd cluster did not become healthy"; tail -n 5 "$WORK"/cp*.log; exit 1; }

cat > "$R/etc/kubernetes/manifests/etcd.yaml" << EOF
apiVersion: v1
kind: Pod
metadata: {name: etcd, namespace: kube-system}
spec:
  containers:
  - name: etcd
    image: k8s.gcr.io/etcd:3.4.13-0
    command:
    - etcd
    - --advertise-client-urls=https://127.0.0.11:2379
    - --cert-file=/etc/kubernetes/pki/etcd/server.crt
    - --data-dir=/var/lib/etcd
    - --initial-advertise-peer-urls=https://127.0.0.11:2380
    - --initial-cluster=cp1=https://127.0.0.11:2380
    - --key-file=/etc/kubernetes/pki/etcd/server.key
    - --listen-client-urls=https://127.0.0.1:2379,https://127.0.0.11:2379
    - --listen-peer-urls=https://127.0.0.11:2380
    - --name=cp1
    - --trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt
EOF

# --- the API server, with its own datastore; kubeadm 1.20's records of three control planes --------
etcd --name kv --data-dir "$WORK/kv" --listen-client-urls http://127.0.0.2:2379 \
        --advertise-client-urls http://127.0.0.2:2379 --listen-peer-urls http://127.0.0.2:2380 \
        --initial-advertise-peer-urls http://127.0.0.2:2380 --initial-cluster kv=http://127.0.0.2:2380 \
        > "$WORK/kv.log" 2>&1 &
PIDS+=($!)
start_kube_apiserver "$WORK/apiserver.log" --etcd-servers=http://127.0.0.2:2379 || { echo "FAIL: kube-apiserver"; exit 1; }
API_PID=${PIDS[-1]}
cp "$WORK/admin.conf" "$R/etc/kubernetes/admin.conf"
OLD=2020-01-01T00:00:00Z
node_yaml() { # NAME IP: a control plane whose kubelet stopped posting its status long ago
        printf 'apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {node-role.kubernetes.io/control-plane: ""}}\nstatus:\n  addresses: [{type: InternalIP, address: "%s"}, {type: Hostname, address: %s}]\n  conditions: [{type: Ready, status: Unknown, reason: NodeStatusUnknown, lastHeartbeatTime: "%s", lastTransitionTime: "%s"}]\n---\n' \
                "$1" "$2" "$1" "$OLD" "$OLD"
}
lease() { # NAME TIME: its Lease in kube-node-lease, renewed at TIME (MicroTime)
        printf 'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: %s, namespace: kube-node-lease}\nspec: {holderIdentity: %s, leaseDurationSeconds: 40, renewTime: "%s"}\n' \
                "$1" "$1" "$2" | kc apply -f - > /dev/null
}
now_micro() { date -u +%Y-%m-%dT%H:%M:%S.000000Z; }
for n in cp1 cp2 cp3; do node_yaml $n "$(ip_of $n)"; done | kc create -f - > /dev/null || { echo "FAIL: cannot create the Nodes"; exit 1; }
kc create namespace kube-node-lease > /dev/null 2>&1 # the API server makes it too, on its own schedule
lease cp1 "$(now_micro)" && lease cp2 "$(now_micro)" && lease cp3 2020-01-01T00:00:00.000000Z ||
        { echo "FAIL: cannot create the Leases"; exit 1; }
python3 - "$WORK/kubeadm-config.json" << 'PY'
import json, sys
status = "apiEndpoints:\n" + "".join("  cp%d:\n    advertiseAddress: 127.0.0.1%d\n    bindPort: 6443\n" % (i, i) for i in (1, 2, 3)) + \
    "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterStatus\n"
config = "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\nkubernetesVersion: v1.20.2\n"
json.dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kubeadm-config", "namespace": "kube-system"},
           "data": {"ClusterStatus": status, "ClusterConfiguration": config}}, open(sys.argv[1], "w"))
PY
kc create -f "$WORK/kubeadm-config.json" > /dev/null || { echo "FAIL: cannot create kubeadm-config"; exit 1; }
endpoints() { kc get cm -n kube-system kubeadm-config -o jsonpath='{.data.ClusterStatus}' |
        python3 -c 'import sys, yaml; print(" ".join(sorted(yaml.safe_load(sys.stdin)["apiEndpoints"])))'; }
has_config() { kc get cm -n kube-system kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' | grep -q 'kubernetesVersion: v1.20.2'; }
assert "set up: three endpoints in ClusterStatus" [ "$(endpoints)" = "cp1 cp2 cp3" ]

nr() { "$NODE_RESET" --root "$R" -o json "$@"; }
unchanged() { # what every refusal must leave as it was
        [ "$(members)" = "cp1 cp2 cp3 " ] && [ "$(endpoints)" = "cp1 cp2 cp3" ] && kc get node cp1 cp2 cp3 > /dev/null
}

# --- refusals ---------------------------------------------------------------------------------------
nr forget --yes cp1 > "$WORK/own.json" 2> "$WORK/own.err"; rc=$?
assert "own node: refused (exit 3, got $rc)" [ "$rc" -eq 3 ]
assert "own node: the report says it is the node forget runs on, every row refused" jq_ "$WORK/own.json" \
        "'cp1 is the node forget runs on' in actions(r, kind='etcd-member')[0]['skip_reason'] and all(a.get('skip_reason') for a in actions(r, phase='forget')) and r['hostname'] == 'cp1'"
assert "own node: nothing changed" unchanged
# cp1 with an external etcd: no member of its own to tell it by, its Node name does.
X=$WORK/cp1-external
mkdir -p "$X/etc/kubernetes" && echo cp1 > "$X/etc/hostname" && cp "$WORK/admin.conf" "$X/etc/kubernetes/admin.conf"
printf 'apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\netcd:\n  external:\n    endpoints: [https://127.0.0.11:2379]\n' \
        > "$X/etc/kubernetes/kubeadm-config.yaml"
"$NODE_RESET" --root "$X" -o json forget --yes cp1 > "$WORK/own-ext.json" 2> /dev/null; rc=$?
assert "own node, external etcd: refused (exit 3, got $rc), nothing changed" [ "$rc" -eq 3 ] && unchanged
assert "own node, external etcd: by its name, no etcd row" jq_ "$WORK/own-ext.json" \
        "[a['kind'] for a in actions(r, phase='forget')] == ['kubeadm-endpoint', 'node-object'] and 'cp1 is the node forget runs on' in actions(r, kind='node-object')[0]['skip_reason']"
# No credentials: the dry run exits as the run would.
mkdir -p "$WORK/bare/etc" && echo op > "$WORK/bare/etc/hostname"
"$NODE_RESET" --root "$WORK/bare" -o json forget --plan cp3 > /dev/null 2>&1; rc=$?
"$NODE_RESET" --root "$WORK/bare" -o json forget --yes cp3 > /dev/null 2>&1; rc2=$?
assert "no credentials: --plan exits 1, as the run does ($rc, $rc2)" [ "$rc" -eq 1 -a "$rc2" -eq 1 ]

nr forget --yes cp3 > "$WORK/alive.json" 2> "$WORK/alive.err"; rc=$?
assert "a member that answers: refused (exit 3, got $rc)" [ "$rc" -eq 3 ]
assert "a member that answers: the report says so" jq_ "$WORK/alive.json" \
        "'still answers' in actions(r, kind='etcd-member')[0]['skip_reason'] and all(a.get('skip_reason') for a in actions(r, phase='forget'))"
nr forget --yes --force cp3 > "$WORK/alive-force.json" 2> /dev/null; rc=$?
assert "a member that answers, --force: refused all the same (exit 3, got $rc)" [ "$rc" -eq 3 ] &&
        jq_ "$WORK/alive-force.json" "'still answers' in actions(r, kind='etcd-member')[0]['skip_reason']"
assert "a member that answers: nothing changed" unchanged

nr forget --plan cp2 > "$WORK/fresh.json" 2> /dev/null; rc=$?
assert "a Node heard from within --stale-for: refused (exit 3, got $rc)" [ "$rc" -eq 3 ]
assert "a Node heard from within --stale-for: its Lease named, every row refused" jq_ "$WORK/fresh.json" \
        "all('last heard from' in a['skip_reason'] and 'Lease' in a['skip_reason'] and '--stale-for 5m' in a['skip_reason'] for a in actions(r, phase='forget'))"
assert "a Node heard from within --stale-for: nothing changed" unchanged

# --- cp3 gone for good ------------------------------------------------------------------------------
stop_etcd cp3
rm -rf "$WORK/cp3/data"
nr forget --plan cp3 > "$WORK/plan.json"; rc=$?
assert "plan: exit 0" [ "$rc" -eq 0 ]
assert "plan: the member, the ClusterStatus entry and the Node, each with something to do" jq_ "$WORK/plan.json" \
        "[a['kind'] for a in actions(r, phase='forget')] == ['etcd-member', 'kubeadm-endpoint', 'node-object'] and all(a['result'] == 'planned' and not a.get('skip_reason') for a in actions(r, phase='forget'))"
assert "plan: nothing changed" unchanged

nr forget cp3 < /dev/null > /dev/null 2> "$WORK/noyes.err"; rc=$?
assert "without --yes and no terminal: refused (exit 3)" [ "$rc" -eq 3 ]

nr forget --yes cp3 > "$WORK/run.json" 2> "$WORK/run.err"; rc=$?
assert "forget cp3: exit 0" [ "$rc" -eq 0 ]
assert "forget cp3: three rows changed, verified clean" jq_ "$WORK/run.json" \
        "[a['result'] for a in actions(r, phase='forget')] == ['changed'] * 3 and r['verdict'] == 'clean'"
assert "forget cp3: two members left" [ "$(members)" = "cp1 cp2 " ]
assert "forget cp3: the two are healthy" healthy https://127.0.0.11:2379,https://127.0.0.12:2379
assert "forget cp3: ClusterStatus without cp3" [ "$(endpoints)" = "cp1 cp2" ]
assert "forget cp3: the ClusterConfiguration is kept" has_config
no_node() { ! kc get node "$1" > /dev/null 2>&1; }
has_node() { kc get node "$@" > /dev/null 2>&1; }
assert "forget cp3: no Node cp3" no_node cp3
assert "forget cp3: Nodes cp1 and cp2 stay" has_node cp1 cp2

nr forget --yes cp3 > "$WORK/again.json" 2> "$WORK/again.err"; rc=$?
assert "again: exit 0, nothing to do" [ "$rc" -eq 0 ]
assert "again: no row with something done" jq_ "$WORK/again.json" \
        "all(a['result'] == 'unchanged' for a in actions(r, phase='forget'))"
# --- cp3's address now cp4's: a live member on a dead Node's address is never the dead node's -------
kc create -f <(node_yaml cp3 "$(ip_of cp3)") > /dev/null && lease cp3 2020-01-01T00:00:00.000000Z
dir4=$WORK/cp4/pki
etcd_certs "$dir4" "$(ip_of cp3)" && mkdir -p "$WORK/cp4/data" || { echo "FAIL: certificates of cp4"; exit 1; }
for _ in $(seq 50); do ctl https://127.0.0.11:2379 member add cp4 --peer-urls https://127.0.0.13:2380 > /dev/null 2>&1 && break; sleep 0.3; done
dir_of() { case $1 in cp1) echo "$EP" ;; cp4) echo "$dir4" ;; *) echo "$WORK/$1/pki" ;; esac; }
data_of() { case $1 in cp1) echo "$R/var/lib/etcd" ;; *) echo "$WORK/$1/data" ;; esac; }
ip_of() { case $1 in cp4) echo 127.0.0.13 ;; *) echo "127.0.0.1${1#cp}" ;; esac; }
CLUSTER=cp1=https://127.0.0.11:2380,cp2=https://127.0.0.12:2380,cp4=https://127.0.0.13:2380 start_etcd cp4 existing
wait_healthy https://127.0.0.13:2379 || { echo "FAIL: cp4 did not join"; tail -n 5 "$WORK/cp4.log"; exit 1; }
assert "cp4 joined on cp3's old address" [ "$(members)" = "cp1 cp2 cp4 " ]
nr forget --yes cp3 > "$WORK/stale-address.json" 2> /dev/null; rc=$?
assert "stale address: exit 0 (got $rc)" [ "$rc" -eq 0 ]
assert "stale address: cp4's member is not cp3's, said so; the Node went" jq_ "$WORK/stale-address.json" \
        "actions(r, kind='etcd-member')[0]['result'] == 'unchanged' and 'member cp4 has a peer URL on cp3' in actions(r, kind='etcd-member')[0]['detail'] and actions(r, kind='node-object')[0]['result'] == 'changed'"
assert "stale address: cp4 is still a member, healthy" [ "$(members)" = "cp1 cp2 cp4 " ] && healthy https://127.0.0.13:2379
assert "stale address: no Node cp3, cp1 and cp2 stay" no_node cp3 && has_node cp1 cp2

# --- cp4 goes, then the 2-member cluster loses cp2: its removal could not commit ---------------------
stop_etcd cp4
kc create -f <(node_yaml cp4 127.0.0.13) > /dev/null && lease cp4 2020-01-01T00:00:00.000000Z
nr forget --yes cp4 > "$WORK/cp4.json" 2> /dev/null; rc=$?
assert "forget cp4: exit 0 (got $rc), members cp1 cp2" [ "$rc" -eq 0 -a "$(members)" = "cp1 cp2 " ]
stop_etcd cp2
lease cp2 2020-01-01T00:00:00.000000Z
nr forget --yes cp2 > "$WORK/two.json" 2> /dev/null; rc=$?
assert "two members, cp2 just dead: refused (exit 3, got $rc)" [ "$rc" -eq 3 ]
assert "two members, cp2 just dead: the report explains the quorum" jq_ "$WORK/two.json" \
        "'cannot commit now' in actions(r, kind='etcd-member')[0]['skip_reason'] and 'of the 2 voting members (2)' in actions(r, kind='etcd-member')[0]['skip_reason']"
assert "two members, cp2 just dead: cp1 and cp2 still members, Node cp2 kept" \
        [ "$(members)" = "cp1 cp2 " ] && has_node cp2
schema_valid "$WORK"/own.json "$WORK"/own-ext.json "$WORK"/alive.json "$WORK"/fresh.json "$WORK"/plan.json \
        "$WORK"/run.json "$WORK"/again.json "$WORK"/stale-address.json "$WORK"/two.json
assert "every report matches the schema" [ $? -eq 0 ]
# The API server before its datastore: stopped after it, it retries for 20 s to say goodbye.
kill "$API_PID"; wait "$API_PID" 2> /dev/null
finish
