#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build Kubernetes 1.20 (kubelet, kubeadm, kubectl, the control plane, kube-proxy, a small crictl) from
# Debian's own "kubernetes" source package, and the node images kubeadm wants, into a cache that
# "make e2e-k8s" boots real nodes from. Nothing is downloaded but Debian packages and that source.
#
#   tools/k8s-build.sh              build once (as root); a second run finds the cache and does nothing
#   tools/k8s-build.sh --print-dir  print the finished cache directory, or exit 1 when there is none
#
# The cache is $K8S_CACHE/<source version>-<hash of this script and the crictl source>/ with bin/,
# images/ and build.log; it is built in a temporary directory under a lock, then renamed, so a
# half-built cache is never seen. The Go build cache ($K8S_CACHE/go-cache) survives a change of this
# script, so a rebuild after an edit takes minutes, not the ~25 of a cold one.
# The facts behind each step are in /work/shared/notes/real-kubernetes.md (reflect2, GOPATH mode,
# openapi-gen, version stamping, crictl, images).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

K8S_CACHE=${K8S_CACHE:-/var/cache/node-reset-k8s}
K8S_VERSION=v1.20.2
K8S_COMMIT=faecb196815e248d3ecfb03c680a4507229c2a56 # upstream v1.20.2, as its kubectl version reports
CRICTL_SRC=tests/e2e-k8s/crictl/main.go
IMAGES_SH=tests/e2e-k8s/images.sh
BINS=(kubelet kubeadm kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy)

script_hash() {
        cat "$0" "$CRICTL_SRC" "$IMAGES_SH" | sha256sum | cut -c1-12
}

# The finished directory of this script's hash, whatever the source version is.
finished_dir() {
        local d
        for d in "$K8S_CACHE"/*-"$(script_hash)"; do
                [ -f "$d/complete" ] && { echo "$d"; return 0; }
        done
        return 1
}

if [ "${1:-}" = --print-dir ]; then
        finished_dir
        exit
fi
if d=$(finished_dir); then
        echo "k8s-build: cached in $d"
        exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
        echo "k8s-build: not built yet; run as root (sudo make deps)" >&2
        exit 1
fi

need_packages() {
        local p missing=()
        for p in golang-go golang-github-modern-go-reflect2-dev busybox-static conntrack iptables \
                etcd-server dpkg-dev build-essential; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
                        missing+=("$p")
        done
        [ ${#missing[@]} -eq 0 ] && return 0
        echo "k8s-build: installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 -o Acquire::Retries=3 \
                install -y -qq --no-install-recommends "${missing[@]}"
}

# A private apt configuration: one deb-src line for the mirror and suite the system already uses, its
# own lists and cache. The system's apt sources are never touched.
apt_private() {
        local dir=$K8S_CACHE/apt
        echo -o "Dir::Etc::sourcelist=$dir/sources.list" -o Dir::Etc::sourceparts=- \
                -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -o Acquire::Retries=3
}

fetch_source() {
        local dir=$K8S_CACHE/apt codename uri
        codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
        uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 'Identifier: Packages' |
                awk -v s="$codename" '$2 == s && $3 == "main" { print $1; exit }')
        [ -n "$uri" ] || { echo "k8s-build: no '$codename main' entry in the apt sources" >&2; return 1; }
        mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/src"
        echo "deb-src $uri $codename main" >"$dir/sources.list"
        # shellcheck disable=SC2046
        apt-get $(apt_private) update -qq
        # shellcheck disable=SC2046
        (cd "$dir/src" && apt-get $(apt_private) source --download-only -qq kubernetes)
}

# "kubernetes_1.20.5+really1.20.2-1.1+deb12u1.dsc" of the private lists' candidate
source_dsc() {
        local ver
        # shellcheck disable=SC2046
        ver=$(apt-cache $(apt_private) showsrc kubernetes | awk '/^Version:/ { print $2 }' |
                sort -V | tail -n1)
        echo "$K8S_CACHE/apt/src/kubernetes_${ver#*:}.dsc"
}

ldflags() {
        local p flags="-s -w" date=$1
        for p in k8s.io/kubernetes/vendor/k8s.io/component-base/version \
                k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version; do
                flags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=20"
                flags+=" -X $p.gitCommit=$K8S_COMMIT -X $p.gitTreeState=clean -X $p.buildDate=$date"
        done
        echo "$flags"
}

# go build in GOPATH mode: Go 1.19 refuses the tree in module mode, GOPATH mode takes vendor/ as is.
gobuild() {
        local out=$1 pkg=$2 t0=$SECONDS
        go build -p 2 -trimpath -ldflags "$GO_LDFLAGS" -o "$out" "$pkg"
        echo "k8s-build: $(basename "$out") in $((SECONDS - t0)) s"
}

# pkg/generated/openapi/zz_generated.openapi.go is made by upstream's make (gen_openapi), not shipped:
# the same input packages as Makefile.generated_files, i.e. every directory with a
# "+k8s:openapi-gen=" tag outside vendor/ (staging/src named as vendor/), code-generator and
# sample-apiserver excluded. Also excluded: kube-scheduler/config/v1, the scheduler's own config file
# format, never served by the API server, whose time.Duration field this openapi-gen cannot type
# under Go 1.19 ("HTTPTimeout: not sure how to enforce default for Unsupported").
gen_openapi() {
        local tree=$1 bin=$2 inputs
        gobuild "$bin/openapi-gen" k8s.io/kubernetes/vendor/k8s.io/kube-openapi/cmd/openapi-gen
        inputs=$(cd "$tree" &&
                find -H . \( -path './_*' -o -path './.*' -o -path ./vendor \) -prune -o \
                        -type f -name '*.go' -print |
                sed 's|^./staging/src|vendor|; s|^./||' |
                grep -v -e '^vendor/k8s.io/code-generator/' -e '^vendor/k8s.io/sample-apiserver/' \
                        -e '^vendor/k8s.io/kube-scheduler/config/v1/' |
                xargs grep -l '^// *+k8s:' | xargs grep -l '+k8s:openapi-gen=' |
                xargs -n1 dirname | LC_ALL=C sort -u | sed 's|^|k8s.io/kubernetes/|' | paste -sd,)
        (cd "$tree" && "$bin/openapi-gen" --logtostderr -i "$inputs" \
                -p k8s.io/kubernetes/pkg/generated/openapi -O zz_generated.openapi \
                -h hack/boilerplate/boilerplate.generatego.txt -r "$bin/../openapi-violations.list")
        test -s "$tree/pkg/generated/openapi/zz_generated.openapi.go"
}

build_all() {
        local work=$1 dsc=$2 tree gopath date t0=$SECONDS b
        gopath=$work/gopath
        tree=$gopath/src/k8s.io/kubernetes
        mkdir -p "$gopath/src/k8s.io" "$work/bin"
        dpkg-source -q -x "$dsc" "$tree"
        # reflect2 1.0.1 corrupts memory on Go >= 1.18 (JSON of maps); Debian's 1.0.2 is API compatible
        rm -rf "$tree/vendor/github.com/modern-go/reflect2"
        cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 "$tree/vendor/github.com/modern-go/"
        date=$(date -u -d "@$(dpkg-parsechangelog -l "$tree/debian/changelog" -S Timestamp)" \
                +%Y-%m-%dT%H:%M:%SZ)
        export GOPATH=$gopath GO111MODULE=off CGO_ENABLED=0 GOFLAGS= GOPROXY=off \
                GOCACHE=$K8S_CACHE/go-cache HOME=$work
        GO_LDFLAGS=$(ldflags "$date")
        cd "$tree"
        gen_openapi "$tree" "$work/bin"
        for b in "${BINS[@]}"; do
                gobuild "$work/bin/$b" "k8s.io/kubernetes/cmd/$b"
        done
        mkdir -p "$tree/cmd/nr-crictl"
        cp "$repo/$CRICTL_SRC" "$tree/cmd/nr-crictl/main.go"
        gobuild "$work/bin/crictl" k8s.io/kubernetes/cmd/nr-crictl
        rm -f "$work/bin/openapi-gen"
        "$work/bin/kubeadm" version -o short | grep -qx "$K8S_VERSION"
        cd "$repo"
        rm -rf "$gopath"
        echo "k8s-build: binaries in $((SECONDS - t0)) s"
}

main() {
        local lock dsc srcver out work t0=$SECONDS
        mkdir -p "$K8S_CACHE"
        exec {lock}>"$K8S_CACHE/lock"
        flock "$lock"
        if out=$(finished_dir); then
                echo "k8s-build: cached in $out"
                return 0
        fi
        need_packages
        fetch_source
        dsc=$(source_dsc)
        srcver=$(basename "$dsc" .dsc)
        srcver=${srcver#kubernetes_}
        out=$K8S_CACHE/$srcver-$(script_hash)
        work=$(mktemp -d "$K8S_CACHE/build.XXXXXX")
        echo "k8s-build: building $srcver into $out (log: $work/build.log)"
        {
                build_all "$work" "$dsc"
                bash "$IMAGES_SH" "$work/bin" "$work/images"
        } >"$work/build.log" 2>&1 || {
                tail -n 30 "$work/build.log" >&2
                echo "k8s-build: FAILED, log kept in $work/build.log" >&2
                return 1
        }
        grep '^k8s-build:' "$work/build.log"
        rm -rf "$out"
        echo "k8s-build: done in $((SECONDS - t0)) s" | tee -a "$work/build.log"
        touch "$work/complete"
        mv "$work" "$out"
        chmod 755 "$out"
        echo "k8s-build: cached in $out ($(du -sh "$out" | cut -f1))"
}

main
