#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# forget NODE on a surviving k3s or rke2 server against real components, in private namespaces: a
# 3-member etcd 3.5 cluster laid out as k3s lays out its embedded etcd (server/db/etcd/{config,name},
# server/tls/etcd/*; members named NODE-<8 hex> as k3s's setName does; srv1-3 on 127.0.0.11-13,
# srv1's files beneath --root) and a real kube-apiserver 1.20 storing into srv1's member with k3s's
# etcd client certificate, reached through k3s's admin kubeconfig (/etc/rancher/k3s/k3s.yaml; rke2:
# rke2.yaml, with its data directory moved by data-dir in /etc/rancher/rke2/config.yaml, srv1 a
# server that joined the cluster). The Nodes' Ready heartbeats are old (no Leases). For each: refused
# (exit 3, nothing changed) for the node forget runs on and for a member that still answers; from a
# machine with no etcd of its own (a k3s agent's tree, the admin kubeconfig given) a server Node is
# refused unless --etcd-gone; once srv3's etcd is gone for good the plan names srv3's member and
# changes nothing, the run leaves a healthy 2-member cluster and no Node srv3 (srv1, srv2 kept), and
# a second run has nothing to do.
# Each Node carries k3s's finalizer (wrangler.cattle.io/managed-etcd-controller), which k3s's etcd
# member controller drops once the Node is being deleted and its member is gone (played here by a
# loop): the run waits for the Node to go; one that stays held (k3s layout, srv4) is reported with
# its finalizer (exit 1) and gone on the next run once released.
. "$(dirname "$0")/lib.sh"
etcd_matrix 3.5 "$@" # k3s and rke2 embed etcd 3.5 (since v1.22)
require_cmd openssl python3 unshare curl etcdctl
command -v etcd > /dev/null 2>&1 || skip "etcd is not installed (apt-get install etcd-server)"
in_private_ns -n "$@"
. "$TOP/tests/integration/fixtures/kube-api.sh"

test_ca "$WORK/etcd-ca" || { echo "FAIL: openssl CA"; exit 1; }
mkdir -p "$WORK/client" && k3s_tls_dir "$WORK/client" 127.0.0.1 || { echo "FAIL: openssl"; exit 1; }
ctl() { ETCDCTL_API=3 etcdctl --endpoints "$1" --cacert "$CA/ca.crt" --cert "$WORK/client/client.crt" \
        --key "$WORK/client/client.key" --dial-timeout 2s --command-timeout 5s "${@:2}"; }
members() { ctl https://127.0.0.11:2379 member list -w simple 2> /dev/null |
        awk -F', ' '{print $3}' | sort | tr '\n' ' '; }
healthy() { ctl "$1" endpoint health > /dev/null 2>&1; }
wait_healthy() { for _ in $(seq 100); do healthy "$1" && return 0; sleep 0.2; done; return 1; }
ALL=https://127.0.0.11:2379,https://127.0.0.12:2379,https://127.0.0.13:2379

# k3s_tree ROOT KIND DATA-DIR MEMBER [CLUSTER]: srv1's server/ beneath ROOT as k3s writes it
# (pkg/etcd/etcd.go: nameFile, cluster(); pkg/daemons/executor: ETCDConfig.ToConfigFile). The first
# server's configuration names only itself in initial-cluster (newCluster); with CLUSTER, that of a
# server that joined: every member then, state existing, no initial-advertise-peer-urls (join).
k3s_tree() {
        local root=$1 kind=$2 d="$3/server" ip initial; ip=$(ip_of 1)
        if [ -n "${5:-}" ]; then
                initial="initial-cluster: $5
initial-cluster-state: existing"
        else
                initial="initial-advertise-peer-urls: https://$ip:2380
initial-cluster: $4=https://$ip:2380
initial-cluster-state: new"
        fi
        mkdir -p "$root$d/db/etcd" "$root/etc/rancher/$kind" && chmod 0700 "$root$d/db/etcd" && echo srv1 > "$root/etc/hostname" &&
        k3s_tls_dir "$root$d/tls/etcd" "$ip" || return 1
        printf '%s' "$4" > "$root$d/db/etcd/name"
        k3s_etcd_config "$root$d/db/etcd/config" "$d" "$ip" "$4" "$initial"
}

# k3s_kubeconfig: k3s's admin kubeconfig as its server writes it (names "default", inline data)
k3s_kubeconfig() {
        cat << EOF
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: $(base64 -w0 "$pki/kca.crt")
    server: $KUBE_SERVER
  name: default
contexts:
- context:
    cluster: default
    user: default
  name: default
current-context: default
kind: Config
preferences: {}
users:
- name: default
  user:
    client-certificate-data: $(base64 -w0 "$pki/kube-admin.crt")
    client-key-data: $(base64 -w0 "$pki/kube-admin.key")
EOF
}

# start_member I NAME CLUSTER TOKEN DATA TLS: member srvI; srv1 also on 127.0.0.1, as k3s listens
start_member() {
        local ip listen; ip=$(ip_of "$1"); listen="https://$ip:2379"
        [ "$1" = 1 ] && listen="$listen,https://127.0.0.1:2379"
        mkdir -p "$5" && chmod 0700 "$5"
        etcd --name "$2" --data-dir "$5" --listen-client-urls "$listen" --advertise-client-urls "https://$ip:2379" \
                --listen-peer-urls "https://$ip:2380" --initial-advertise-peer-urls "https://$ip:2380" \
                --initial-cluster "$3" --initial-cluster-state new --initial-cluster-token "$4" \
                --client-cert-auth --trusted-ca-file "$6/server-ca.crt" --cert-file "$6/server-client.crt" \
                --key-file "$6/server-client.key" --peer-client-cert-auth --peer-trusted-ca-file "$6/peer-ca.crt" \
                --peer-cert-file "$6/peer-server-client.crt" --peer-key-file "$6/peer-server-client.key" \
                --election-timeout 5000 --heartbeat-interval 500 --logger zap --log-outputs stderr \
                > "$WORK/$2.log" 2>&1 &
        PIDS+=($!)
        eval "M_$1=$!"
}
stop_member() { local v="M_$1"; [ -n "${!v:-}" ] && { kill "${!v}" 2> /dev/null; wait "${!v}" 2> /dev/null; }; eval "M_$1="; }

# k3s_release NODE MEMBER: k3s's etcd member controller on a Node being deleted (pkg/etcd/
# member_controller.go onRemove: RemovePeer finds no member left, so wrangler drops the finalizer)
k3s_release() {
        for _ in $(seq 120); do
                if [ -n "$(kc get node "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2> /dev/null)" ] &&
                        ! members | grep -qw -- "$2"; then
                        kc patch node "$1" --type=merge -p '{"metadata":{"finalizers":null}}' > /dev/null
                        return
                fi
                sleep 0.25
        done
}
FINALIZER=wrangler.cattle.io/managed-etcd-controller
# The Ready condition of a kubelet that stopped posting its status long ago (no Lease: k3s's kubelet
# would renew one; here none is made)
NOT_READY='  conditions: [{type: Ready, status: Unknown, reason: NodeStatusUnknown, lastHeartbeatTime: "2020-01-01T00:00:00Z", lastTransitionTime: "2020-01-01T00:00:00Z"}]
'
no_node() { ! kc get node "$1" > /dev/null 2>&1; }
has_node() { kc get node "$@" > /dev/null 2>&1; }

# layout KIND DATA-DIR SUFFIX1 SUFFIX2 SUFFIX3 [joined]: the whole story on one layout; "joined":
# srv1 joined the others rather than starting the cluster
layout() {
        local kind=$1 dd=$2 R="$WORK/$1/root" t="$1:" i names cluster="" api rc ctl_pid
        names=("" "srv1-$3" "srv2-$4" "srv3-$5")
        for i in 1 2 3; do cluster="$cluster${cluster:+,}${names[$i]}=https://$(ip_of $i):2380"; done
        k3s_tree "$R" "$kind" "$dd" "${names[1]}" ${6:+"$cluster"} || { fail "$t the tree of srv1"; return; }
        [ "$dd" = "/var/lib/rancher/$kind" ] || echo "data-dir: $dd" > "$R/etc/rancher/$kind/config.yaml"
        for i in 1 2 3; do
                if [ $i = 1 ]; then
                        start_member 1 "${names[1]}" "$cluster" "$kind" "$R$dd/server/db/etcd" "$R$dd/server/tls/etcd"
                else
                        k3s_tls_dir "$WORK/$kind/srv$i-tls" "$(ip_of $i)" || { fail "$t certificates of srv$i"; return; }
                        start_member $i "${names[$i]}" "$cluster" "$kind" "$WORK/$kind/srv$i-data" "$WORK/$kind/srv$i-tls"
                fi
        done
        wait_healthy "$ALL" || { fail "$t the etcd cluster did not become healthy"; tail -n 5 "$WORK"/srv*.log; return; }

        # k3s's API server stores into https://127.0.0.1:2379 with its etcd client certificate
        start_kube_apiserver "$WORK/$kind-apiserver.log" --etcd-servers=https://127.0.0.1:2379 \
                --etcd-cafile="$R$dd/server/tls/etcd/server-ca.crt" --etcd-certfile="$R$dd/server/tls/etcd/client.crt" \
                --etcd-keyfile="$R$dd/server/tls/etcd/client.key" || { fail "$t kube-apiserver"; return; }
        api=${PIDS[-1]}
        k3s_kubeconfig > "$R/etc/rancher/$kind/$kind.yaml" && chmod 0600 "$R/etc/rancher/$kind/$kind.yaml"
        # The Nodes as k3s's agent and its etcd metadata controller leave them (InternalIP: --node-ip,
        # the etcd role label, the member's name and address as annotations).
        for i in 1 2 3; do
                printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: srv%s\n  finalizers: [%s]\n  labels: {node-role.kubernetes.io/etcd: "true", node-role.kubernetes.io/control-plane: "true"}\n  annotations: {etcd.%s.cattle.io/node-name: %s, etcd.%s.cattle.io/node-address: "%s"}\nstatus:\n  addresses: [{type: InternalIP, address: "%s"}, {type: Hostname, address: srv%s}]\n%s---\n' \
                        "$i" "$FINALIZER" "$kind" "${names[$i]}" "$kind" "$(ip_of $i)" "$(ip_of $i)" "$i" "$NOT_READY"
        done | kc create -f - > /dev/null || { fail "$t cannot create the Nodes"; return; }

        nr() { "$NODE_RESET" --root "$R" -o json "$@"; }
        unchanged() { [ "$(members)" = "${names[1]} ${names[2]} ${names[3]} " ] && has_node srv1 srv2 srv3; }
        assert "$t set up: members ${names[*]:1}" unchanged

        nr forget --yes srv1 > "$WORK/$kind-own.json" 2> "$WORK/$kind-own.err"; rc=$?
        assert "$t own node: refused (exit 3, got $rc)" [ "$rc" -eq 3 ]
        assert "$t own node: the report names srv1 as the node forget runs on" jq_ "$WORK/$kind-own.json" \
                "'srv1 is the node forget runs on' in actions(r, kind='etcd-member')[0]['skip_reason']"
        assert "$t own node: nothing changed" unchanged
        # Named otherwise (--node-name), its own member still is its own.
        nr --node-name srv1-renamed forget --yes srv1 > "$WORK/$kind-own2.json" 2> /dev/null; rc=$?
        assert "$t own member: refused (exit 3, got $rc)" [ "$rc" -eq 3 ] && jq_ "$WORK/$kind-own2.json" \
                "'own member (${names[1]})' in actions(r, kind='etcd-member')[0]['skip_reason']"
        assert "$t own member: nothing changed" unchanged

        nr forget --yes srv3 > "$WORK/$kind-alive.json" 2> "$WORK/$kind-alive.err"; rc=$?
        assert "$t a member that answers: refused (exit 3, got $rc)" [ "$rc" -eq 3 ]
        assert "$t a member that answers: the report says so, every row refused" jq_ "$WORK/$kind-alive.json" \
                "'still answers' in actions(r, kind='etcd-member')[0]['skip_reason'] and all(a.get('skip_reason') for a in actions(r, phase='forget'))"
        assert "$t a member that answers: nothing changed" unchanged

        # A k3s agent's tree (no etcd of its own), the server's admin kubeconfig given.
        mkdir -p "$WORK/$kind-agent/etc" && echo agent1 > "$WORK/$kind-agent/etc/hostname"
        agent_nr() { "$NODE_RESET" --root "$WORK/$kind-agent" --kubeconfig "$R/etc/rancher/$kind/$kind.yaml" -o json "$@"; }
        agent_nr forget --plan srv3 > "$WORK/$kind-agent.json" 2> /dev/null; rc=$?
        assert "$t no etcd here: a server Node is refused (exit 3, got $rc)" [ "$rc" -eq 3 ] && jq_ "$WORK/$kind-agent.json" \
                "[a['kind'] for a in actions(r, phase='forget')] == ['node-object'] and 'no etcd member to check its member with' in actions(r, kind='node-object')[0]['skip_reason']"
        agent_nr forget --plan --etcd-gone srv3 > "$WORK/$kind-agent2.json" 2> /dev/null; rc=$?
        assert "$t no etcd here, --etcd-gone: the Node's deletion is planned (exit 0, got $rc)" [ "$rc" -eq 0 ] &&
                jq_ "$WORK/$kind-agent2.json" "actions(r, kind='node-object')[0]['result'] == 'planned' and not actions(r, kind='node-object')[0].get('skip_reason')"
        assert "$t no etcd here: nothing changed" unchanged

        stop_member 3
        nr forget --plan srv3 > "$WORK/$kind-plan.json" 2> "$WORK/$kind-plan.err"; rc=$?
        assert "$t plan: exit 0 (got $rc)" [ "$rc" -eq 0 ]
        assert "$t plan: the member ${names[3]} by its peer URL, and the Node" jq_ "$WORK/$kind-plan.json" \
                "[a['kind'] for a in actions(r, phase='forget')] == ['etcd-member', 'node-object'] and all(a['result'] == 'planned' and not a.get('skip_reason') for a in actions(r, phase='forget')) and '(${names[3]})' in actions(r, kind='etcd-member')[0]['target'] and 'https://$(ip_of 3):2380' in actions(r, kind='etcd-member')[0]['detail']"
        assert "$t plan: nothing changed" unchanged
        python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["phases"]:
    for a in p["actions"]:
        print("  %s %s: %s" % (sys.argv[2], a["target"], a["detail"]))' "$WORK/$kind-plan.json" "$t"

        [ "$kind" = k3s ] && late_refusal
        rm -rf "$WORK/$kind/srv3-data"

        k3s_release srv3 "${names[3]}" &
        ctl_pid=$!
        nr forget --yes srv3 > "$WORK/$kind-run.json" 2> "$WORK/$kind-run.err"; rc=$?
        wait "$ctl_pid"
        assert "$t forget srv3: exit 0 (got $rc)" [ "$rc" -eq 0 ]
        assert "$t forget srv3: two rows changed, verified clean" jq_ "$WORK/$kind-run.json" \
                "[a['result'] for a in actions(r, phase='forget')] == ['changed'] * 2 and r['verdict'] == 'clean' and actions(r, kind='node-object')[0]['message'] == 'deleted Node srv3'"
        assert "$t forget srv3: members ${names[1]} ${names[2]} left" [ "$(members)" = "${names[1]} ${names[2]} " ]
        assert "$t forget srv3: the two are healthy" healthy https://127.0.0.11:2379,https://127.0.0.12:2379
        assert "$t forget srv3: no Node srv3" no_node srv3
        assert "$t forget srv3: Nodes srv1 and srv2 stay" has_node srv1 srv2

        nr forget --yes srv3 > "$WORK/$kind-again.json" 2> "$WORK/$kind-again.err"; rc=$?
        assert "$t again: exit 0, nothing to do (got $rc)" [ "$rc" -eq 0 ]
        assert "$t again: no row with something done" jq_ "$WORK/$kind-again.json" \
                "all(a['result'] == 'unchanged' for a in actions(r, phase='forget'))"
        [ "$kind" = k3s ] && held
        schema_valid "$WORK/$kind"-{own,own2,alive,agent,agent2,plan,run,again}.json
        assert "$t every report matches the schema" [ $? -eq 0 ]

        kill "$api" 2> /dev/null; wait "$api" 2> /dev/null
        for i in 1 2 3; do stop_member $i; done
}

# late_refusal: the plan to forget srv3 passed; before the run acts (the operator still reading the
# plan at the prompt), srv3 comes back. The member now answers and is refused, and the Node stays
# with it: deleted, it would have k3s's controller remove the member without forget's checks (the
# API server can write: a quorum answers). srv3 goes again for the rest of the test.
late_refusal() {
        local out="$WORK/$kind-late.out" confirm="$WORK/$kind-confirm" spid
        mkfifo "$confirm"
        script -q -e -c "$NODE_RESET --root $R forget srv3" /dev/null < "$confirm" > "$out" 2>&1 &
        spid=$!
        exec 3> "$confirm"
        for _ in $(seq 150); do grep -q "Type 'yes'" "$out" 2> /dev/null && break; sleep 0.2; done
        start_member 3 "${names[3]}" "$cluster" "$kind" "$WORK/$kind/srv3-data" "$WORK/$kind/srv3-tls"
        wait_healthy https://127.0.0.13:2379
        echo yes >&3
        exec 3>&-
        wait "$spid"; rc=$?
        assert "$t srv3 back after the plan: exit 1 (got $rc)" [ "$rc" -eq 1 ]
        assert "$t srv3 back after the plan: the member is refused, the Node not deleted, and it says why" \
                grep -q "not run: its etcd member stays (refused: .*still answers" "$out"
        assert "$t srv3 back after the plan: members unchanged" [ "$(members)" = "${names[1]} ${names[2]} ${names[3]} " ]
        assert "$t srv3 back after the plan: Node srv3 stays, not being deleted" has_node srv3 &&
                [ -z "$(kc get node srv3 -o jsonpath='{.metadata.deletionTimestamp}')" ]
        stop_member 3
}

# held: Node srv4 (a server whose member k3s's controller cannot find: no annotations) stays held by
# the finalizer; the run waits (bounded by --timeout here), says so and exits 1; once the finalizer
# is dropped, a second run finds it gone.
held() {
        printf 'apiVersion: v1\nkind: Node\nmetadata: {name: srv4, finalizers: [%s]}\nstatus:\n  addresses: [{type: InternalIP, address: "127.0.0.14"}]\n%s' \
                "$FINALIZER" "$NOT_READY" | kc create -f - > /dev/null || { fail "$t cannot create Node srv4"; return; }
        nr --timeout 4 forget --yes srv4 > "$WORK/$kind-held.json" 2> "$WORK/$kind-held.err"; rc=$?
        assert "$t held Node: exit 1 (got $rc)" [ "$rc" -eq 1 ]
        assert "$t held Node: the report names its finalizer, and no etcd member" jq_ "$WORK/$kind-held.json" \
                "'$FINALIZER' in actions(r, kind='node-object')[0]['message'] and actions(r, kind='etcd-member')[0]['result'] == 'unchanged' and r['verdict'] != 'clean'"
        assert "$t held Node: being deleted, the member list unchanged" \
                [ -n "$(kc get node srv4 -o jsonpath='{.metadata.deletionTimestamp}')" -a "$(members)" = "${names[1]} ${names[2]} " ]
        python3 -c 'import json, sys; print("  %s %s" % (sys.argv[2], [a["message"] for p in json.load(open(sys.argv[1]))["phases"] for a in p["actions"] if a["kind"] == "node-object"][0]))' \
                "$WORK/$kind-held.json" "$t"
        kc patch node srv4 --type=merge -p '{"metadata":{"finalizers":null}}' > /dev/null
        nr forget --yes srv4 > "$WORK/$kind-held2.json" 2> "$WORK/$kind-held2.err"; rc=$?
        assert "$t held Node released: the next run has nothing to do (exit $rc)" jq_ "$WORK/$kind-held2.json" \
                "all(a['result'] == 'unchanged' for a in actions(r, phase='forget')) and r['verdict'] == 'clean'"
        no_node srv4 && schema_valid "$WORK/$kind"-held{,2}.json
        assert "$t held Node: gone, reports match the schema" [ $? -eq 0 ]
}

t0=$(date +%s%N)
layout k3s /var/lib/rancher/k3s 1a2b3c4d 5e6f7a8b 9c0d1e2f
echo "  k3s layout: $(elapsed_ms "$t0") ms"
t0=$(date +%s%N)
layout rke2 /srv/rke2-data c3d4e5f6 0718293a b4c5d6e7 joined
echo "  rke2 layout: $(elapsed_ms "$t0") ms"
finish
