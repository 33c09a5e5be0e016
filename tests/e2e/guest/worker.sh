#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds a Kubernetes worker node's state inside the guest, as kubekey + kube-proxy (IPVS mode) +
# calico (IPIP and VXLAN) + kubelet leave it, around host state that must survive. Runs only in the
# e2e guest (it refuses elsewhere).
#
# Usage: worker.sh build EXPECT_DIR [STEP...]   every step (STEPS below) unless some are named; "pods"
#                                               brings "cni" along
#        worker.sh record-pods DIR              what containerd holds now (sandboxes, containers)
#
# EXPECT_DIR receives what the reset must remove, one item a line, per kind — written here, where
# each item is created, independently of the agent: mounts, links, routes (count), netns, files
# (manifest targets), ipsets, ipvs (count of virtual services), units (running and enabled); plus
# pv-source (the PV's data directory). The host state is described by check.sh's snapshot.
#
# The pods (build_pods) are made through containerd's CRI with the project's own test client
# (/share/cri-helper), from a pause image built on the host (/share/pause-image.tar). Their records,
# which the mounts, network and report checks keep apart from the items above (containerd, not
# the mounts or network phase, removes them): sandboxes, containers, containers-running, pods-host
# (names), pod-netns, pod-mounts (rootfs and shm), shims (PIDs), pod-list (the helper's listing).
set -euo pipefail

STEPS="cni host kube_proxy calico kubelet files units pods"
EXP=${2:-}
case "${1:-}" in
build | record-pods) [ -n "$EXP" ] ;;
*) false ;;
esac || { echo "usage: worker.sh build EXPECT_DIR [STEP...] | record-pods DIR" >&2; exit 2; }
MODE=$1
shift 2
[ $# -eq 0 ] || STEPS="$*"
case " $STEPS " in *" pods "*) case " $STEPS " in *" cni "*) ;; *) STEPS="cni $STEPS" ;; esac ;; esac
if [ "$(hostname)" != e2e-worker ] || [ ! -d /share ]; then
        echo "worker.sh: refusing to run outside the e2e guest" >&2
        exit 1
fi
mkdir -p "$EXP"
. /share/lib.sh
timings=

POD_CIDR_NET=10.233.64          # this node's calico block 10.233.64.0/26
SVC_NET=10.233.0
NODE_IP=192.0.2.10
PV_SRC=/srv/disks/pv-0001

# containerd as Debian configures it (/etc/containerd/config.toml): CNI plugins in /usr/lib/cni (not
# containerd's built-in /opt/cni/bin, where kubekey's stand-ins lie), configs in /etc/cni/net.d; the
# default sandbox image registry.k8s.io/pause:3.6, cgroupfs. Nothing of that is changed.
# (CRI_SOCK, CRI_HELPER, CNI_CONF_DIR, CNI_FAIL_DEL and CRI_AT_STOP are lib.sh's.)
PAUSE_TAR=/share/pause-image.tar
PAUSE_IMAGE=registry.local/pause:test          # the name in the tarball, the helper's container image
SANDBOX_IMAGE=registry.k8s.io/pause:3.6        # containerd 1.6's default sandbox_image
CNI_BIN_DIR=/usr/lib/cni
# Calico's DEL without its API server, while CNI_FAIL_DEL exists (scenario master-gone).
CNI_MSG="error getting ClusterInformation: connection is unauthorized: Unauthorized"
POD_BRIDGE_NET=10.244.0         # the CNI bridge's pods, apart from calico's block above
# 12 sandboxes, every 6th on the host network (the helper's rule: index % 6 == 5), each with a
# running container: 10 pods on the CNI bridge, 2 host-network ones.
PODS=${E2E_PODS:-12}
PODS_HOST_EVERY=6
PODS_CGROUP=/kubepods/besteffort

expect() { # kind item
        echo "$2" >>"$EXP/$1"
}

# A process costs ~0.1 s under TCG: the fixture batches (ip -batch, *-restore, one mkdir -p) and
# uses shell builtins wherever it can.
new_uuid() { read -r REPLY </proc/sys/kernel/random/uuid; }
ip_batch() { ip "$@" -batch -; }
# write FILE <<EOF: a file from a here-document, without a process.
write() {
        local c
        IFS= read -r -d '' c || true
        printf '%s' "$c" >"$1"
}

# put PATH [CONTENT]: queue a small file; put_flush makes every parent directory with one mkdir -p,
# then writes the files.
PUT_PATHS=()
PUT_TEXTS=()
put() {
        PUT_PATHS+=("$1")
        PUT_TEXTS+=("${2:-$1}")
}
put_flush() {
        local i dirs=()
        for i in "${!PUT_PATHS[@]}"; do dirs+=("${PUT_PATHS[$i]%/*}"); done
        mkdir -p "${dirs[@]}"
        for i in "${!PUT_PATHS[@]}"; do printf '%s\n' "${PUT_TEXTS[$i]}" >"${PUT_PATHS[$i]}"; done
        PUT_PATHS=()
        PUT_TEXTS=()
}

# ---- host state that must survive ----------------------------------------------------------------

build_host() {
        # The uplink: a veth whose peer sits in a named namespace ("the router"), with both default
        # routes. Neither the link nor that namespace is Kubernetes state.
        ip_batch <<-EOF
	netns add upstream
	link add eth0 type veth peer name eth0 netns upstream
	addr add $NODE_IP/24 dev eth0
	addr add 2001:db8::10/64 dev eth0 nodad
	link set eth0 up
	EOF
        ip_batch -n upstream <<-'EOF'
	addr add 192.0.2.1/24 dev eth0
	addr add 2001:db8::1/64 dev eth0 nodad
	link set eth0 up
	link set lo up
	EOF
        ip_batch <<-'EOF'
	route add default via 192.0.2.1 dev eth0
	route add ::/0 via 2001:db8::1 dev eth0
	route add 198.51.100.0/24 via 192.0.2.1 dev eth0 proto static
	EOF

        # The host firewall (iptables is the nf_tables backend on Debian 12): SSH first, an ipset of
        # admin networks, the host's own chain, a FORWARD policy, a MASQUERADE; and one host rule in
        # the legacy backend, as a node converted from legacy iptables keeps.
        ipset restore <<-'EOF'
	create HOST-ALLOW hash:net
	add HOST-ALLOW 198.51.100.0/24
	EOF
        iptables-restore --noflush <<-'EOF'
	*filter
	:FORWARD DROP [0:0]
	:MYFW - [0:0]
	-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT
	-A INPUT -m set --match-set HOST-ALLOW src -j ACCEPT
	-A INPUT -j MYFW
	-A MYFW -s 192.0.2.0/24 -p tcp -m tcp --dport 9100 -j ACCEPT
	-A MYFW -p icmp -j ACCEPT
	COMMIT
	*nat
	-A POSTROUTING -s 192.168.100.0/24 -o eth0 -j MASQUERADE
	COMMIT
	EOF
        ip6tables-restore --noflush <<-'EOF'
	*filter
	-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT
	COMMIT
	EOF
        iptables-legacy-restore --noflush <<-'EOF'
	*filter
	-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT
	COMMIT
	EOF

        # Files: the hostname (the image's), a user's file, an OpenEBS local volume (protected by the
        # default manifest; kubekey used to delete it), a host script beside kubekey's binaries in
        # /usr/local/bin, and /etc/cni itself (only net.d is Kubernetes').
        put /root/projects/notes.txt "the admin's notes"
        put /usr/local/bin/backup.sh '#!/bin/sh'
        put /etc/cni/README.site "site policy"
        put /var/openebs/local/pvc-6c1f0d2e/meta.json '{"capacity":"1Gi"}'
        put_flush
        head -c 65536 /dev/urandom >/var/openebs/local/pvc-6c1f0d2e/data.bin
}

# ---- kube-proxy in IPVS mode ---------------------------------------------------------------------

# Services: name, protocol, virtual IP:port, real servers (pod IP:port, or the node for the API).
SERVICES=(
        "kubernetes tcp $SVC_NET.1:443 $NODE_IP:6443"
        "coredns-dns udp $SVC_NET.3:53 $POD_CIDR_NET.2:53 $POD_CIDR_NET.3:53"
        "coredns-tcp tcp $SVC_NET.3:53 $POD_CIDR_NET.2:53 $POD_CIDR_NET.3:53"
        "coredns-metrics tcp $SVC_NET.3:9153 $POD_CIDR_NET.2:9153 $POD_CIDR_NET.3:9153"
        "web tcp $SVC_NET.20:80 $POD_CIDR_NET.4:8080 $POD_CIDR_NET.5:8080 $POD_CIDR_NET.6:8080"
        "web-nodeport tcp $NODE_IP:30080 $POD_CIDR_NET.4:8080 $POD_CIDR_NET.5:8080 $POD_CIDR_NET.6:8080"
        "db tcp $SVC_NET.30:5432 $POD_CIDR_NET.7:5432"
)

ipvs_rules() {
        local s proto vip rs flag
        for s in "${SERVICES[@]}"; do
                set -- $s
                proto=$2 vip=$3
                shift 3
                flag=-t
                [ "$proto" = udp ] && flag=-u
                echo "-A $flag $vip -s rr"
                for rs; do echo "-a $flag $vip -r $rs -m -w 1"; done
        done
}

service_addresses() {
        local s
        for s in "${SERVICES[@]}"; do
                set -- $s
                case "$3" in "$SVC_NET".*) echo "${3%:*}" ;; esac
        done | sort -u
}

build_kube_proxy() {
        local a set
        {
                echo "link add kube-ipvs0 type dummy"
                for a in $(service_addresses); do echo "addr add $a/32 dev kube-ipvs0"; done
                echo "link add nodelocaldns type dummy"
                echo "addr add 169.254.25.10/32 dev nodelocaldns"
                echo "link set nodelocaldns up"
        } | ip_batch
        expect links kube-ipvs0
        expect links nodelocaldns
        ipvs_rules | ipvsadm -R
        echo "${#SERVICES[@]}" >"$EXP/ipvs"

        ipset restore <<-EOF
	create KUBE-CLUSTER-IP hash:ip,port
	create KUBE-LOOP-BACK hash:ip,port,ip
	create KUBE-NODE-PORT-TCP bitmap:port range 0-65535
	create KUBE-NODE-PORT-LOCAL-TCP bitmap:port range 0-65535
	create KUBE-LOAD-BALANCER hash:ip,port
	create KUBE-HEALTH-CHECK-NODE-PORT bitmap:port range 0-65535
	add KUBE-CLUSTER-IP $SVC_NET.1,tcp:443
	add KUBE-CLUSTER-IP $SVC_NET.3,udp:53
	add KUBE-CLUSTER-IP $SVC_NET.20,tcp:80
	add KUBE-LOOP-BACK $POD_CIDR_NET.4,tcp:8080,$POD_CIDR_NET.4
	add KUBE-NODE-PORT-TCP 30080
	EOF
        for set in KUBE-CLUSTER-IP KUBE-LOOP-BACK KUBE-NODE-PORT-TCP KUBE-NODE-PORT-LOCAL-TCP \
                KUBE-LOAD-BALANCER KUBE-HEALTH-CHECK-NODE-PORT; do
                expect ipsets "$set"
        done

        # kube-proxy's IPVS-mode chains (nf_tables backend), inserted ahead of the host's rules.
        iptables-restore --noflush <<-EOF
	*nat
	:KUBE-SERVICES - [0:0]
	:KUBE-POSTROUTING - [0:0]
	:KUBE-NODE-PORT - [0:0]
	:KUBE-LOAD-BALANCER - [0:0]
	:KUBE-MARK-MASQ - [0:0]
	-I PREROUTING 1 -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
	-I OUTPUT 1 -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
	-I POSTROUTING 1 -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
	-A KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ
	-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
	-A KUBE-NODE-PORT -p tcp -m comment --comment "Kubernetes nodeport TCP port for masquerade purpose" -m set --match-set KUBE-NODE-PORT-TCP dst -j KUBE-MARK-MASQ
	-A KUBE-POSTROUTING -m comment --comment "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose" -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE
	-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
	-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0
	-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
	-A KUBE-SERVICES ! -s $POD_CIDR_NET.0/18 -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ
	-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT
	-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT
	COMMIT
	*filter
	:KUBE-FIREWALL - [0:0]
	:KUBE-FORWARD - [0:0]
	:KUBE-NODE-PORT - [0:0]
	:KUBE-PROXY-FIREWALL - [0:0]
	:KUBE-SOURCE-RANGES-FIREWALL - [0:0]
	:KUBE-KUBELET-CANARY - [0:0]
	-I INPUT 1 -j KUBE-FIREWALL
	-I INPUT 2 -m comment --comment "kubernetes health check rules" -j KUBE-NODE-PORT
	-I FORWARD 1 -m comment --comment "kube-proxy firewall rules" -j KUBE-PROXY-FIREWALL
	-I FORWARD 2 -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD
	-I OUTPUT 1 -j KUBE-FIREWALL
	-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
	-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
	-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
	-A KUBE-NODE-PORT -m comment --comment "Kubernetes health check node port" -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j ACCEPT
	-A KUBE-PROXY-FIREWALL -m set --match-set KUBE-LOAD-BALANCER dst,dst -j KUBE-SOURCE-RANGES-FIREWALL
	-A KUBE-SOURCE-RANGES-FIREWALL -j DROP
	COMMIT
	*mangle
	:KUBE-KUBELET-CANARY - [0:0]
	:KUBE-IPTABLES-HINT - [0:0]
	COMMIT
	EOF
        ip6tables-restore --noflush <<-'EOF'
	*nat
	:KUBE-KUBELET-CANARY - [0:0]
	COMMIT
	*filter
	:KUBE-KUBELET-CANARY - [0:0]
	:KUBE-FIREWALL - [0:0]
	-I OUTPUT 1 -j KUBE-FIREWALL
	-A KUBE-FIREWALL -m mark --mark 0x8000/0x8000 -j DROP
	COMMIT
	EOF
        # A leftover of the legacy backend, from before the node switched to nf_tables.
        iptables-legacy-restore --noflush <<-'EOF'
	*nat
	:KUBE-MARK-DROP - [0:0]
	-A KUBE-MARK-DROP -j MARK --set-xmark 0x8000/0x8000
	COMMIT
	*filter
	:KUBE-FIREWALL - [0:0]
	-I INPUT 1 -j KUBE-FIREWALL
	-A KUBE-FIREWALL -m mark --mark 0x8000/0x8000 -j DROP
	COMMIT
	EOF
}

# ---- calico ----------------------------------------------------------------------------------------

build_calico() {
        local i ns hex veths=() nss=() ips=()
        # Workload endpoints: cali<11 hex> on the host, eth0 in the pod's cni-<uuid> namespace, an
        # address from this node's block and felix's /32 route to it.
        for i in 2 3 4 5 6 7; do
                new_uuid
                ns="cni-$REPLY"
                new_uuid
                hex=${REPLY//-/}
                nss+=("$ns")
                veths+=("cali${hex:0:11}")
                ips+=("$POD_CIDR_NET.$i")
                expect netns "$ns"
                expect links "cali${hex:0:11}"
                expect mounts "/run/netns/$ns"
        done
        {
                for i in "${!nss[@]}"; do
                        echo "netns add ${nss[$i]}"
                        echo "link add ${veths[$i]} type veth peer name eth0 netns ${nss[$i]}"
                        echo "link set ${veths[$i]} up"
                done
                # IPIP: the module's fallback device tunl0, as calico configures it; VXLAN.
                echo "link set tunl0 mtu 1480 up"
                echo "addr add $POD_CIDR_NET.0/32 dev tunl0"
                echo "link add vxlan.calico type vxlan id 4096 dstport 4789 dev eth0 local $NODE_IP"
                echo "addr add $POD_CIDR_NET.1/32 dev vxlan.calico"
                echo "link set vxlan.calico mtu 1450 up"
        } | ip_batch
        expect links tunl0
        expect links vxlan.calico
        for i in "${!nss[@]}"; do
                printf 'addr add %s/32 dev eth0\nlink set eth0 up\n' "${ips[$i]}" | ip_batch -n "${nss[$i]}"
        done
        # Felix's routes to the pods; BIRD's: this node's block as a blackhole, the other nodes'
        # blocks through the tunnel, one through the uplink (a same-subnet peer), and IPv6.
        {
                for i in "${!nss[@]}"; do echo "route add ${ips[$i]}/32 dev ${veths[$i]} scope link"; done
                echo "route add blackhole $POD_CIDR_NET.0/26 proto bird"
                echo "route add 10.233.65.0/26 via 192.0.2.20 dev tunl0 proto bird onlink"
                echo "route add 10.233.66.0/26 via 192.0.2.21 dev tunl0 proto bird onlink"
                echo "route add 10.233.67.0/26 via 192.0.2.22 dev eth0 proto bird"
                echo "route add blackhole fd85:ee78:d8a6:8607::/122 proto bird"
                echo "route add fd85:ee78:d8a6:8608::/122 via 2001:db8::20 dev eth0 proto bird"
        } | ip_batch
        echo 6 >"$EXP/routes"

        # Felix's chains with their cali: comments, and calico's ipsets.
        ipset restore <<-EOF
	create cali40all-ipam-pools hash:net
	add cali40all-ipam-pools 10.233.64.0/18
	create cali40masq-ipam-pools hash:net
	add cali40masq-ipam-pools 10.233.64.0/18
	create cali40this-host hash:ip
	add cali40this-host $NODE_IP
	create cali40all-hosts-net hash:net
	add cali40all-hosts-net $NODE_IP/32
	EOF
        for i in cali40all-ipam-pools cali40masq-ipam-pools cali40this-host cali40all-hosts-net; do
                expect ipsets "$i"
        done
        iptables-restore --noflush <<-'EOF'
	*filter
	:cali-INPUT - [0:0]
	:cali-FORWARD - [0:0]
	:cali-OUTPUT - [0:0]
	:cali-from-wl-dispatch - [0:0]
	:cali-to-wl-dispatch - [0:0]
	-I INPUT 1 -m comment --comment "cali:Cz_u1IQiXIMmKD4c" -j cali-INPUT
	-I FORWARD 1 -m comment --comment "cali:wUHhoiAYhphO9Mso" -j cali-FORWARD
	-I OUTPUT 1 -m comment --comment "cali:tVnHkvAo15HuiPy0" -j cali-OUTPUT
	-A FORWARD -m comment --comment "cali:S93hcgKJrXEqnTfs" -m comment --comment "Policy explicitly accepted packet." -m mark --mark 0x10000/0x10000 -j ACCEPT
	-A cali-INPUT -p ipencap -m comment --comment "cali:PajejrV4aFdkZojI" -m set --match-set cali40all-hosts-net src -j ACCEPT
	-A cali-INPUT -i cali+ -m comment --comment "cali:Jt9K0yczLFBsbUAG" -j cali-from-wl-dispatch
	-A cali-FORWARD -i cali+ -m comment --comment "cali:X3vB2lGcBrfkYquC" -j cali-from-wl-dispatch
	-A cali-FORWARD -o cali+ -m comment --comment "cali:UtJ9FnhBnFbyQMvU" -j cali-to-wl-dispatch
	-A cali-OUTPUT -m comment --comment "cali:Mq1_rAdXXH3YkrzW" -m mark --mark 0x10000/0x10000 -j ACCEPT
	-A cali-from-wl-dispatch -m comment --comment "cali:zTj6P0TIgYvgz-md" -j DROP
	-A cali-to-wl-dispatch -m comment --comment "cali:7KNphB1nNHw80nIO" -j DROP
	COMMIT
	*nat
	:cali-PREROUTING - [0:0]
	:cali-POSTROUTING - [0:0]
	:cali-nat-outgoing - [0:0]
	-I PREROUTING 1 -m comment --comment "cali:6gwbT8clXdHdC1b1" -j cali-PREROUTING
	-I POSTROUTING 1 -m comment --comment "cali:O3lYWMrLQYEMJtB5" -j cali-POSTROUTING
	-A cali-POSTROUTING -m comment --comment "cali:Z-c7XtVd2Bq7s_hA" -j cali-nat-outgoing
	-A cali-nat-outgoing -m comment --comment "cali:flqWnvo8yq4ULQLa" -m set --match-set cali40masq-ipam-pools src -m set ! --match-set cali40all-ipam-pools dst -j MASQUERADE --random-fully
	COMMIT
	*mangle
	:cali-PREROUTING - [0:0]
	-I PREROUTING 1 -m comment --comment "cali:6gwbT8clXdHdC1b1" -j cali-PREROUTING
	-A cali-PREROUTING -m comment --comment "cali:6BJqBjBC7crtA-7-" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
	COMMIT
	*raw
	:cali-PREROUTING - [0:0]
	:cali-OUTPUT - [0:0]
	-I PREROUTING 1 -m comment --comment "cali:6gwbT8clXdHdC1b1" -j cali-PREROUTING
	-I OUTPUT 1 -m comment --comment "cali:tVnHkvAo15HuiPy0" -j cali-OUTPUT
	-A cali-PREROUTING -m comment --comment "cali:XFX5xbM8B9qR10JG" -j MARK --set-xmark 0x0/0xf0000
	-A cali-OUTPUT -m comment --comment "cali:njdnLwYeGqBJyMxW" -j MARK --set-xmark 0x0/0xf0000
	COMMIT
	EOF
}

# ---- kubelet's pods: volumes and mounts ----------------------------------------------------------

# Mounts are queued (with the files of their pods) and made by mounts_flush, after one mkdir -p.
MOUNTS=()
mount_bind() { # source target
        MOUNTS+=("--bind $1 $2")
}
mount_tmpfs() { # target
        MOUNTS+=("-t tmpfs -o size=4m tmpfs $1")
}
mounts_flush() {
        local m dirs=()
        for m in "${MOUNTS[@]}"; do dirs+=("${m##* }"); done
        mkdir -p "${dirs[@]}"
        for m in "${MOUNTS[@]}"; do
                mount $m
                expect mounts "${m##* }"
        done
        MOUNTS=()
}

# A pod's directory, with a container's termination-log and etc-hosts; the name in REPLY.
new_pod() { # container
        local d
        new_uuid
        d="/var/lib/kubelet/pods/$REPLY"
        put "$d/containers/$1/$(printf '%04x%04x' $RANDOM $RANDOM)" ""
        put "$d/etc-hosts" "127.0.0.1 localhost"
        put "$d/plugins/kubernetes.io~empty-dir/wrapped_kube-api-access/ready" ""
        REPLY=$d
}

projected_volume() { # pod-dir
        mount_tmpfs "$1/volumes/kubernetes.io~projected/kube-api-access-$(printf '%05x' $RANDOM)"
}

build_kubelet() {
        local d pv hash
        put /var/lib/kubelet/config.yaml "kind: KubeletConfiguration"
        put /var/lib/kubelet/kubeadm-flags.env 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock"'
        put /var/lib/kubelet/cpu_manager_state '{"policyName":"none","defaultCpuSet":"","checksum":1353318690}'
        put /var/lib/kubelet/pki/kubelet-client-2026-12-01-10-00-00.pem "-----BEGIN CERTIFICATE-----"
        put /var/lib/kubelet/device-plugins/DEPRECATION ""
        put /var/lib/kubelet/plugins_registry/.keep ""
        put /var/lib/kubelet/pod-resources/.keep ""
        expect files /var/lib/kubelet

        # The persistent volume: its data lives on the node's data disk (here a directory), is
        # staged by the CSI driver and bind-mounted into the pod, with a subPath into a container.
        put "$PV_SRC/pgdata/PG_VERSION" "15"
        put "$PV_SRC/pgdata/name with blanks" "a file with blanks"
        put "$PV_SRC/wal/.keep" ""
        echo "$PV_SRC" >"$EXP/pv-source"
        new_uuid
        pv="pvc-$REPLY"
        new_uuid
        hash=${REPLY//-/}
        new_uuid
        hash=$hash${REPLY//-/}
        new_pod postgres
        d=$REPLY
        mount_bind "$PV_SRC" "/var/lib/kubelet/plugins/kubernetes.io/csi/local.csi.openebs.io/$hash/globalmount"
        mount_bind "$PV_SRC" "$d/volumes/kubernetes.io~csi/$pv/mount"
        put "$d/volumes/kubernetes.io~csi/$pv/vol_data.json" '{"driverName":"local.csi.openebs.io","volumeHandle":"'"$pv"'"}'
        mount_bind "$PV_SRC/pgdata" "$d/volume-subpaths/$pv/postgres/0"
        projected_volume "$d"

        # Three more pods: a secret, a memory-backed emptyDir, a disk emptyDir.
        new_pod web
        projected_volume "$REPLY"
        mount_tmpfs "$REPLY/volumes/kubernetes.io~secret/tls"
        new_pod cache
        projected_volume "$REPLY"
        mount_tmpfs "$REPLY/volumes/kubernetes.io~empty-dir/shm"
        new_pod coredns
        projected_volume "$REPLY"
        put "$REPLY/volumes/kubernetes.io~empty-dir/tmp/scratch" "scratch"

        # calico-node's cgroup v2 mount (kubekey unmounts it before removing /run/calico).
        MOUNTS+=("-t cgroup2 none /run/calico/cgroup")
        expect files /run/calico

        put_flush
        head -c 262144 /dev/urandom >"$PV_SRC/pgdata/16384"
        ln -s kubelet-client-2026-12-01-10-00-00.pem /var/lib/kubelet/pki/kubelet-client-current.pem
        mounts_flush
        # Written through the mounts: the volumes' contents as kubelet and the pods see them.
        head -c 65536 /dev/urandom >"$d/volumes/kubernetes.io~csi/$pv/mount/wal/000000010000000000000001"
        for d in /var/lib/kubelet/pods/*/volumes/kubernetes.io~projected/*; do
                printf 'eyJhbGciOiJSUzI1NiJ9.token\n' >"$d/token"
        done
}

# ---- kubekey's files -------------------------------------------------------------------------------

build_files() {
        # The node's own preparation for kubeadm join, whose preflight requires conntrack and crictl in
        # PATH (the image has neither package; kubekey's own /usr/local/bin/crictl goes with the reset):
        # stand-ins where the packages put them, which the rejoin verdict asks for and nothing calls.
        printf '#!/bin/false\n' >/usr/sbin/conntrack && printf '#!/bin/false\n' >/usr/bin/crictl &&
                chmod 0755 /usr/sbin/conntrack /usr/bin/crictl
        local f b
        for f in admin.conf kubelet.conf controller-manager.conf scheduler.conf kubeadm-config.yaml; do
                put "/etc/kubernetes/$f" "apiVersion: v1"
        done
        for f in ca.crt ca.key apiserver.crt apiserver.key front-proxy-ca.crt sa.key sa.pub etcd/ca.crt; do
                put "/etc/kubernetes/pki/$f" "-----BEGIN-----"
        done
        put /etc/kubernetes/manifests/.keep ""
        expect files /etc/kubernetes

        # net.d/10-calico.conflist is build_cni's, a working one. Kubekey's plugin binaries in
        # /opt/cni/bin are stand-ins: this containerd runs the plugins in /usr/lib/cni.
        put /etc/cni/net.d/calico-kubeconfig "apiVersion: v1"
        expect files /etc/cni/net.d
        for b in calico calico-ipam bandwidth host-local loopback portmap; do
                put "/opt/cni/bin/$b" "#!/bin/false"
        done
        expect files /opt/cni/bin
        put /var/lib/cni/networks/k8s-pod-network/last_reserved_ip.0 "$POD_CIDR_NET.7"
        put /var/lib/cni/cache/results/k8s-pod-network-0123-eth0 '{}'
        expect files /var/lib/cni
        put /var/lib/calico/nodename e2e-worker
        put /var/lib/calico/mtu 1480
        expect files /var/lib/calico
        put /var/log/calico/cni/cni.log "calico-ipam"
        expect files /var/log/calico

        put /var/lib/etcd/member/snap/db "etcd bbolt"
        put /var/lib/etcd/member/wal/0000000000000000-0000000000000000.wal "wal"
        expect files /var/lib/etcd
        put /etc/etcd.env "ETCD_DATA_DIR=/var/lib/etcd"
        expect files /etc/etcd.env
        for f in ca.pem ca-key.pem admin-e2e-worker.pem admin-e2e-worker-key.pem member-e2e-worker.pem; do
                put "/etc/ssl/etcd/ssl/$f" "-----BEGIN-----"
        done
        expect files /etc/ssl/etcd

        # Binaries kubekey installs by hand; kubelet and etcd are real executables (the units run
        # them). The host's own /usr/local/bin/backup.sh stays.
        for b in kubeadm kubectl etcdctl helm calicoctl crictl; do
                put "/usr/local/bin/$b" "#!/bin/false"
                expect files "/usr/local/bin/$b"
        done
        for b in kubelet etcd; do expect files "/usr/local/bin/$b"; done
        put /usr/local/bin/kube-scripts/k8s-certs-renew.sh "#!/bin/sh"
        expect files /usr/local/bin/kube-scripts

        put /etc/crictl.yaml "runtime-endpoint: unix:///run/containerd/containerd.sock"
        expect files /etc/crictl.yaml
        put /root/.kube/config "apiVersion: v1"
        expect files /root/.kube
        put /etc/modules-load.d/kube_proxy-ipvs.conf "ip_vs"
        expect files /etc/modules-load.d/kube_proxy-ipvs.conf
        put /etc/sysctl.d/99-kubernetes-cri.conf "net.ipv4.ip_forward = 1"
        expect files /etc/sysctl.d/99-kubernetes-cri.conf
        put /usr/local/share/ca-certificates/kube-ca.crt "-----BEGIN-----"
        expect files /usr/local/share/ca-certificates/kube-ca.crt
        put /var/log/pods/kube-system_coredns-5d78c9869d-abcde_1111/coredns/0.log "log"
        expect files /var/log/pods
        put /var/log/containers/.keep ""
        expect files /var/log/containers
        put_flush
        cp /usr/bin/sleep /usr/local/bin/kubelet
        cp /usr/bin/sleep /usr/local/bin/etcd
        ln -s /var/log/pods/kube-system_coredns-5d78c9869d-abcde_1111/coredns/0.log \
                /var/log/containers/coredns-5d78c9869d-abcde_kube-system_coredns-0123.log

        # containerd's own configuration and state (the Debian package's, used as kubekey's).
        for f in /etc/containerd /var/lib/containerd /run/containerd; do
                [ -e "$f" ] && expect files "$f"
        done
}

# ---- systemd units -----------------------------------------------------------------------------

build_units() {
        local u
        write /etc/systemd/system/kubelet.service <<-'EOF'
	[Unit]
	Description=kubelet: The Kubernetes Node Agent (e2e stand-in)
	After=containerd.service
	[Service]
	ExecStart=/usr/local/bin/kubelet infinity
	Restart=always
	[Install]
	WantedBy=multi-user.target
	EOF
        mkdir /etc/systemd/system/kubelet.service.d
        write /etc/systemd/system/kubelet.service.d/10-kubeadm.conf <<-'EOF'
	[Service]
	EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
	ExecStart=
	ExecStart=/usr/local/bin/kubelet infinity
	EOF
        write /etc/systemd/system/etcd.service <<-'EOF'
	[Unit]
	Description=etcd (e2e stand-in)
	[Service]
	EnvironmentFile=/etc/etcd.env
	ExecStart=/usr/local/bin/etcd infinity
	Restart=always
	[Install]
	WantedBy=multi-user.target
	EOF
        printf '[Service]\nType=oneshot\nExecStart=/bin/true\n' >/etc/systemd/system/backup-etcd.service
        printf '[Timer]\nOnCalendar=*-*-* 02:00:00\n' >/etc/systemd/system/backup-etcd.timer
        printf '[Service]\nType=oneshot\nExecStart=/usr/local/bin/kube-scripts/k8s-certs-renew.sh\n' \
                >/etc/systemd/system/k8s-certs-renew.service
        printf '[Timer]\nOnCalendar=Mon *-*-* 03:00:00\n' >/etc/systemd/system/k8s-certs-renew.timer
        for u in kubelet.service kubelet.service.d etcd.service backup-etcd.service backup-etcd.timer \
                k8s-certs-renew.service k8s-certs-renew.timer; do
                expect files "/etc/systemd/system/$u"
        done
        # "enable" reloads systemd itself.
        systemctl enable --now --quiet kubelet.service etcd.service
        systemctl is-active --quiet kubelet.service etcd.service containerd.service
        for u in kubelet.service etcd.service containerd.service; do expect units "$u"; done
}

# ---- pods through the CRI ------------------------------------------------------------------------

# First of all, so that containerd has loaded the network config long before the first pod: calico's
# conflist, played by the bridge plugin (cni0, host-local IPAM) behind a "calico" plugin whose DEL
# fails with calico's message while $CNI_FAIL_DEL exists; and the ExecStop= probe (a runtime drop-in,
# outside everything the reset or the snapshots look at).
build_cni() {
        write "$CNI_BIN_DIR/calico" <<-EOF
	#!/bin/sh
	if [ "\$CNI_COMMAND" = DEL ] && [ -e $CNI_FAIL_DEL ]; then
	        printf '{"cniVersion":"0.3.1","code":999,"msg":"%s"}\n' "$CNI_MSG"
	        exit 1
	fi
	exec $CNI_BIN_DIR/bridge "\$@"
	EOF
        chmod 0755 "$CNI_BIN_DIR/calico"
        # The node's resolver configuration (the image has none): containerd copies it into every
        # sandbox that has no DNS config of its own. Host state: it must survive.
        [ -e /etc/resolv.conf ] || printf 'nameserver 192.0.2.1\nsearch e2e.example\n' >/etc/resolv.conf
        mkdir -p "$CNI_CONF_DIR" /run/systemd/system/containerd.service.d
        # Renamed into place: containerd reloads on every inotify event and must never read half a file.
        write "$CNI_CONF_DIR/.10-calico.conflist.tmp" <<-EOF
	{"name": "k8s-pod-network", "cniVersion": "0.3.1", "plugins": [
	  {"type": "calico", "bridge": "cni0", "isGateway": true, "ipMasq": false,
	   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_BRIDGE_NET.0/24"}]]}}]}
	EOF
        mv "$CNI_CONF_DIR/.10-calico.conflist.tmp" "$CNI_CONF_DIR/10-calico.conflist"
        expect files "$CNI_CONF_DIR"
        write /run/systemd/system/containerd.service.d/e2e-probe.conf <<-EOF
	[Service]
	ExecStop=/bin/sh -c '{ $CRI_HELPER $CRI_SOCK --timeout-ms 10000 list; echo "ctr containers \$\$(ctr -n k8s.io containers ls -q | wc -l)"; echo "ctr tasks \$\$(ctr -n k8s.io tasks ls -q | wc -l)"; } >$CRI_AT_STOP.tmp 2>&1; mv $CRI_AT_STOP.tmp $CRI_AT_STOP'
	EOF
        systemctl daemon-reload
}

# Sandboxes, containers and their processes, mounts and namespaces as containerd holds them now.
record_pods() { # dir
        local d=$1 n
        mkdir -p "$d"
        "$CRI_HELPER" "$CRI_SOCK" list >"$d/pod-list"
        awk '$1 == "sandbox" { print $2 }' "$d/pod-list" | sort >"$d/sandboxes"
        awk '$1 == "container" { print $2 }' "$d/pod-list" | sort >"$d/containers"
        awk '$1 == "container" && $5 == "RUNNING" { print $2 }' "$d/pod-list" | sort >"$d/containers-running"
        awk -v every=$PODS_HOST_EVERY '$1 == "sandbox" { n = split($3, a, "-"); if (a[n] % every == every - 1) print $3 }' \
                "$d/pod-list" | sort >"$d/pods-host"
        for n in /run/netns/cni-*; do
                [ -e "$n" ] || continue
                n=${n##*/}
                grep -qxF "$n" "$EXP/netns" 2>/dev/null || echo "$n"
        done | sort >"$d/pod-netns"
        findmnt -rn -o TARGET | grep '^/run/containerd/' | sort >"$d/pod-mounts" || true
        pgrep -f '^/usr/bin/containerd-shim' | sort -n >"$d/shims" || true
        ip -br link show master cni0 2>/dev/null | awk '{ sub(/@.*/, "", $1); print $1 }' | sort >"$d/pod-links"
}

build_pods() {
        local t sb ct run nets
        t=$(ms)
        ctr -n k8s.io images import "$PAUSE_TAR" >/dev/null
        ctr -n k8s.io images tag "$PAUSE_IMAGE" "$SANDBOX_IMAGE" >/dev/null
        timings="$timings image import $(($(ms) - t)) ms,"
        "$CRI_HELPER" "$CRI_SOCK" run-pods "$PODS" e2e "$PODS_CGROUP" "$PODS_HOST_EVERY" 1 4 >/dev/null ||
                { echo "worker.sh: the CRI test client could not make the pods" >&2; return 1; }
        record_pods "$EXP"
        # The bridge and its ports as the reset finds them: the network phase plans the ports too
        # ("link-master cni0"), and finds them already gone with their pods.
        expect links cni0
        cat "$EXP/pod-links" >>"$EXP/links"
        sb=$(lines "$EXP/sandboxes") ct=$(lines "$EXP/containers-running") nets=$(lines "$EXP/pod-netns")
        run=$(grep -c ' READY$' "$EXP/pod-list" || true)
        echo "pods: $sb sandboxes ($run ready, $(lines "$EXP/pods-host") on the host network), $ct running" \
                "containers, $nets cni netns, $(lines "$EXP/shims") shims, $(lines "$EXP/pod-mounts") mounts"
        [ "$sb" -eq "$PODS" ] && [ "$run" -eq "$PODS" ] && [ "$ct" -eq "$PODS" ] &&
                [ "$nets" -eq $((PODS - PODS / PODS_HOST_EVERY)) ] ||
                { echo "worker.sh: not the pods asked for ($PODS)" >&2; return 1; }
}

ms() { echo $(($(date +%s%N) / 1000000)); }
lines() { grep -c . "$1" || true; }
if [ "$MODE" = record-pods ]; then
        DIR=$EXP
        EXP=/nonexistent        # no calico netns to tell apart from the pods'
        record_pods "$DIR"
        exit
fi
t0=$(ms)
modprobe -a ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh nf_conntrack dummy ipip vxlan veth bridge br_netfilter
# As kubeadm's install guide prepares a node (its join preflight refuses either at 0, and the rejoin
# verdict asks the same): set in this throwaway guest only.
sysctl -q -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
for step in $STEPS; do
        t=$(ms)
        "build_$step"
        timings="$timings $step $(($(ms) - t)) ms,"
done
for f in "$EXP"/*; do
        if [ -f "$f" ] && [ "${f##*/}" != pod-list ]; then sort -u -o "$f" "$f"; fi
done
echo "worker state built in $(($(ms) - t0)) ms:${timings%,}"
