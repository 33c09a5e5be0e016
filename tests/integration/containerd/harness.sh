# SPDX-License-Identifier: LGPL-2.1-or-later
# A real containerd in its own private pid+mount+net namespaces, for the pods tests and benchmark.
# Source it after lib.sh, inside in_private_ns (WORK set). Nothing here touches the host's
# /run/containerd, its network namespaces or its processes: containerd sees a tmpfs on /run, an
# overlay on /var/lib and its own loopback; its pods' cgroups live under one cgroup_parent of ours.
#
# CD_RUNTIME picks the containerd:
#   (empty)          Debian 12's containerd 1.6 as installed, with a version 2 config of the test's
#                    own (root, CNI conf and bin dirs under $CD_DIR);
#   containerd-2.1   (or containerd-1.7) the package make deps unpacked (tools/fetch-runtimes.sh), laid
#                    over /usr/bin in the namespace, with its own "containerd config default" (for
#                    2.x: version 3, io.containerd.cri.v1.* plugins, NRI on) at the default paths:
#                    /etc/containerd/config.toml, /var/lib/containerd, /run/containerd, /etc/cni/net.d,
#                    /usr/lib/cni, in a root of the namespace's own. The one change to the default
#                    config is restrict_oom_score_adj (no process here has CAP_SYS_RESOURCE); the
#                    pause image is imported under the name the config pins.
#
#   cd_setup            build the pause image, the config and the CNI directories under $CD_DIR
#   cd_start            start the namespace and containerd in it, import the image (cd_restart: again)
#   cd_enter CMD...     run CMD inside the namespace (as the agent sees a real node)
#   cd_spawn CMD...     the same in the background (CD_SPAWNED, cd_spawned_child)
#   cd_cri CMD...       run the CRI test helper inside the namespace against the socket
#   cd_wait_network_ready  until the CRI says the network is ready (after the CNI config changed)
#   cd_fail_del on|off  make the CNI plugin's DEL fail like calico without its API server
#   cd_slow_del on|off  make every loopback DEL take a second
#   cd_stop             SIGTERM containerd, kill the namespace, remove our pods' cgroups
#   cd_leftovers        print whatever cd_stop left: processes, cgroups, mounts (nothing, it should)
#   cd_stop_checked     cd_stop, and assert that it left nothing

CD_DIR=${CD_DIR:-$WORK/cd}
CD_SOCK=/run/containerd/containerd.sock
CD_IMAGE=registry.local/pause:test
CD_CGROUP_PARENT=/nr-test-$$
CD_HELPER=${CD_HELPER:-$O/tests/cri-helper}
CD_INIT_PID=
CD_UNSHARE_PID=
CD_NS_IDS=
CD_CNI_MSG="error getting ClusterInformation: connection is unauthorized: Unauthorized"
CD_RUNTIME=${CD_RUNTIME:-}
CD_TREE=
# Where the real CNI plugins are, as the wrappers see them: at the default paths /usr/lib/cni is the
# wrappers' directory, the real one bound beside it.
CD_CNI_REAL=/usr/lib/cni
# The CNI conf dir as the namespace sees it (cd_enter reaches it at the default paths: writing to the
# root's upper layer under a mounted overlay is undefined, and containerd would not see it).
CD_NETD=$CD_DIR/net.d
if [ -n "$CD_RUNTIME" ]; then
        CD_CNI_REAL=$CD_DIR/cni-real
        CD_NETD=/etc/cni/net.d
fi

# A skip, not a failure, when the machine cannot run containers at all.
cd_require() {
        require_root
        require_cmd containerd ctr runc unshare nsenter cc tar sha256sum
        [ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/loopback ] && [ -x /usr/lib/cni/host-local ] ||
                skip "containernetworking-plugins is not installed (/usr/lib/cni)"
        [ -x "$CD_HELPER" ] || skip "$CD_HELPER is not built (make check builds it)"
        [ -d /sys/fs/cgroup ] || skip "no cgroup file system"
        [ -z "$CD_RUNTIME" ] && return 0
        CD_TREE=$("$TOP/tools/fetch-runtimes.sh" --print "$CD_RUNTIME") ||
                skip "$CD_RUNTIME is not in the cache (sudo make deps fetches it: tools/fetch-runtimes.sh)"
        for b in containerd containerd-shim-runc-v2 ctr; do
                [ -x "$CD_TREE/usr/bin/$b" ] && [ -e "/usr/bin/$b" ] ||
                        skip "$CD_RUNTIME: $b is missing from $CD_TREE/usr/bin or /usr/bin (laid over it)"
        done
}

# The pause image, offline: a static program, one uncompressed layer, an OCI layout tar.
cd_build_image() {
        local d=$CD_DIR/image lay=$CD_DIR/image/layout arch layer cfg man
        mkdir -p "$d/rootfs" "$lay/blobs/sha256"
        cc -static -O2 -o "$d/rootfs/pause" "$TOP/tests/integration/containerd/pause.c" || return 1
        tar -C "$d/rootfs" --owner=0 --group=0 --numeric-owner -cf "$d/layer.tar" pause
        layer=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
        mv "$d/layer.tar" "$lay/blobs/sha256/$layer"
        arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
        printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":["/pause"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
                "$arch" "$layer" > "$d/config.json"
        cfg=$(sha256sum "$d/config.json" | cut -d' ' -f1)
        mv "$d/config.json" "$lay/blobs/sha256/$cfg"
        printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
                "$cfg" "$(stat -c %s "$lay/blobs/sha256/$cfg")" "$layer" "$(stat -c %s "$lay/blobs/sha256/$layer")" > "$d/manifest.json"
        man=$(sha256sum "$d/manifest.json" | cut -d' ' -f1)
        printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"test"}}]}' \
                "$man" "$(stat -c %s "$d/manifest.json")" "$CD_IMAGE" > "$lay/index.json"
        mv "$d/manifest.json" "$lay/blobs/sha256/$man"
        echo '{"imageLayoutVersion":"1.0.0"}' > "$lay/oci-layout"
        tar -C "$lay" -cf "$d/image.tar" .
}

# The package's own default, written where containerd looks for it; the one change this machine
# needs must apply, else the default changed shape and the test says so.
cd_write_default_config() {
        local cfg=$CD_DIR/root-upper/etc/containerd/config.toml
        mkdir -p "${cfg%/*}"
        "$CD_TREE/usr/bin/containerd" config default > "$CD_DIR/config.default" || return 1
        sed 's/^\( *restrict_oom_score_adj = \)false$/\1true/' "$CD_DIR/config.default" > "$cfg"
        [ "$(diff "$CD_DIR/config.default" "$cfg" | grep -c '^>')" -eq 1 ] ||
                { echo "$CD_RUNTIME's default config has no 'restrict_oom_score_adj = false' line"; return 1; }
        CD_CONFIG=$cfg
}

cd_write_config() {
        [ -z "$CD_RUNTIME" ] || { cd_write_default_config; return; }
        CD_CONFIG=$CD_DIR/config.toml
        cat > "$CD_DIR/config.toml" <<-EOF
	version = 2
	root = "$CD_DIR/root"
	state = "/run/containerd"
	disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs",
	  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
	  "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp"]
	[grpc]
	  address = "$CD_SOCK"
	[plugins."io.containerd.grpc.v1.cri"]
	  sandbox_image = "$CD_IMAGE"
	  restrict_oom_score_adj = true
	  disable_apparmor = true
	  [plugins."io.containerd.grpc.v1.cri".containerd]
	    snapshotter = "overlayfs"
	    default_runtime_name = "runc"
	    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
	      runtime_type = "io.containerd.runc.v2"
	      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
	        SystemdCgroup = false
	  [plugins."io.containerd.grpc.v1.cri".cni]
	    bin_dir = "$CD_DIR/cni-bin"
	    conf_dir = "$CD_DIR/net.d"
	EOF
}

# A bridge network as most CNIs build one, behind a wrapper whose DEL fails on demand with calico's
# message (the master-gone incident).
cd_write_cni() {
        mkdir -p "$CD_DIR/net.d" "$CD_DIR/cni-bin" "$CD_DIR/ipam"
        for p in /usr/lib/cni/*; do
                case "${p##*/}" in bridge | loopback) ;; *) ln -sf "$CD_CNI_REAL/${p##*/}" "$CD_DIR/cni-bin/" ;; esac
        done
        # loopback runs for every sandbox (and is the rescue conflist's only plugin): slow on demand,
        # so that a test can catch the agent while the rescue stands in.
        cat > "$CD_DIR/cni-bin/loopback" <<-EOF
	#!/bin/sh
	[ "\$CNI_COMMAND" = DEL ] && [ -e "$CD_DIR/slow-del" ] && sleep 1
	exec $CD_CNI_REAL/loopback "\$@"
	EOF
        chmod 0755 "$CD_DIR/cni-bin/loopback"
        cat > "$CD_DIR/cni-bin/bridge" <<-EOF
	#!/bin/sh
	if [ "\$CNI_COMMAND" = DEL ] && [ -e "$CD_DIR/fail-del" ]; then
	        printf '{"cniVersion":"1.0.0","code":999,"msg":"%s"}\n' "$CD_CNI_MSG"
	        exit 1
	fi
	exec $CD_CNI_REAL/bridge "\$@"
	EOF
        chmod 0755 "$CD_DIR/cni-bin/bridge"
        cd_write_conflist
}

# The bridge network's conflist into the conf dir (again, after a reset emptied it).
cd_write_conflist() {
        # At the default paths host-local keeps its addresses where it does by default (/var/lib/cni).
        local ipam_dir=", \"dataDir\": \"$CD_DIR/ipam\""
        [ -z "$CD_RUNTIME" ] || ipam_dir=
        cat > "$CD_DIR/10-nr-test.conflist" <<-EOF
	{"cniVersion": "1.0.0", "name": "nr-test", "plugins": [
	  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
	   "ipam": {"type": "host-local", "ranges": [[{"subnet": "198.18.0.0/16"}]]$ipam_dir}}]}
	EOF
        if [ -z "$CD_RUNTIME" ]; then
                cp "$CD_DIR/10-nr-test.conflist" "$CD_NETD/"
        elif [ -z "$CD_INIT_PID" ]; then
                mkdir -p "$CD_DIR/root-upper$CD_NETD" && cp "$CD_DIR/10-nr-test.conflist" "$CD_DIR/root-upper$CD_NETD/"
        else
                cd_enter sh -c "mkdir -p $CD_NETD && cp $CD_DIR/10-nr-test.conflist $CD_NETD/"
        fi
}

# After the CNI config changed under a running containerd: until its CRI says the network is ready
# (it reloads the conf dir on inotify, not at once).
cd_wait_network_ready() {
        for _ in $(seq 100); do
                cd_cri status 2> /dev/null | grep -q ' network-ready=1' && return 0
                sleep 0.05
        done
        echo "containerd's CRI network did not get ready: $(cd_cri status 2>&1)"
        return 1
}

cd_fail_del() {
        if [ "$1" = on ]; then : > "$CD_DIR/fail-del"; else rm -f "$CD_DIR/fail-del"; fi
}

cd_slow_del() {
        if [ "$1" = on ]; then : > "$CD_DIR/slow-del"; else rm -f "$CD_DIR/slow-del"; fi
}

# At the default paths the namespace gets a root of its own: an overlay of the host's "/" (what the
# agent writes or removes lands in $CD_DIR/root-upper, whatever a phase acts on), /dev, /sys and the
# work directory bound in, a fresh /proc, and a tmpfs on /run and /var/lib (a fresh node's; the
# overlayfs snapshotter cannot keep its upper dirs on an overlay). Then the wrappers on /usr/lib/cni (the real plugins bound beside them first), the
# package's binaries on /usr/bin.
cd_default_paths_init() {
        local b n=$CD_DIR/newroot
        echo "mount --bind /usr/lib/cni $CD_CNI_REAL || exit 1"
        echo "mount -t overlay nr-root -o lowerdir=/,upperdir=$CD_DIR/root-upper,workdir=$CD_DIR/root-work $n || exit 1"
        for b in /dev /sys "$WORK"; do
                echo "mount --rbind $b $n$b || exit 1"
        done
        echo "mount -t proc proc $n/proc && mkdir -p $n/.oldroot && cd $n && pivot_root . .oldroot || exit 1"
        echo "cd / && umount -l /.oldroot && rmdir /.oldroot || exit 1"
        echo "mount -t tmpfs -o mode=0755 cd-run /run && mount -t tmpfs -o mode=0755 cd-varlib /var/lib || exit 1"
        echo "mount --bind $CD_DIR/cni-bin /usr/lib/cni || exit 1"
        for b in containerd containerd-shim-runc-v2 ctr; do
                echo "mount --bind $CD_TREE/usr/bin/$b /usr/bin/$b || exit 1"
        done
}

cd_setup() {
        mkdir -p "$CD_DIR/varlib-upper" "$CD_DIR/varlib-work" "$CD_DIR/root" "$CD_DIR/root-upper" "$CD_DIR/root-work" \
                "$CD_DIR/newroot" "$CD_DIR/cni-real"
        cd_build_image || return 1
        cd_write_config || return 1
        cd_write_cni
        # PID 1 of the namespace: private /run and /var/lib, lo up, containerd, then reap until killed.
        {
                if [ -z "$CD_RUNTIME" ]; then
                        echo "mount -t tmpfs -o mode=0755 cd-run /run || exit 1"
                        echo "mount -t overlay overlay -o lowerdir=/var/lib,upperdir=$CD_DIR/varlib-upper,workdir=$CD_DIR/varlib-work /var/lib || exit 1"
                else
                        cd_default_paths_init
                fi
                echo "ip link set lo up"
                echo ": > $CD_DIR/ready"
                echo 'while :; do sleep 1 & wait $!; done'
        } > "$CD_DIR/init.sh"
}

# The namespace's PID 1, as this shell sees it, is the child of unshare.
cd_start_ns() {
        rm -f "$CD_DIR/ready"
        unshare -m -n -p -f --kill-child --mount-proc --propagation private -- bash "$CD_DIR/init.sh" \
                > "$CD_DIR/init.log" 2>&1 &
        CD_UNSHARE_PID=$!
        for _ in $(seq 100); do
                [ -e "$CD_DIR/ready" ] && break
                sleep 0.05
        done
        CD_INIT_PID=$(cat "/proc/$CD_UNSHARE_PID/task/$CD_UNSHARE_PID/children" 2>/dev/null | cut -d' ' -f1)
        [ -n "$CD_INIT_PID" ] && [ -e "$CD_DIR/ready" ] || return 1
        CD_NS_IDS="$(readlink "/proc/$CD_INIT_PID/ns/pid") $(readlink "/proc/$CD_INIT_PID/ns/net") $(readlink "/proc/$CD_INIT_PID/ns/mnt")"
}

cd_enter() {
        nsenter -t "$CD_INIT_PID" -m -n -p -- "$@"
}

# In the background: CD_SPAWNED is nsenter's PID, cd_spawned_child the command's (its only child).
cd_spawn() {
        nsenter -t "$CD_INIT_PID" -m -n -p -- "$@" &
        CD_SPAWNED=$!
}

cd_spawned_child() {
        local c
        for _ in $(seq 200); do
                c=$(cut -d' ' -f1 "/proc/$CD_SPAWNED/task/$CD_SPAWNED/children" 2> /dev/null)
                [ -n "$c" ] && { echo "$c"; return 0; }
                sleep 0.01
        done
        return 1
}

cd_cri() {
        cd_enter "$CD_HELPER" "$CD_SOCK" "$@"
}

# containerd runs as a child of the namespace's init (through nsenter), its log in $CD_DIR.
cd_start_containerd() {
        local config="--config '$CD_CONFIG'"
        [ -z "$CD_RUNTIME" ] || config= # the default path
        cd_enter sh -c "containerd $config >> '$CD_DIR/containerd.log' 2>&1 & echo \$! > '$CD_DIR/containerd.pid'"
        for _ in $(seq 200); do
                cd_enter ctr -a "$CD_SOCK" version > /dev/null 2>&1 && return 0
                sleep 0.05
        done
        echo "containerd did not start; its log:"
        tail -n 20 "$CD_DIR/containerd.log"
        return 1
}

cd_containerd_pid() { cat "$CD_DIR/containerd.pid"; }

cd_stop_containerd() {
        local pid
        pid=$(cd_containerd_pid)
        cd_enter kill -TERM "$pid" 2> /dev/null
        for _ in $(seq 100); do
                cd_enter kill -0 "$pid" 2> /dev/null || return 0
                sleep 0.05
        done
        cd_enter kill -KILL "$pid" 2> /dev/null
}

cd_start() {
        cd_start_ns || { echo "cannot start the namespace: $(cat "$CD_DIR/init.log")"; return 1; }
        cd_start_containerd || return 1
        cd_enter ctr -a "$CD_SOCK" -n k8s.io images import "$CD_DIR/image/image.tar" > /dev/null || return 1
        cd_pin_sandbox_image
}

# containerd 2.x names its sandbox image in pinned_images.sandbox, 1.x in sandbox_image: the test's
# pause image under that name, so that the config stays the package's.
cd_pin_sandbox_image() {
        local name
        [ -n "$CD_RUNTIME" ] || return 0
        name=$(sed -n "s/^ *\(sandbox\|sandbox_image\) = ['\"]\(.*\)['\"]$/\2/p" "$CD_CONFIG" | head -n 1)
        [ -n "$name" ] || { echo "no sandbox image in $CD_CONFIG"; return 1; }
        cd_enter ctr -a "$CD_SOCK" -n k8s.io images tag "$CD_IMAGE" "$name" > /dev/null
}

cd_restart_containerd() {
        cd_stop_containerd
        cd_start_containerd
}

# Everything we started dies with the namespace's init; then the pods' cgroups, deepest first.
cd_stop() {
        if [ -n "$CD_INIT_PID" ]; then
                cd_stop_containerd 2> /dev/null
                kill -KILL "$CD_INIT_PID" 2> /dev/null
                wait "$CD_UNSHARE_PID" 2> /dev/null
                CD_INIT_PID=
        fi
        remove_cgroup_parent "$CD_CGROUP_PARENT"
}

# What the namespace still holds: sandboxes and containers (through the helper), cni netns.
cd_count() { # sandboxes|containers|netns
        case "$1" in
        netns) cd_enter sh -c 'ls /run/netns 2>/dev/null | grep -c "^cni-"' ;;
        *) cd_cri count "$1" ;;
        esac
}

# After cd_stop: no process left in the namespaces, no cgroup of our pods, no mount of ours. A process
# the namespace's end killed may still be on its way out: a few looks before anything counts.
cd_leftover_processes() {
        local p ns left=
        for p in /proc/[0-9]*; do
                for ns in pid net mnt; do
                        case " $CD_NS_IDS " in *" $(readlink "$p/ns/$ns" 2>/dev/null) "*)
                                left="$left ${p#/proc/}($(tr '\0' ' ' < "$p/cmdline" 2>/dev/null | cut -c1-60), $ns)"
                                break ;;
                        esac
                done
        done
        echo "$left"
}

cd_leftovers() {
        local left
        for _ in $(seq 20); do
                left=$(cd_leftover_processes)
                [ -z "$left" ] && break
                sleep 0.1
        done
        [ -n "$left" ] && echo "processes left in the test namespaces:$left"
        ls -d /sys/fs/cgroup/*/"${CD_CGROUP_PARENT#/}" /sys/fs/cgroup/"${CD_CGROUP_PARENT#/}" 2> /dev/null |
                sed 's/^/cgroup left: /'
        grep -F "$CD_DIR" /proc/self/mountinfo | sed 's/^/mount left: /'
        return 0
}

# The end of a test: cd_stop, then an assertion that it left nothing (cd_leftovers).
cd_stop_checked() {
        local left
        cd_stop
        left=$(cd_leftovers)
        [ -n "$left" ] && echo "$left"
        assert "teardown left no process, cgroup or mount" test -z "$left"
}

# What containerd holds, for a failure message.
cd_diag() {
        local what
        for what in images content snapshots; do
                echo "--- ctr $what ls"
                cd_enter ctr -a "$CD_SOCK" -n k8s.io "$what" ls 2>&1 | head -n 20
        done
        echo "--- containerd.log (errors)"
        grep -E 'level=(error|warning)' "$CD_DIR/containerd.log" | tail -n 20
}
