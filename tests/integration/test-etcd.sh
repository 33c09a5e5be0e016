#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The backup and etcd phases against a real etcd (Debian's etcd-server 3.4) in a private network
# namespace: 3-member TLS clusters on 127.0.0.1x:2379/2380 with kubeadm's file layout under --root
# (member m1 is "this node"). The node leaves and a healthy 2-member cluster remains; a rerun is
# unchanged; the last member is kept with its data; two members down end within the deadline with the
# reason; hostile TLS peers stay bounded; the backup is 0700/0600 with a valid etcd snapshot, is never
# removed by a manifest, and a backup that cannot be written stops the run before anything is deleted.
# etcdctl and openssl only build and check the fixtures.

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
in_private_ns "$@"

command -v etcd > /dev/null 2>&1 || skip "etcd is not installed (apt-get install etcd-server etcd-client)"
require_cmd etcdctl openssl python3 prlimit
REPORT="$TOP/tests/integration/report.py"
HOSTILE="$O/tests/grpc-hostile"
[ -x "$HOSTILE" ] || skip "$HOSTILE is not built (make check builds it)"
jq_() { "$REPORT" "$@" > /dev/null; }  # jq_ FILE EXPR: true when EXPR holds
elapsed_ms() { echo $((($(date +%s%N) - $1) / 1000000)); }

PIDS=()
eval "set -- $(trap -p EXIT)"
trap 'for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null; done; wait 2> /dev/null; '"$3" EXIT

# --- certificates: one CA, kubeadm's names ------------------------------------------------------
CA="$WORK/ca"
mkdir -p "$CA"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=etcd-ca \
        -keyout "$CA/ca.key" -out "$CA/ca.crt" 2> /dev/null || { echo "FAIL: openssl CA"; exit 1; }
cert() { # DIR NAME CN SAN EKU
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$3" \
                -keyout "$1/$2.key" -out "$1/$2.csr" 2> /dev/null &&
        openssl x509 -req -in "$1/$2.csr" -CA "$CA/ca.crt" -CAkey "$CA/ca.key" -CAcreateserial -days 2 \
                -out "$1/$2.crt" -extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=%s\n' "$4" "$5") 2> /dev/null &&
        rm -f "$1/$2.csr"
}
member_certs() { # DIR IP
        mkdir -p "$1" && cp "$CA/ca.crt" "$CA/ca.key" "$1/" &&
        cert "$1" server "$(basename "$1")" "IP:$2,IP:127.0.0.1,DNS:localhost" serverAuth,clientAuth &&
        cert "$1" peer "$(basename "$1")" "IP:$2,IP:127.0.0.1,DNS:localhost" serverAuth,clientAuth &&
        cert "$1" healthcheck-client kube-etcd-healthcheck-client "DNS:client" clientAuth
}

# --- a cluster: member i listens on 127.0.0.1i; m1's files are the node's (kubeadm layout) --------
ip_of() { echo "127.0.0.1$1"; }
cluster_of() { local s="" i; for i in "$@"; do s="$s${s:+,}m$i=https://$(ip_of "$i"):2380"; done; echo "$s"; }

# new_root ROOT: kubeadm's tree for member m1
new_root() {
        local root=$1 pki="$1/etc/kubernetes/pki/etcd"
        mkdir -p "$root/etc/kubernetes/manifests" "$root/var/lib/etcd" "$root/var/lib/kubelet/pki"
        member_certs "$pki" "$(ip_of 1)" || return 1
        echo "apiVersion: v1" > "$root/etc/kubernetes/admin.conf"
        echo "kind: KubeletConfiguration" > "$root/var/lib/kubelet/config.yaml"
        echo "cert" > "$root/var/lib/kubelet/pki/kubelet-client-2026.pem"
        ln -s /var/lib/kubelet/pki/kubelet-client-2026.pem "$root/var/lib/kubelet/pki/kubelet-client-current.pem"
        chmod 0644 "$root/etc/kubernetes/admin.conf"
}

# etcd_yaml ROOT CLUSTER: the static pod manifest kubeadm writes for m1 (node paths)
etcd_yaml() {
        local ip; ip=$(ip_of 1)
        cat > "$1/etc/kubernetes/manifests/etcd.yaml" << EOF
apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: kube-system
spec:
  containers:
  - command:
    - etcd
    - --advertise-client-urls=https://$ip:2379
    - --cert-file=/etc/kubernetes/pki/etcd/server.crt
    - --client-cert-auth=true
    - --data-dir=/var/lib/etcd
    - --initial-advertise-peer-urls=https://$ip:2380
    - --initial-cluster=$2
    - --key-file=/etc/kubernetes/pki/etcd/server.key
    - --listen-client-urls=https://127.0.0.1:2379,https://$ip:2379
    - --listen-peer-urls=https://$ip:2380
    - --name=m1
    - --peer-cert-file=/etc/kubernetes/pki/etcd/peer.crt
    - --peer-client-cert-auth=true
    - --peer-key-file=/etc/kubernetes/pki/etcd/peer.key
    - --peer-trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt
    - --trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt
    image: registry.k8s.io/etcd:3.5.12-0
    name: etcd
EOF
}

# start_member ROOT I CLUSTER: member mI, data and certs beneath ROOT (m1: the node's own paths)
start_member() {
        local root=$1 i=$2 ip pki data
        ip=$(ip_of "$i")
        if [ "$i" = 1 ]; then pki="$root/etc/kubernetes/pki/etcd"; data="$root/var/lib/etcd"
        else pki="$root/../m$i/pki"; data="$root/../m$i/data"; member_certs "$pki" "$ip" || return 1; fi
        mkdir -p "$data"
        local listen="https://$ip:2379"
        [ "$i" = 1 ] && listen="https://127.0.0.1:2379,$listen"
        etcd --name "m$i" --data-dir "$data" --listen-client-urls "$listen" \
                --advertise-client-urls "https://$ip:2379" --listen-peer-urls "https://$ip:2380" \
                --initial-advertise-peer-urls "https://$ip:2380" --initial-cluster "$3" \
                --initial-cluster-state new --initial-cluster-token "$(basename "$root")" \
                --client-cert-auth --trusted-ca-file "$pki/ca.crt" --cert-file "$pki/server.crt" --key-file "$pki/server.key" \
                --peer-client-cert-auth --peer-trusted-ca-file "$pki/ca.crt" --peer-cert-file "$pki/peer.crt" \
                --peer-key-file "$pki/peer.key" --logger zap --log-outputs stderr \
                > "$root/../m$i.log" 2>&1 &
        PIDS+=($!)
        eval "PID_$(basename "$root")_$i=$!"
}

# ctl ROOT ENDPOINTS ARGS...: etcdctl with m1's health check client certificate
ctl() {
        local pki="$1/etc/kubernetes/pki/etcd" eps=$2
        shift 2
        ETCDCTL_API=3 etcdctl --endpoints "$eps" --cacert "$pki/ca.crt" --cert "$pki/healthcheck-client.crt" \
                --key "$pki/healthcheck-client.key" --dial-timeout 2s --command-timeout 5s "$@"
}
eps_of() { local s="" i; for i in "$@"; do s="$s${s:+,}https://$(ip_of "$i"):2379"; done; echo "$s"; }

# cluster ROOT I...: start these members and wait until every one is healthy
cluster() {
        local root=$1 c
        shift
        c=$(cluster_of "$@")
        new_root "$root" && etcd_yaml "$root" "$c" || return 1
        for i in "$@"; do start_member "$root" "$i" "$c" || return 1; done
        for _ in $(seq 100); do
                ctl "$root" "$(eps_of "$@")" endpoint health > /dev/null 2>&1 && return 0
                sleep 0.2
        done
        echo "cluster in $root did not become healthy:"; tail -n 5 "$root"/../m*.log
        return 1
}
members() { ctl "$1" "$2" member list -w simple 2> /dev/null | awk -F', ' '{print $3}' | sort | tr '\n' ' '; }
stop_cluster() { # ROOT: every member of it, by the PIDs this test started
        local v p
        for v in $(compgen -v "PID_$(basename "$1")_"); do p=${!v}; kill "$p" 2> /dev/null; wait "$p" 2> /dev/null; done
}
agent() { "$NODE_RESET" "$@"; }

# --- a 3-member cluster: the node's member leaves, a healthy 2-member cluster remains -------------
R="$WORK/c3/root"
mkdir -p "$R"
cluster "$R" 1 2 3 || { echo "FAIL: cannot start a 3-member etcd cluster"; exit 1; }
assert "3 members before" test "$(members "$R" "$(eps_of 2)")" = "m1 m2 m3 "
agent --root "$R" --phases backup,etcd -o json plan > "$WORK/plan.json"; rc=$?
assert "plan exits 0" test $rc -eq 0
assert "plan shows the member: ID in hex, name, peer URLs" jq_ "$WORK/plan.json" \
        "any(a['detail'].startswith('member ') and ' m1, peer URLs https://127.0.0.11:2380' in a['detail'] and 'of 3' in a['detail'] for a in actions(r, kind='etcd-member'))"
assert "plan changed nothing" test "$(members "$R" "$(eps_of 2)")" = "m1 m2 m3 "
assert "plan wrote no backup" test ! -e "$R/var/backups/node-reset"

t=$(date +%s%N)
agent --root "$R" --phases backup,etcd --yes -o json run > "$WORK/run1.json"; rc=$?
echo "  leave + backup in $(elapsed_ms "$t") ms"
assert "run exits 0" test $rc -eq 0
assert "the member was removed" jq_ "$WORK/run1.json" "actions(r, kind='etcd-member', result='changed')"
assert "2 members remain: m2 m3" test "$(members "$R" "$(eps_of 2 3)")" = "m2 m3 "
assert "the 2-member cluster is healthy" ctl "$R" "$(eps_of 2 3)" endpoint health
assert "the backup is listed in the report" jq_ "$WORK/run1.json" \
        "any('/etc/kubernetes/pki' in a['message'] and 'etcd snapshot of member m1' in a['message'] for a in actions(r, kind='backup', result='changed'))"
B=$(ls -d "$R"/var/backups/node-reset/*/ 2> /dev/null | head -n 1)
assert "a backup directory exists" test -n "$B"
assert "backup directories are 0700" test -z "$(find "$R/var/backups/node-reset" -type d ! -perm 0700)"
assert "backup files are 0600" test -z "$(find "$B" -type f ! -perm 0600)"
assert "the PKI, kubeconfigs, kubelet config and manifest are saved" test -f "$B/etc/kubernetes/pki/etcd/ca.key" -a \
        -f "$B/etc/kubernetes/admin.conf" -a -f "$B/var/lib/kubelet/config.yaml" -a -f "$B/etc/kubernetes/manifests/etcd.yaml"
assert "a symlink is saved as a symlink, not followed" test -L "$B/var/lib/kubelet/pki/kubelet-client-current.pem"
assert "the saved key has the original's bytes" cmp -s "$B/etc/kubernetes/pki/etcd/ca.key" "$R/etc/kubernetes/pki/etcd/ca.key"
assert "the snapshot is a valid etcd snapshot" env ETCDCTL_API=3 etcdctl snapshot status "$B/etcd-snapshot.db"

# --- idempotent: the node is no longer a member ----------------------------------------------------
agent --root "$R" --phases etcd --yes -o json run > "$WORK/run2.json"; rc=$?
assert "rerun exits 0" test $rc -eq 0
assert "rerun: the member is unchanged (not a member)" jq_ "$WORK/run2.json" \
        "any('not a member' in a['message'] for a in actions(r, kind='etcd-member', result='unchanged'))"
assert "rerun: still m2 m3" test "$(members "$R" "$(eps_of 2 3)")" = "m2 m3 "
stop_cluster "$R"
