#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# "make deps" (tools/install-deps.sh): the container runtimes and the etcd that nodes run now, newer
# than Debian 12's, for the tests that prove node-reset against them. Each is one package of a newer
# Debian suite at a pinned version and sha256, downloaded from the machine's configured mirror with a
# private apt configuration (its own sources.list, lists and cache: the system's apt sources and state
# are never touched), then unpacked with dpkg-deb -x into the cache. Nothing of the newer suites is
# installed on this machine and nothing is started: the tests run the binaries from the cache, in
# private namespaces or laid into an nspawn node's /usr. Their binaries are Go programs that need
# glibc 2.34 at most (the packages' Depends: libc6 >= 2.34), which Debian 12's 2.36 satisfies.
#
#   tools/fetch-runtimes.sh              fetch what is not cached yet (as root); offline afterwards
#   tools/fetch-runtimes.sh --print NAME the cached tree of NAME (its usr/bin holds the binaries), or
#                                        exit 1 when it is not there
#
# The cache is $RUNTIMES_CACHE/NAME/ (a dpkg-deb -x tree with a "stamp" file naming the package,
# version and sha256), made in a temporary directory and renamed, so a half-unpacked tree is never
# seen. A version gone from the mirror (sid moves on) is a warning: the tests that need it skip.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNTIMES_CACHE=${RUNTIMES_CACHE:-/var/cache/node-reset-tests/runtimes}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# name            suite   package      version                sha256 of the .deb
PINNED="
containerd-1.7    trixie  containerd   1.7.24~ds1-6+deb13u1   ed708deb96fe476a3bce4efa5c0538dfbcf717ab9a7c7944ba7260342c25899c
containerd-2.1    sid     containerd   2.1.9+ds1-5            2dda86ce7033fd612fc50e136679d8174ccad680eb29cd4611e0d2a1b84cf591
etcd-3.5          trixie  etcd-server  3.5.16-4               0875921bb0d023f2af9b8e15cdfbe417a03e65731345fb832c40f9c2dd72967b
"

stamp_of() { # package version sha256
        echo "$1 $2 $3"
}

cached() { # name package version sha256
        [ "$(cat "$RUNTIMES_CACHE/$1/stamp" 2>/dev/null)" = "$(stamp_of "$2" "$3" "$4")" ]
}

if [ "${1:-}" = --print ]; then
        while read -r name _ pkg ver sum; do
                [ "$name" = "${2:-}" ] || continue
                cached "$name" "$pkg" "$ver" "$sum" && { echo "$RUNTIMES_CACHE/$name"; exit 0; }
        done <<<"$PINNED"
        exit 1
fi

# The private apt configuration, as tools/k8s-build.sh has one for deb-src: the mirror the system
# already uses for its own suite, with the newer suites, signed by the same archive keyring.
APT_DIR=$RUNTIMES_CACHE/apt
apt_opts=(-o "Dir::Etc::sourcelist=$APT_DIR/sources.list" -o Dir::Etc::sourceparts=-
        -o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache" -o Dir::State::status=/dev/null
        -o Acquire::Retries=3 -o APT::Sandbox::User=root)

apt_sources() {
        local codename uri suites
        codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
        uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 'Identifier: Packages' |
                awk -v s="$codename" '$2 == s && $3 == "main" { print $1; exit }')
        [ -n "$uri" ] || { echo "fetch-runtimes: no '$codename main' entry in the apt sources" >&2; return 1; }
        suites=$(awk 'NF { print $2 }' <<<"$PINNED" | sort -u)
        mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
        for s in $suites; do
                echo "deb [signed-by=$KEYRING] $uri $s main"
        done >"$APT_DIR/sources.list"
        apt-get "${apt_opts[@]}" update -qq
}

# One package: download the pinned version, check its sha256, unpack it beside the cache and rename.
fetch_one() { # name package version sha256
        local name=$1 pkg=$2 ver=$3 sum=$4 tmp deb
        tmp=$(mktemp -d "$RUNTIMES_CACHE/.fetch.XXXXXX")
        if ! (cd "$tmp" && apt-get "${apt_opts[@]}" download -qq "$pkg=$ver"); then
                echo "fetch-runtimes: $pkg $ver is not on the mirror (any more): the tests that need $name skip" >&2
                rm -rf "$tmp"
                return 0
        fi
        deb=$(ls "$tmp"/*.deb)
        if ! echo "$sum  $deb" | sha256sum --quiet -c -; then
                echo "fetch-runtimes: $deb does not have the pinned sha256 $sum: not used" >&2
                rm -rf "$tmp"
                return 1
        fi
        dpkg-deb -x "$deb" "$tmp/tree"
        stamp_of "$pkg" "$ver" "$sum" >"$tmp/tree/stamp"
        rm -rf "$RUNTIMES_CACHE/$name"
        mv "$tmp/tree" "$RUNTIMES_CACHE/$name"
        rm -rf "$tmp"
        echo "fetch-runtimes: $name: $pkg $ver in $RUNTIMES_CACHE/$name ($("$RUNTIMES_CACHE/$name/usr/bin/${pkg%-server}" --version 2>&1 | head -n 1))"
}

main() {
        local lock name suite pkg ver sum todo=()
        mkdir -p "$RUNTIMES_CACHE"
        exec {lock}>"$RUNTIMES_CACHE/lock"
        flock "$lock"
        while read -r name suite pkg ver sum; do
                [ -n "$name" ] || continue
                cached "$name" "$pkg" "$ver" "$sum" || todo+=("$name $pkg $ver $sum")
        done <<<"$PINNED"
        if [ ${#todo[@]} -eq 0 ]; then
                echo "fetch-runtimes: all cached in $RUNTIMES_CACHE"
                return 0
        fi
        [ "$(id -u)" -eq 0 ] || { echo "fetch-runtimes: not fetched yet; run as root (sudo make deps)" >&2; return 1; }
        apt_sources
        for t in "${todo[@]}"; do
                # shellcheck disable=SC2086
                fetch_one $t
        done
}

main
