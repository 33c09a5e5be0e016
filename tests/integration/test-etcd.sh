#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The backup and etcd phases against a real etcd (3.4, and 3.5 up to etcd_only) in a private network
# namespace: 3-member TLS clusters on 10.88.0.1x:2379/2380 in a second namespace (other machines: the
# tree under --root is not the running machine) with kubeadm's file layout (member m1 is "this node").
# --root on a dead control plane's tree, run on a surviving one whose member answers on 127.0.0.1:2379
# where the tree's flags point: the dead member leaves, found by its name and peer URLs, the
# survivor's stays, and no snapshot of the survivor's is taken for the tree's. The node leaves and a
# healthy 2-member cluster remains; a rerun is
# unchanged, also when the others listen on client ports the files do not name; the data directory
# follows one rule (removed when the member left, or when the last voter's snapshot is in the backup;
# kept and reported otherwise: a voter plus a learner, a member whose peer URL was updated (the member
# answering at its client URL is no longer the one its files describe: not taken as its own), a cluster
# that answers only when run); a frozen member holds the backup no longer than --etcd-timeout, and its
# member/snap/db is copied instead; two members down end within the deadline with the reason; hostile TLS peers stay bounded; the backup is 0700/0600 with a valid etcd snapshot, is never
# removed by a manifest, and a backup that cannot be written stops the run before anything is deleted.
# etcdctl and openssl only build and check the fixtures.

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
etcd_matrix "3.4 3.5" "$@"
in_private_ns "$@"

command -v etcd > /dev/null 2>&1 || skip "etcd is not installed (apt-get install etcd-server etcd-client)"
require_cmd etcdctl openssl python3 prlimit
HOSTILE="$O/tests/grpc-hostile"
[ -x "$HOSTILE" ] || skip "$HOSTILE is not built (make check builds it)"
kill_at_exit
lan_up || { echo "FAIL: cannot make the second network namespace"; exit 1; }

# --- certificates: one CA, kubeadm's names ------------------------------------------------------
test_ca "$WORK/ca" || { echo "FAIL: openssl CA"; exit 1; }
member_certs() { # DIR IP
        mkdir -p "$1" && cp "$CA/ca.crt" "$CA/ca.key" "$1/" &&
        cert "$1" server "$(basename "$1")" "IP:$2,IP:127.0.0.1,$LAN_SANS,DNS:localhost" serverAuth,clientAuth &&
        cert "$1" peer "$(basename "$1")" "IP:$2,IP:127.0.0.1,$LAN_SANS,DNS:localhost" serverAuth,clientAuth &&
        cert "$1" healthcheck-client kube-etcd-healthcheck-client "DNS:client" clientAuth
}

# --- a cluster: member i listens on 10.88.0.1i (on the lan); m1's files are the node's (kubeadm
# layout); member 0 is the running machine's, in this namespace ---------------------------------------
OTHER_CPORT=2379 # the client port of every member but m1
cport_of() { if [ "$1" = 1 ]; then echo 2379; else echo "$OTHER_CPORT"; fi; }

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

# start_member ROOT I CLUSTER [STATE]: member mI, data and certs beneath ROOT (m1: the node's own paths)
start_member() {
        local root=$1 i=$2 ip pki data run=$LAN
        ip=$(ip_of "$i")
        if [ "$i" = 1 ]; then pki="$root/etc/kubernetes/pki/etcd"; data="$root/var/lib/etcd"
        else pki="$root/../m$i/pki"; data="$root/../m$i/data"; member_certs "$pki" "$ip" || return 1; fi
        mkdir -p "$data"
        local cport; cport=$(cport_of "$i")
        local listen="https://$ip:$cport"
        [ "$i" = 1 ] && listen="https://127.0.0.1:2379,$listen"
        [ "$i" = 0 ] && { listen="https://127.0.0.1:2379,$listen"; run=; }
        $run etcd --name "m$i" --data-dir "$data" --listen-client-urls "$listen" \
                --advertise-client-urls "https://$ip:$cport" --listen-peer-urls "https://$ip:2380" \
                --initial-advertise-peer-urls "https://$ip:2380" --initial-cluster "$3" \
                --initial-cluster-state "${4:-new}" --initial-cluster-token "$(basename "$root")" \
                --client-cert-auth --trusted-ca-file "$pki/ca.crt" --cert-file "$pki/server.crt" --key-file "$pki/server.key" \
                --peer-client-cert-auth --peer-trusted-ca-file "$pki/ca.crt" --peer-cert-file "$pki/peer.crt" \
                --peer-key-file "$pki/peer.key" --logger zap --log-outputs stderr \
                > "$root/../m$i.log" 2>&1 &
        PIDS+=($!)
        eval "PID_$(basename "$root")_$i=$!"
}

# ctl ROOT ENDPOINTS ARGS...: etcdctl with a copy of m1's health check client certificate (the node's
# own may be deleted by then)
ctl() {
        local pki="$1/../client" eps=$2
        shift 2
        ETCDCTL_API=3 etcdctl --endpoints "$eps" --cacert "$pki/ca.crt" --cert "$pki/healthcheck-client.crt" \
                --key "$pki/healthcheck-client.key" --dial-timeout 2s --command-timeout 5s "$@"
}
eps_of() { local s="" i; for i in "$@"; do s="$s${s:+,}https://$(ip_of "$i"):$(cport_of "$i")"; done; echo "$s"; }
# cluster_id ROOT ENDPOINTS: the cluster's ID in hex, as node-reset and etcdctl print it
cluster_id() { ctl "$1" "$2" member list -w json | python3 -c 'import json,sys; print("%016x" % json.load(sys.stdin)["header"]["cluster_id"])'; }
# member_id ROOT ENDPOINTS NAME
member_id() { ctl "$1" "$2" member list -w simple | awk -F', ' -v n="$3" '$3 == n {print $1}'; }
# confirm_after HOOK ARGS...: run node-reset without --yes on a terminal; once it asks, run HOOK (a
# shell command), then answer "yes". Plan and run are one process, so what changed between them is
# what the run must read again. Report on $WORK/confirm.json, log on $WORK/confirm.err.
confirm_after() {
        local hook=$1
        shift
        HOOK=$hook python3 - "$WORK/confirm.json" "$WORK/confirm.err" "$NODE_RESET" "$@" << 'PY'
import os, pty, subprocess, sys, time
out, err, args = sys.argv[1], sys.argv[2], sys.argv[3:]
m, s = pty.openpty()
with open(out, "wb") as o, open(err, "wb") as e:
    p = subprocess.Popen(args, stdin=s, stdout=o, stderr=e)
    os.close(s)
    while p.poll() is None and b"Type 'yes'" not in open(err, "rb").read():
        time.sleep(0.05)
    subprocess.run(["sh", "-c", os.environ["HOOK"]])
    if p.poll() is None:
        os.write(m, b"yes\n")
    sys.exit(p.wait())
PY
}
# datadir_available ROOT: kubeadm init's DirAvailable--var-lib-etcd: absent or empty
datadir_available() { [ ! -e "$1/var/lib/etcd" ] || [ -z "$(ls -A "$1/var/lib/etcd")" ]; }

# cluster ROOT I...: start these members and wait until every one is healthy
cluster() {
        local root=$1 c
        shift
        c=$(cluster_of m "$@")
        new_root "$root" && etcd_yaml "$root" "$c" || return 1
        cp -r "$root/etc/kubernetes/pki/etcd" "$root/../client" || return 1
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
        "any(a['detail'].startswith('member ') and ' m1, peer URLs https://$(ip_of 1):2380' in a['detail'] and 'of 3' in a['detail'] for a in actions(r, kind='etcd-member'))"
assert "plan changed nothing" test "$(members "$R" "$(eps_of 2)")" = "m1 m2 m3 "
assert "plan wrote no backup" test ! -e "$R/var/backups/node-reset"

CID=$(cluster_id "$R" "$(eps_of 2)")
MID=$(printf '%016x' "0x$(member_id "$R" "$(eps_of 2)" m1)")
t=$(date +%s%N)
agent --root "$R" --phases backup,etcd --yes -o json run > "$WORK/run1.json"; rc=$?
echo "  leave + backup in $(elapsed_ms "$t") ms"
assert "run exits 0" test $rc -eq 0
assert "the member was removed" jq_ "$WORK/run1.json" "actions(r, kind='etcd-member', result='changed')"
assert "2 members remain: m2 m3" test "$(members "$R" "$(eps_of 2 3)")" = "m2 m3 "
assert "the run names the real cluster ID ($CID), not 0000000000000000" jq_ "$WORK/run1.json" \
        "any('$MID removed from cluster $CID' in a['message'] for a in actions(r, kind='etcd-member', result='changed'))"
assert "the departure is remembered in the run's state" grep -qx "left $CID $MID m1" "$R/var/lib/node-reset/etcd.state"
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

# --- --root on a dead control plane's tree, run on a surviving one: m0 is the running machine's member
# (127.0.0.1:2379 here, where the tree's --listen-client-urls point), m2 another, m1 the dead tree's --
R="$WORK/rescue/root"
mkdir -p "$R"
cluster "$R" 1 2 0 || { echo "FAIL: cannot start the survivor's cluster"; exit 1; }
kill "$PID_root_1"; wait "$PID_root_1" 2> /dev/null
S_ID=$(member_id "$R" "$(eps_of 2)" m0)
assert "rescue: this namespace's 127.0.0.1:2379 is the survivor m0" \
        test "$(ctl "$R" https://127.0.0.1:2379 endpoint status -w simple | cut -d, -f2 | tr -d ' ')" = "$S_ID"
agent --root "$R" --phases backup,etcd -o json plan > "$WORK/rescue-plan.json"; rc=$?
assert "rescue: the plan names the dead member m1, found by its name and peer URLs (exit $rc)" jq_ "$WORK/rescue-plan.json" \
        "any(' m1, peer URLs https://$(ip_of 1):2380' in a['detail'] and 'found by this node' in a['detail'] for a in actions(r, kind='etcd-member'))"
printf 'remove /var/lib/etcd\nremove /etc/kubernetes/admin.conf\n' > "$WORK/rescue.conf"
agent --root "$R" -m "$WORK/rescue.conf" --phases backup,etcd,files --yes -o json run > "$WORK/rescue.json"; rc=$?
assert "rescue: run exits 0 ($rc)" test $rc -eq 0
assert "rescue: the dead member left, the survivor's stays" test "$(members "$R" "$(eps_of 2 0)")" = "m0 m2 "
assert "rescue: the survivor keeps its member ID, healthy" \
        test "$(member_id "$R" "$(eps_of 2)" m0)" = "$S_ID" -a -n "$S_ID" && ctl "$R" "$(eps_of 2 0)" endpoint health
B=$(ls -d "$R"/var/backups/node-reset/*/ 2> /dev/null | tail -n 1)
assert "rescue: no snapshot of the survivor's for the tree's; its own member/snap/db is copied instead" \
        test -n "$B" -a ! -e "$B/etcd-snapshot.db" -a -s "$B/etcd-member-snap-db"
assert "rescue: the backup never asked 127.0.0.1 as the tree's member" jq_ "$WORK/rescue.json" \
        "all('127.0.0.1:' not in (a.get('message') or '') for a in actions(r, kind='backup'))"
assert "rescue: the tree's data directory went with its member" test ! -e "$R/var/lib/etcd"
stop_cluster "$R"

# --- a rerun after the member left, the others on client ports the files do not name -------------
OTHER_CPORT=2479
R="$WORK/np/root"
mkdir -p "$R"
cluster "$R" 1 2 3 || { echo "FAIL: cannot start a 3-member etcd cluster on port 2479"; exit 1; }
agent --root "$R" --phases etcd --yes -o json run > "$WORK/np1.json"; rc=$?
assert "other ports: the member left" test $rc -eq 0 -a "$(members "$R" "$(eps_of 2 3)")" = "m2 m3 "
for _ in $(seq 50); do (exec 3<> "/dev/tcp/$(ip_of 1)/2379") 2> /dev/null || break; sleep 0.2; done
agent --root "$R" --phases etcd --yes -o json run > "$WORK/np2.json"; rc=$?
assert "other ports: the rerun exits 0" test $rc -eq 0
assert "other ports: unchanged, from the departure the first run recorded" jq_ "$WORK/np2.json" \
        "any('not a member' in a['message'] and 'earlier run' in a['message'] for a in actions(r, kind='etcd-member', result='unchanged'))"
stop_cluster "$R"
OTHER_CPORT=2379

# --- a learner member is removed too --------------------------------------------------------------
R="$WORK/cl/root"
mkdir -p "$R"
cluster "$R" 2 3 || { echo "FAIL: cannot start a 2-member etcd cluster"; exit 1; }
etcd_yaml "$R" "$(cluster_of m 1 2 3)"
# etcd refuses reconfiguration in a cluster younger than 5 s: ask until it agrees
for _ in $(seq 50); do
        ctl "$R" "$(eps_of 2)" member add m1 --learner --peer-urls "https://$(ip_of 1):2380" > /dev/null 2>&1 && break
        sleep 0.3
done
start_member "$R" 1 "$(cluster_of m 1 2 3)" existing
for _ in $(seq 100); do [ "$(members "$R" "$(eps_of 2)")" = "m1 m2 m3 " ] && break; sleep 0.2; done
assert "learner: m1 joined as a learner" test "$(ctl "$R" "$(eps_of 2)" member list -w simple | grep -c ', m1, .*, true$')" = 1
agent --root "$R" --phases etcd -o json plan > "$WORK/learner-plan.json"
assert "learner: the plan says learner" jq_ "$WORK/learner-plan.json" \
        "any(', learner' in a['detail'] for a in actions(r, kind='etcd-member'))"
agent --root "$R" --phases etcd --yes -o json run > "$WORK/learner.json"; rc=$?
assert "learner: run exits 0" test $rc -eq 0
assert "learner: removed" jq_ "$WORK/learner.json" "actions(r, kind='etcd-member', result='changed')"
assert "learner: m2 m3 remain, healthy" test "$(members "$R" "$(eps_of 2 3)")" = "m2 m3 "
stop_cluster "$R"

# --- the last member: without a snapshot it and its data are kept (residue, exit 1); with one in the
# backup the whole cluster goes, as kubeadm's reset does, and kubeadm init finds its directory free.
# Backups survive a manifest that removes them. ---------------------------------------------------
R="$WORK/c1/root"
mkdir -p "$R"
cluster "$R" 1 || { echo "FAIL: cannot start a 1-member etcd cluster"; exit 1; }
# /var/backups is a system path: the manifest has to insist, and even then node-reset's backups stay.
echo "allow-system-path /var/backups
remove /var/lib/etcd
remove /var/backups
remove /etc/kubernetes" > "$WORK/wipe.conf"
# (etcd reads its certificates at every handshake: this run keeps them, for the check below)
printf 'allow-system-path /var/backups\nremove /var/lib/etcd\nremove /var/backups\nremove /etc/kubernetes/admin.conf\n' \
        > "$WORK/wipe-data.conf"
agent --root "$R" -m "$WORK/wipe-data.conf" --phases etcd,files --no-backup --yes -o json run > "$WORK/last0.json"; rc=$?
assert "last member, no snapshot: run exits 1 (residue)" test $rc -eq 1
assert "last member, no snapshot: the member says why it stays" jq_ "$WORK/last0.json" \
        "any('the last voting member' in a['message'] and 'no complete snapshot' in a['message'] for a in actions(r, kind='etcd-member', result='failed'))"
assert "last member, no snapshot: still a member" test "$(members "$R" "$(eps_of 1)")" = "m1 "
assert "last member, no snapshot: its data directory is kept" test -d "$R/var/lib/etcd/member"
assert "last member, no snapshot: the files phase reports the data as residue, with the reason" jq_ "$WORK/last0.json" \
        "any('the etcd data directory /var/lib/etcd' in a['message'] and 'last voting member' in a['message'] for a in actions(r, phase='files', result='failed'))"
# A line on an ancestor: the rest goes, the data directory stays, and the line says why.
mkdir -p "$R/var/lib/other" && echo x > "$R/var/lib/other/file"
printf 'allow-system-path /var/lib\nremove /var/lib\n' > "$WORK/wipe-varlib.conf"
agent --root "$R" -m "$WORK/wipe-varlib.conf" --phases etcd,files --no-backup --yes -o json run > "$WORK/last0a.json"; rc=$?
assert "last member, a line on /var/lib: exit 1, the rest removed, the data directory kept" \
        test $rc -eq 1 -a ! -e "$R/var/lib/other" -a -d "$R/var/lib/etcd/member"
assert "last member, a line on /var/lib: residue with the reason" jq_ "$WORK/last0a.json" \
        "any('the etcd data directory /var/lib/etcd' in a['message'] for a in actions(r, phase='files', result='failed'))"
agent --root "$R" -m "$WORK/wipe-data.conf" --phases backup,etcd,files --yes -o json run > "$WORK/last.json"; rc=$?
assert "last member, snapshot in the backup: run exits 0" test $rc -eq 0
assert "last member: the report says why" jq_ "$WORK/last.json" \
        "any('the last voting member of cluster' in a['message'] and 'snapshot is in the backup' in a['message'] for a in actions(r, kind='etcd-member', result='unchanged'))"
assert "last member: its data directory is removed with the cluster" test ! -e "$R/var/lib/etcd"
assert "last member: kubeadm init's DirAvailable--var-lib-etcd would pass" datadir_available "$R"
assert "the manifest's other lines ran (admin.conf removed)" test ! -e "$R/etc/kubernetes/admin.conf"
assert "'remove /var/backups' left node-reset's backups" test -f "$(ls -d "$R"/var/backups/node-reset/*/ | head -n 1)/etc/kubernetes/pki/etcd/ca.crt"
assert "the single member's snapshot was saved" env ETCDCTL_API=3 etcdctl snapshot status "$(ls -d "$R"/var/backups/node-reset/*/ | tail -n 1)/etcd-snapshot.db"
stop_cluster "$R"

# --- one voting member (this node) and one learner: the last voter; its data stays ---------------
R="$WORK/vl/root"
mkdir -p "$R"
cluster "$R" 1 || { echo "FAIL: cannot start a 1-member etcd cluster"; exit 1; }
for _ in $(seq 50); do
        ctl "$R" "$(eps_of 1)" member add m2 --learner --peer-urls "https://$(ip_of 2):2380" > /dev/null 2>&1 && break
        sleep 0.3
done
start_member "$R" 2 "$(cluster_of m 1 2)" existing
for _ in $(seq 100); do [ "$(members "$R" "$(eps_of 1)")" = "m1 m2 " ] && break; sleep 0.2; done
assert "voter+learner: m2 is a learner" test "$(ctl "$R" "$(eps_of 1)" member list -w simple | grep -c ', m2, .*, true$')" = 1
agent --root "$R" -m "$WORK/wipe-data.conf" --phases etcd,files --no-backup --yes -o json run > "$WORK/vl.json"; rc=$?
assert "voter+learner: exit 1 (residue)" test $rc -eq 1
assert "voter+learner: the last voting member, said so" jq_ "$WORK/vl.json" \
        "any('the last voting member' in a['message'] for a in actions(r, kind='etcd-member', result='failed'))"
assert "voter+learner: the data directory is kept" test -d "$R/var/lib/etcd/member"
assert "voter+learner: m1 and m2 still members" test "$(members "$R" "$(eps_of 1)")" = "m1 m2 "
stop_cluster "$R"

# --- the only member, its peer URL changed by "member update": no longer the member its files describe ---
R="$WORK/pu/root"
mkdir -p "$R"
cluster "$R" 1 || { echo "FAIL: cannot start a 1-member etcd cluster"; exit 1; }
for _ in $(seq 50); do
        ctl "$R" "$(eps_of 1)" member update "$(member_id "$R" "$(eps_of 1)" m1)" \
                --peer-urls "https://$(ip_of 1):2390" > /dev/null 2>&1 && break
        sleep 0.3
done
assert "peer URL updated: etcd lists the new peer URL" test "$(ctl "$R" "$(eps_of 1)" member list -w simple | grep -c ':2390')" = 1
agent --root "$R" --phases etcd -o json plan > "$WORK/pu-plan.json"
assert "peer URL updated: the plan names the member that answers and why it is not taken" jq_ "$WORK/pu-plan.json" \
        "any('peer URLs https://$(ip_of 1):2390 answers at this node' in a['detail'] and 'not taken as this node' in a['detail'] for a in actions(r, kind='etcd-member'))"
agent --root "$R" -m "$WORK/wipe-data.conf" --phases etcd,files --no-backup --yes -o json run > "$WORK/pu.json"; rc=$?
assert "peer URL updated: exit 1, not 'unchanged'" test $rc -eq 1
assert "peer URL updated: refused, the member left in place" jq_ "$WORK/pu.json" \
        "any('not taken as this node' in a['message'] and 'left in place' in a['message'] for a in actions(r, kind='etcd-member', result='failed'))"
assert "peer URL updated: still a member" test "$(members "$R" "$(eps_of 1)")" = "m1 "
assert "peer URL updated: the data directory is kept" test -d "$R/var/lib/etcd/member"
stop_cluster "$R"

# The cases above ask etcd what differs between versions (MemberList, MemberRemove, learners,
# Snapshot, member update); those below bound a frozen, absent or hostile peer, or need no etcd.
etcd_only 3.4

# --- no answer while planning, an answer when run: the run decides from what it reads ------------
R="$WORK/late/root"
mkdir -p "$R"
cluster "$R" 1 || { echo "FAIL: cannot start a 1-member etcd cluster"; exit 1; }
kill -STOP "$PID_root_1"
confirm_after "kill -CONT $PID_root_1; sleep 1" --root "$R" -m "$WORK/wipe-data.conf" --phases etcd,files \
        --no-backup --etcd-timeout 3 -o json run; rc=$?
kill -CONT "$PID_root_1" 2> /dev/null
assert "late answer: the plan saw no answer" grep -q "does not answer" "$WORK/confirm.err"
assert "late answer: exit 1 (residue)" test $rc -eq 1
assert "late answer: the run found the last voting member" jq_ "$WORK/confirm.json" \
        "any('the last voting member' in a['message'] for a in actions(r, kind='etcd-member', result='failed'))"
assert "late answer: the data directory is kept" test -d "$R/var/lib/etcd/member"

# --- a frozen member: the backup's snapshot ends at --etcd-timeout, and member/snap/db is copied ----
kill -STOP "$PID_root_1"
t=$(date +%s%N)
timeout 60 "$NODE_RESET" --root "$R" --phases backup --etcd-timeout 3 --yes -o json run > "$WORK/frozen.json"; rc=$?
ms=$(elapsed_ms "$t")
echo "  frozen member: backup ended in $ms ms (--etcd-timeout 3)"
assert "frozen member: the backup ends within --etcd-timeout ($ms ms)" test "$ms" -lt 8000
assert "frozen member: the backup succeeds without a snapshot" test $rc -eq 0
B=$(ls -d "$R"/var/backups/node-reset/*/ 2> /dev/null | tail -n 1)
assert "frozen member: member/snap/db copied, byte for byte" cmp -s "$B/etcd-member-snap-db" "$R/var/lib/etcd/member/snap/db"
assert "frozen member: the report names the copy" jq_ "$WORK/frozen.json" \
        "any('a copy of /var/lib/etcd/member/snap/db' in a['message'] for a in actions(r, kind='backup', result='changed'))"
timeout 60 "$NODE_RESET" --root "$R" --phases backup --etcd-timeout 3 --etcd-db-copy-max 1K --yes -o json run \
        > "$WORK/frozen-max.json"
assert "frozen member: --etcd-db-copy-max bounds the copy, said so" jq_ "$WORK/frozen-max.json" \
        "any('over --etcd-db-copy-max' in a['message'] for a in actions(r, kind='backup', result='changed'))"
kill -CONT "$PID_root_1"
stop_cluster "$R"

# --- two members down: no quorum, the phase ends within its deadline with the reason -------------
R="$WORK/c3b/root"
mkdir -p "$R"
cluster "$R" 1 2 3 || { echo "FAIL: cannot start the second 3-member cluster"; exit 1; }
kill "$PID_root_2" "$PID_root_3" 2> /dev/null
wait "$PID_root_2" "$PID_root_3" 2> /dev/null
t=$(date +%s%N)
agent --root "$R" --phases etcd --etcd-timeout 8 --yes -o json run > "$WORK/noquorum.json"; rc=$?
ms=$(elapsed_ms "$t")
echo "  no quorum: ended in $ms ms (deadline 8 s)"
assert "no quorum: exit 1 (the member is still there)" test $rc -eq 1
assert "no quorum: ends within the deadline" test "$ms" -lt 10000
assert "no quorum: the action failed with etcd's reason" jq_ "$WORK/noquorum.json" \
        "any(('unhealthy' in a['message'] or 'not enough started members' in a['message'] or 'did not answer' in a['message']) for a in actions(r, kind='etcd-member', result='failed'))"
assert "no quorum: m1 is still listed by its cluster" test "$(members "$R" "$(eps_of 1)")" = "m1 m2 m3 "
stop_cluster "$R"

# --- all members down: unreachable, reported within the deadline --------------------------------
t=$(date +%s%N)
agent --root "$R" --phases etcd --etcd-timeout 5 --yes -o json run > "$WORK/down.json"; rc=$?
ms=$(elapsed_ms "$t")
assert "unreachable: exit 1 within the deadline ($ms ms)" test $rc -eq 1 -a "$ms" -lt 12000
assert "unreachable: the reason names the endpoints" jq_ "$WORK/down.json" \
        "any('https://$(ip_of 1):2379' in a['message'] for a in actions(r, kind='etcd-member', result='failed'))"

# --- external etcd in kubeadm-config: never touched ----------------------------------------------
printf 'apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\netcd:\n  external:\n    endpoints:\n    - https://10.0.0.1:2379\n' \
        > "$R/etc/kubernetes/kubeadm-config.yaml"
agent --root "$R" --phases etcd -o json plan > "$WORK/external.json"
assert "external etcd: skipped, never touched" jq_ "$WORK/external.json" \
        "any('out of scope' in (a.get('skip_reason') or '') and 'etcd.external' in a['skip_reason'] for a in actions(r, kind='etcd-member'))"
rm -f "$R/etc/kubernetes/kubeadm-config.yaml"

# --- a commented-out data directory is no data directory (a --root tree, detection as it runs) -----
R="$WORK/nfs/root"
mkdir -p "$R/etc" "$R/srv/nfs-export" "$R/var/lib/etcd/member/snap"
printf '# moved off the NFS export in 2025:\n# ETCD_DATA_DIR=/srv/nfs-export\nETCD_DATA_DIR=/var/lib/etcd\nETCD_NAME=etcd1\n' \
        > "$R/etc/etcd.env"
echo "a PV's data" > "$R/srv/nfs-export/pv-data"
echo "bbolt" > "$R/var/lib/etcd/member/snap/db"
cp "$R/var/lib/etcd/member/snap/db" "$WORK/nfs-db"
# kubespray's profile, with the lines detection adds ("empty" a data directory not /var/lib/etcd)
agent --root "$R" --profile kubespray --yes -o json run > "$WORK/nfs.json"; rc=$?
assert "commented-out ETCD_DATA_DIR: not detected as the data directory" jq_ "$WORK/nfs.json" \
        "'/srv/nfs-export' not in str(r)"
assert "commented-out ETCD_DATA_DIR: /srv/nfs-export keeps its data" test -f "$R/srv/nfs-export/pv-data"
assert "no member answers (--root): member/snap/db copied into the backup" \
        cmp -s "$(ls -d "$R"/var/backups/node-reset/*/ | tail -n 1)/etcd-member-snap-db" "$WORK/nfs-db"
assert "no member answers, its db in the backup: the data directory is removed, exit 0 ($rc)" \
        test $rc -eq 0 -a ! -e "$R/var/lib/etcd"

# --- a backup that cannot be written for want of room: what has no other copy is kept, the rest goes ---
R="$WORK/full/root"
mkdir -p "$R"
new_root "$R"
mkdir -p "$R/var/backups"
mount -t tmpfs -o size=8k nr-full "$R/var/backups"
agent --root "$R" -m "$WORK/wipe.conf" --phases backup,files --yes -o json run > "$WORK/full.json"; rc=$?
assert "disk full: the run fails" test $rc -ne 0
assert "disk full: the backup failed with the reason" jq_ "$WORK/full.json" \
        "any('No space left' in a['message'] for a in actions(r, kind='backup', result='failed'))"
assert "disk full: the etcd CA, saved nowhere else, is kept" test -f "$R/etc/kubernetes/pki/etcd/ca.key"
assert "disk full: what can be made again goes" test ! -e "$R/etc/kubernetes/admin.conf"
assert "disk full: the files phase names what it kept" jq_ "$WORK/full.json" \
        "any('kept (no other copy): /etc/kubernetes/pki/etcd/ca.key' in a['message'] for a in actions(r, phase='files'))"
agent --root "$R" -m "$WORK/wipe.conf" --phases backup,files --no-backup --yes -o json run > "$WORK/nobackup.json"; rc=$?
assert "--no-backup: the run goes on and deletes" test $rc -eq 0 -a ! -e "$R/etc/kubernetes"
assert "--no-backup: the backup is skipped, said so" jq_ "$WORK/nobackup.json" \
        "any('--no-backup' in a['message'] for a in actions(r, kind='backup', result='skipped'))"
umount "$R/var/backups"

# --- hostile TLS peers: every answer bounded in time and memory --------------------------------
# 1 GiB of address space at most; a sanitizer build reserves terabytes for its shadow, so there the
# allocator's own bound stands in.
bounded() {
        if ldd "$1" 2> /dev/null | grep -q libasan; then
                ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=256" "$@"
        else
                prlimit --as=1073741824 "$@"
        fi
}
R="$WORK/hostile/root"
mkdir -p "$R"
new_root "$R"
HIP=10.88.0.21
cert "$R/etc/kubernetes/pki/etcd" hostile hostile "IP:$HIP" serverAuth
etcd_yaml "$R" "m1=https://$(ip_of 1):2380"
sed -i "s|https://$(ip_of 1):2379|https://$HIP:2379|; s|--listen-client-urls=.*|--listen-client-urls=https://$HIP:2379|" \
        "$R/etc/kubernetes/manifests/etcd.yaml"
# The servers run niced: a flood keeps both of them on a CPU, and on a small machine the agent would
# otherwise wait for the scheduler past its deadline (measured: 3.1 s niced, 4-17 s not, same CPU use).
hostile() { # PROXY-MODE [GRPC-MODE]: serve TLS on $HIP:2379 and plan the etcd phase against it
        local pmode=$1 gmode=${2:-} hp="" pp t
        if [ -n "$gmode" ]; then
                $LAN nice -n 19 "$HOSTILE" "$WORK/hostile.sock" "$gmode" 0 & hp=$!
                for _ in $(seq 100); do [ -S "$WORK/hostile.sock" ] && break; sleep 0.02; done
        fi
        $LAN nice -n 19 python3 "$TOP/tests/integration/tls-proxy.py" "$R/etc/kubernetes/pki/etcd/hostile.crt" \
                "$R/etc/kubernetes/pki/etcd/hostile.key" "$HIP" 2379 "$pmode" "$WORK/hostile.sock" 2> /dev/null & pp=$!
        for _ in $(seq 100); do (exec 3<> "/dev/tcp/$HIP/2379") 2> /dev/null && break; sleep 0.05; done
        t=$(date +%s%N)
        bounded "$NODE_RESET" --root "$R" --phases etcd --etcd-timeout 3 -o json plan > "$WORK/h.json"
        echo $? > "$WORK/h.rc"
        H_MS=$(elapsed_ms "$t")
        kill "$pp" $hp 2> /dev/null
        wait "$pp" $hp 2> /dev/null
        rm -f "$WORK/hostile.sock"
}
# A flood ends at the deadline or, when the servers are fast enough, earlier at the byte meter; a
# trickle of empty frames stays under every byte bound, so only the deadline ends it.
for c in "relay:huge:over the limit" "relay:garbage:malformed answer" "relay:flood:no answer within|bytes for one call" \
        "relay:trickle:no answer within" "relay:hang:no answer within" "relay:unknown:no answer within|bytes for one call" "garbage::connection lost" \
        "silent::no answer within"; do
        IFS=: read -r pmode gmode texts <<< "$c"
        hostile "$pmode" "$gmode"
        what="hostile ${gmode:-$pmode}"
        assert "$what: plan exits 0, no crash (rc $(cat "$WORK/h.rc"))" test "$(cat "$WORK/h.rc")" = 0
        assert "$what: ends within the 3 s deadline ($H_MS ms)" test "$H_MS" -lt 4500
        expr="any(t in a['detail'] for t in '$texts'.split('|') for a in actions(r, kind='etcd-member'))"
        assert "$what: reported as '$texts'" jq_ "$WORK/h.json" "$expr"
        jq_ "$WORK/h.json" "$expr" || "$REPORT" "$WORK/h.json" "[a['detail'] for a in actions(r, kind='etcd-member')]"
done
finish
