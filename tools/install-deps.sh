#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# "make deps": install the Debian 12 packages that building and testing node-reset need, then
# download what a test cannot take from the host (the e2e guest's packages, .debs laid into test
# trees) and build Kubernetes 1.20 for make e2e-k8s, once. After this, "make check" and
# "make e2e-vm" need no network. Nothing is downloaded from anywhere but the configured apt mirror;
# apt and debootstrap retry a failed download.
# "--build" ("make build-deps"): only the packages building the agent and "make demo" need (the
# README's first command), nothing downloaded beside them, nothing built.
# No service a package ships is started or left enabled on this machine: a policy-rc.d refuses every
# start during the install, and the units the packages installed here enable are disabled again
# (the tests start their own daemons in private namespaces).
set -eu
cd "$(dirname "$0")/.."

build_only=no
case "${1:-}" in
--build) build_only=yes ;;
"") ;;
*) echo "usage: tools/install-deps.sh [--build]" >&2; exit 2 ;;
esac

build_packages=(
        make build-essential pkg-config
        libsystemd-dev libcurl4-openssl-dev libssl-dev libyaml-dev libsqlite3-dev
        libmnl-dev libnftnl-dev
        libip4tc-dev libip6tc-dev libipset-dev libbpf-dev
)
packages=(
        "${build_packages[@]}"
        # the fuzzers and sanitizer builds (clang, LeakSanitizer's runtime), make format-check
        clang libclang-rt-14-dev clang-format
        # tests: cmocka, valgrind, the JSON Schema validator of every report, and the real tools the fixtures use to build state
        # (curl(1) is the TLS policy test's client without a floor of its own)
        libcmocka-dev valgrind python3 python3-jsonschema util-linux e2fsprogs procps openssl curl
        # the Argo example (examples/argo): its YAML, and shellcheck for the scripts of its steps
        python3-yaml shellcheck
        iproute2 iptables ipset nftables tmux bpftool strace
        # the conntrack test inserts and lists entries with the real CLI (the agent uses netlink)
        conntrack
        # the pods test: a real containerd in private namespaces (the pause image is built static with
        # build-essential's libc.a); it never talks to a containerd the package may start on the host
        containerd runc containernetworking-plugins
        # the services tests: systemd-nspawn boots a tree of the host's own /usr (systemd, dbus and
        # the agent's libraries, all installed here); busctl comes with systemd
        systemd dbus systemd-container
        # the etcd test: a real 3-member TLS etcd 3.4 cluster in a private network namespace; etcdctl
        # only builds and checks the fixtures, the agent never runs it
        etcd-server etcd-client
        # the fleet and packaging tests: the real ansible-playbook, a .deb build and lintian; the
        # shells whose generated completion scripts test-completion.sh loads and asks (zsh, fish)
        ansible-core ansible-lint dpkg-dev debhelper lintian zsh fish
        # bench/fleet.sh runs kubespray's own reset role beside node-reset's: it needs the ansible.utils
        # collection (Debian's ansible package) and json_query's jmespath
        ansible python3-jmespath
        # make e2e-vm: a Debian guest image (debootstrap; mkfs.ext4 from e2fsprogs, above) booted
        # under QEMU (TCG); its packages are downloaded below
        debootstrap qemu-system-x86
        # make e2e-k8s: Kubernetes 1.20 built from Debian's own source package (tools/k8s-build.sh)
        # with Go 1.19 and reflect2 1.0.2; busybox-static and conntrack go into the node images
        golang-go golang-github-modern-go-reflect2-dev busybox-static conntrack
)

[ $build_only = no ] || packages=("${build_packages[@]}")
missing=()
for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

# Debian starts (and enables) a daemon on install: etcd-server would listen on 2379, containerd
# would run, on the user's own machine. invoke-rc.d asks policy-rc.d first (101: not allowed);
# one is put there only for the install, and never over one the machine already has.
policy=${POLICY_RC_D:-/usr/sbin/policy-rc.d}
policy_made=no
no_service_starts() {
        [ -e "$policy" ] && return 0
        printf '#!/bin/sh\n# tools/install-deps.sh: no daemon starts while node-reset installs its packages\nexit 101\n' > "$policy"
        chmod 0755 "$policy"
        policy_made=yes
}
services_back() { [ $policy_made = no ] || rm -f "$policy"; }

# The units a package installed here just enabled (deb-systemd-helper, from its postinst) go back
# to disabled: the machine boots as it did before. Units of packages that were already installed
# are the user's and stay as they are.
disable_units_of() {
        local p u
        command -v deb-systemd-helper > /dev/null 2>&1 || return 0
        for p in "$@"; do
                dpkg-query -L "$p" 2> /dev/null |
                        grep -E '^(/usr)?/lib/systemd/system/[^/]+\.(service|socket|timer|path)$' |
                        while read -r u; do
                                u=${u##*/}
                                deb-systemd-helper --quiet was-enabled "$u" 2> /dev/null || continue
                                deb-systemd-helper disable "$u" > /dev/null 2>&1 &&
                                        echo "deps: $u (from $p) disabled again: the tests start their own"
                        done
        done
}

if [ ${#missing[@]} -eq 0 ]; then
        echo "deps: all ${#packages[@]} packages are installed"
elif [ "$(id -u)" -ne 0 ]; then
        echo "deps: missing ${missing[*]}; run as root (sudo make ${build_only/yes/build-}deps)" >&2
        exit 1
else
        echo "deps: installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        no_service_starts
        trap services_back EXIT
        apt-get -o Acquire::Retries=3 update -qq
        apt-get -o Acquire::Retries=3 -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
        services_back
        trap - EXIT
        disable_units_of "${missing[@]}"
fi
[ $build_only = no ] || exit 0

# The resolver tests unpack Debian's systemd-resolved and NetworkManager into their nspawn trees,
# offline: the .debs only, never installed here (resolved's postinst would take over this host's
# /etc/resolv.conf, NetworkManager would manage its links). With NetworkManager, the libraries it
# depends on that this host lacks (here: libndp0 for its daemon, the rest for its device plugins,
# which test-networkmanager.sh leaves out of the tree), listed in network-manager.libs.
# test-docker.sh runs dockerd from docker.io's .deb in private namespaces the same way (installed,
# its daemon would start on this host and rewrite its firewall); the containerd and runc it needs
# are the ones installed above.
if [ "$(id -u)" -eq 0 ]; then
        cache=/var/cache/node-reset-tests
        mkdir -p "$cache"
        if [ ! -s "$cache/network-manager.libs" ]; then
                apt-cache depends network-manager 2> /dev/null |
                        awk '$1 == "Depends:" && $2 ~ /^lib/ { print $2 }' |
                        while read -r p; do dpkg -s "$p" > /dev/null 2>&1 || echo "$p"; done > "$cache/network-manager.libs.new" &&
                        mv "$cache/network-manager.libs.new" "$cache/network-manager.libs"
        fi
        for p in systemd-resolved:test-resolver network-manager:test-networkmanager docker.io:test-docker \
                $(sed 's/$/:test-networkmanager/' "$cache/network-manager.libs" 2> /dev/null); do
                ls "$cache/${p%%:*}"_*.deb > /dev/null 2>&1 && continue
                (cd "$cache" && apt-get -o Acquire::Retries=3 download "${p%%:*}")
                ls "$cache/${p%%:*}"_*.deb > /dev/null 2>&1 ||
                        echo "deps: cannot download ${p%%:*}'s .deb: ${p#*:}.sh will skip" >&2
        done
fi

# make e2e-k8s lays Debian's openssh-server into each node's tree (its sshd runs in the node, never
# here): the package and the dependencies this host lacks (openssh-sftp-server, libwrap0, ...),
# listed in openssh-server.debs, downloaded the same way.
if [ "$(id -u)" -eq 0 ]; then
        cache=/var/cache/node-reset-tests
        if [ ! -s "$cache/openssh-server.debs" ]; then
                { echo openssh-server
                  apt-cache depends openssh-server 2> /dev/null |
                        awk '($1 == "Depends:" || $1 == "PreDepends:") && $2 !~ /^</ { print $2 }' | sort -u |
                        while read -r p; do dpkg -s "$p" > /dev/null 2>&1 || echo "$p"; done
                } > "$cache/openssh-server.debs.new" &&
                        mv "$cache/openssh-server.debs.new" "$cache/openssh-server.debs"
        fi
        for p in $(cat "$cache/openssh-server.debs" 2> /dev/null); do
                ls "$cache/${p}"_*.deb > /dev/null 2>&1 && continue
                (cd "$cache" && apt-get -o Acquire::Retries=3 download "$p")
                ls "$cache/${p}"_*.deb > /dev/null 2>&1 ||
                        echo "deps: cannot download $p's .deb: the e2e-k8s nodes will run no sshd" >&2
        done
fi

# The runtimes nodes run now (containerd 1.7 and 2.1, etcd 3.5) from Debian's newer suites, pinned
# and checked, unpacked into /var/cache/node-reset-tests/runtimes: never installed, never started here.
if [ "$(id -u)" -eq 0 ]; then
        tools/fetch-runtimes.sh || echo "deps: the newer runtimes were not all fetched: the tests that need them skip" >&2
fi

# The e2e guest's packages, once, into /var/cache/node-reset-e2e (E2E_CACHE): the image itself is
# built from them at test time, offline.
if [ "$(id -u)" -eq 0 ]; then
        tests/e2e/build-image.sh --fetch
        # Kubernetes for make e2e-k8s, once (~25 min cold), into /var/cache/node-reset-k8s;
        # K8S_BUILD=no skips it (test-make-deps, which fakes apt)
        if [ "${K8S_BUILD:-yes}" != no ] && ! tools/k8s-build.sh --print-dir > /dev/null 2>&1; then
                echo "deps: building Kubernetes 1.20 from Debian's source package for make e2e-k8s, once:" \
                        "about 7-25 min on 2 cores and 2.5 GB in /var/cache/node-reset-k8s (K8S_BUILD=no skips it;" \
                        "make check and make demo do not need it)"
        fi
        [ "${K8S_BUILD:-yes}" = no ] || tools/k8s-build.sh
else
        echo "deps: not root: the e2e guest's packages were not checked (sudo make deps fetches them)" >&2
fi
