# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced (after lib.sh) by the tests that boot a real systemd in an nspawn tree (test-services.sh,
# test-orphan-units.sh, and with a Debian package's daemon laid over it, test-resolver.sh and
# test-networkmanager.sh): the tree, the cleanup, the packages. A package is never installed on the
# host.

# nspawn_tree: the tree in $rootfs (skips without systemd or dbus), container.sh sourced, and the
# cleanup trap set (a test with more to clean up sets its own, calling nspawn_poweroff first).
nspawn_tree() {
        local rc

        rootfs=$(bash "$TOP/tests/integration/nspawn/build-rootfs.sh" "$WORK/tree"); rc=$?
        [ $rc -eq 77 ] && skip "systemd or dbus is not installed on the host (make deps installs them)"
        [ $rc -eq 0 ] || { echo "FAIL: cannot assemble the nspawn tree"; exit 1; }
        . "$TOP/tests/integration/nspawn/container.sh"
        trap 'nspawn_poweroff; cd /; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT
}

# debs_unpack DIR DEB...: the packages unpacked into DIR with their /lib copied to usr/lib (a merged
# /usr tree's /lib is a link to usr/lib), so that DIR/usr can be laid over a tree's /usr. Also used
# by tests/e2e-k8s/node.sh for the Docker node.
debs_unpack() {
        local dir=$1 d
        shift
        mkdir -p "$dir/usr/lib" || return 1
        for d in "$@"; do
                dpkg-deb -x "$d" "$dir" || { echo "FAIL: cannot unpack $d"; return 1; }
        done
        [ ! -d "$dir/lib" ] || cp -a "$dir/lib/." "$dir/usr/lib/"
}

# debs_listed CACHE LIST: DEBS, the .deb in CACHE of each package the file CACHE/LIST names (one a
# line, as tools/install-deps.sh writes them); without one, 1 and DEBS_WHY says which is missing.
# Also used by the fleet lab (tests/lab/lab.sh) and tests/e2e-k8s/node.sh for sshd.
debs_listed() {
        local p d
        DEBS=() DEBS_WHY=
        [ -s "$1/$2" ] || { DEBS_WHY="no $2 in $1"; return 1; }
        while read -r p; do
                d=$(ls "$1/${p}"_*.deb 2>/dev/null | head -n 1)
                [ -n "$d" ] || { DEBS_WHY="no $p .deb in $1"; return 1; }
                DEBS+=("$d")
        done <"$1/$2"
}

# nspawn_debs_tree DIR DEB...: nspawn_tree, and the packages unpacked into DIR (debs_unpack).
nspawn_debs_tree() {
        local dir=$1
        shift
        nspawn_tree
        debs_unpack "$dir" "$@" || exit 1
}

# nspawn_debs_lay DIR: DIR's usr over the tree's /usr (read-only, the host's beneath), and a
# /usr/local with only the stub crictl the node's preparation has (build-rootfs.sh).
nspawn_debs_lay() {
        mount -t overlay nr-usr -o "ro,lowerdir=$1/usr:/usr" "$rootfs/usr" &&
                mount -t tmpfs -o mode=0755 nr-usr-local "$rootfs/usr/local" &&
                mkdir -p "$rootfs/usr/local/bin" &&
                printf '#!/bin/sh\nexit 1\n' > "$rootfs/usr/local/bin/crictl" && chmod 0755 "$rootfs/usr/local/bin/crictl" ||
                { echo "FAIL: cannot lay the packages over the tree's /usr"; exit 1; }
}
