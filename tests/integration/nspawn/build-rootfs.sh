#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Assemble, in a second and with no network, the tree that systemd-nspawn boots for the services
# tests, and print its path: DIR/root, where DIR is the caller's scratch directory (a tmpfs).
#
# The tree is the host's own /usr, bind-mounted read-only (systemd, dbus and the agent's libraries
# are there: "make deps" installs them), with a tmpfs on /usr/local so a test can install the agent
# at /usr/local/sbin, and a minimal /etc and /var made here: no download, no cache, nothing that a
# flaky mirror can break at test time. Earlier this was a debootstrap tree fetched on first use,
# which a test run in a private network namespace could never fetch.
#
# The mounts are made in the CALLER's mount namespace, which must be a private one (the tests run
# in lib.sh's in_private_ns): they vanish with it, and the script refuses to run in the mount
# namespace of PID 1. Exit 0 with the path on stdout, 77 when the host has no systemd to boot,
# 1 on any other failure.
set -eu

[ $# -eq 1 ] || { echo "usage: build-rootfs.sh DIR" >&2; exit 2; }
r=$1/root
[ -x /usr/lib/systemd/systemd ] || { echo "systemd is not installed on the host (make deps installs it)" >&2; exit 77; }
command -v dbus-daemon >/dev/null 2>&1 || { echo "dbus is not installed on the host (make deps installs it)" >&2; exit 77; }
# The kernel's initial mount namespace has a fixed inode number (PROC_MNT_INIT_INO); PID 1's may be
# another one on a container host, and may be unreadable.
self_ns=$(readlink /proc/self/ns/mnt)
if [ "$self_ns" = "mnt:[4026531832]" ] || [ "$self_ns" = "$(readlink /proc/1/ns/mnt 2>/dev/null)" ]; then
        echo "build-rootfs.sh: refusing to mount in the host's mount namespace; run it in a private one" >&2
        exit 1
fi

mkdir -p "$r"
cd "$r"
mkdir -p usr etc var/lib var/log var/cache var/spool var/tmp run proc sys dev home mnt opt srv media
mkdir -m 0700 root
mkdir -m 1777 tmp
chmod 1777 var/tmp
# The top-level directories of a merged /usr are symlinks into it; an unmerged host's are bound too.
for d in bin sbin lib lib32 lib64 libx32; do
        if [ -L "/$d" ]; then
                ln -s "$(readlink "/$d")" "$d"
        elif [ -d "/$d" ]; then
                mkdir "$d"
                mount --bind -o ro "/$d" "$d"
        fi
done
# Read-only: overlayfs, a write or a package script in the container can never reach the host's /usr.
mount --bind -o ro /usr usr
mount -t tmpfs -o mode=0755 nr-usr-local usr/local
mkdir -p usr/local/bin usr/local/sbin usr/local/lib
# The node's own preparation for kubeadm: crictl in PATH (a cri-tools tarball puts it in
# /usr/local/bin; the host has none), which kubeadm join's preflight requires and the rejoin verdict
# asks for. A stub: nothing here calls it.
printf '#!/bin/sh\nexit 1\n' > usr/local/bin/crictl && chmod 0755 usr/local/bin/crictl

# /etc: the users systemd-sysusers does not create, the loader's cache, the alternatives' symlinks
# (awk, iptables, ...) that point into /usr, and the identity of the container.
ln -s ../usr/lib/os-release etc/os-release
printf 'root:x:0:0:root:/root:/bin/bash\n' > etc/passwd
printf 'root:x:0:\n' > etc/group
printf 'root:*:19000:0:99999:7:::\n' > etc/shadow
printf 'root:*::\n' > etc/gshadow
chmod 0640 etc/shadow etc/gshadow
printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files\n' > etc/nsswitch.conf
printf '127.0.0.1\tlocalhost nr-test\n::1\tlocalhost\n' > etc/hosts
echo nr-test > etc/hostname
: > etc/machine-id
ln -s /usr/share/zoneinfo/Etc/UTC etc/localtime
cp -a /etc/ld.so.cache /etc/ld.so.conf etc/ 2>/dev/null || true
[ -d /etc/ld.so.conf.d ] && cp -a /etc/ld.so.conf.d etc/
[ -d /etc/alternatives ] && cp -a /etc/alternatives etc/
mkdir -p etc/systemd/system etc/dbus-1/system.d
# Nothing reads a console in the tests; first-boot questions would wait for one. Without these the
# boot is quieter and quicker. The host's own enablement lives in its /etc, which is not used.
for u in console-getty.service getty@.service getty-static.service systemd-firstboot.service \
        systemd-networkd.service systemd-resolved.service systemd-timesyncd.service \
        apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer dpkg-db-backup.timer; do
        ln -s /dev/null "etc/systemd/system/$u"
done
echo "$r"
