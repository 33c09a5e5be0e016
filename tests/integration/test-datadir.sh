#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# k3s and rke2 with a data dir of their own (k3s#8740, #10471, #6553, #11386; rke2#6292, #6522), on
# --root trees in a private mount namespace: the profile's paths move with the data dir read from the
# config file and its config.yaml.d drop-ins, the unit's ExecStart= and the env files, with k3s's
# precedence (env, then the command line, then the config files; a unit's drop-in included); its
# storage/ is protected as the default one is; status sees the residue before the run and none after.
# Another dir named by a losing source, and everything outside the data dir, stay. Only the entries
# k3s makes beneath a data dir go, never the dir: "data-dir: /data" keeps /data/postgres (issue 38,
# 5). The datastore is in the backup and the snapshots stay (6). A data dir set in a drop-in, one on
# /mnt, and a default dir that is a symlink to the disk are followed, never reported clean with the
# state left (7); with a moved data dir, detection still finds k3s's etcd and flannel. The crictl
# link install.sh made goes with k3s and does not make the node unrejoinable (8).
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
nr() { "$NODE_RESET" "$@"; }

# k3s's layout beneath a data dir: server state, the extracted binaries, the embedded containerd's
# images (kept by default), air-gap images, local-path PV data (always kept).
data_dir_tree() { # dir
        put "$1/server/token" "server token"
        put "$1/server/tls/server-ca.key" "ca key"
        put "$1/data/abc/bin/k3s"
        put "$1/agent/etc/containerd/config.toml"
        put "$1/agent/containerd/io.containerd.content.v1.content/blobs/sha256/bb" "image layer"
        put "$1/agent/images/airgap.tar" "air-gap images"
        put "$1/storage/pvc-2_default_data/file" "local-path PV"
}

k3s_node() { # name
        name=$1 root=$WORK/$1
        mkdir -p "$root"
        put /usr/local/bin/k3s
        put /usr/local/bin/k3s-uninstall.sh
        put /etc/rancher/node/password "node password"
        put /etc/hostname node-1
        put /data/other/keep "not k3s's"
}

plan_run_status() { # expected data dir
        nr --root "$root" plan > "$WORK/$name-plan.txt" 2>&1
        assert "$name: the plan names the data dir's evidence" grep -q "data-dir.* $1\$\|DATA_DIR $1\$\|a symlink to $1\$" "$WORK/$name-plan.txt"
        assert "$name: the plan removes k3s's entries beneath it" grep -q "remove  *$1/server  " "$WORK/$name-plan.txt"
        assert "$name: never the data dir itself" bash -c '! grep -q "$0" "$1"' "remove  *$1  " "$WORK/$name-plan.txt"
        nr --root "$root" status > "$WORK/$name-before.txt" 2>/dev/null
        assert "$name: status before the run sees residue" grep -q "^verdict: residue" "$WORK/$name-before.txt"
        nr --root "$root" --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
        assert "$name: run exits 0" test $? -eq 0
        nr --root "$root" status > "$WORK/$name-after.txt" 2>/dev/null
        assert "$name: status after the run is clean" grep -q "^residue: none, the node is clean" "$WORK/$name-after.txt"
        gone "$1/server" "$1/data" /usr/local/bin/k3s
        assert "$name: the backup holds the token and CA key beneath the data dir" \
                test -f "$(echo "$root"/var/backups/node-reset/*"$1"/server/token)" -a \
                -f "$(echo "$root"/var/backups/node-reset/*"$1"/server/tls/server-ca.key)"
        stays "$1/storage/pvc-2_default_data/file" "$1/agent/containerd/io.containerd.content.v1.content/blobs/sha256/bb" \
                "$1/agent/images/airgap.tar" /data/other/keep /etc/rancher/node/password /etc/hostname
}

# --- config.yaml, overridden by a drop-in; a drop-in that is no .yaml file is not read ------------
k3s_node k3s-config
put /etc/rancher/k3s/config.yaml "data-dir: /data/k3s-old
write-kubeconfig-mode: 644"
put /etc/rancher/k3s/config.yaml.d/10-disk.yaml "data-dir: /data/k3s"
put /etc/rancher/k3s/config.yaml.d/20-notes.txt "data-dir: /data/wrong"
data_dir_tree /data/k3s
put /data/k3s-old/server/token "an older install's"
put /data/wrong/server/token "not a config"
nr --root "$root" --profile k3s manifest print > "$WORK/$name-manifest.txt" 2>&1
assert "$name: processes are matched by their exe beneath it" grep -qx "process /data/k3s/data/\*/bin/k3s" "$WORK/$name-manifest.txt"
assert "$name: the default storage/ stays protected too" grep -qx "protect /var/lib/rancher/k3s/storage" "$WORK/$name-manifest.txt"
assert "$name: and the moved one" grep -qx "protect /data/k3s/storage" "$WORK/$name-manifest.txt"
plan_run_status /data/k3s
assert "$name: the plan names the drop-in" grep -q "config.yaml.d/10-disk.yaml: data-dir /data/k3s" "$WORK/$name-plan.txt"
stays /data/k3s-old/server/token /data/wrong/server/token

# --- the unit's ExecStart= (install.sh quotes each word) wins over the config file ------------------
k3s_node k3s-unit
put /etc/systemd/system/k3s.service "[Unit]
Description=Lightweight Kubernetes
[Service]
Type=notify
ExecStartPre=-/sbin/modprobe overlay
ExecStart=/usr/local/bin/k3s \\
    server \\
	'--data-dir' \\
	'/data/k3s-unit' \\
# a comment inside the continuation
	'--disable=traefik' \\"
put /etc/rancher/k3s/config.yaml "data-dir: /data/k3s-cfg"
data_dir_tree /data/k3s-unit
put /data/k3s-cfg/server/token "the config's, which the flag overrides"
plan_run_status /data/k3s-unit
stays /data/k3s-cfg/server/token

# --- K3S_DATA_DIR in the unit's env file wins over the command line (cmd/k3s/main.go findDataDir) ---
k3s_node k3s-env
put /etc/systemd/system/k3s.service "[Service]
ExecStart=/usr/local/bin/k3s server -d /data/k3s-flag"
put /etc/systemd/system/k3s.service.env "K3S_TOKEN=secret
K3S_DATA_DIR=/data/k3s-env"
data_dir_tree /data/k3s-env
put /data/k3s-flag/server/token "the flag's, which the environment overrides"
plan_run_status /data/k3s-env
stays /data/k3s-flag/server/token

# --- rke2: its config file and its unit in /usr/local/lib/systemd/system ----------------------------
name=rke2 root=$WORK/rke2
put /usr/local/bin/rke2
put /usr/local/lib/systemd/system/rke2-server.service "[Service]
ExecStart=/usr/local/bin/rke2 server"
put /etc/rancher/rke2/config.yaml "data-dir: /data/rke2"
put /etc/rancher/node/password "node password"
put /data/other/keep "not rke2's"
data_dir_tree /data/rke2
nr --root "$root" plan > "$WORK/$name-plan.txt" 2>&1
assert "$name: the plan names the data dir" grep -q "rancher/rke2/config.yaml: data-dir /data/rke2" "$WORK/$name-plan.txt"
nr --root "$root" --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
assert "$name: run exits 0" test $? -eq 0
gone /data/rke2/server /data/rke2/data /usr/local/bin/rke2 /usr/local/lib/systemd/system/rke2-server.service
stays /data/rke2/storage/pvc-2_default_data/file /data/rke2/agent/images/airgap.tar /data/other/keep

# --- --with-runtime: the moved image store goes too; PV data still stays ----------------------------
k3s_node k3s-with-runtime
put /etc/rancher/k3s/config.yaml "data-dir: /data/k3s"
data_dir_tree /data/k3s
nr --root "$root" --yes --with-runtime -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
assert "$name: run exits 0" test $? -eq 0
gone /data/k3s/agent/containerd /data/k3s/agent/images /data/k3s/server
stays /data/k3s/storage/pvc-2_default_data/file /data/other/keep

# --- a shared data disk: data-dir: /data takes k3s's entries only; the datastore is in the backup ---
k3s_node k3s-shared
put /etc/rancher/k3s/config.yaml "data-dir: /data"
data_dir_tree /data
put /data/postgres/base/16384/1259 "a database that is not k3s's"
put /data/server/db/snapshots/etcd-snapshot-node-1-1700000000 "the cluster's snapshot"
python3 - "$root/data/server/db/state.db" <<'PY'
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("pragma journal_mode=wal")
db.execute("pragma wal_autocheckpoint=0")
db.execute("create table kine (id integer primary key autoincrement, name text, value blob)")
db.executemany("insert into kine (name, value) values (?, ?)", [("/registry/k/%d" % i, b"v") for i in range(300)])
db.commit()
os._exit(0)  # no close, no checkpoint: the rows are in state.db-wal only, as while k3s runs
PY
assert "$name: the rows are in the write-ahead log, not yet in state.db" test -s "$root/data/server/db/state.db-wal"
nr --root "$root" plan > "$WORK/$name-plan.txt" 2>&1
assert "$name: the plan never removes /data" bash -c '! grep -q "remove  */data  " "$1"' - "$WORK/$name-plan.txt"
assert "$name: the plan copies the datastore" grep -q "copy .*/data/server/db/state.db" "$WORK/$name-plan.txt"
nr --root "$root" --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
assert "$name: run exits 0" test $? -eq 0
gone /data/server/token /data/server/tls /data/data /data/agent/etc /data/server/db/state.db /data/server/db/state.db-wal
stays /data /data/postgres/base/16384/1259 /data/server/db/snapshots/etcd-snapshot-node-1-1700000000 \
        /data/storage/pvc-2_default_data/file /data/other/keep
copy=$(echo "$root"/var/backups/node-reset/*/data/server/db/state.db)
assert "$name: the backup's datastore holds every committed row, the log's included" \
        test "$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from kine").fetchone()[0])' "$copy")" = 300
assert "$name: the backup row says how it was copied" grep -q "state.db copied by SQLite's online backup" "$WORK/$name.json"

# --- a datastore SQLite cannot copy (here: no database at all) is kept, named, and is residue ------------
k3s_node k3s-uncopied
put /var/lib/rancher/k3s/server/token "the token"
put /var/lib/rancher/k3s/server/db/state.db "not a SQLite database"
put /var/lib/rancher/k3s/server/db/state.db-wal "its log"
nr --root "$root" --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
assert "$name: run exits 1 (the datastore is left)" test $? -eq 1
assert "$name: the backup row says it was not copied" grep -q "state.db not copied (SQLite: [^)]*): kept" "$WORK/$name.json"
assert "$name: the files row names it" grep -q "the backup could not copy it, so kept (no other copy): /var/lib/rancher/k3s/server/db/state.db" "$WORK/$name.json"
stays /var/lib/rancher/k3s/server/db/state.db /var/lib/rancher/k3s/server/db/state.db-wal
gone /var/lib/rancher/k3s/server/token /usr/local/bin/k3s

# --- a data dir set in a unit drop-in (systemctl edit k3s), beneath /mnt: followed, never replaced by
# the default in silence ----------------------------------------------------------------------------
k3s_node k3s-dropin
put /etc/systemd/system/k3s.service "[Service]
ExecStart=/usr/local/bin/k3s server"
put /etc/systemd/system/k3s.service.d/override.conf "[Service]
ExecStart=
ExecStart=/usr/local/bin/k3s server --data-dir /mnt/ssd"
data_dir_tree /mnt/ssd
plan_run_status /mnt/ssd
assert "$name: the plan names the drop-in" grep -q "k3s.service.d/override.conf): ExecStart= --data-dir /mnt/ssd" "$WORK/$name-plan.txt"
stays /mnt/ssd

# --- the default dir a symlink to the data disk: the state behind it goes, then the link ------------
k3s_node k3s-link
data_dir_tree /data/k3s
mkdir -p "$root/var/lib/rancher" && ln -s /data/k3s "$root/var/lib/rancher/k3s"
cp -a "$root" "$WORK/k3s-link-nobackup"
plan_run_status /data/k3s
gone /var/lib/rancher/k3s
name=k3s-link-nobackup root=$WORK/k3s-link-nobackup
nr --root "$root" --yes --no-backup -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
assert "$name: --no-backup: run exits 0" test $? -eq 0
gone /data/k3s/server /data/k3s/data /var/lib/rancher/k3s
stays /data/k3s/storage/pvc-2_default_data/file /data/other/keep

# --- a moved data dir: its embedded etcd and its flannel configuration are still found ---------------
k3s_node k3s-moved-detect
put /etc/rancher/k3s/config.yaml "data-dir: /data/k3s"
data_dir_tree /data/k3s
put /data/k3s/server/db/etcd/member/snap/db "etcd's data"
put /data/k3s/agent/etc/cni/net.d/10-flannel.conflist '{"name":"cbr0","cniVersion":"1.0.0","plugins":[{"type":"flannel"},{"type":"portmap"}]}'
nr --root "$root" plan > "$WORK/$name-plan.txt" 2>&1
assert "$name: etcd is k3s's embedded one" grep -q "etcd: embedded" "$WORK/$name-plan.txt"
assert "$name: the CNI is flannel, from the moved agent/etc/cni/net.d" grep -q "CNI: flannel,portmap" "$WORK/$name-plan.txt"
nr --root "$root" --profile k3s manifest print > "$WORK/$name-manifest.txt" 2>&1
assert "$name: flannel's own cleanup is planned" grep -q "^#   profile:cni-flannel" "$WORK/$name-manifest.txt"

# --- install.sh's crictl -> k3s goes with k3s: the node stays rejoinable -----------------------------
k3s_node k3s-verdict
kubeadm_programs "$root"
rm "$root/usr/local/bin/crictl" && chmod 755 "$root/usr/local/bin/k3s"
ln -s k3s "$root/usr/local/bin/crictl" && ln -s k3s "$root/usr/local/bin/kubectl"
data_dir_tree /var/lib/rancher/k3s
nr --root "$root" --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
assert "$name: run exits 0" test $? -eq 0
gone /usr/local/bin/crictl /usr/local/bin/kubectl /usr/local/bin/k3s
assert "$name: rejoinable, the executables check ok, a warning says crictl went with k3s" jq_ "$WORK/$name.json" \
        "r['rejoin']['rejoinable'] is True and [c['state'] for c in r['rejoin']['checks'] if c['name'] == 'executables'] == ['ok'] and any(w['name'] == 'executables' and 'crictl went with k3s' in w['message'] for w in r['rejoin']['warnings'])"

finish
