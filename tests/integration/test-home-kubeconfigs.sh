#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# This cluster's kubeconfigs in every user's home (kubekey v4 removes $SUDO_USER's; kubespray
# $HOME/.kube): on a --root tree in a private mount namespace, the homes come from the tree's
# /etc/passwd, each resolved beneath the root (a home behind a symlink is followed inside the tree);
# a ~/.kube file that holds only this cluster (its server AND its CA) goes; one that merges it with
# another cluster loses only this cluster's context, cluster and user, as kubectl config delete-*
# would, after the backup saved it whole: the other cluster's entries (its token byte for byte), the
# preferences, an extension, the owner and the mode stay. One of another cluster (another server, or
# the same address with another CA, as a second k3s on 127.0.0.1:6443 has), one that does not parse,
# and the rest of ~/.kube stay.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
require_cmd python3
python3 -c 'import yaml' 2> /dev/null || skip "python3-yaml is not installed"
REPORT="$TOP/tests/integration/report.py"
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
# alice's merged file (KUBECONFIG=admin.conf:prod kubectl config view --flatten), whose current context
# is this cluster's: prod's context, cluster and user (a token), a preference and an extension stay.
put /home/alice/.kube/merged "$(cat << 'EOF'
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClRISVMtQ0xVU1RFUi1DQQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==
    server: https://10.0.0.1:6443
  name: kubernetes
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClBST0QtQ0EKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=
    server: https://192.0.2.7:6443
  name: prod
contexts:
- context: {cluster: kubernetes, user: kubernetes-admin}
  name: kubernetes-admin@kubernetes
- context:
    cluster: prod
    namespace: payments
    user: prod-admin
  name: prod
current-context: kubernetes-admin@kubernetes
extensions:
- name: site
  extension: {owner: "platform team"}
kind: Config
preferences:
  colors: true
users:
- name: kubernetes-admin
  user: {token: this-cluster-token}
- name: prod-admin
  user:
    token: eyJhbGciOiJSUzI1NiIsImtpZCI6InByb2QifQ.eyJzdWIiOiJwcm9kLWFkbWluIn0.c2lnbmF0dXJlLW9mLXByb2Q
EOF
)"
chown 1000:1000 "$root/home/alice" "$root/home/alice/.kube" "$root/home/alice/.kube/merged"
chmod 0640 "$root/home/alice/.kube/merged"
cp -p "$root/home/alice/.kube/merged" "$WORK/merged.orig"

"$NODE_RESET" --root "$root" --profile kubeadm plan > "$WORK/$name-plan.txt" 2>&1
assert "$name: the plan removes alice's kubeconfig of this cluster, which holds nothing else" \
        grep -q "kubeconfig  */home/alice/.kube/config  (remove the file: it holds only this cluster" "$WORK/$name-plan.txt"
assert "$name: bob's, through his home's symlink, by its real path" grep -q "kubeconfig  */data/users/bob/.kube/this" "$WORK/$name-plan.txt"
assert "$name: the plan names what leaves alice's merged file and what stays" grep -qF \
        "/home/alice/.kube/merged  (remove context \"kubernetes-admin@kubernetes\", cluster \"kubernetes\", user \"kubernetes-admin\" (this cluster's); keep context \"prod\", cluster \"prod\", user \"prod-admin\"; unset current-context, it names kubernetes-admin@kubernetes)" \
        "$WORK/$name-plan.txt"
assert "$name: the backup will copy the merged file" grep -q "backup .*/home/alice/.kube/merged" "$WORK/$name-plan.txt"
"$NODE_RESET" --root "$root" --profile kubeadm --yes -o json run > "$WORK/$name.json" 2> "$WORK/$name.err"
rc=$?
assert "$name: run exits 0" test $rc -eq 0
[ $rc -eq 0 ] || cat "$WORK/$name.err"
gone /root/.kube/config /home/alice/.kube/config /data/users/bob/.kube/this /etc/kubernetes/kubelet.conf
stays /home/alice/.kube/prod /home/alice/.kube/broken /home/alice/.kube/cache/discovery/x /data/users/bob/.kube/config \
        /etc/passwd /etc/hostname
assert "$name: the symlink to bob's home is still a symlink" test -L "$root/srv/users"
stays /home/alice/.kube/merged
assert "$name: a kubeconfig row changed the merged file" "$REPORT" "$WORK/$name.json" \
        '[a["result"] for a in actions(r, kind="kubeconfig") if a["target"] == "/home/alice/.kube/merged"] == ["changed"]'
# What stays means what it meant (read as YAML), the token's line is byte for byte the same, nothing of
# this cluster is left, and the current context is unset, not left naming a context that is gone.
same_meaning() {
        python3 - "$WORK/merged.orig" "$root/home/alice/.kube/merged" << 'EOF'
import sys, yaml
before, after = (yaml.safe_load(open(f)) for f in sys.argv[1:])
keep = lambda entries, name: [e for e in entries if e["name"] == name]
assert after["clusters"] == keep(before["clusters"], "prod"), after["clusters"]
assert after["contexts"] == keep(before["contexts"], "prod"), after["contexts"]
assert after["users"] == keep(before["users"], "prod-admin"), after["users"]
assert "current-context" not in after, after
for k in ("apiVersion", "kind", "preferences", "extensions"):
    assert after[k] == before[k], k
EOF
}
assert "$name: prod's entries, the preferences and the extension mean what they meant" same_meaning
assert "$name: prod's token line is byte for byte the one written" \
        grep -qxF "$(grep -F 'token: eyJ' "$WORK/merged.orig")" "$root/home/alice/.kube/merged"
assert "$name: nothing of this cluster's server or token is left in it" \
        sh -c '! grep -qE "10\.0\.0\.1|this-cluster-token|kubernetes-admin" "$1"' - "$root/home/alice/.kube/merged"
assert "$name: the merged file keeps its owner and mode" \
        test "$(stat -c %u:%g:%a "$root/home/alice/.kube/merged")" = 1000:1000:640
saved=$(find "$root/var/backups/node-reset" -path '*/home/alice/.kube/merged' | head -n 1)
assert "$name: the backup holds the merged file as it was" cmp -s "$WORK/merged.orig" "${saved:-/nonexistent}"
saved=$(find "$root/var/backups/node-reset" -path '*/home/alice/.kube/config' | head -n 1)
assert "$name: the backup holds the file removed whole" test -s "${saved:-/nonexistent}"
"$NODE_RESET" --root "$root" --profile kubeadm status > "$WORK/$name-status.txt" 2>&1
assert "$name: status afterwards says clean (exit 0)" test $? -eq 0

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
