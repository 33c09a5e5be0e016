#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A full disk: --root trees in a private mount namespace whose var/backups is a small tmpfs filled to
# the last block. The plan says the backup has no room; the run resets a worker anyway (exit 1, one
# line saying what was not saved, no partial backup left), and on a control plane keeps what has no
# other copy (the CAs, the service-account keys, k3s's token, its SQLite datastore and its etcd snapshots,
# the encryption-at-rest configurations, the etcd data directory) and names it. A worker's public
# pki/ca.crt, with no key beside it, is no such copy: it goes, and the worker can join again. With room
# the backup is written and everything goes, as before.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"

kubeadm_worker() { # name
        name=$1 root=$WORK/$1
        put /var/lib/kubelet/kubeadm-flags.env 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock"'
        put /var/lib/kubelet/config.yaml "kind: KubeletConfiguration"
        head -c 20000 /dev/urandom > "$WORK/cert" && mkdir -p "$root/var/lib/kubelet/pki" &&
                cp "$WORK/cert" "$root/var/lib/kubelet/pki/kubelet-client-current.pem"
        put /etc/kubernetes/kubelet.conf "kubeconfig"
        put /etc/cni/net.d/10-flannel.conflist '{"name":"cbr0","plugins":[{"type":"flannel"}]}'
        put /etc/hostname node-1
        put /var/backups/keep "an operator's backup"
}

full_backups() { # size
        mkdir -p "$root/var/backups.tmp" && cp -a "$root/var/backups/." "$root/var/backups.tmp/"
        mount -t tmpfs -o "size=$1" nr-backups "$root/var/backups" || { echo "FAIL: cannot mount tmpfs"; exit 1; }
        cp -a "$root/var/backups.tmp/." "$root/var/backups/" && rm -rf "$root/var/backups.tmp"
        dd if=/dev/zero of="$root/var/backups/filler" bs=4k 2>/dev/null || true
        assert "$name: var/backups is full" test "$(df --output=avail "$root/var/backups" | tail -1)" -eq 0
}

# --- a worker on a full disk resets unattended --------------------------------------------------------
kubeadm_worker worker
full_backups 64k
"$NODE_RESET" --root "$root" --profile kubeadm plan > "$WORK/$name-plan.txt" 2>&1
assert "$name: the plan says there is no room for the backup" grep -q "NO ROOM: about [0-9]* KiB to write, 0 KiB free" "$WORK/$name-plan.txt"
"$NODE_RESET" --root "$root" --profile kubeadm --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
rc=$?
assert "$name: run exits 1 (the backup failed)" test $rc -eq 1
assert "$name: one line says what was not saved" grep -q "the backup could not be written (No space left on device): not saved: /etc/kubernetes/kubelet.conf, /var/lib/kubelet/config.yaml" "$WORK/$name.err"
assert "$name: the report's backup row says it too" jq_ "$WORK/$name.json" \
        "any('not saved: ' in (a['message'] or '') for a in actions(r, phase='backup'))"
gone /etc/kubernetes/kubelet.conf /var/lib/kubelet/config.yaml /var/lib/kubelet/pki /etc/cni/net.d
stays /etc/hostname /var/backups/keep /var/backups/filler
assert "$name: no partial backup is left to fill the disk further" test -z "$(ls -A "$root/var/backups/node-reset" 2>/dev/null)"
umount "$root/var/backups"

# --- a control plane on a full disk: what has no other copy is kept and named --------------------------
kubeadm_worker control-plane
for f in ca.key ca.crt sa.key sa.pub front-proxy-ca.key front-proxy-ca.crt etcd/ca.key etcd/ca.crt apiserver.key apiserver.crt; do
        put "/etc/kubernetes/pki/$f" "$f"
done
put /etc/kubernetes/admin.conf "kubeconfig"
put /etc/kubernetes/manifests/kube-apiserver.yaml "apiVersion: v1"
put /etc/kubernetes/manifests/etcd.yaml "apiVersion: v1
kind: Pod
spec:
  containers:
  - name: etcd
    command: [etcd, --name=cp1, --data-dir=/var/lib/etcd, --listen-client-urls=https://127.0.0.1:2379]"
put /var/lib/etcd/member/snap/db "the cluster's data"
full_backups 64k
"$NODE_RESET" --root "$root" --profile kubeadm --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
rc=$?
assert "$name: run exits 1" test $rc -eq 1
gone /etc/kubernetes/kubelet.conf /etc/kubernetes/admin.conf /etc/kubernetes/manifests/kube-apiserver.yaml \
        /etc/kubernetes/pki/apiserver.key /etc/kubernetes/pki/apiserver.crt /var/lib/kubelet/config.yaml /etc/cni/net.d
stays /etc/kubernetes/pki/ca.key /etc/kubernetes/pki/ca.crt /etc/kubernetes/pki/sa.key /etc/kubernetes/pki/sa.pub \
        /etc/kubernetes/pki/front-proxy-ca.key /etc/kubernetes/pki/etcd/ca.key /var/lib/etcd/member/snap/db \
        /etc/hostname /var/backups/keep
assert "$name: the refused keys are named" jq_ "$WORK/$name.json" \
        "any('kept (no other copy): /etc/kubernetes/pki/ca.key, /etc/kubernetes/pki/ca.crt' in (a['message'] or '') for a in actions(r))"
assert "$name: the kept etcd data directory is named" jq_ "$WORK/$name.json" \
        "any('the etcd data directory /var/lib/etcd' in (a['message'] or '') for a in actions(r))"
umount "$root/var/backups"

# --- a k3s server on a full disk: its token and CAs, beneath its own data dir, are kept and named -------
name=k3s-server root=$WORK/k3s-server
put /usr/local/bin/k3s
put /etc/rancher/k3s/config.yaml "data-dir: /data/k3s"
put /data/k3s/server/token "the cluster token"
put /data/k3s/server/tls/server-ca.key "server-ca.key"
put /data/k3s/server/tls/etcd/peer-ca.key "peer-ca.key"
put /data/k3s/server/tls/serving-kube-apiserver.key "a leaf key"
put /data/k3s/server/cred/admin.kubeconfig "kubeconfig"
put /etc/hostname node-1
mkdir -p "$root/var/backups"
full_backups 64k
"$NODE_RESET" --root "$root" --profile k3s --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
rc=$?
assert "$name: run exits 1" test $rc -eq 1
stays /data/k3s/server/token /data/k3s/server/tls/server-ca.key /data/k3s/server/tls/etcd/peer-ca.key /etc/hostname
gone /data/k3s/server/tls/serving-kube-apiserver.key /data/k3s/server/cred/admin.kubeconfig /usr/local/bin/k3s
assert "$name: the kept token and keys are named" jq_ "$WORK/$name.json" \
        "any('kept (no other copy): /data/k3s/server/token, /data/k3s/server/tls/server-ca.key, /data/k3s/server/tls/etcd/peer-ca.key' in (a['message'] or '') for a in actions(r))"
umount "$root/var/backups"

# --- a single k3s server's datastore, snapshots and encryption config: the cluster's only copy ---------
name=k3s-sqlite root=$WORK/k3s-sqlite
put /usr/local/bin/k3s
put /var/lib/rancher/k3s/server/token "the cluster token"
put /var/lib/rancher/k3s/server/db/state.db "the whole cluster"
put /var/lib/rancher/k3s/server/db/state.db-wal "its last transactions"
put /var/lib/rancher/k3s/server/db/state.db-shm "its index"
put /var/lib/rancher/k3s/server/db/snapshots/on-demand-node-1 "a snapshot"
put /var/lib/rancher/k3s/server/cred/encryption-config.json '{"kind":"EncryptionConfiguration"}'
put /var/lib/rancher/k3s/server/cred/admin.kubeconfig "kubeconfig"
put /etc/hostname node-1
mkdir -p "$root/var/backups"
full_backups 64k
"$NODE_RESET" --root "$root" --profile k3s --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
assert "$name: run exits 1" test $? -eq 1
stays /var/lib/rancher/k3s/server/db/state.db /var/lib/rancher/k3s/server/db/state.db-wal \
        /var/lib/rancher/k3s/server/db/state.db-shm /var/lib/rancher/k3s/server/db/snapshots/on-demand-node-1 \
        /var/lib/rancher/k3s/server/cred/encryption-config.json /var/lib/rancher/k3s/server/token
gone /var/lib/rancher/k3s/server/cred/admin.kubeconfig /usr/local/bin/k3s
assert "$name: the kept datastore is named" grep -q "kept (no other copy): [^\"]*/var/lib/rancher/k3s/server/db/state.db" "$WORK/$name.json"
umount "$root/var/backups"

# --- kubespray's encryption-at-rest key is kept beside the etcd data it decrypts -------------------------
kubeadm_worker kubespray-cp
put /etc/kubernetes/kubelet.env "KUBELET_ARGS="
put /etc/kubernetes/ssl/ca.key "ca.key"
put /etc/kubernetes/ssl/ca.crt "ca.crt"
put /etc/kubernetes/ssl/apiserver.key "a leaf key"
put /etc/kubernetes/ssl/secrets_encryption.yaml "kind: EncryptionConfiguration"
full_backups 64k
"$NODE_RESET" --root "$root" --profile kubespray --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
assert "$name: run exits 1" test $? -eq 1
stays /etc/kubernetes/ssl/secrets_encryption.yaml /etc/kubernetes/ssl/ca.key /etc/kubernetes/ssl/ca.crt
gone /etc/kubernetes/ssl/apiserver.key /etc/kubernetes/kubelet.env
umount "$root/var/backups"

# --- a worker's public ca.crt (no ca.key beside it) is handed out again by every control plane: it goes --
kubeadm_worker ca-worker
kubeadm_programs "$root"
put /etc/kubernetes/pki/ca.crt "the cluster's public CA"
full_backups 64k
"$NODE_RESET" --root "$root" --profile kubeadm --phases backup,files,verify --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
assert "$name: run exits 1 (the backup failed)" test $? -eq 1
gone /etc/kubernetes/pki/ca.crt /etc/kubernetes/kubelet.conf
assert "$name: the ca-cert check passes: the worker can join again" jq_ "$WORK/$name.json" \
        "[c['state'] for c in r['rejoin']['checks'] if c['name'] == 'ca-cert'] == ['ok']"
umount "$root/var/backups"

# --- with room, the backup is written and the keys go as before ----------------------------------------
kubeadm_worker roomy
put /etc/kubernetes/pki/ca.key "ca.key"
mkdir -p "$root/var/backups" && mount -t tmpfs -o size=4m nr-backups "$root/var/backups"
"$NODE_RESET" --root "$root" --profile kubeadm plan > "$WORK/$name-plan.txt" 2>&1
assert "$name: the plan says what the backup writes and what is free" grep -q "about [0-9]* KiB to write, [0-9]* KiB free where it goes" "$WORK/$name-plan.txt"
"$NODE_RESET" --root "$root" --profile kubeadm --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
assert "$name: run exits 0" test $? -eq 0
gone /etc/kubernetes/pki/ca.key /etc/kubernetes/kubelet.conf
assert "$name: the backup holds the CA key" test -f "$(echo "$root"/var/backups/node-reset/*/etc/kubernetes/pki/ca.key)"
umount "$root/var/backups"
finish
