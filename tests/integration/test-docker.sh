#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Docker as kubelet's runtime (dockershim, Kubernetes 1.20-1.23) against a REAL dockerd: Debian's
# docker.io unpacked from the .deb that tools/install-deps.sh caches (never installed on this
# machine), run in private pid+mount+net namespaces with a tmpfs on /run, its own data root, no
# iptables and no bridge, on a containerd of its own (the host's binary) that lives in the same
# namespace. Pods are made as dockershim makes them (k8s_POD_... sandboxes, k8s_... containers, its
# io.kubernetes.* labels), beside an operator's container with a named volume and data in it.
#
# Asserted: detection calls the runtime docker from kubeadm's flags; the plan names every container
# and sandbox of kubelet's and nothing else; the run removes them, containers first, sandboxes last,
# with their anonymous volumes; the operator's container keeps running with its volume and data,
# a container with a Kubernetes label but no dockershim name stays, the image stays, dockerd runs
# on; a second run has nothing to do. The socket kubelet asks (/var/run/docker.sock, /var/run a
# symlink to /run as on Debian) is resolved within the tree: an absolute symlink to a socket bound
# into the tree is followed there, one that leads out of the tree reaches nothing. Docker as it may
# also answer, from tests/integration/fake-docker.py: an engine whose minimum API is 1.44 (Docker 29)
# is spoken to at 1.44 and its container removed; one that hangs or answers garbage fails its row and
# leaves the verdict unknown, never clean.

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
in_private_ns "$@"

CACHE=/var/cache/node-reset-tests
deb=$(ls "$CACHE"/docker.io_*.deb 2> /dev/null | head -n 1)
[ -n "$deb" ] || skip "no docker.io .deb in $CACHE (make deps downloads it; the test runs offline)"
require_cmd containerd runc unshare nsenter cc tar sha256sum dpkg-deb python3 curl
[ -d /sys/fs/cgroup ] || skip "no cgroup file system"
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" > /dev/null; }

DK=$WORK/docker
ROOT=$WORK/root
SOCK=$ROOT/run/docker.sock
CGROUP_PARENT=/nr-docker-test-$$
IMAGE=registry.local/pause:test
UNSHARE_PID=
mkdir -p "$DK/tree" "$DK/data" "$ROOT/run" "$ROOT/var"
ln -s ../run "$ROOT/var/run" # as Debian's base-files makes it
dpkg-deb -x "$deb" "$DK/tree" || fail "cannot unpack $deb"
[ -x "$DK/tree/usr/sbin/dockerd" ] && [ -x "$DK/tree/usr/bin/docker" ] || { fail "no dockerd in $deb"; finish; }

# A kubeadm 1.20 dockershim worker as kubeadm leaves it: kubeadm-flags.env without any runtime flag
# (real-kubernetes.md, measured), kubeadm's drop-in, Docker installed.
mkdir -p "$ROOT/var/lib/kubelet" "$ROOT/etc/systemd/system/kubelet.service.d" "$ROOT/usr/bin"
echo 'KUBELET_KUBEADM_ARGS="--network-plugin=cni --pod-infra-container-image=k8s.gcr.io/pause:3.2"' \
        > "$ROOT/var/lib/kubelet/kubeadm-flags.env"
printf '[Service]\nEnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env\nExecStart=\nExecStart=/usr/bin/kubelet $KUBELET_KUBEADM_ARGS\n' \
        > "$ROOT/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"
cp "$DK/tree/usr/sbin/dockerd" "$ROOT/usr/bin/dockerd"

# The image: the static pause program, in `docker save` layout (docker 20.10 loads no OCI layout).
build_image() {
        local d=$DK/image layer cfg
        mkdir -p "$d/rootfs" "$d/tar"
        cc -static -O2 -o "$d/rootfs/pause" "$TOP/tests/integration/containerd/pause.c" || return 1
        tar -C "$d/rootfs" --owner=0 --group=0 --numeric-owner -cf "$d/layer.tar" pause
        layer=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
        mkdir -p "$d/tar/$layer" && mv "$d/layer.tar" "$d/tar/$layer/layer.tar"
        printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":["/pause"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
                "$(dpkg --print-architecture 2> /dev/null || echo amd64)" "$layer" > "$d/config.json"
        cfg=$(sha256sum "$d/config.json" | cut -d' ' -f1)
        mv "$d/config.json" "$d/tar/$cfg.json"
        printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$cfg" "$IMAGE" "$layer" \
                > "$d/tar/manifest.json"
        tar -C "$d/tar" -cf "$d/image.tar" .
}

# PID 1 of the namespace: tmpfs /run, lo up, containerd, dockerd on the socket beneath the root.
cat > "$DK/init.sh" << EOF
mount -t tmpfs -o mode=0755 dk-run /run || exit 1
ip link set lo up
mkdir -p /run/dk-containerd
printf 'version = 2\nroot = "%s"\nstate = "/run/dk-containerd/state"\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n[grpc]\n  address = "/run/dk-containerd/containerd.sock"\n' \
        "$DK/containerd-root" > /run/dk-containerd/config.toml
containerd --config /run/dk-containerd/config.toml > "$DK/containerd.log" 2>&1 &
for _ in \$(seq 100); do [ -S /run/dk-containerd/containerd.sock ] && break; sleep 0.05; done
PATH="$DK/tree/usr/sbin:$DK/tree/usr/bin:\$PATH" dockerd --containerd=/run/dk-containerd/containerd.sock \
        --data-root="$DK/data" --exec-root=/run/docker-exec --pidfile=/run/docker.pid -H "unix://$SOCK" \
        --iptables=false --ip6tables=false --bridge=none --storage-driver=vfs --oom-score-adjust=0 \
        --cgroup-parent=$CGROUP_PARENT > "$DK/dockerd.log" 2>&1 &
echo \$! > "$DK/dockerd.pid"
while :; do sleep 1 & wait \$!; done
EOF

dk_stop() {
        local init
        if [ -n "$UNSHARE_PID" ]; then
                init=$(cut -d' ' -f1 "/proc/$UNSHARE_PID/task/$UNSHARE_PID/children" 2> /dev/null)
                [ -n "$init" ] && kill -KILL "$init" 2> /dev/null
                wait "$UNSHARE_PID" 2> /dev/null
                UNSHARE_PID=
        fi
        remove_cgroup_parent "$CGROUP_PARENT"
}
eval "set -- $(trap -p EXIT)"
trap "dk_stop; $3" EXIT

docker_() { "$DK/tree/usr/bin/docker" -H "unix://$SOCK" "$@"; }
engine() { curl -sf --unix-socket "$SOCK" "http://docker$1"; }
agent() { "$NODE_RESET" --root "$ROOT" "$@"; }

build_image || { fail "cannot build the image"; finish; }
unshare -m -n -p -f --kill-child --mount-proc --propagation private -- bash "$DK/init.sh" > "$DK/init.log" 2>&1 &
UNSHARE_PID=$!
for _ in $(seq 200); do engine /_ping > /dev/null 2>&1 && break; sleep 0.1; done
engine /_ping > /dev/null || { fail "dockerd did not start: $(tail -n 5 "$DK/dockerd.log")"; finish; }
docker_ load -i "$DK/image/image.tar" > /dev/null || fail "cannot load the image"

# Two pods as dockershim names and labels them (pkg/kubelet/dockershim/naming.go, docker_service.go).
pod() { # pod NAME NAMESPACE UID CONTAINER...
        local name=$1 ns=$2 uid=$3 c; shift 3
        docker_ run -d --name "k8s_POD_${name}_${ns}_${uid}_0" --network none \
                --label io.kubernetes.docker.type=podsandbox --label "io.kubernetes.pod.uid=$uid" \
                --label "io.kubernetes.pod.name=$name" --label "io.kubernetes.pod.namespace=$ns" "$IMAGE" > /dev/null || return 1
        for c in "$@"; do
                docker_ run -d --name "k8s_${c}_${name}_${ns}_${uid}_0" --network "container:k8s_POD_${name}_${ns}_${uid}_0" \
                        -v /scratch --label io.kubernetes.docker.type=container --label "io.kubernetes.pod.uid=$uid" \
                        --label "io.kubernetes.pod.name=$name" --label "io.kubernetes.pod.namespace=$ns" \
                        --label "io.kubernetes.container.name=$c" "$IMAGE" > /dev/null || return 1
        done
}
pod web default 0a1b-web app sidecar || fail "cannot make pod web"
pod dns kube-system 0a1b-dns coredns || fail "cannot make pod dns"
docker_ stop -t 1 k8s_sidecar_web_default_0a1b-web_0 > /dev/null
# The operator's own container with a named volume and data, and one with a Kubernetes label but no
# dockershim name: neither is kubelet's.
docker_ volume create keepdata > /dev/null
echo "operator data" > "$DK/data/volumes/keepdata/_data/file"
docker_ run -d --name keepme --network none -v keepdata:/data "$IMAGE" > /dev/null || fail "cannot make keepme"
docker_ run -d --name decoy --network none --label io.kubernetes.docker.type=container \
        --label io.kubernetes.pod.uid=x "$IMAGE" > /dev/null || fail "cannot make decoy"
anon=$(docker_ inspect -f '{{range .Mounts}}{{.Name}}{{end}}' k8s_app_web_default_0a1b-web_0)
assert "7 containers before" test "$(docker_ ps -aq | wc -l)" -eq 7
assert "the app container has an anonymous volume" test -d "$DK/data/volumes/$anon"

# --- plan --------------------------------------------------------------------------------------
agent --phases pods -o json plan > "$WORK/plan.json"; rc=$?
assert "plan exits 0" test $rc -eq 0
assert "detection: runtime docker, from kubeadm's flags (dockershim)" jq_ "$WORK/plan.json" \
        "r['runtime']['name'] == 'docker' and any('dockershim' in e for e in r['runtime']['evidence']) and not r['runtime']['docker_cohosted']"
assert "plan: the engine answers and is kept" jq_ "$WORK/plan.json" \
        "len(actions(r, kind='docker')) == 1 and 'answers' in actions(r, kind='docker')[0]['detail'] and actions(r, kind='docker')[0]['target'] == '/var/run/docker.sock'"
assert "plan names the 3 containers" test "$("$REPORT" "$WORK/plan.json" "targets(r, kind='docker-remove-container')" | tr -d "'" )" \
        = "[default/web/app $(docker_ inspect -f '{{.Id}}' k8s_app_web_default_0a1b-web_0 | cut -c1-12), default/web/sidecar $(docker_ inspect -f '{{.Id}}' k8s_sidecar_web_default_0a1b-web_0 | cut -c1-12), kube-system/dns/coredns $(docker_ inspect -f '{{.Id}}' k8s_coredns_dns_kube-system_0a1b-dns_0 | cut -c1-12)]"
assert "plan names the 2 sandboxes" test "$("$REPORT" "$WORK/plan.json" "len(actions(r, kind='docker-remove-pod'))")" -eq 2
assert "plan names neither keepme nor decoy" jq_ "$WORK/plan.json" \
        "not any('keepme' in a['detail'] or 'decoy' in a['detail'] for a in actions(r))"
assert "plan changed nothing" test "$(docker_ ps -aq | wc -l)" -eq 7

# --- run ---------------------------------------------------------------------------------------
agent --phases pods,verify --yes -o json run > "$WORK/run.json"; rc=$?
assert "run exits 0" test $rc -eq 0
assert "every kubelet container and sandbox removed, none failed" jq_ "$WORK/run.json" \
        "len(actions(r, kind='docker-remove-container', result='changed')) == 3 and len(actions(r, kind='docker-remove-pod', result='changed')) == 2 and not actions(r, result='failed')"
assert "containers go before sandboxes" jq_ "$WORK/run.json" \
        "(lambda k: max(i for i, x in enumerate(k) if x == 'docker-remove-container') < min(i for i, x in enumerate(k) if x == 'docker-remove-pod'))([a['kind'] for a in actions(r)])"
assert "no k8s_ container is left" test -z "$(docker_ ps -aq --filter name=k8s_)"
assert "the anonymous volume went with its container" test ! -e "$DK/data/volumes/$anon"
assert "the operator's container still runs" test "$(docker_ inspect -f '{{.State.Running}}' keepme)" = true
assert "its named volume keeps its data" test "$(cat "$DK/data/volumes/keepdata/_data/file" 2> /dev/null)" = "operator data"
assert "the labelled container without dockershim's name stays" test "$(docker_ inspect -f '{{.State.Running}}' decoy)" = true
assert "the image stays" docker_ image inspect "$IMAGE" > /dev/null
assert "dockerd still runs and answers" engine /version > /dev/null
assert "verified: no residue" jq_ "$WORK/run.json" "r['residue'] == []"

agent --phases pods --yes -o json run > "$WORK/run2.json"; rc=$?
assert "second run exits 0 with nothing to remove" jq_ "$WORK/run2.json" \
        "not actions(r, kind='docker-remove-container') and not actions(r, kind='docker-remove-pod') and not r['changed']"
agent --phases pods status > /dev/null; rc=$?
assert "status: clean" test $rc -eq 0

# --- a symlinked socket: followed within the tree, never out of it ------------------------------
pod again default 0a1b-again app || fail "cannot make pod again"
tree2() { # a copy of the node's files, its /var/run a symlink to /run
        rm -rf "$WORK/root2" && mkdir -p "$WORK/root2/run" && cp -a "$ROOT/var" "$ROOT/etc" "$ROOT/usr" "$WORK/root2/"
}
tree2
ln -s "$SOCK" "$WORK/root2/run/docker.sock" # absolute, to the host's path of the socket
"$NODE_RESET" --root "$WORK/root2" --phases pods --yes -o json run > "$WORK/link.json"
assert "a symlink out of the tree reaches nothing there: Docker is not running in it" jq_ "$WORK/link.json" \
        "'not running' in actions(r, kind='docker')[0]['detail'] and not actions(r, kind='docker-remove-container')"
assert "and its pods are still there" test "$(docker_ ps -aq --filter name=k8s_ | wc -l)" -eq 2
tree2
mkdir -p "$WORK/root2/run/dockerd" && touch "$WORK/root2/run/dockerd/engine.sock"
mount --bind "$SOCK" "$WORK/root2/run/dockerd/engine.sock" || fail "cannot bind the socket into the tree"
ln -s /run/dockerd/engine.sock "$WORK/root2/run/docker.sock" # absolute: /run of the tree
"$NODE_RESET" --root "$WORK/root2" --phases pods --yes -o json run > "$WORK/link2.json"
assert "a symlink within the tree is followed there: the pod of kubelet's is removed" jq_ "$WORK/link2.json" \
        "len(actions(r, kind='docker-remove-container', result='changed')) == 1 and len(actions(r, kind='docker-remove-pod', result='changed')) == 1"
assert "no k8s_ container is left" test -z "$(docker_ ps -aq --filter name=k8s_)"
umount "$WORK/root2/run/dockerd/engine.sock"

# --- Docker as it may answer: a minimum above 1.24, a hang, garbage --------------------------------
fake() { # fake MODE: a tree of the node's files whose docker.sock is fake-docker.py MODE's
        tree2
        rm -f "$WORK/fake.log"
        "$TOP/tests/integration/fake-docker.py" "$1" "$WORK/root2/run/docker.sock" "$WORK/fake.log" &
        PIDS+=($!)
        for _ in $(seq 100); do grep -q ready "$WORK/fake.log" 2> /dev/null && break; sleep 0.05; done
}
PIDS=()
eval "set -- $(trap -p EXIT)"
trap 'for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null; done; wait 2> /dev/null; '"$3" EXIT
fake min144
"$NODE_RESET" --root "$WORK/root2" --phases pods,verify --yes -o json run > "$WORK/min.json"; rc=$?
assert "Docker 29 (API 1.44 at least): exit 0" test $rc -eq 0
assert "... asked at its minimum, 1.44, after the unversioned /version" jq_ "$WORK/min.json" \
        "'spoken at 1.44' in actions(r, kind='docker')[0]['detail'] and len(actions(r, kind='docker-remove-container', result='changed')) == 1"
assert "... every call after /version at /v1.44/, none at 1.24" eval \
        'grep -q "^DELETE /v1.44/containers/" "$WORK/fake.log" && ! grep -q "/v1.24/" "$WORK/fake.log"'
assert "... verified clean" jq_ "$WORK/min.json" "r['verdict'] == 'clean'"
kill "${PIDS[-1]}"
for mode in hang garbage; do
        fake $mode
        "$NODE_RESET" --root "$WORK/root2" --phases pods,verify --yes --timeout 6 -o json run > "$WORK/$mode.json"; rc=$?
        assert "Docker that answers with $mode: exit 1" test $rc -eq 1
        assert "... its row failed, saying so" jq_ "$WORK/$mode.json" \
                "[a['result'] for a in actions(r, kind='docker')] == ['failed'] and 'does not answer as Docker' in actions(r, kind='docker')[0]['detail']"
        assert "... the verdict is unknown, never clean" jq_ "$WORK/$mode.json" \
                "r['verdict'] == 'unknown' and [a['kind'] for a in r['unobserved']] == ['docker']"
        kill "${PIDS[-1]}"
done

dk_stop
leftover=$(ls -d /sys/fs/cgroup/*/"${CGROUP_PARENT#/}" 2> /dev/null)
assert "teardown leaves no cgroup" test -z "$leftover"
finish
