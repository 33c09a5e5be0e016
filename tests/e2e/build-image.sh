#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds, once, the Debian 12 guest image the end-to-end test boots: a minbase root file system with
# systemd, containerd, the network tools and the agent's run-time libraries, a stock kernel and a
# small initrd. Prints the cache directory holding node.img, vmlinuz and initrd.img.
#
#   build-image.sh --fetch   download the guest's packages (network; "make deps" runs it)
#   build-image.sh           build the image from them, or reuse it (no network)
#
# Two caches, outside the checkout, in $E2E_CACHE (/var/cache/node-reset-e2e):
#   debs-<pkey>.tgz  every .deb of the guest (debootstrap --make-tarball, ~160 MB), pkey = sha256 of
#                    the suite and PACKAGES: the only step that talks to the mirror, with retries;
#   <key>/           the image (debootstrap --unpack-tarball, offline, 1-2 min), key = sha256 of this
#                    script and tests/lib-debootstrap.sh: edit either and the next run builds a new
#                    image from the same packages, still offline.
# Each build runs under flock in a temporary name that is renamed into place, so concurrent runs
# build it once and a killed build leaves no half result. Everything it mounts is mounted inside a
# private mount namespace and vanishes with it. Packages come from the machine's apt mirror only.
set -euo pipefail

CACHE=${E2E_CACHE:-/var/cache/node-reset-e2e}
SUITE=bookworm
LIB=$(dirname "${BASH_SOURCE[0]}")/../lib-debootstrap.sh
. "$LIB"
KEY=$(cat "${BASH_SOURCE[0]}" "$LIB" | sha256sum | cut -c1-16)
DEST="$CACHE/$KEY"
IMAGE_SIZE=2G

# Everything a worker node needs to look real, plus what the agent links against (readelf -d
# node-reset): libsystemd, libyaml, libcrypto, libnl, libmnl, libnftnl, libip4tc/libip6tc, libipset,
# libcurl. A library missing here is caught in the guest (run.sh) and named.
PACKAGES=(
        systemd systemd-sysv dbus udev kmod procps util-linux findutils e2fsprogs
        iproute2 iptables ipset ipvsadm jq
        containerd runc containernetworking-plugins initramfs-tools linux-base linux-image-amd64
        libsystemd0 libyaml-0-2 libssl3 libnl-3-200 libnl-route-3-200 libnl-genl-3-200 libmnl0
        libnftnl11 libip4tc2 libip6tc2 libipset13 libcurl4
)
PKEY=$(echo "$SUITE ${PACKAGES[*]}" | sha256sum | cut -c1-16)
DEBS="$CACHE/debs-$PKEY.tgz"
# The initrd only has to find an ext4 root on a virtio disk.
INITRD_MODULES="virtio_pci virtio_blk ext4"
# Module trees a VM without hardware never loads.
TRIM_MODULES="drivers/gpu drivers/media drivers/net/wireless drivers/net/ethernet drivers/infiniband
  drivers/staging drivers/scsi drivers/usb drivers/hid drivers/input drivers/iio drivers/mtd
  drivers/bluetooth drivers/isdn drivers/nfc drivers/hwmon drivers/video drivers/platform drivers/leds
  drivers/mmc drivers/ata drivers/md drivers/thunderbolt drivers/edac drivers/atm drivers/misc
  drivers/net/can drivers/net/usb drivers/net/ieee802154 drivers/net/wwan sound net/wireless
  net/mac80211 net/bluetooth fs/ocfs2 fs/gfs2 fs/xfs fs/btrfs fs/nfs fs/nfsd fs/cifs fs/smb fs/ceph"

log() { echo "build-image: $*" >&2; }


# The systemd side of the harness: the 9p share and the one-shot unit that runs /share/run.sh after
# the node is up, writes its output and exit status back to the share and powers off.
configure_guest() {
        local r=$1
        echo e2e-worker >"$r/etc/hostname"
        printf '127.0.0.1\tlocalhost\n127.0.1.1\te2e-worker\n' >"$r/etc/hosts"
        cat >"$r/etc/fstab" <<-'EOF'
	/dev/vda / ext4 rw,noatime 0 0
	share /share 9p trans=virtio,version=9p2000.L,msize=262144,nofail 0 0
	EOF
        mkdir -p "$r/share"
        printf '9p\n9pnet_virtio\n' >"$r/etc/modules-load.d/e2e-share.conf"
        mkdir -p "$r/etc/systemd/journald.conf.d"
        printf '[Journal]\nStorage=volatile\n' >"$r/etc/systemd/journald.conf.d/e2e.conf"
        cat >"$r/etc/systemd/system/node-reset-e2e.service" <<-'EOF'
	[Unit]
	Description=node-reset end-to-end test: run /share/run.sh, then power off
	After=multi-user.target containerd.service
	Wants=containerd.service
	RequiresMountsFor=/share
	SuccessAction=poweroff-immediate
	FailureAction=poweroff-immediate

	[Service]
	Type=oneshot
	ExecStart=/bin/sh -c 'rc=0; /bin/bash /share/run.sh >/share/out.log 2>&1 || rc=$?; echo $rc >/share/rc; sync'
	TimeoutStartSec=20min
	StandardOutput=journal+console

	[Install]
	WantedBy=multi-user.target
	EOF
        ln -sf /etc/systemd/system/node-reset-e2e.service \
                "$r/etc/systemd/system/multi-user.target.wants/node-reset-e2e.service"
        # Nothing on the console but the kernel and systemd; no timers that would race the test.
        local u
        for u in serial-getty@ttyS0.service getty@tty1.service apt-daily.timer apt-daily-upgrade.timer \
                e2scrub_all.timer e2scrub_reap.service fstrim.timer systemd-timesyncd.service \
                dpkg-db-backup.timer systemd-tmpfiles-clean.timer ipvsadm.service; do
                ln -sf /dev/null "$r/etc/systemd/system/$u"
        done
        passwd -R "$r" -d root >/dev/null
}

# Before the second stage installs the kernel: its initrd is made once, small (MODULES=list).
configure_initrd() {
        local r=$1
        mkdir -p "$r/etc/initramfs-tools/conf.d"
        printf 'MODULES=list\nCOMPRESS=gzip\n' >"$r/etc/initramfs-tools/conf.d/e2e.conf"
        printf '%s\n' $INITRD_MODULES >>"$r/etc/initramfs-tools/modules"
}

trim() {
        local r=$1 kver d
        kver=$(ls "$r/lib/modules")
        for d in $TRIM_MODULES; do
                rm -rf "${r:?}/lib/modules/$kver/kernel/$d"
        done
        chroot "$r" depmod -a "$kver"
        rm -rf "$r"/usr/share/doc/* "$r"/usr/share/man/* "$r"/usr/share/info/* "$r"/usr/share/locale/* \
                "$r"/var/cache/apt/* "$r"/var/lib/apt/lists/* "$r"/var/log/*.log "$r"/var/cache/debconf/*-old \
                "$r"/boot/System.map-*
        : >"$r/etc/machine-id"
}

# Runs inside a private mount namespace: debootstrap's and chroot's mounts die with it. Offline: the
# first stage unpacks the fetched tarball, the second configures the packages in a chroot.
build_in() {
        local tmp=$1 r="$1/rootfs" kver
        log "debootstrap $SUITE from $DEBS (offline)"
        if ! debootstrap --foreign --unpack-tarball="$DEBS" --variant=minbase \
                --include="$(IFS=,; echo "${PACKAGES[*]}")" "$SUITE" "$r" "$(apt_mirror "$SUITE")" \
                >"$tmp/debootstrap.log" 2>&1; then
                tail -n 30 "$tmp/debootstrap.log" >&2
                return 1
        fi
        configure_initrd "$r"
        log "second stage: packages, kernel and initrd"
        if ! chroot "$r" /debootstrap/debootstrap --second-stage >>"$tmp/debootstrap.log" 2>&1; then
                tail -n 30 "$tmp/debootstrap.log" >&2
                return 1
        fi
        # The second stage unmounts its /proc on exit; a leftover mount would end up in the image.
        { findmnt -rn -o TARGET | grep -F "$r/" || true; } | sort -r | while read -r m; do umount -l "$m"; done
        configure_guest "$r"
        trim "$r"
        kver=$(ls "$r/lib/modules")
        cp "$r/boot/vmlinuz-$kver" "$tmp/vmlinuz"
        cp "$r/boot/initrd.img-$kver" "$tmp/initrd.img"
        log "mkfs.ext4 -d ($(du -sh "$r" | cut -f1) root file system)"
        mkfs.ext4 -q -F -L e2e-root -d "$r" "$tmp/node.img" "$IMAGE_SIZE"
        dpkg-query --admindir="$r/var/lib/dpkg" -W -f '${Package} ${Version}\n' >"$tmp/packages.txt"
        echo "$kver" >"$tmp/kernel-version"
        rm -rf "$r"
}

# The network step, under the lock: every .deb of the guest into one tarball, from the configured
# mirror, a download failure retried (lib-debootstrap.sh).
fetch() {
        local tmp t0
        if [ -f "$DEBS" ]; then
                touch "$DEBS"
                log "packages cached: $DEBS"
                return 0
        fi
        t0=$(date +%s)
        tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX")
        trap 'rm -rf "$tmp"' EXIT
        log "downloading the guest's packages from $(apt_mirror "$SUITE") (once; about a minute)"
        debootstrap_retry "$tmp/debootstrap.log" "$SUITE" "$tmp/work" "$(apt_mirror "$SUITE")" \
                --make-tarball="$tmp/debs.tgz" --variant=minbase \
                --include="$(IFS=,; echo "${PACKAGES[*]}")" || return 1
        mv "$tmp/debs.tgz" "$DEBS"
        rm -rf "$tmp"
        trap - EXIT
        log "packages fetched in $(($(date +%s) - t0)) s: $DEBS ($(du -h "$DEBS" | cut -f1))"
}

# Old keys nobody used for a week: their build scripts are gone.
prune() {
        find "$CACHE" -mindepth 1 -maxdepth 1 -type d ! -name "$KEY" ! -name '.*' -mtime +7 \
                -exec rm -rf {} + 2>/dev/null || true
        find "$CACHE" -mindepth 1 -maxdepth 1 -type f -name 'debs-*.tgz' ! -name "debs-$PKEY.tgz" -mtime +7 \
                -delete 2>/dev/null || true
}

if [ "${1:-}" = --in-namespace ]; then
        build_in "$2"
        exit
fi

if [ "${1:-}" = --fetch ]; then
        [ "$(id -u)" -eq 0 ] || { log "needs root (debootstrap)"; exit 1; }
        command -v debootstrap >/dev/null || { log "'debootstrap' is not installed (make deps)"; exit 1; }
        mkdir -p "$CACHE"
        exec 9>"$CACHE/.lock"
        flock -w 1200 9 || { log "another build holds $CACHE/.lock for more than 20 minutes"; exit 1; }
        fetch
        prune
        exit
fi

if [ -f "$DEST/node.img" ]; then
        touch "$DEST" "$DEBS" 2>/dev/null || true
        log "reusing $DEST"
        echo "$DEST"
        exit 0
fi
[ "$(id -u)" -eq 0 ] || { log "needs root (debootstrap, chroot)"; exit 1; }
for c in debootstrap mkfs.ext4 unshare flock; do
        command -v "$c" >/dev/null || { log "'$c' is not installed (make deps)"; exit 1; }
done
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock -w 1200 9 || { log "another build holds $CACHE/.lock for more than 20 minutes"; exit 1; }
if [ ! -f "$DEST/node.img" ]; then
        if [ ! -f "$DEBS" ]; then
                log "the guest's packages are not downloaded ($DEBS is missing): run 'sudo make deps' once"
                exit 1
        fi
        touch "$DEBS"
        t0=$(date +%s)
        tmp=$(mktemp -d "$CACHE/.build.XXXXXX")
        trap 'rm -rf "$tmp"' EXIT
        unshare -m --propagation private -- "$BASH" "${BASH_SOURCE[0]}" --in-namespace "$tmp"
        chmod 0755 "$tmp"
        mv -T "$tmp" "$DEST"
        trap - EXIT
        log "image $KEY built in $(($(date +%s) - t0)) s"
        prune
fi
touch "$DEST"
echo "$DEST"
