#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Boot-time preparation of an e2e-k8s node (nr-e2e-k8s-prep.service, inside the node, before
# containerd and kubelet), each step confined to the node's own namespaces:
#  - nspawn mounts the v1 cgroup controllers read-only; kubelet (cgroupfs) and runc create kubepods
#    there: remount them read-write (the cgroup namespace's root is the node's child cgroup);
#  - kubelet is fatal when it cannot set vm.overcommit_memory=1, kernel.panic=10,
#    kernel.panic_on_oops=1, which are host-wide and never changed: files with those values are bound
#    over the three entries in this mount namespace only;
#  - /proc/sys/net (this node's network namespace) made writable, then ip_forward and
#    bridge-nf-call-ip(6)tables as kubeadm's preflight wants.
for m in $(awk '$9 == "cgroup" || $9 == "cgroup2" { print $5 }' /proc/self/mountinfo); do
        mount -o remount,bind,rw "$m" 2>/dev/null || mount -o remount,rw "$m" || echo "prep: cannot remount $m rw" >&2
done
mkdir -p /run/nr-e2e-k8s-sysctl
for kv in vm/overcommit_memory=1 kernel/panic=10 kernel/panic_on_oops=1; do
        k=${kv%=*} f=/run/nr-e2e-k8s-sysctl/$(echo "${kv%=*}" | tr / _)
        echo "${kv#*=}" >"$f"
        mount --bind "$f" "/proc/sys/$k" || echo "prep: cannot bind over /proc/sys/$k" >&2
done
mount --bind /proc/sys/net /proc/sys/net && mount -o remount,bind,rw /proc/sys/net ||
        echo "prep: cannot make /proc/sys/net writable" >&2
echo 1 >/proc/sys/net/ipv4/ip_forward
for f in /proc/sys/net/bridge/bridge-nf-call-iptables /proc/sys/net/bridge/bridge-nf-call-ip6tables; do
        [ -e "$f" ] && echo 1 >"$f"
done
exit 0
