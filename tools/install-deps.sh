#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Install the Debian 12 packages that building and testing node-reset need ("make deps").
# Nothing is downloaded from anywhere but the configured apt mirror.
set -eu

packages=(
        # build
        build-essential pkg-config clang libclang-rt-14-dev
        libsystemd-dev libcurl4-openssl-dev libssl-dev libyaml-dev
        libmnl-dev libnftnl-dev
        libip4tc-dev libip6tc-dev libipset-dev
        # tests: cmocka, valgrind, the JSON Schema validator of every report, and the real tools the fixtures use to build state
        libcmocka-dev valgrind python3 python3-jsonschema util-linux e2fsprogs procps openssl
        iproute2 iptables ipset nftables tmux
        # the pods test: a real containerd in private namespaces (the pause image is built static with
        # build-essential's libc.a); it never talks to a containerd the package may start on the host
        containerd runc containernetworking-plugins
        # the services test: a Debian tree (debootstrap, from the configured mirror, cached in
        # /var/cache/node-reset-test) booted with systemd-nspawn; busctl comes with systemd
        debootstrap systemd-container
        # the fleet and packaging tests: the real ansible-playbook, a .deb build and lintian
        ansible-core dpkg-dev debhelper lintian
        # make e2e-vm: a Debian guest (debootstrap and e2fsprogs, above) booted under QEMU (TCG)
        qemu-system-x86
)

missing=()
for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
        echo "deps: all ${#packages[@]} packages are installed"
        exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
        echo "deps: missing ${missing[*]}; run as root (sudo make deps)" >&2
        exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
