#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Detection and profiles on --root trees shaped like each installer's node (kubeadm, kubespray,
# kubekey, k3s, rke2, a symlinked /var/lib/kubelet, co-hosted Docker, an ambiguous one), in a private
# mount namespace with real mounts: each run is asserted on what is gone AND on what stays (the
# runtime's config and images, CNI binaries, etcd backups, other clusters' kubeconfigs, the k3s node
# password, PV data). Then the runtime's scope (--with-runtime), and containerd shims: only k8s.io's
# are killed, Docker's (moby) keep running.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
nr() { "$NODE_RESET" "$@"; }
mounts_beneath() { findmnt -rn -o TARGET | grep -F "$1/" || true; }

kubeconfig() { # server
        printf 'apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: %s\n  name: k\ncontexts:\n- context:\n    cluster: k\n    user: u\n  name: c\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n' "$1"
}

# What every node has: kubelet state with a pod's emptyDir mounted, containerd with an image blob,
# CNI config, state and plugin binaries, etcd backups, this cluster's and another cluster's
# kubeconfig, PV data, host files.
common_node() {
        put /var/lib/kubelet/config.yaml "containerRuntimeEndpoint: unix:///run/containerd/containerd.sock"
        put /var/lib/kubelet/pki/kubelet.crt
        mkdir -p "$root/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/cache"
        mount -t tmpfs -o size=1m nr-emptydir "$root/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/cache"
        put /var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/cache/scratch
        put /etc/containerd/config.toml "SystemdCgroup = true"
        put /etc/containerd/certs.d/registry.local/hosts.toml "mirror credentials"
        put /var/lib/containerd/io.containerd.content.v1.content/blobs/sha256/aa "image layer"
        put /opt/cni/bin/bridge
        put /etc/cni/net.d/10-flannel.conflist '{"name":"cbr0","plugins":[{"type":"flannel"},{"type":"portmap"}]}'
        put /var/lib/cni/networks/cbr0/10.244.1.5
        put /var/backups/kube_etcd/etcd-2026-12-01/snapshot.db "etcd backup"
        put /var/openebs/local/pvc-1/data "PV data"
        put /root/.kube/config "$(kubeconfig https://10.0.0.1:6443)"
        put /root/.kube/other-cluster "$(kubeconfig https://192.0.2.7:6443)"
        put /etc/hostname node-1
        put /usr/bin/kubelet
}

new_node() { # name [k3s]: k3s and rke2 write no /etc/kubernetes/kubelet.conf (kubeadm's)
        name=$1
        root=$WORK/$1
        mkdir -p "$root"
        common_node
        [ "${2:-}" = k3s ] || put /etc/kubernetes/kubelet.conf "$(kubeconfig https://10.0.0.1:6443)"
}

dbg_stop() { cat "$WORK/$name.err"; "$REPORT" "$WORK/$name.json" "r['profile'], r['manifests']"; exit 1; }
run_detected() { # extra args...
        nr --root "$root" --yes -o json "$@" run > "$WORK/$name.json" 2> "$WORK/$name.err"
        rc=$?
        assert "$name: run exits 0" test $rc -eq 0
        [ $rc -eq 0 ] || { cat "$WORK/$name.err"; "$REPORT" "$WORK/$name.json" "r['residue']"; }
}

profile_is() { # expected-profile expected-why-fragment
        assert "$name: profile $1 ($2)" jq_ "$WORK/$name.json" "r['profile']['name'] == '$1' and '$2' in r['profile']['why']"
}

# --- kubeadm worker --------------------------------------------------------------------------------
new_node kubeadm
put /etc/systemd/system/kubelet.service.d/10-kubeadm.conf "[Service]"
put /var/lib/kubelet/kubeadm-flags.env 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock"'
put /etc/kubernetes/pki/ca.crt
mkdir -p "$root/etc/kubernetes/manifests"
nr --root "$root" plan > "$WORK/kubeadm-plan.txt" 2>&1
assert "kubeadm: plan says what was detected, from which evidence" \
        grep -q "installer: kubeadm" "$WORK/kubeadm-plan.txt"
assert "kubeadm: plan names the evidence" grep -q "10-kubeadm.conf: kubeadm's kubelet drop-in" "$WORK/kubeadm-plan.txt"
run_detected
profile_is kubeadm detected
assert "kubeadm: the report carries the detection" jq_ "$WORK/$name.json" \
        "r['installer']['name'] == 'kubeadm' and not r['installer']['ambiguous'] and r['runtime']['name'] == 'containerd' and r['cni']['name'] == 'flannel,portmap' and r['etcd']['name'] == 'none'"
gone /etc/kubernetes/kubelet.conf /etc/kubernetes/pki/ca.crt /var/lib/kubelet/config.yaml /var/lib/kubelet/pods \
        /etc/cni/net.d /var/lib/cni /root/.kube/config
stays /etc/kubernetes/pki /etc/kubernetes/manifests /var/lib/kubelet /etc/systemd/system/kubelet.service.d/10-kubeadm.conf \
        /etc/containerd/config.toml /etc/containerd/certs.d/registry.local/hosts.toml \
        /var/lib/containerd/io.containerd.content.v1.content/blobs/sha256/aa /opt/cni/bin/bridge \
        /var/backups/kube_etcd/etcd-2026-12-01/snapshot.db /root/.kube/other-cluster /var/openebs/local/pvc-1/data \
        /etc/hostname /usr/bin/kubelet
assert "kubeadm: the emptyDir was unmounted" test -z "$(mounts_beneath "$root")"

# --- kubespray (containerd, etcd by systemd, NodeLocal DNS) ----------------------------------------
kubespray_node() {
        new_node "$1"
        put /etc/kubernetes/kubelet.env 'KUBELET_ARGS="--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock"'
        put /etc/kubernetes/kubelet-config.yaml "containerRuntimeEndpoint: unix:///var/run/containerd/containerd.sock"
        put /etc/systemd/system/kubelet.service "[Service]"
        put /etc/etcd.env "ETCD_DATA_DIR=/var/lib/etcd"
        put /var/lib/etcd/member/snap/db
        put /var/lib/etcd-events/member/snap/db
        put /etc/ssl/etcd/ssl/ca.pem
        put /etc/systemd/resolved.conf.d/kubespray.conf "DNS=169.254.25.10"
        put /etc/NetworkManager/conf.d/dns.conf "dns=none"
        for b in kubelet kubectl kubeadm etcd helm containerd containerd-shim-runc-v2 runc crictl ctr; do
                put /usr/local/bin/$b
        done
        put /etc/nginx/nginx.conf "the host's nginx"
        # /etc/hosts as kubespray <= 2.29 left it: its inventory block between the host's own lines.
        printf '127.0.0.1 localhost\n# Ansible inventory hosts BEGIN\n10.0.0.11 node1.cluster.local node1\n# Ansible inventory hosts END\n192.0.2.9 nas.site\n' \
                > "$root/etc/hosts"
        put /etc/sysctl.d/99-sysctl.conf "vm.swappiness=1"
        # Docker for other workloads, next to kubelet's containerd.
        put /usr/bin/dockerd
        put /var/lib/docker/image/overlay2/repositories.json "{}"
        put /etc/docker/daemon.json "{}"
}
kubespray_node kubespray
run_detected
profile_is kubespray detected
assert "kubespray: Docker is reported co-hosted, not kubelet's runtime" jq_ "$WORK/$name.json" \
        "r['runtime']['name'] == 'containerd' and r['runtime']['docker_cohosted'] and r['etcd']['name'] == 'systemd'"
gone /etc/kubernetes /var/lib/etcd /var/lib/etcd-events /etc/ssl/etcd /etc/etcd.env \
        /etc/systemd/resolved.conf.d/kubespray.conf /etc/NetworkManager/conf.d/dns.conf /etc/systemd/system/kubelet.service \
        /usr/local/bin/kubelet /usr/local/bin/kubectl /usr/local/bin/helm /etc/cni /root/.kube/config
stays /etc/containerd/config.toml /var/lib/containerd/io.containerd.content.v1.content/blobs/sha256/aa /opt/cni/bin/bridge \
        /usr/local/bin/containerd /usr/local/bin/runc /usr/local/bin/crictl /usr/local/bin/ctr \
        /etc/nginx/nginx.conf /etc/sysctl.d/99-sysctl.conf /var/backups/kube_etcd/etcd-2026-12-01/snapshot.db \
        /root/.kube/other-cluster /var/lib/docker/image/overlay2/repositories.json /etc/docker/daemon.json

assert "kubespray: the inventory block left /etc/hosts, the host's lines stayed" \
        test "$(cat "$root/etc/hosts")" = "$(printf '127.0.0.1 localhost\n192.0.2.9 nas.site')"

# calico's dummy0 (this test's own network namespace) goes; a host's dummy link stays.
# (The kernel here may lack the dummy driver: a veth named dummy0 stands in, as the name is what counts.)
ip link add dummy0 type veth peer name nr-peer0 && ip link add nr-site0 type veth peer name nr-peer1
assert "kubespray: dummy0 is there to begin with" eval "ip link show dummy0 > /dev/null"
nr --root "$root" --profile kubespray --phases network --yes run > /dev/null 2>&1
assert "kubespray: calico's dummy0 is gone" eval "! ip link show dummy0 > /dev/null 2>&1"
assert "kubespray: the host's own link stays" eval "ip link show nr-site0 > /dev/null"
ip link del nr-site0

# NodeLocal DNS's rules (this test's own network namespace) are Kubernetes': "firewall owned"
# removes them in every table, the host's SSH rule stays.
if command -v iptables > /dev/null && iptables -t raw -A PREROUTING -d 169.254.25.10/32 -p udp --dport 53 \
        -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK 2> /dev/null; then
        iptables -A INPUT -d 169.254.25.10/32 -p udp --dport 53 -m comment --comment "NodeLocal DNS Cache: allow DNS traffic" -j ACCEPT
        iptables -A INPUT -p tcp --dport 22 -j ACCEPT
        nr --root "$root" --phases firewall --yes run > /dev/null 2>&1
        assert "kubespray: NodeLocal DNS's NOTRACK and ACCEPT rules are gone" test -z "$(iptables-save | grep 'NodeLocal DNS')"
        assert "kubespray: the host's SSH rule stays" test -n "$(iptables-save | grep -- '--dport 22 -j ACCEPT')"
else
        fail "cannot add the NodeLocal DNS rules (iptables)"
fi

# --with-runtime: containerd's config and state and the CNI binaries go; co-hosted Docker stays.
kubespray_node kubespray-with-runtime
run_detected --with-runtime
gone /etc/containerd /var/lib/containerd /opt/cni/bin /usr/local/bin/containerd /usr/local/bin/containerd-shim-runc-v2 \
        /usr/local/bin/runc /usr/local/bin/crictl /usr/local/bin/ctr
stays /var/lib/docker/image/overlay2/repositories.json /etc/docker/daemon.json /usr/bin/dockerd \
        /var/backups/kube_etcd/etcd-2026-12-01/snapshot.db
assert "--with-runtime: containerd.service is stopped, docker.service is not" jq_ "$WORK/$name.json" \
        "'profile:runtime-containerd' in r['manifests'] and not any('docker' in a['target'] for a in actions(r, kind='remove'))"

# A commented-out cri-dockerd endpoint in kubelet's config.yaml is no endpoint, and a file that does
# not parse is evidence of nothing: the runtime is containerd, so --with-runtime removes containerd's
# state and never the co-hosted Docker's /var/lib/docker.
new_node commented-endpoint
put /etc/systemd/system/kubelet.service.d/10-kubeadm.conf "[Service]"
put /var/lib/kubelet/kubeadm-flags.env 'KUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.k8s.io/pause:3.9"'
put /var/lib/kubelet/config.yaml "$(printf '%s\n' 'kind: KubeletConfiguration' \
        '# containerRuntimeEndpoint: unix:///var/run/cri-dockerd.sock (before the move to containerd)' \
        'containerRuntimeEndpoint: unix:///run/containerd/containerd.sock')"
put /etc/kubernetes/kubelet-config.yaml "$(printf '%s\n' 'containerRuntimeEndpoint: "unix:///var/run/cri-dockerd.sock' 'x: [')"
put /usr/bin/dockerd
put /var/lib/docker/image/overlay2/repositories.json "{}"
put /etc/docker/daemon.json "{}"
nr --root "$root" --with-runtime plan > "$WORK/$name.plan" 2>&1
assert "commented-endpoint: the plan says the unparsable file is no evidence" \
        grep -q "/etc/kubernetes/kubelet-config.yaml: malformed YAML at line [0-9]* column [0-9]*: .*: not evidence" "$WORK/$name.plan"
run_detected --with-runtime
assert "commented-endpoint: the runtime is containerd, Docker co-hosted" jq_ "$WORK/$name.json" \
        "r['runtime']['name'] == 'containerd' and r['runtime']['docker_cohosted'] and 'profile:runtime-containerd' in r['manifests']"
gone /var/lib/containerd /etc/containerd
stays /var/lib/docker/image/overlay2/repositories.json /etc/docker/daemon.json /usr/bin/dockerd

# --- kubekey v3 ------------------------------------------------------------------------------------
new_node kubekey
mkdir -p "$root/usr/local/bin/kube-scripts" "$root/etc/kubekey" "$root/var/lib/rook/osd0"
put /etc/systemd/system/backup-etcd.timer "[Timer]"
put /etc/systemd/system/backup-etcd.service "[Service]"
put /var/lib/kubelet/kubeadm-flags.env 'KUBELET_KUBEADM_ARGS=""'
put /var/lib/rook/osd0/block "ceph data"
put /usr/local/bin/calicoctl
put /etc/cri-dockerd/config "cri-dockerd"
printf '%s\n' '127.0.0.1 localhost' '# kubekey hosts BEGIN' '10.0.0.11  node1.cluster.local node1' '# kubekey hosts END' \
        '192.0.2.9 nas.site' '# kubekey kubernetes control_plane_endpoint BEGIN' '10.0.0.100  lb.kubesphere.local' \
        '# kubekey kubernetes control_plane_endpoint END' > "$root/etc/hosts"
ip link add docker0 type bridge
assert "kubekey: docker0 is there to begin with" eval "ip link show docker0 > /dev/null"
run_detected
profile_is kubekey detected
gone /usr/local/bin/kube-scripts /etc/kubekey /etc/systemd/system/backup-etcd.timer /etc/systemd/system/backup-etcd.service \
        /etc/kubernetes /etc/cni /usr/local/bin/calicoctl
stays /var/backups/kube_etcd/etcd-2026-12-01/snapshot.db /var/lib/rook/osd0/block /var/openebs/local/pvc-1/data \
        /etc/containerd/config.toml /opt/cni/bin/bridge /etc/cri-dockerd/config
assert "kubekey: its /etc/hosts blocks are gone, the host's lines stay" \
        test "$(cat "$root/etc/hosts")" = "$(printf '127.0.0.1 localhost\n192.0.2.9 nas.site')"
nr --root "$root" --profile kubekey --phases network --yes run > /dev/null 2>&1
assert "kubekey: docker0 stays while the runtime is kept" eval "ip link show docker0 > /dev/null"

# kk --with-cri on a Docker node: /etc/cri-dockerd and docker0 go with Docker.
new_node kubekey-docker
put /var/lib/kubelet/kubeadm-flags.env 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/cri-dockerd.sock"'
mkdir -p "$root/etc/kubekey"
put /etc/cri-dockerd/config "cri-dockerd"
put /usr/local/bin/cri-dockerd
put /etc/docker/daemon.json "{}"
run_detected --with-runtime=docker
profile_is kubekey detected
gone /etc/cri-dockerd /usr/local/bin/cri-dockerd /etc/docker
stays /var/backups/kube_etcd/etcd-2026-12-01/snapshot.db /var/openebs/local/pvc-1/data
ip link add nr-site0 type bridge
nr --root "$root" --profile kubekey --with-runtime=docker --phases network --yes run > /dev/null 2>&1
assert "kubekey --with-runtime=docker: docker0 is gone" eval "! ip link show docker0 > /dev/null 2>&1"
assert "kubekey --with-runtime=docker: the host's own bridge stays" eval "ip link show nr-site0 > /dev/null"
ip link del nr-site0

# --- k3s (server) ----------------------------------------------------------------------------------
k3s_node() {
        new_node "$1" k3s
        put /usr/local/bin/k3s
        put /usr/local/bin/k3s-killall.sh
        put /usr/local/bin/k3s-uninstall.sh
        put /etc/systemd/system/k3s.service "[Service]"
        put /etc/systemd/system/k3s.service.env "K3S_TOKEN=secret"
        put /etc/systemd/system/k3s-agent.service.env "K3S_TOKEN=secret"
        put /etc/rancher/k3s/config.yaml "write-kubeconfig-mode: 644"
        put /etc/rancher/node/password "node password"
        put /var/lib/rancher/k3s/server/token "server token"
        put /var/lib/rancher/k3s/data/abc/bin/k3s
        put /var/lib/rancher/k3s/agent/containerd/io.containerd.content.v1.content/blobs/sha256/bb "image layer"
        put /var/lib/rancher/k3s/agent/images/airgap.tar "air-gap images"
        put /var/lib/rancher/k3s/storage/pvc-2_default_data/file "local-path PV"
        mkdir -p "$root/var/lib/rancher/k3s/agent/containerd/io.containerd.runtime.v2.task/k8s.io/c1/rootfs"
        mount -t tmpfs nr-k3s-rootfs "$root/var/lib/rancher/k3s/agent/containerd/io.containerd.runtime.v2.task/k8s.io/c1/rootfs"
        # A named install (INSTALL_K3S_NAME=edge) next to the default one, and its OpenRC twin.
        put /etc/systemd/system/k3s-edge.service "[Service]"
        put /etc/systemd/system/k3s-edge.service.env "K3S_TOKEN=edge-secret"
        put /usr/local/bin/k3s-edge-uninstall.sh
        put /etc/init.d/k3s-edge "#!/sbin/openrc-run"
        mkdir -p "$root/etc/runlevels/default"
        ln -s /etc/init.d/k3s-edge "$root/etc/runlevels/default/k3s-edge"
        put /etc/init.d/sshd "#!/sbin/openrc-run"
        ln -s /etc/init.d/sshd "$root/etc/runlevels/default/sshd"
        # create_symlinks: kubectl leads to k3s; crictl is the host's own binary, ctr leads elsewhere.
        ln -s k3s "$root/usr/local/bin/kubectl"
        put /usr/local/bin/crictl "the host's crictl"
        put /usr/bin/ctr "the host's ctr"
        ln -s /usr/bin/ctr "$root/usr/local/bin/ctr"
}
k3s_node k3s
run_detected
profile_is k3s detected
gone /usr/local/bin/k3s /usr/local/bin/k3s-killall.sh /usr/local/bin/k3s-uninstall.sh /etc/systemd/system/k3s.service \
        /etc/systemd/system/k3s.service.env /etc/systemd/system/k3s-agent.service.env /etc/rancher/k3s \
        /var/lib/rancher/k3s/server /var/lib/rancher/k3s/data /var/lib/kubelet \
        /etc/systemd/system/k3s-edge.service /etc/systemd/system/k3s-edge.service.env /usr/local/bin/k3s-edge-uninstall.sh \
        /etc/init.d/k3s-edge /etc/runlevels/default/k3s-edge /usr/local/bin/kubectl
stays /etc/rancher/node/password /var/lib/rancher/k3s/storage/pvc-2_default_data/file \
        /var/lib/rancher/k3s/agent/containerd/io.containerd.content.v1.content/blobs/sha256/bb \
        /var/lib/rancher/k3s/agent/images/airgap.tar /usr/local/bin/crictl /usr/bin/ctr /etc/init.d/sshd
assert "k3s: the host's crictl is untouched" grep -qx "the host's crictl" "$root/usr/local/bin/crictl"
assert "k3s: ctr, a symlink leading elsewhere, stays" test "$(readlink "$root/usr/local/bin/ctr")" = /usr/bin/ctr
assert "k3s: another service's runlevel link stays" test -L "$root/etc/runlevels/default/sshd"
assert "k3s: the report says why ctr was kept" jq_ "$WORK/$name.json" \
        "any(a['target'] == '/usr/local/bin/ctr' and 'not /usr/local/bin/k3s: kept' in a['message'] for a in actions(r, kind='unlink'))"
assert "k3s: the container rootfs was unmounted" test -z "$(mounts_beneath "$root")"

# A rerun after the binary went (or a node where it was deleted by hand): the dangling link to it goes;
# a link to a k3s binary that stays (no line removes /usr/local/bin/k3s) is kept.
name=k3s-dangling root=$WORK/k3s-dangling
mkdir -p "$root/usr/local/bin" "$root/etc/rancher/k3s"
put /etc/rancher/k3s/config.yaml "write-kubeconfig-mode: 644"
ln -s k3s "$root/usr/local/bin/kubectl"
run_detected --profile k3s
gone /usr/local/bin/kubectl
name=k3s-kept root=$WORK/k3s-kept
mkdir -p "$root/usr/local/bin"
put /usr/local/bin/k3s "k3s binary"
ln -s /usr/local/bin/k3s "$root/usr/local/bin/kubectl"
printf 'remove-symlink-to /usr/local/bin/kubectl /usr/local/bin/k3s\n' > "$WORK/k3s-kept.conf"
nr --root "$root" -m "$WORK/k3s-kept.conf" --yes -o json run > "$WORK/$name.json" 2>/dev/null
assert "k3s-kept: a link whose target stays is kept" test -L "$root/usr/local/bin/kubectl" -a -f "$root/usr/local/bin/k3s"
assert "k3s-kept: and said so" jq_ "$WORK/$name.json" \
        "any('/usr/local/bin/k3s stays' in a['message'] for a in actions(r, kind='unlink'))"
k3s_node k3s-with-runtime
run_detected --with-runtime
gone /var/lib/rancher/k3s/agent/containerd /var/lib/rancher/k3s/agent/images
stays /etc/rancher/node/password /var/lib/rancher/k3s/storage/pvc-2_default_data/file

# --- rke2 (tarball install) ------------------------------------------------------------------------
new_node rke2 k3s
put /usr/local/bin/rke2
put /usr/local/bin/rke2-uninstall.sh
put /usr/local/lib/systemd/system/rke2-server.service "[Service]"
put /usr/local/lib/systemd/system/rke2-server.env "RKE2_TOKEN=secret"
put /usr/local/share/rke2/rke2-cis-sysctl.conf
put /etc/rancher/rke2/config.yaml "token: secret"
put /etc/rancher/node/password "node password"
put /var/lib/rancher/rke2/server/token
put /var/lib/rancher/rke2/agent/images/rke2-images.tar "air-gap images"
put /etc/yum.repos.d/rancher-rke2-common.repo "[rancher-rke2-common-latest]"
put /etc/yum.repos.d/rancher-rke2-1-31-latest.repo "[rancher-rke2-1-31-latest]"
put /etc/yum.repos.d/epel.repo "[epel]"
put /etc/zypp/repos.d/rancher-rke2-common.repo "[rancher-rke2-common-latest]"
put /etc/fapolicyd/rules.d/80-rke2.rules "allow perm=any all : dir=/var/lib/rancher/"
put /etc/fapolicyd/rules.d/90-site.rules "the site's rule"
run_detected
profile_is rke2 detected
gone /usr/local/bin/rke2 /usr/local/lib/systemd/system/rke2-server.service /usr/local/lib/systemd/system/rke2-server.env \
        /usr/local/share/rke2 /etc/rancher/rke2 /var/lib/rancher/rke2/server /etc/yum.repos.d/rancher-rke2-common.repo \
        /etc/yum.repos.d/rancher-rke2-1-31-latest.repo /etc/zypp/repos.d/rancher-rke2-common.repo \
        /etc/fapolicyd/rules.d/80-rke2.rules
stays /etc/rancher/node/password /var/lib/rancher/rke2/agent/images/rke2-images.tar /etc/yum.repos.d/epel.repo \
        /etc/fapolicyd/rules.d/90-site.rules

# --- rke2 under /opt/rke2 (SUSE, /usr/local read-only: INSTALL_RKE2_TAR_PREFIX) --------------------
new_node rke2-opt k3s
put /opt/rke2/bin/rke2
put /opt/rke2/bin/rke2-killall.sh
put /opt/rke2/bin/rke2-uninstall.sh
put /opt/rke2/bin/site-tool "the site's own tool"
put /opt/rke2/lib/systemd/system/rke2-agent.service "[Service]"
put /opt/rke2/lib/systemd/system/rke2-agent.env "RKE2_TOKEN=secret"
put /opt/rke2/share/rke2/rke2-cis-sysctl.conf
put /etc/systemd/system/rke2-agent.service "[Service]"
put /etc/rancher/rke2/config.yaml "token: secret"
put /var/lib/rancher/rke2/agent/images/rke2-images.tar "air-gap images"
run_detected --profile rke2
gone /opt/rke2/bin/rke2 /opt/rke2/bin/rke2-killall.sh /opt/rke2/bin/rke2-uninstall.sh /opt/rke2/lib/systemd/system/rke2-agent.service \
        /opt/rke2/lib/systemd/system/rke2-agent.env /opt/rke2/share/rke2 /etc/systemd/system/rke2-agent.service /etc/rancher/rke2
stays /opt/rke2/bin/site-tool /var/lib/rancher/rke2/agent/images/rke2-images.tar

# --- a symlinked /var/lib/kubelet (data disk): followed, its target emptied and unmounted ---------
name=symlink root=$WORK/symlink
mkdir -p "$root/var/lib" "$root/data/kubelet/pods/u2/volumes/kubernetes.io~empty-dir/v"
ln -s /data/kubelet "$root/var/lib/kubelet"
put /data/kubelet/kubeadm-flags.env 'KUBELET_KUBEADM_ARGS=""'
put /data/kubelet/config.yaml "kind: KubeletConfiguration"
put /data/other/keep "the data disk's other data"
mount -t tmpfs nr-symlinked "$root/data/kubelet/pods/u2/volumes/kubernetes.io~empty-dir/v"
run_detected
profile_is kubeadm detected
assert "symlink: the report names the target" jq_ "$WORK/$name.json" "r['kubelet_dir'] == '/data/kubelet'"
gone /data/kubelet/config.yaml /data/kubelet/kubeadm-flags.env /data/kubelet/pods
stays /data/kubelet /data/other/keep
assert "symlink: the link itself stays" test -L "$root/var/lib/kubelet"
assert "symlink: the pod's mount under the target was unmounted" test -z "$(mounts_beneath "$root")"

# --- ambiguous evidence: said, and the conservative profile, never the union ----------------------
name=ambiguous root=$WORK/ambiguous
mkdir -p "$root"
put /usr/local/bin/k3s
put /etc/kubernetes/kubelet.env
put /var/lib/containerd/blob "image"
run_detected
profile_is kubeadm "the conservative profile; choose with --profile"
assert "ambiguous: the report says so, with the candidates" jq_ "$WORK/$name.json" \
        "r['installer']['ambiguous'] and r['installer']['name'] is None and sorted(r['installer']['candidates']) == ['k3s', 'kubespray']"
stays /usr/local/bin/k3s /var/lib/containerd/blob
nr --root "$root" --profile k3s -o json plan > "$WORK/ambiguous-k3s.json" 2>/dev/null
assert "ambiguous: --profile overrides detection" jq_ "$WORK/ambiguous-k3s.json" "r['profile'] == {'name': 'k3s', 'why': '--profile'}"

# --- a user's manifest includes a profile and adds a line ----------------------------------------
name=include root=$WORK/include
new_node include
put /etc/systemd/system/kubelet.service.d/10-kubeadm.conf "[Service]"
put /opt/site/agent.conf "site agent"
printf 'include profile:kubeadm\nremove /opt/site\n' > "$WORK/site.conf"
nr --root "$root" -m "$WORK/site.conf" --yes -o json run > "$WORK/include.json" 2>/dev/null
gone /opt/site /etc/kubernetes/kubelet.conf
stays /etc/containerd/config.toml /opt/cni/bin/bridge
nr --profile nonesuch plan > /dev/null 2>&1; rc=$?
assert "--profile with an unknown name: exit 2" test $rc -eq 2

# --- containerd shims: only k8s.io's are Kubernetes' -----------------------------------------------
bin=$WORK/bin
mkdir -p "$bin"
if cc -static -O2 -o "$bin/containerd-shim-runc-v2" "$TOP/tests/integration/containerd/pause.c" 2>/dev/null; then
        "$bin/containerd-shim-runc-v2" -namespace k8s.io -id k8s-pod -address /run/containerd/containerd.sock &
        k8s_shim=$!
        "$bin/containerd-shim-runc-v2" -namespace moby -id docker-ctr -address /run/containerd/containerd.sock &
        moby_shim=$!
        echo "process $bin/containerd-shim*" > "$WORK/shims.conf"
        nr -m "$WORK/shims.conf" --phases processes --kill-grace 1 --yes -o json run > "$WORK/shims.json" 2>/dev/null
        sleep 0.2
        assert "shims: the k8s.io shim was killed" test ! -e "/proc/$k8s_shim/cmdline" -o "$(cat /proc/$k8s_shim/stat 2>/dev/null | awk '{print $3}')" = Z
        assert "shims: Docker's (moby) shim keeps running" kill -0 "$moby_shim"
        assert "shims: the report has no row for the moby shim" jq_ "$WORK/shims.json" \
                "not any('[$moby_shim]' in a['target'] for a in actions(r, kind='kill'))"
        kill "$moby_shim" 2>/dev/null
        wait 2>/dev/null
else
        fail "cannot build the fake shim (cc -static)"
fi

finish
