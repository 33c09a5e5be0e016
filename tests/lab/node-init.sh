#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# PID 1 of one lab node, until it becomes the node's sshd. tests/lab/lab.sh starts it as
#   unshare --mount --uts --net --pid --fork --propagation private -- sh node-init.sh NAME ADDR/LEN GW MAC GWMAC VETH
# with LAB_DIR and LAB_NS_PID (the lab's process: its network namespace is the switch) set. It makes
# the node's link (a veth whose other end goes to the switch), its root (a tmpfs filled from the lab's
# template, /usr the lab's read-only overlay of the host's /usr with sshd and node-reset laid in),
# pivots into it, builds the node's state (node-state.sh) and executes sshd in the foreground: this
# process, as the lab sees it, is the node; SIGKILL to it ends the node and everything that ran in it.
# Nothing here is done in the lab's namespaces but the veth's switch end and the lines of LAB_DIR/up
# and LAB_DIR/hostkeys.
set -eu
name=$1 addr=$2 gw=$3 mac=$4 gwmac=$5 veth=$6
L=$LAB_DIR
T=$L/mnt

# This process's PID as the lab sees it: /proc is still the lab's.
read -r hostpid _ < /proc/self/stat

# No IPv6 in the node's namespace (no link-local addresses, no DAD, no router solicitations on the
# switch): a thousand nodes would otherwise fill the kernel's shared neighbour table.
echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6
echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6
# A Kubernetes node forwards (kubeadm join refuses one that does not): this namespace's own sysctl.
echo 1 > /proc/sys/net/ipv4/ip_forward
ip link add eth0 address "$mac" type veth peer name "$veth" netns "/proc/$LAB_NS_PID/ns/net"
# A permanent entry for the gateway: the kernel's neighbour table (shared by every namespace, 1,024
# entries before it drops some) never holds the lab's entries, which are all permanent.
ip -batch - <<EOF
link set lo up
link set eth0 up
addr add $addr dev eth0
route add default via $gw
neigh replace $gw lladdr $gwmac dev eth0 nud permanent
EOF

# The root: the template, this node's identity, its own host key (the lab's known_hosts gets it).
mount -t tmpfs -o mode=0755,size=64m nr-lab-root "$T"
cp -a "$L/tmpl/." "$T/"
echo "$name" > "$T/etc/hostname"
printf '127.0.0.1\tlocalhost\n%s\t%s\n' "${addr%/*}" "$name" > "$T/etc/hosts"
ssh-keygen -q -t ed25519 -N '' -C "root@$name" -f "$T/etc/ssh/ssh_host_ed25519_key"
echo "${addr%/*} $(cut -d' ' -f1,2 "$T/etc/ssh/ssh_host_ed25519_key.pub")" > "$L/hostkeys/$name"

mount --bind "$L/usr" "$T/usr"
mount -t tmpfs -o mode=0755,size=16m nr-lab-usr-local "$T/usr/local"
[ ! -d "$L/tmpl/usr/local" ] || cp -a "$L/tmpl/usr/local/." "$T/usr/local/"
mount -t proc proc "$T/proc"
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$T/sys"
# node-reset's default manifest looks at BPF pins: a bpffs of the node's own, else a tmpfs.
mount -t bpf nr-lab-bpf "$T/sys/fs/bpf" 2>/dev/null || mount -t tmpfs -o mode=0700 nr-lab-bpf "$T/sys/fs/bpf"
mount -t tmpfs -o mode=0755,size=64k,nosuid nr-lab-dev "$T/dev"
mknod -m 0666 "$T/dev/null" c 1 3
mknod -m 0666 "$T/dev/zero" c 1 5
mknod -m 0666 "$T/dev/full" c 1 7
mknod -m 0666 "$T/dev/random" c 1 8
mknod -m 0666 "$T/dev/urandom" c 1 9
mknod -m 0666 "$T/dev/tty" c 5 0
mkdir "$T/dev/pts" "$T/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$T/dev/pts"
ln -s pts/ptmx "$T/dev/ptmx"
ln -s /proc/self/fd "$T/dev/fd"
mount -t tmpfs -o mode=0755,size=16m,nosuid,nodev nr-lab-run "$T/run"
mkdir -p "$T/run/sshd"

# The line the lab waits for, written after the pivot through this descriptor.
exec 9> "$L/up/$name"
cd "$T"
mkdir .old
pivot_root . .old
cd /
umount -l /.old
rmdir /.old
hostname "$name"
# shellcheck source=tests/lab/node-state.sh
. /usr/libexec/nr-lab/node-state.sh
echo "$hostpid" >&9
exec 9>&-
exec /usr/sbin/sshd -D -E /var/log/sshd.log
