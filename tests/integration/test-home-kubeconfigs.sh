#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# This cluster's kubeconfigs in every user's home (kubekey v4 removes $SUDO_USER's; kubespray
# $HOME/.kube): on a --root tree in a private mount namespace, the homes come from the tree's
# /etc/passwd, each resolved beneath the root (a home behind a symlink is followed inside the tree);
# a ~/.kube file that names this cluster's server AND its CA goes; one of another cluster (another
# server, or the same address with another CA, as a second k3s on 127.0.0.1:6443 has), one that does
# not parse, and the rest of ~/.kube stay.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
kubeconfig() { # server ca-text
        printf 'apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: %s\n    certificate-authority-data: %s\n  name: k\ncontexts:\n- context:\n    cluster: k\n    user: u\n  name: c\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n' \
                "$1" "$(printf -- '-----BEGIN CERTIFICATE-----\n%s\n-----END CERTIFICATE-----\n' "$2" | base64 -w0)"
}

name=kubeadm root=$WORK/kubeadm
put /etc/passwd "root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
alice:x:1000:1000:Alice:/home/alice:/bin/bash
bob:x:1001:1001::/srv/users/bob:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
odd:x:1002:1002::/:/bin/sh"
put /var/lib/kubelet/kubeadm-flags.env 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock"'
put /etc/kubernetes/kubelet.conf "$(kubeconfig https://10.0.0.1:6443 THIS-CLUSTER-CA)"
put /root/.kube/config "$(kubeconfig https://10.0.0.1:6443 THIS-CLUSTER-CA)"
put /home/alice/.kube/config "$(kubeconfig https://10.0.0.1:6443 THIS-CLUSTER-CA)"
put /home/alice/.kube/prod "$(kubeconfig https://192.0.2.7:6443 PROD-CA)"
put /home/alice/.kube/broken "clusters: [ this is not a kubeconfig"
put /home/alice/.kube/cache/discovery/x "kubectl's cache"
# bob's home is behind a symlink inside the tree; his config names the same address, another CA.
mkdir -p "$root/data/users" "$root/srv" && ln -s /data/users "$root/srv/users"
put /data/users/bob/.kube/config "$(kubeconfig https://10.0.0.1:6443 ANOTHER-CA)"
put /data/users/bob/.kube/this "$(kubeconfig https://10.0.0.1:6443 THIS-CLUSTER-CA)"
put /etc/hostname node-1

"$NODE_RESET" --root "$root" --profile kubeadm plan > "$WORK/$name-plan.txt" 2>&1
assert "$name: the plan names alice's kubeconfig of this cluster" grep -q "remove  */home/alice/.kube/config" "$WORK/$name-plan.txt"
assert "$name: bob's, through his home's symlink, by its real path" grep -q "remove  */data/users/bob/.kube/this" "$WORK/$name-plan.txt"
"$NODE_RESET" --root "$root" --profile kubeadm --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
rc=$?
assert "$name: run exits 0" test $rc -eq 0
[ $rc -eq 0 ] || cat "$WORK/$name.err"
gone /root/.kube/config /home/alice/.kube/config /data/users/bob/.kube/this /etc/kubernetes/kubelet.conf
stays /home/alice/.kube/prod /home/alice/.kube/broken /home/alice/.kube/cache/discovery/x /data/users/bob/.kube/config \
        /etc/passwd /etc/hostname
assert "$name: the symlink to bob's home is still a symlink" test -L "$root/srv/users"

# k3s: its admin kubeconfig names the cluster (https://127.0.0.1:6443 and its CA).
name=k3s root=$WORK/k3s
put /etc/passwd "root:x:0:0:root:/root:/bin/bash
ops:x:1000:1000::/home/ops:/bin/bash"
put /usr/local/bin/k3s
put /etc/rancher/k3s/k3s.yaml "$(kubeconfig https://127.0.0.1:6443 K3S-CA)"
put /home/ops/.kube/config "$(kubeconfig https://127.0.0.1:6443 K3S-CA)"
put /home/ops/.kube/k3d "$(kubeconfig https://127.0.0.1:6443 OTHER-K3S-CA)"
"$NODE_RESET" --root "$root" --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
assert "$name: run exits 0" test $? -eq 0
gone /home/ops/.kube/config /etc/rancher/k3s/k3s.yaml
stays /home/ops/.kube/k3d /etc/passwd
finish
