# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Kubernetes nodes as systemd-nspawn containers, for make e2e-k8s; sourced by tests/e2e-k8s/run.sh,
# which runs in private mount and network namespaces (its own network namespace is the "switch":
# the bridge every node's veth hangs on). Each node has the host's /usr as the lower layer of an
# overlay (the Kubernetes binaries above it in /usr/bin, as a package would put them), its own /etc
# and /var on disk, a child cgroup in every hierarchy as its cgroup namespace root, and its own
# network namespace. Nothing is made in the host's namespaces but those cgroups, removed at the end.
# The walls and their workarounds: /work/shared/notes/real-kubernetes.md.
#
#   node_layer                    the shared /usr layer (Kubernetes binaries, kubelet.service, prep)
#   node_create NAME IP [RUNTIME] tree, network namespace, cgroups; RUNTIME "docker": Debian's docker.io
#                                 laid over its /usr, dockerd enabled (kubelet's runtime through
#                                 dockershim); "containerd-1.7": Debian 13's containerd 1.7 (make deps
#                                 fetched it: tools/fetch-runtimes.sh) laid over its /usr instead of the
#                                 host's 1.6, same config; default "containerd" (the host's 1.6)
#   node_boot NAME                boot it; containerd running, images imported (into Docker on a
#                                 Docker node)
#   node_exec NAME CMD...         run CMD in all the node's namespaces
#   node_stop NAME                poweroff, then SIGKILL what is left in its cgroups, remove them
# Needs: W (work directory), K8S_DIR (tools/k8s-build.sh --print-dir), SWITCH_IP, SUBNET_PREFIX.

NODES=()
declare -A NODE_PID NODE_IP NODE_CG NODE_RUNTIME NODE_LAYER
DOCKER_DEB_CACHE=/var/cache/node-reset-tests

node_log() { echo "e2e-k8s: $*"; }

# /usr/bin/{kubelet,kubeadm,kubectl,crictl}, /usr/lib/systemd/system/kubelet.service and the node's
# boot-time preparation, as one read-only lower layer shared by all nodes.
node_layer() {
        local l=$W/k8s-layer b
        # /lib/modules: kube-proxy's DaemonSet mounts it from the host (no modules in this kernel)
        mkdir -p "$l/bin" "$l/lib/systemd/system" "$l/libexec/nr-e2e-k8s" "$l/lib/modules"
        for b in kubelet kubeadm kubectl crictl; do
                cp "$K8S_DIR/bin/$b" "$l/bin/$b"
        done
        # kubelet.service as upstream's kubelet package ships it; kubeadm's drop-in goes to /etc.
        cat >"$l/lib/systemd/system/kubelet.service" <<-'EOF'
	[Unit]
	Description=kubelet: The Kubernetes Node Agent
	Wants=network-online.target
	After=network-online.target

	[Service]
	ExecStart=/usr/bin/kubelet
	Restart=always
	StartLimitInterval=0
	RestartSec=10

	[Install]
	WantedBy=multi-user.target
	EOF
        cp "$E2E_DIR/node-prep.sh" "$l/libexec/nr-e2e-k8s/prep.sh"
        cat >"$l/lib/systemd/system/nr-e2e-k8s-prep.service" <<-'EOF'
	[Unit]
	Description=e2e-k8s: make this nspawn node able to run kubelet (cgroups rw, kubelet's sysctls)
	DefaultDependencies=no
	After=local-fs.target
	Before=containerd.service docker.service kubelet.service sysinit.target

	[Service]
	Type=oneshot
	RemainAfterExit=yes
	ExecStart=/bin/sh /usr/libexec/nr-e2e-k8s/prep.sh

	[Install]
	WantedBy=sysinit.target
	EOF
        node_ssh_layer
}

# SSH: Debian's openssh-server (the .debs tools/install-deps.sh keeps in /var/cache/node-reset-tests,
# listed in openssh-server.debs; never installed here) is unpacked as the nspawn tests lay packages
# over a tree's /usr (tests/integration/nspawn/tree.sh) into the shared layer above, so every node has
# sshd and the package's ssh.service; each node gets host keys of its own when its tree is made, and
# authorizes this run's client key for root. $W/ssh/known_hosts holds every node's host key by
# address: a client in this namespace (the switch) checks them strictly. NODE_SSH (the package's
# version) is empty when the packages are not there: the nodes then run no sshd.
NODE_SSH=
SSH_DEB_CACHE=${E2E_K8S_DEB_CACHE:-/var/cache/node-reset-tests}
node_ssh_layer() {
        . "$TOP/tests/integration/nspawn/tree.sh"
        debs_listed "$SSH_DEB_CACHE" openssh-server.debs ||
                { node_log "$DEBS_WHY (tools/install-deps.sh): the nodes run no sshd"; return 0; }
        debs_unpack "$W/ssh-debs" "${DEBS[@]}" && cp -a "$W/ssh-debs/usr/." "$W/k8s-layer/" || return 0
        mkdir -p "$W/ssh" && : >"$W/ssh/known_hosts" &&
                ssh-keygen -q -t ed25519 -N '' -C "nr-e2e-k8s-controller-$$" -f "$W/ssh/id_ed25519" || return 0
        NODE_SSH=$(dpkg-deb -f "${DEBS[0]}" Version)
        node_log "openssh-server $NODE_SSH laid into the nodes' /usr"
}

# The node's sshd: the package's ssh.service enabled, its own host key (recorded by address in
# $W/ssh/known_hosts, replacing the key of an earlier node at that address), root reached by this
# run's key only. No PAM: the tree has no /etc/pam.d.
node_ssh() { # NAME IP ETC
        local name=$1 ip=$2 e=$3
        [ -n "$NODE_SSH" ] || return 0
        mkdir -p "$e/ssh"
        cat >"$e/ssh/sshd_config" <<-'EOF'
	PermitRootLogin prohibit-password
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	UsePAM no
	HostKey /etc/ssh/ssh_host_ed25519_key
	AuthorizedKeysFile .ssh/authorized_keys
	Subsystem sftp /usr/lib/openssh/sftp-server
	EOF
        ssh-keygen -q -t ed25519 -N '' -C "root@$name" -f "$e/ssh/ssh_host_ed25519_key" || return 1
        sed -i "/^$ip /d" "$W/ssh/known_hosts"
        echo "$ip $(cut -d' ' -f1,2 "$e/ssh/ssh_host_ed25519_key.pub")" >>"$W/ssh/known_hosts"
        echo 'sshd:x:102:65534::/run/sshd:/usr/sbin/nologin' >>"$e/passwd"
        install -d -m 0700 "$e/../root/.ssh" && install -m 0600 "$W/ssh/id_ed25519.pub" "$e/../root/.ssh/authorized_keys"
        ln -s /usr/lib/systemd/system/ssh.service "$e/systemd/system/multi-user.target.wants/"
}

# Every mounted cgroup hierarchy of the host: v1 controllers, name=systemd, the unified one.
cgroup_hierarchies() {
        awk '$9 == "cgroup" || $9 == "cgroup2" { print $5 }' /proc/self/mountinfo | sort -u
}

node_cgroup_create() {
        local name=$1 h cg=nr-e2e-k8s-$$-$1 f
        NODE_CG[$name]=$cg
        for h in $(cgroup_hierarchies); do
                mkdir "$h/$cg" || return 1
                # a cpuset child takes no task until it has cpus and mems
                for f in cpuset.cpus cpuset.mems; do
                        [ -e "$h/$f" ] && cat "$h/$f" >"$h/$cg/$f"
                done
        done
        return 0
}

# Our child cgroups only, deepest first, after every process in them is gone.
node_cgroup_remove() {
        local name=$1 h cg=${NODE_CG[$1]:-}
        [ -n "$cg" ] || return 0
        for h in $(cgroup_hierarchies); do
                [ -d "$h/$cg" ] || continue
                for _ in $(seq 50); do
                        find "$h/$cg" -depth -type d -exec rmdir {} + 2>/dev/null
                        [ -d "$h/$cg" ] || break
                        sleep 0.2
                done
                [ -d "$h/$cg" ] && node_log "cgroup $h/$cg could not be removed"
        done
        return 0
}

node_cgroup_pids() {
        local h cg=${NODE_CG[$1]:-}
        [ -n "$cg" ] || return 0
        for h in $(cgroup_hierarchies); do
                [ -d "$h/$cg" ] && find "$h/$cg" -name cgroup.procs -exec cat {} + 2>/dev/null
        done | sort -un
}

# The node's own network namespace, made before boot: a veth to the switch (this namespace's bridge).
node_net_create() {
        local name=$1 ip=$2 ns=nr-$1
        ip netns add "$ns" || return 1
        ip link add "v-$name" type veth peer name eth0 netns "$ns" || return 1
        ip link set "v-$name" master nr-switch up || return 1
        ip -n "$ns" link set lo up
        ip -n "$ns" link set eth0 up
        ip -n "$ns" addr add "$ip/24" dev eth0 || return 1
        ip -n "$ns" route add default via "$SWITCH_IP"
}

# /etc of a Debian node that has containerd, kubelet (kubeadm's drop-in) and the bridge CNI binaries;
# the host's enablement is not copied, only what the node needs.
node_etc() {
        local name=$1 ip=$2 e=$3 n
        mkdir -p "$e/systemd/system/multi-user.target.wants" "$e/systemd/system/sysinit.target.wants" \
                "$e/systemd/system/kubelet.service.d" "$e/containerd" "$e/cni/net.d" "$e/default"
        ln -s ../usr/lib/os-release "$e/os-release"
        printf 'root:x:0:0:root:/root:/bin/bash\nmessagebus:x:100:101::/nonexistent:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$e/passwd"
        printf 'root:x:0:\nmessagebus:x:101:\nnogroup:x:65534:\n' >"$e/group"
        printf 'root:*:19000:0:99999:7:::\n' >"$e/shadow"
        printf 'root:*::\n' >"$e/gshadow"
        chmod 0640 "$e/shadow" "$e/gshadow"
        printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n' >"$e/nsswitch.conf"
        {
                printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n'
                for n in "${!NODE_IP[@]}"; do printf '%s\t%s\n' "${NODE_IP[$n]}" "$n"; done
        } >"$e/hosts"
        echo "nameserver $SWITCH_IP" >"$e/resolv.conf"
        echo "$name" >"$e/hostname"
        systemd-id128 new >"$e/machine-id"
        ln -s /usr/share/zoneinfo/Etc/UTC "$e/localtime"
        cp -a /etc/ld.so.cache /etc/ld.so.conf /etc/ld.so.conf.d /etc/alternatives "$e/"
        mkdir -p "$e/dbus-1/system.d"
        for n in console-getty.service getty@.service getty-static.service systemd-firstboot.service \
                systemd-networkd.service systemd-resolved.service systemd-timesyncd.service \
                apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer dpkg-db-backup.timer \
                systemd-networkd-wait-online.service; do
                ln -s /dev/null "$e/systemd/system/$n"
        done
        ln -s /usr/lib/systemd/system/containerd.service "$e/systemd/system/multi-user.target.wants/"
        ln -s /usr/lib/systemd/system/kubelet.service "$e/systemd/system/multi-user.target.wants/"
        ln -s /usr/lib/systemd/system/nr-e2e-k8s-prep.service "$e/systemd/system/sysinit.target.wants/"
        # kubeadm's drop-in, as upstream's kubeadm package installs it
        cat >"$e/systemd/system/kubelet.service.d/10-kubeadm.conf" <<-'EOF'
	[Service]
	Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
	Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
	EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
	EnvironmentFile=-/etc/default/kubelet
	ExecStart=
	ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
	EOF
        echo "KUBELET_EXTRA_ARGS=--node-ip=$ip" >"$e/default/kubelet"
        echo "runtime-endpoint: unix:///run/containerd/containerd.sock" >"$e/crictl.yaml"
        node_containerd_config >"$e/containerd/config.toml"
        node_ssh "$name" "$ip" "$e"
}

# containerd as the notes say: runc with cgroupfs, restrict_oom_score_adj (nothing here has
# CAP_SYS_RESOURCE), the locally imported pause image, Debian's CNI plugins.
node_containerd_config() {
        cat <<-'EOF'
	version = 2
	[plugins."io.containerd.grpc.v1.cri"]
	  sandbox_image = "k8s.gcr.io/pause:3.2"
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
	    bin_dir = "/usr/lib/cni"
	    conf_dir = "/etc/cni/net.d"
	EOF
}

# The tree: host /usr under the shared layer (overlay, writes go to the node's upper), /etc and /var
# on disk, the top-level directories of a merged /usr as symlinks.
node_tree() {
        local name=$1 ip=$2 d=$W/nodes/$1 r
        r=$d/root
        mkdir -p "$r" "$d/usr-upper" "$d/usr-work"
        (
                cd "$r" || exit 1
                mkdir -p usr etc var/lib var/log var/cache var/spool var/tmp run proc sys dev home mnt opt srv media
                mkdir -m 0700 root
                mkdir -m 1777 tmp
                chmod 1777 var/tmp
                for t in bin sbin lib lib32 lib64 libx32; do
                        [ -L "/$t" ] && ln -s "$(readlink "/$t")" "$t"
                done
                true
        ) || return 1
        mount -t overlay "nr-e2e-k8s-usr-$name" \
                -o "lowerdir=$W/k8s-layer:${NODE_LAYER[$name]:+${NODE_LAYER[$name]}:}/usr,upperdir=$d/usr-upper,workdir=$d/usr-work" \
                "$r/usr" || return 1
        node_etc "$name" "$ip" "$r/etc"
        [ "${NODE_RUNTIME[$name]}" != docker ] || node_docker_etc "$name" "$ip" "$r/etc"
}

node_create() {
        local name=$1 ip=$2
        NODES+=("$name")
        NODE_IP[$name]=$ip
        NODE_RUNTIME[$name]=${3:-containerd}
        case "${NODE_RUNTIME[$name]}" in
        docker)
                docker_layer || { node_log "cannot build the Docker layer"; return 1; }
                NODE_LAYER[$name]=$W/docker-layer/usr
                ;;
        containerd-*)
                NODE_LAYER[$name]=$(containerd_layer "${NODE_RUNTIME[$name]}") || return 1
                ;;
        esac
        node_tree "$name" "$ip" || { node_log "cannot build the tree of $name"; return 1; }
        node_net_create "$name" "$ip" || { node_log "cannot make the network of $name"; return 1; }
        node_cgroup_create "$name" || { node_log "cannot make the cgroups of $name"; return 1; }
}

node_leader() {
        cut -d' ' -f1 "/proc/${NODE_PID[$1]}/task/${NODE_PID[$1]}/children" 2>/dev/null
}

# Run in every namespace of the node (mount, pid, net, uts, ipc, cgroup), with a node's environment.
node_exec() {
        local name=$1 l
        shift
        l=$(node_leader "$name")
        [ -n "$l" ] || { node_log "node $name is not running"; return 1; }
        nsenter -t "$l" -m -u -i -n -p -C -r -w -- env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
                HOME=/root KUBECONFIG=/etc/kubernetes/admin.conf "$@"
}

node_wait_running() {
        local name=$1 s
        for _ in $(seq 300); do
                s=$(node_exec "$name" systemctl is-system-running 2>/dev/null)
                case "$s" in running | degraded) return 0 ;; esac
                kill -0 "${NODE_PID[$name]}" 2>/dev/null || break
                sleep 0.2
        done
        node_log "$name did not boot (${s:-no answer}); nspawn said:"
        tail -n 20 "$W/nodes/$name/nspawn.log"
        return 1
}

node_import_images() {
        local name=$1 img file l
        l=$(node_leader "$name")
        for _ in $(seq 100); do
                node_exec "$name" ctr version >/dev/null 2>&1 && break
                sleep 0.2
        done
        while read -r img file; do
                ctr -a "/proc/$l/root/run/containerd/containerd.sock" -n k8s.io images import \
                        "$K8S_DIR/images/$file" >/dev/null || { node_log "$name: cannot import $img"; return 1; }
        done <"$K8S_DIR/images/list"
}

node_boot() {
        local name=$1 d=$W/nodes/$1 h t0=$SECONDS
        (
                for h in $(cgroup_hierarchies); do
                        echo "$BASHPID" >"$h/${NODE_CG[$name]}/cgroup.procs" || exit 1
                done
                SYSTEMD_SECCOMP=0 exec systemd-nspawn --quiet --boot --register=no --keep-unit \
                        --capability=all --network-namespace-path="/run/netns/nr-$name" \
                        --bind=/dev/kmsg --bind-ro="$AGENT:/usr/local/sbin/node-reset" \
                        --console=passive --machine="$name" --directory="$d/root"
        ) </dev/null >"$d/nspawn.log" 2>&1 &
        NODE_PID[$name]=$!
        node_wait_running "$name" || return 1
        if [ "${NODE_RUNTIME[$name]}" = docker ]; then
                node_docker_load_images "$name" || return 1
        else
                node_import_images "$name" || return 1
        fi
        node_log "$name booted, images imported in $((SECONDS - t0)) s"
}

# nspawn turns SIGTERM into a poweroff, which waits 90 s for pods whose PID 1 ignores SIGTERM from an
# ancestor namespace: give it a little, then SIGKILL what is left in the node's own cgroups.
node_stop() {
        local name=$1 pid=${NODE_PID[$1]:-} p
        if [ -n "$pid" ]; then
                kill -TERM "$pid" 2>/dev/null
                for _ in $(seq 50); do
                        kill -0 "$pid" 2>/dev/null || break
                        sleep 0.2
                done
        fi
        for _ in $(seq 5); do
                p=$(node_cgroup_pids "$name")
                [ -z "$p" ] && break
                # shellcheck disable=SC2086
                kill -KILL $p 2>/dev/null
                sleep 0.5
        done
        if [ -n "$pid" ]; then
                # (braces: bash's "Killed" notice of the job goes to stderr too)
                { kill -KILL "$pid" && wait "$pid"; } 2>/dev/null
                NODE_PID[$name]=
        fi
        node_cgroup_remove "$name"
        ip netns del "nr-$name" 2>/dev/null
        umount "$W/nodes/$name/root/usr" 2>/dev/null
        return 0
}

# --- A newer containerd ------------------------------------------------------------------------

# The /usr of a containerd package make deps unpacked (its containerd, shims, ctr and
# containerd.service), as the lower layer above the host's /usr: it replaces the host's 1.6 in the
# node only. Its config is the node's own (node_containerd_config: version 2, which 1.7 reads).
containerd_layer() { # containerd-1.7
        local tree
        tree=$("$TOP/tools/fetch-runtimes.sh" --print "$1") ||
                { node_log "$1 is not in the cache (sudo make deps fetches it: tools/fetch-runtimes.sh)"; return 1; }
        echo "$tree/usr"
}

# --- Docker as kubelet's runtime (dockershim) --------------------------------------------------

docker_deb() { ls "$DOCKER_DEB_CACHE"/docker.io_*.deb 2>/dev/null | head -n 1; }

# Debian's docker.io from the .deb tools/install-deps.sh caches (never installed on this machine),
# unpacked as the nspawn tests lay packages over a tree's /usr (tests/integration/nspawn/tree.sh):
# its dependencies (containerd, runc, iptables, libdevmapper) are the host's, already in the node's
# /usr; tini (docker-init, only for "docker run --init") and lsb-base (the SysV script) are unused.
# runc-clamp rides along; the pod images are converted for "docker load" once.
DOCKER_LAYER=
docker_layer() {
        [ -z "$DOCKER_LAYER" ] || return "$DOCKER_LAYER"
        DOCKER_LAYER=1
        local deb l=$W/docker-layer
        deb=$(docker_deb)
        [ -n "$deb" ] || return 1
        . "$TOP/tests/integration/nspawn/tree.sh"
        debs_unpack "$l" "$deb" || return 1
        mkdir -p "$l/usr/libexec/nr-e2e-k8s" "$W/docker-images"
        install -m 0755 "$E2E_DIR/runc-clamp" "$l/usr/libexec/nr-e2e-k8s/runc-clamp"
        docker_archives "$W/docker-images" || return 1
        DOCKER_LAYER=0
}

# The images a worker runs (pause, kube-proxy, the test image), as "docker save" archives: Docker
# 20.10 loads no OCI layout, so each OCI tarball of tests/e2e-k8s/images.sh gains the manifest.json
# docker load reads (config and layer blobs named by their paths in the same tarball).
DOCKER_IMAGES="k8s.gcr.io/pause:3.2 k8s.gcr.io/kube-proxy:v1.20.2 nr.local/busybox:1"
docker_archives() { # OUT_DIR
        local img file
        while read -r img file; do
                case " $DOCKER_IMAGES " in *" $img "*) ;; *) continue ;; esac
                python3 - "$K8S_DIR/images/$file" "$1/$file" "$img" <<-'EOF' || return 1
		import io, json, sys, tarfile
		src, dst, name = sys.argv[1:]
		with tarfile.open(src) as t:
		    blob = lambda d: json.load(t.extractfile("./blobs/sha256/" + d.split(":", 1)[1]))
		    index = json.load(t.extractfile("./index.json"))
		    man = blob(index["manifests"][0]["digest"])
		    path = lambda d: "blobs/sha256/" + d["digest"].split(":", 1)[1]
		    m = json.dumps([{"Config": path(man["config"]), "RepoTags": [name],
		                     "Layers": [path(l) for l in man["layers"]]}]).encode()
		    with tarfile.open(dst, "w") as o:
		        for member in t.getmembers():
		            o.addfile(member, t.extractfile(member) if member.isfile() else None)
		        info = tarfile.TarInfo("manifest.json")
		        info.size = len(m)
		        o.addfile(info, io.BytesIO(m))
		EOF
        done <"$K8S_DIR/images/list"
}

# /etc of a Docker node: docker.socket's group, docker.service and docker.socket enabled as the
# package's postinst does, runc-clamp as Docker's default runtime, and kubelet's CNI binaries where
# Debian's containernetworking-plugins puts them (dockershim looks in /opt/cni/bin).
node_docker_etc() {
        local name=$1 ip=$2 e=$3
        echo 'docker:x:102:' >>"$e/group"
        mkdir -p "$e/docker" "$e/systemd/system/sockets.target.wants"
        ln -s /usr/lib/systemd/system/docker.service "$e/systemd/system/multi-user.target.wants/"
        ln -s /usr/lib/systemd/system/docker.socket "$e/systemd/system/sockets.target.wants/"
        cat >"$e/docker/daemon.json" <<-'EOF'
	{
	  "runtimes": {"nr-runc-clamp": {"path": "/usr/libexec/nr-e2e-k8s/runc-clamp"}},
	  "default-runtime": "nr-runc-clamp",
	  "exec-opts": ["native.cgroupdriver=cgroupfs"]
	}
	EOF
        echo "KUBELET_EXTRA_ARGS=--node-ip=$ip --cni-bin-dir=/usr/lib/cni" >"$e/default/kubelet"
}

node_docker_load_images() {
        local name=$1 f
        for _ in $(seq 150); do
                node_exec "$name" docker version >/dev/null 2>&1 && break
                sleep 0.2
        done
        for f in "$W"/docker-images/*.tar; do
                node_exec "$name" docker load <"$f" >/dev/null || { node_log "$name: cannot load $f into Docker"; return 1; }
        done
}
