#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The node images kubeadm 1.20 wants, made locally from the binaries just built and Debian's own
# packages, with no registry: one uncompressed layer per image, an OCI layout tarball with the
# io.containerd.image.name annotation, so "ctr -n k8s.io images import" names it and kubeadm's
# preflight pulls nothing. Called by tools/k8s-build.sh: images.sh BIN_DIR OUT_DIR; OUT_DIR/list
# holds "NAME FILE" per image.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: images.sh BIN_DIR OUT_DIR" >&2; exit 2; }
bin=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
REG=k8s.gcr.io
VER=v1.20.2
TEST_IMAGE=nr.local/busybox:1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$out"
: >"$out/list"

json_size() { stat -c %s "$1"; }

# oci_image NAME ROOTFS ENTRYPOINT-JSON: OUT_DIR/<name>.tar
oci_image() {
        local name=$1 root=$2 entry=$3 lay=$scratch/layout d layer cfg man file
        d=$scratch/oci
        rm -rf "$lay" "$d"
        mkdir -p "$lay/blobs/sha256" "$d"
        tar -C "$root" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$d/layer.tar" .
        layer=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
        mv "$d/layer.tar" "$lay/blobs/sha256/$layer"
        printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Entrypoint":%s},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
                "$entry" "$layer" >"$d/config.json"
        cfg=$(sha256sum "$d/config.json" | cut -d' ' -f1)
        mv "$d/config.json" "$lay/blobs/sha256/$cfg"
        printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
                "$cfg" "$(json_size "$lay/blobs/sha256/$cfg")" "$layer" "$(json_size "$lay/blobs/sha256/$layer")" >"$d/manifest.json"
        man=$(sha256sum "$d/manifest.json" | cut -d' ' -f1)
        printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
                "$man" "$(json_size "$d/manifest.json")" "$name" "${name##*:}" >"$lay/index.json"
        mv "$d/manifest.json" "$lay/blobs/sha256/$man"
        echo '{"imageLayoutVersion":"1.0.0"}' >"$lay/oci-layout"
        file=$(echo "${name#*/}" | tr '/:' '__').tar
        tar -C "$lay" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$out/$file" .
        echo "$name $file" >>"$out/list"
        echo "images: $name ($(du -h "$out/$file" | cut -f1))"
}

# A fresh root with the files every image has.
new_root() {
        local r=$scratch/root-$1
        rm -rf "$r"
        mkdir -p "$r/etc" "$r/tmp" "$r/usr/local/bin"
        chmod 1777 "$r/tmp"
        printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$r/etc/passwd"
        printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
        printf 'hosts: files dns\npasswd: files\ngroup: files\n' >"$r/etc/nsswitch.conf"
        echo "$r"
}

# copy_with_libs ROOT FILE...: the files, at their paths, and every library ldd names for them.
copy_with_libs() {
        local r=$1 f lib
        shift
        for f in "$@"; do
                # (from /: cp 9.1's --parents fails on an absolute source from some directories)
                (cd / && cp -a --parents "${f#/}" "$r")
                [ ! -L "$f" ] || (cd / && cp -a --parents "$(readlink -f "$f" | cut -c2-)" "$r")
                for lib in $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true); do
                        [ -e "$r$lib" ] || (cd / && cp -L --parents "${lib#/}" "$r")
                done
        done
}

control_plane() {
        local b r
        for b in kube-apiserver kube-controller-manager kube-scheduler; do
                r=$(new_root "$b")
                cp "$bin/$b" "$r/usr/local/bin/"
                oci_image "$REG/$b:$VER" "$r" "[\"/usr/local/bin/$b\"]"
        done
}

# kube-proxy execs iptables(-save/-restore) and conntrack: the nft backend, as the nodes' alternatives.
kube_proxy() {
        local r x t
        r=$(new_root kube-proxy)
        cp "$bin/kube-proxy" "$r/usr/local/bin/"
        copy_with_libs "$r" /usr/sbin/xtables-nft-multi /usr/sbin/conntrack
        x=/usr/lib/x86_64-linux-gnu/xtables
        mkdir -p "$r$x"
        copy_with_libs "$r" "$x"/*.so
        for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
                ln -sf xtables-nft-multi "$r/usr/sbin/$t"
        done
        oci_image "$REG/kube-proxy:$VER" "$r" '["/usr/local/bin/kube-proxy"]'
}

etcd() {
        local r
        r=$(new_root etcd)
        copy_with_libs "$r" /usr/bin/etcd
        ln -s /usr/bin/etcd "$r/usr/local/bin/etcd"
        mkdir -p "$r/var/lib/etcd"
        oci_image "$REG/etcd:3.4.13-0" "$r" '["/usr/local/bin/etcd"]'
}

# pause: a static program; coredns: a stub that only satisfies preflight's image list (the addon is
# skipped, the cluster has no DNS).
pause_coredns() {
        local r
        r=$(new_root pause)
        cc -static -O2 -o "$r/pause" "$top/tests/integration/containerd/pause.c"
        oci_image "$REG/pause:3.2" "$r" '["/pause"]'
        r=$(new_root coredns)
        cp "$scratch/root-pause/pause" "$r/coredns"
        oci_image "$REG/coredns:1.7.0" "$r" '["/coredns"]'
}

# The scenario pods' image: Debian's static busybox with its applets.
busybox() {
        local r a
        r=$(new_root busybox)
        mkdir -p "$r/bin"
        cp /bin/busybox "$r/bin/busybox"
        for a in $(/bin/busybox --list); do
                [ "$a" = busybox ] || ln -sf busybox "$r/bin/$a"
        done
        oci_image "$TEST_IMAGE" "$r" '["/bin/sh"]'
}

control_plane
kube_proxy
etcd
pause_coredns
busybox
