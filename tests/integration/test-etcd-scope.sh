#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Who owns an etcd, against a real etcd (3.5, as k3s and rke2 embed it; also 3.4 with
# NR_ETCD_MATRIX=full, lib.sh's etcd_matrix) in a second network namespace (the tree's machine),
# each tree laid out as its installer lays it out (--root): a kubeadm node whose
# ClusterConfiguration names etcd.external beside the etcd static pod kubeadm wrote (its manifest, PKI
# and data stay), and a kubeadm node whose etcd is a site's own etcd.service reading /etc/etcd.env
# (with and without etcd.external: never taken for kubespray's): the etcd keeps running with its
# member, keys and data, and the plan says out of scope; k3s's embedded etcd (three members: this one
# leaves first, then its data goes, while the running machine's own etcd answers on 127.0.0.1:2379,
# k3s's fixed endpoint, untouched; one member: kept unless the backup holds its snapshot; peers gone:
# bounded by --etcd-timeout) and rke2's. etcdctl and openssl only build and check the fixtures.

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
etcd_matrix 3.5 "$@" # k3s and rke2 embed etcd 3.5 (since v1.22): their layouts run on it
in_private_ns "$@"

command -v etcd > /dev/null 2>&1 || skip "etcd is not installed (apt-get install etcd-server etcd-client)"
require_cmd etcdctl openssl python3
kill_at_exit
lan_up || { echo "FAIL: cannot make the second network namespace"; exit 1; }

# --- one CA; k3s's certificate names (pkg/daemons/control/server.go) -----------------------------
test_ca "$WORK/ca" || { echo "FAIL: openssl CA"; exit 1; }
eps_of() { local s="" i; for i in "$@"; do s="$s${s:+,}https://$(ip_of "$i"):2379"; done; echo "$s"; }

# start_etcd NAME DATA TLS IP CLUSTER [STATE] [EXTRA-LISTEN]: one member on the lan (HERE=env: in this
# namespace, the running machine), PID in $LAST
start_etcd() {
        local listen="https://$4:2379${7:+,$7}"
        mkdir -p "$2" && chmod 0700 "$2"
        ${HERE:-$LAN} etcd --name "$1" --data-dir "$2" --listen-client-urls "$listen" --advertise-client-urls "https://$4:2379" \
                --listen-peer-urls "https://$4:2380" --initial-advertise-peer-urls "https://$4:2380" \
                --initial-cluster "$5" --initial-cluster-state "${6:-new}" --initial-cluster-token "$(echo "$5" | md5sum | cut -c1-8)" \
                --client-cert-auth --trusted-ca-file "$3/server-ca.crt" --cert-file "$3/server-client.crt" \
                --key-file "$3/server-client.key" --peer-client-cert-auth --peer-trusted-ca-file "$3/peer-ca.crt" \
                --peer-cert-file "$3/peer-server-client.crt" --peer-key-file "$3/peer-server-client.key" \
                --logger zap --log-outputs stderr > "$WORK/$1.log" 2>&1 &
        LAST=$!
        PIDS+=("$LAST")
}
ctl() { # ENDPOINTS ARGS...: etcdctl with a client certificate kept outside every tree
        local eps=$1
        shift
        ETCDCTL_API=3 etcdctl --endpoints "$eps" --cacert "$CA/ca.crt" --cert "$WORK/client/client.crt" \
                --key "$WORK/client/client.key" --dial-timeout 2s --command-timeout 5s "$@"
}
members() { ctl "$1" member list -w simple 2> /dev/null | awk -F', ' '{print $3}' | sort | tr '\n' ' '; }
healthy() { for _ in $(seq 100); do ctl "$1" endpoint health > /dev/null 2>&1 && return 0; sleep 0.2; done; return 1; }
files_of() { (cd "$1" && find . | sort | md5sum); }
# Under --root only backup, mounts and files run unless named: these act on the tree and on this
# namespace only (no systemd is reachable here; processes are matched by their root directory).
PH=backup,etcd,services-late,processes,mounts,files
mkdir -p "$WORK/client" && k3s_tls_dir "$WORK/client" 127.0.0.1 || { echo "FAIL: openssl"; exit 1; }

# --- (a) kubeadm with etcd.external beside the etcd static pod kubeadm wrote: out of scope, so the pod's
# manifest, its PKI and its data stay (the member would be left dead in its cluster); the etcd runs on
# the tree's own certificates --------------------------------------------------------------------------
R="$WORK/ext/root"
P=/etc/kubernetes/pki/etcd
mkdir -p "$R/etc/kubernetes/manifests" "$R/etc/kubernetes/pki" "$R/var/lib/kubelet"
cat > "$R/etc/kubernetes/kubeadm-config.yaml" << EOF2
apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
etcd:
  external:
    endpoints:
    - https://$(ip_of 1):2379
    caFile: $P/server-ca.crt
EOF2
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-apiserver\nspec:\n  containers:\n  - name: kube-apiserver\n    command: [kube-apiserver, --etcd-servers=https://%s:2379]\n' \
        "$(ip_of 1)" > "$R/etc/kubernetes/manifests/kube-apiserver.yaml"
cat > "$R/etc/kubernetes/manifests/etcd.yaml" << EOF2
apiVersion: v1
kind: Pod
metadata: {name: etcd, namespace: kube-system}
spec:
  containers:
  - name: etcd
    command:
    - etcd
    - --name=ext
    - --data-dir=/var/lib/etcd
    - --advertise-client-urls=https://$(ip_of 1):2379
    - --listen-client-urls=https://127.0.0.1:2379,https://$(ip_of 1):2379
    - --cert-file=$P/server-client.crt
    - --key-file=$P/server-client.key
    - --trusted-ca-file=$P/server-ca.crt
    - --peer-cert-file=$P/peer-server-client.crt
    - --peer-key-file=$P/peer-server-client.key
EOF2
echo "apiVersion: v1" > "$R/etc/kubernetes/admin.conf"
mkdir -p "$R/etc/systemd/system/kubelet.service.d" && echo "[Service]" > "$R/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"
k3s_tls_dir "$R$P" "$(ip_of 1)" && cp "$CA/ca.key" "$R$P/ca.key"
start_etcd ext "$R/var/lib/etcd" "$R$P" "$(ip_of 1)" "ext=https://$(ip_of 1):2380"
EXT_PID=$LAST
healthy "$(eps_of 1)" || { echo "FAIL: the external etcd did not start"; tail -5 "$WORK/ext.log"; exit 1; }
ctl "$(eps_of 1)" put /site/key kept > /dev/null
EXT_ID=$(ctl "$(eps_of 1)" member list -w simple | cut -d, -f1)
"$NODE_RESET" --root "$R" --phases "$PH" -o json plan > "$WORK/ext-plan.json"
assert "external: detection says external beside the static pod, with the reason" jq_ "$WORK/ext-plan.json" \
        "r['etcd']['name'] == 'external' and 'beside an etcd static pod' in str(r['etcd']['evidence'])"
assert "external: the etcd row says out of scope in one line" jq_ "$WORK/ext-plan.json" \
        "len([a for a in actions(r, kind='etcd-member') if 'out of scope' in (a.get('skip_reason') or '')]) == 1"
assert "external: 'empty /var/lib/etcd' is out of scope" jq_ "$WORK/ext-plan.json" \
        "any(a['target'] == '/var/lib/etcd' and 'out of scope' in (a.get('skip_reason') or '') for a in actions(r, phase='files'))"
"$NODE_RESET" --root "$R" --phases "$PH" --yes -o json run > "$WORK/ext.json"; rc=$?
assert "external: run exits 0 ($rc)" test $rc -eq 0
assert "external: the rest of kubeadm's files went (admin.conf, kube-apiserver.yaml)" \
        test ! -e "$R/etc/kubernetes/admin.conf" -a ! -e "$R/etc/kubernetes/manifests/kube-apiserver.yaml"
assert "external: the etcd still runs" kill -0 "$EXT_PID"
assert "external: it keeps its member" test "$(ctl "$(eps_of 1)" member list -w simple | cut -d, -f1)" = "$EXT_ID"
assert "external: it keeps its keys" test "$(ctl "$(eps_of 1)" get /site/key --print-value-only)" = kept
assert "external: its data directory is intact" test -s "$R/var/lib/etcd/member/snap/db" -a -d "$R/var/lib/etcd/member/wal"
assert "external: its static pod and PKI are kept" test -f "$R/etc/kubernetes/manifests/etcd.yaml" -a -f "$R$P/ca.key" \
        -a -f "$R$P/server-client.key" -a -f "$R$P/peer-server-client.crt"
assert "external: no snapshot of it was taken" test -z "$(find "$R/var/backups" -name 'etcd-*' 2> /dev/null)"
# "all" removes /etc/kubernetes: the ClusterConfiguration that decided stays, and so does the decision.
for n in 1 2; do
        "$NODE_RESET" --root "$R" --phases "$PH" --profile all --yes -o json run > "$WORK/ext-all$n.json"; rc=$?
        assert "external, profile all, run $n: ran ($rc), data intact, keys kept, a new client served" \
                test $rc -le 1 -a -s "$R/var/lib/etcd/member/snap/db" -a "$(ctl "$(eps_of 1)" get /site/key --print-value-only)" = kept
done
assert "external, profile all: /etc/kubernetes holds the kept files only" \
        test "$(cd "$R/etc/kubernetes" && find . -type f | LC_ALL=C sort | tr '\n' ' ')" = "./kubeadm-config.yaml ./manifests/etcd.yaml ./pki/etcd/ca.key ./pki/etcd/client.crt ./pki/etcd/client.key ./pki/etcd/peer-ca.crt ./pki/etcd/peer-server-client.crt ./pki/etcd/peer-server-client.key ./pki/etcd/server-ca.crt ./pki/etcd/server-client.crt ./pki/etcd/server-client.key "
kill "$EXT_PID"; wait "$EXT_PID" 2> /dev/null

# --- (b) a kubeadm node whose etcd is the site's own etcd.service reading /etc/etcd.env (data in
# /srv/etcd), no static pod: first without, then with etcd.external; the etcd.env is never kubespray's -
R="$WORK/site/root"
mkdir -p "$R/etc/kubernetes/pki" "$R/etc/systemd/system/kubelet.service.d" "$R/etc/etcd/pki" "$R/srv"
echo "[Service]" > "$R/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"
k3s_tls_dir "$R/etc/etcd/pki" "$(ip_of 2)"
cat > "$R/etc/systemd/system/etcd.service" << EOF2
[Unit]
Description=the site's etcd
[Service]
Type=notify
EnvironmentFile=/etc/etcd.env
ExecStart=/usr/bin/etcd
[Install]
WantedBy=multi-user.target
EOF2
printf 'ETCD_NAME=site\nETCD_DATA_DIR=/srv/etcd\nETCD_CERT_FILE=/etc/etcd/pki/server-client.crt\nETCD_KEY_FILE=/etc/etcd/pki/server-client.key\nETCD_ADVERTISE_CLIENT_URLS=https://%s:2379\n' \
        "$(ip_of 2)" > "$R/etc/etcd.env"
start_etcd site "$R/srv/etcd" "$R/etc/etcd/pki" "$(ip_of 2)" "site=https://$(ip_of 2):2380"
SITE_PID=$LAST
healthy "$(eps_of 2)" || { echo "FAIL: the site's etcd did not start"; tail -5 "$WORK/site.log"; exit 1; }
ctl "$(eps_of 2)" put /site/key kept > /dev/null
SITE_ID=$(ctl "$(eps_of 2)" member list -w simple | cut -d, -f1)
for c in "kubeadm:" "all:" "kubeadm:external"; do
        IFS=: read -r profile ext <<< "$c"
        t="site unit${ext:+, etcd.external}, profile $profile"
        # kubeadm's files again, as a rejoin writes them: detection finds kubeadm each time
        mkdir -p "$R/etc/kubernetes" && echo "apiVersion: v1" > "$R/etc/kubernetes/kubelet.conf"
        [ -z "$ext" ] || printf 'apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\netcd:\n  external:\n    endpoints: [https://%s:2379]\n' \
                "$(ip_of 2)" > "$R/etc/kubernetes/kubeadm-config.yaml"
        "$NODE_RESET" --root "$R" --phases "$PH" --profile "$profile" -o json plan > "$WORK/site-$profile$ext-plan.json"
        assert "$t: detection says external" jq_ "$WORK/site-$profile$ext-plan.json" "r['etcd']['name'] == 'external'"
        "$NODE_RESET" --root "$R" --phases "$PH" --profile "$profile" --yes -o json run > "$WORK/site-$profile$ext.json"; rc=$?
        assert "$t: run exits 0 ($rc)" test $rc -eq 0
        assert "$t: the etcd still runs, its member and keys kept" \
                test "$(kill -0 "$SITE_PID" && ctl "$(eps_of 2)" member list -w simple | cut -d, -f1)/$(ctl "$(eps_of 2)" get /site/key --print-value-only)" = "$SITE_ID/kept"
        assert "$t: /srv/etcd is intact" test -s "$R/srv/etcd/member/snap/db" -a -d "$R/srv/etcd/member/wal"
        assert "$t: its unit, etcd.env and certificates are kept" \
                test -f "$R/etc/systemd/system/etcd.service" -a -f "$R/etc/etcd.env" -a -f "$R/etc/etcd/pki/server-client.key"
        assert "$t: the kubeadm files went (kubelet.conf)" test ! -e "$R/etc/kubernetes/kubelet.conf"
done
assert "site unit, profile all: the etcd unit is out of scope" jq_ "$WORK/site-all-plan.json" \
        "any(a['target'] == 'etcd.service' and 'out of scope' in (a.get('skip_reason') or '') for a in actions(r, phase='services-late'))"
assert "site unit, profile all: 'process /usr/bin/etcd' is out of scope" jq_ "$WORK/site-all-plan.json" \
        "any(a['target'] == '/usr/bin/etcd' and 'out of scope' in (a.get('skip_reason') or '') for a in actions(r, phase='processes'))"
assert "site unit, etcd.external: decided by the ClusterConfiguration" jq_ "$WORK/site-kubeadmexternal-plan.json" \
        "any('etcd.external' in (a.get('skip_reason') or '') for a in actions(r, kind='etcd-member'))"
kill "$SITE_PID"; wait "$SITE_PID" 2> /dev/null

# --- k3s / rke2: a tree for member 1 under DATA-DIR (k3s's layout), the others outside it ---------
# k3s_root ROOT KIND CLUSTER: KIND is k3s or rke2; writes server/db/etcd/{config,name} and
# server/tls/etcd/* for m1 as k3s does (pkg/daemons/executor: ETCDConfig.ToConfigFile)
k3s_root() {
        local root=$1 kind=$2 ip; ip=$(ip_of 1)
        local d="/var/lib/rancher/$kind/server"
        mkdir -p "$root$d/db/etcd" "$root/etc/rancher/$kind" "$root/var/lib/rancher/$kind/storage/pvc-1" "$root/usr/local/bin"
        chmod 0700 "$root$d/db/etcd"
        echo "kept" > "$root/var/lib/rancher/$kind/storage/pvc-1/data"
        echo "#!/bin/sh" > "$root/usr/local/bin/$kind"
        echo "write-kubeconfig-mode: 644" > "$root/etc/rancher/$kind/config.yaml"
        k3s_tls_dir "$root$d/tls/etcd" "$ip" || return 1
        printf 'srv1' > "$root$d/db/etcd/name"
        k3s_etcd_config "$root$d/db/etcd/config" "$d" "$ip" srv1 "initial-cluster: $3
initial-cluster-state: new"
}
# k3s_cluster ROOT KIND I...: member srvI; srv1's data and certificates are the tree's
k3s_cluster() {
        local root=$1 kind=$2 c i
        shift 2
        c=$(cluster_of srv "$@")
        k3s_root "$root" "$kind" "$c" || return 1
        for i in "$@"; do
                if [ "$i" = 1 ]; then
                        # etcd reads its certificates at each handshake: it serves a copy, so that the
                        # test can still ask it once the run removed the tree's.
                        rm -rf "$root/../srv1-tls" && cp -r "$root/var/lib/rancher/$kind/server/tls/etcd" "$root/../srv1-tls"
                        start_etcd srv1 "$root/var/lib/rancher/$kind/server/db/etcd" "$root/../srv1-tls" \
                                "$(ip_of 1)" "$c" new https://127.0.0.1:2379
                else
                        k3s_tls_dir "$root/../srv$i-tls" "$(ip_of "$i")" || return 1
                        start_etcd "srv$i" "$root/../srv$i-data" "$root/../srv$i-tls" "$(ip_of "$i")" "$c"
                fi
                eval "K_$i=$LAST"
        done
        healthy "$(eps_of "$@")"
}
datadir_k3s() { echo "$1/var/lib/rancher/$2/server/db/etcd"; }
stop_k3s() { local v; for v in K_1 K_2 K_3; do [ -n "${!v:-}" ] && { kill "${!v}" 2> /dev/null; wait "${!v}" 2> /dev/null; }; eval "$v="; done; }

# --- (c) three k3s servers: this member leaves first, then its data goes; the running machine's own
# etcd (another cluster, the same CA) answers on 127.0.0.1:2379, k3s's fixed endpoint ----------------
R="$WORK/k3s3/root"
mkdir -p "$R"
k3s_cluster "$R" k3s 1 2 3 || { echo "FAIL: cannot start a 3-member k3s-layout etcd cluster"; for f in "$WORK"/srv*.log; do tail -n 5 "$f"; done; exit 1; }
k3s_tls_dir "$WORK/here-tls" "$(ip_of 0)"
HERE=env start_etcd here "$WORK/here-data" "$WORK/here-tls" "$(ip_of 0)" "here=https://$(ip_of 0):2380" new https://127.0.0.1:2379
HERE_PID=$LAST
healthy https://127.0.0.1:2379 || { echo "FAIL: this machine's etcd did not start"; tail -5 "$WORK/here.log"; exit 1; }
ctl https://127.0.0.1:2379 put /here/key kept > /dev/null
assert "k3s, 3 members before" test "$(members "$(eps_of 2)")" = "srv1 srv2 srv3 "
"$NODE_RESET" --root "$R" --phases "$PH" -o json plan > "$WORK/k3s3-plan.json"
assert "k3s: the profile is k3s's" jq_ "$WORK/k3s3-plan.json" "r['profile']['name'] == 'k3s'"
assert "k3s: the plan names this member, found through k3s's client certificate" jq_ "$WORK/k3s3-plan.json" \
        "any(' srv1, peer URLs https://$(ip_of 1):2380' in a['detail'] and 'of 3' in a['detail'] for a in actions(r, kind='etcd-member'))"
"$NODE_RESET" --root "$R" --phases "$PH" --yes -o json run > "$WORK/k3s3.json"; rc=$?
assert "k3s: run exits 0 ($rc)" test $rc -eq 0
assert "k3s: the member was removed" jq_ "$WORK/k3s3.json" "actions(r, kind='etcd-member', result='changed')"
assert "k3s: 2 members remain: srv2 srv3" test "$(members "$(eps_of 2 3)")" = "srv2 srv3 "
assert "k3s: the 2-member cluster is healthy" ctl "$(eps_of 2 3)" endpoint health
assert "k3s: the member left before its data went (etcd phase first)" jq_ "$WORK/k3s3.json" \
        "[p['name'] for p in r['phases']].index('etcd') < [p['name'] for p in r['phases']].index('files')"
assert "k3s: its data directory is gone" test ! -e "$(datadir_k3s "$R" k3s)"
assert "k3s: the local-path storage is kept" test -f "$R/var/lib/rancher/k3s/storage/pvc-1/data"
assert "k3s: the snapshot is in the backup" env ETCDCTL_API=3 etcdctl snapshot status \
        "$(ls -d "$R"/var/backups/node-reset/*/ | tail -n 1)/etcd-snapshot.db"
assert "k3s: this machine's etcd on 127.0.0.1:2379 was never asked as the tree's: its member and keys stay" \
        test "$(members https://127.0.0.1:2379)/$(ctl https://127.0.0.1:2379 get /here/key --print-value-only)" = "here /kept"
assert "k3s: the snapshot is srv1's, from its own address" jq_ "$WORK/k3s3.json" \
        "any('etcd snapshot of member srv1 from https://$(ip_of 1):2379' in a['message'] for a in actions(r, kind='backup'))"
kill "$HERE_PID"; wait "$HERE_PID" 2> /dev/null
stop_k3s

# --- (d) one rke2 server: kept unless the backup holds its snapshot -------------------------------
R="$WORK/rke1/root"
mkdir -p "$R"
k3s_cluster "$R" rke2 1 || { echo "FAIL: cannot start a 1-member rke2-layout etcd"; tail -5 "$WORK/srv1.log"; exit 1; }
before=$(files_of "$(datadir_k3s "$R" rke2)")
"$NODE_RESET" --root "$R" --phases "$PH" --no-backup --yes -o json run > "$WORK/rke1a.json"; rc=$?
assert "rke2, one member, no backup: exit 1 (refused)" test $rc -eq 1
assert "rke2, one member, no backup: refused with the reason" jq_ "$WORK/rke1a.json" \
        "any('last voting member' in a['message'] and 'no complete snapshot' in a['message'] for a in actions(r, kind='etcd-member', result='failed'))"
assert "rke2, one member, no backup: still a member" test "$(members "$(eps_of 1)")" = "srv1 "
assert "rke2, one member, no backup: its data directory is kept" test -s "$(datadir_k3s "$R" rke2)/member/snap/db"
assert "rke2, one member, no backup: the files phase names the kept data" jq_ "$WORK/rke1a.json" \
        "any('/var/lib/rancher/rke2/server/db/etcd' in a['message'] and 'last voting member' in a['message'] for a in actions(r, phase='files', result='failed'))"
# The refused run's files phase removed the rest of rke2's tree, its etcd client certificate too
# (--no-backup): lay it out again, as a reinstall would, for the run with a backup.
k3s_root "$R" rke2 "$(cluster_of srv 1)"
"$NODE_RESET" --root "$R" --phases "$PH" --yes -o json run > "$WORK/rke1b.json"; rc=$?
assert "rke2, one member, snapshot in the backup: exit 0 ($rc)" test $rc -eq 0
assert "rke2, one member, snapshot: its data directory goes with the cluster" test ! -e "$(datadir_k3s "$R" rke2)"
assert "rke2, one member: the snapshot is a valid etcd snapshot" env ETCDCTL_API=3 etcdctl snapshot status \
        "$(ls -d "$R"/var/backups/node-reset/*/ | tail -n 1)/etcd-snapshot.db"
stop_k3s

# --- (e) three k3s servers, two gone: no quorum, bounded by --etcd-timeout ------------------------
R="$WORK/k3sq/root"
mkdir -p "$R"
k3s_cluster "$R" k3s 1 2 3 ||
        { echo "FAIL: cannot start the second k3s-layout cluster"; for f in "$WORK"/srv*.log; do tail -n 3 "$f"; done; exit 1; }
kill "$K_2" "$K_3"; wait "$K_2" "$K_3" 2> /dev/null
t=$(date +%s%N)
timeout 60 "$NODE_RESET" --root "$R" --phases "$PH" --phases "$PH" --etcd-timeout 5 --no-backup --yes -o json run > "$WORK/k3sq.json"; rc=$?
ms=$(elapsed_ms "$t")
echo "  k3s, peers gone: the run ended in $ms ms (--etcd-timeout 5)"
assert "k3s, peers gone: exit 1" test $rc -eq 1
assert "k3s, peers gone: the etcd phase ends within its deadline" jq_ "$WORK/k3sq.json" \
        "sum(a['duration_ms'] for a in actions(r, kind='etcd-member')) < 7000"
# (etcd 3.4 lists its members without quorum and refuses the removal as unhealthy; 3.5.13 and later
# hold the linearizable MemberList the agent asks for until a quorum answers: no answer within the deadline.)
assert "k3s, peers gone: failed with etcd's reason" jq_ "$WORK/k3sq.json" \
        "any(('unhealthy' in a['message'] or 'not enough started members' in a['message'] or 'did not answer' in a['message'] or 'no answer within' in a['message']) for a in actions(r, kind='etcd-member', result='failed'))"
assert "k3s, peers gone: still listed by its cluster" test "$(members "$(eps_of 1)")" = "srv1 srv2 srv3 "
assert "k3s, peers gone: its data directory is kept" test -s "$(datadir_k3s "$R" k3s)/member/snap/db"
stop_k3s
finish
