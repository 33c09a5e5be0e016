#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# k3s and rke2 with a data dir of their own (k3s#8740, #10471, #6553, #11386; rke2#6292, #6522), on
# --root trees in a private mount namespace: the profile's paths move with the data dir read from the
# config file and its config.yaml.d drop-ins, the unit's ExecStart= and the env files, with k3s's
# precedence (env, then the command line, then the config files); its storage/ is protected as the
# default one is; status sees the residue before the run and none after. Another dir named by a
# losing source, and everything outside the data dir, stay.
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
        assert "$name: the plan names the data dir's evidence" grep -q "data-dir.* $1\$\|DATA_DIR $1\$" "$WORK/$name-plan.txt"
        assert "$name: the plan removes k3s's entries beneath it" grep -q "remove  *$1/server  " "$WORK/$name-plan.txt"
        assert "$name: never the data dir itself" bash -c '! grep -q "$0" "$1"' "remove  *$1  " "$WORK/$name-plan.txt"
        nr --root "$root" -o json status > "$WORK/$name-before.json" 2>/dev/null
        assert "$name: status before the run sees residue" jq_ "$WORK/$name-before.json" "r['verdict'] == 'residue'"
        nr --root "$root" --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
        assert "$name: run exits 0" test $? -eq 0
        nr --root "$root" -o json status > "$WORK/$name-after.json" 2>/dev/null
        assert "$name: status after the run is clean" jq_ "$WORK/$name-after.json" "r['verdict'] == 'clean'"
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

finish
