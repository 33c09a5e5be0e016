#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build (once) the minimal Debian tree that systemd-nspawn boots for the services tests, and print
# its path. It lives outside the checkout, keyed on this script's hash, so CI on the same machine
# and every later run reuse it: /var/cache/node-reset-test/rootfs-HASH. Built under a lock into a
# temporary directory, then renamed, so a half-built tree is never used.
# Exit 0 with the path on stdout, 77 when debootstrap is missing, 1 when the build failed.
set -eu

CACHE=${NODE_RESET_TEST_CACHE:-/var/cache/node-reset-test}
SUITE=bookworm
LIB=$(dirname "${BASH_SOURCE[0]}")/../../lib-debootstrap.sh
. "$LIB"
hash=$(cat "${BASH_SOURCE[0]}" "$LIB" | sha256sum | cut -c1-16)
dest=$CACHE/rootfs-$hash

if [ -f "$dest/usr/lib/os-release" ]; then
        touch "$dest"   # in use: keeps it from being pruned
        echo "$dest"
        exit 0
fi
command -v debootstrap >/dev/null 2>&1 || { echo "debootstrap is not installed" >&2; exit 77; }

mkdir -p "$CACHE"
exec 9>"$CACHE/build.lock"
flock 9
# Someone else may have finished it while this run waited for the lock.
if [ -f "$dest/usr/lib/os-release" ]; then
        echo "$dest"
        exit 0
fi
# Remove a build directory without ever descending into a mount: a debootstrap that died may have
# left /proc (or more) mounted inside the tree.
remove_tree() {
        local m
        [ -d "$1" ] || return 0
        findmnt -rn -o TARGET | grep -F "$1/" | sort -r | while read -r m; do umount -l "$m" || true; done
        rm -rf --one-file-system "$1"
}
# Leftovers of builds that were killed part way (no lock holder is building now), and trees of
# other versions of this script that nobody used for a week (another checkout may still use a
# recent one).
for old in "$CACHE"/build.*; do remove_tree "$old"; done
find "$CACHE" -mindepth 1 -maxdepth 1 -name 'rootfs-*' ! -path "$dest" -mtime +7 \
        -exec rm -rf --one-file-system {} +

tmp=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'remove_tree "$tmp"' EXIT
mirror=$(apt_mirror "$SUITE")
echo "building the nspawn test tree from $mirror (once; about a minute)" >&2
# With the libraries the agent links (test-orphan-units.sh runs the host-built binary in the
# container), and the sanitizers' runtimes for the ASan build of it.
libs=libyaml-0-2,libcurl4,libnl-3-200,libnl-genl-3-200,libnl-route-3-200,libmnl0,libnftnl11,libip4tc2,libip6tc2,libipset13
libs=$libs,libasan8,libubsan1
# In a mount namespace of its own, so whatever debootstrap mounts in the tree dies with it.
export -f debootstrap_retry
unshare -m --propagation private bash -c 'debootstrap_retry "$@"' debootstrap_retry "$tmp/debootstrap.log" \
        "$SUITE" "$tmp/root" "$mirror" --variant=minbase --include=systemd,systemd-sysv,dbus,$libs || exit 1

r=$tmp/root
rm -rf "$r"/usr/share/doc/* "$r"/usr/share/man/* "$r"/usr/share/info/* "$r"/usr/share/locale/* \
        "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* "$r"/var/log/*.log
# Nothing reads a console in the tests; without these the boot is quieter and quicker.
for u in console-getty.service getty@.service systemd-networkd.service systemd-resolved.service \
        systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
        fstrim.timer dpkg-db-backup.timer; do
        ln -sf /dev/null "$r/etc/systemd/system/$u"
done
echo nr-test > "$r/etc/hostname"
: > "$r/etc/machine-id"
mv "$r" "$dest"
echo "$dest"
