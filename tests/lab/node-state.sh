# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# Sourced by node-init.sh inside a lab node, after the pivot into its own root and before sshd: the
# state a Kubernetes worker (kubeadm, calico, kube-proxy in iptables mode) leaves that lives in the
# kernel or in mounts, made in the node's own namespaces. Its files are in the lab's template
# (lab.sh, lab_worker_files). LAB_NODE_STATE=none leaves the node bare; kubespray is the same
# worker as kubespray installs it (lab_kubespray_files), whose kubelet.service systemd runs on a
# systemd node.
#   mounts    a local persistent volume bind-mounted from the node's disk (/mnt/disks, whose data
#             must survive), an emptyDir and a projected token volume on tmpfs, as kubelet mounts them
#   network   a cni-<uuid> namespace holding a pod's eth0 whose host end is cali<hex>, the pod's /32
#             route, vxlan.calico, and bird's blackhole route for the node's block
#   firewall  kube-proxy's and calico's chains (KUBE-*, cali-*) with the host's own rules and ipsets
#             around them (tests/integration/fixtures/firewall.sh, made once by lab_init)

if [ "${LAB_NODE_STATE:-worker}" != none ]; then
        lab_pod=6f1c2d3e-0000-4a4a-9b9b-123456789abc
        lab_vol=/var/lib/kubelet/pods/$lab_pod/volumes
        mkdir -p /mnt/disks "$lab_vol/kubernetes.io~local-volume/pv-data" "$lab_vol/kubernetes.io~empty-dir/cache" \
                "$lab_vol/kubernetes.io~projected/kube-api-access-4xk2p"
        # the disk outlives a reset (lab_restate finds it mounted, with its data)
        mountpoint -q /mnt/disks || mount -t tmpfs -o size=1m nr-lab-disk /mnt/disks
        mkdir -p /mnt/disks/pv-data
        echo "persistent volume data, must survive" > /mnt/disks/pv-data/important.db
        mount --bind /mnt/disks/pv-data "$lab_vol/kubernetes.io~local-volume/pv-data"
        mount -t tmpfs -o size=1m nr-lab-emptydir "$lab_vol/kubernetes.io~empty-dir/cache"
        echo scratch > "$lab_vol/kubernetes.io~empty-dir/cache/scratch"
        mount -t tmpfs -o size=1m nr-lab-token "$lab_vol/kubernetes.io~projected/kube-api-access-4xk2p"
        echo token > "$lab_vol/kubernetes.io~projected/kube-api-access-4xk2p/token"

        read -r lab_uuid < /proc/sys/kernel/random/uuid
        lab_uplink=eth0
        [ -e /sys/class/net/host0 ] && lab_uplink=host0 # a systemd node's, from nspawn
        ip -batch - <<-EOF
	netns add cni-$lab_uuid
	link add cali4f1a2b3c9d0 type veth peer name eth0 netns cni-$lab_uuid
	link set cali4f1a2b3c9d0 up
	route add 10.244.17.65/32 dev cali4f1a2b3c9d0 scope link
	route add blackhole 10.244.17.64/26 proto bird
	link add vxlan.calico type vxlan id 4096 dstport 4789 dev $lab_uplink
	EOF
        ipset restore -exist < /usr/libexec/nr-lab/ipsets
        iptables-nft-restore -w 5 < /usr/libexec/nr-lab/rules.v4
fi
# A systemd node runs the units the installer left (kubelet.service); --no-block: during boot this
# runs as a unit itself.
if [ "${LAB_NODE_STATE:-worker}" = kubespray ] && [ -d /run/systemd/system ]; then
        systemctl daemon-reload
        systemctl --no-block start kubelet.service
fi
