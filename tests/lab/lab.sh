# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# The fleet lab: N lightweight Kubernetes workers reached over SSH, for the fleet tests
# (tests/fleet/), the fleet bench (bench/fleet.sh) and anything else that drives many nodes the way
# an operator does. How to use it: tests/lab/README.md. In short, as root:
#
#   . tests/integration/lib.sh; in_private_ns "$@"     # private mount, network and UTS namespaces
#   . tests/lab/lab.sh
#   lab_init "$WORK/lab" || exit $?                    # 77 when a facility is missing (said why)
#   lab_up 100                                         # nodes n0001 .. n0100
#   lab_status_start                                   # LAB_STATUS_URL records every POST
#   lab_controller ansible-playbook -i "$LAB_INVENTORY" ...   # the controller: its own HOME, cgroup
#   lab_down
#
# Each node is a process tree in its own mount, UTS, network and PID namespaces (node-init.sh, then
# sshd as its PID 1), on a tmpfs root of its own with the host's /usr beneath a read-only overlay that
# adds Debian's openssh-server (the cached .debs, never installed here) and node-reset at
# /usr/sbin/node-reset (where the Debian package puts it). Its state: node-state.sh and
# lab_worker_files. The namespace that sources this file is the switch and the controller: it holds
# the bridges (lab0, lab1, ... LAB_PER_BRIDGE nodes each, a bridge takes at most 1,024 ports), their
# addresses (10.100.0.1/16, 10.101.0.1/16, ...), the status receiver, and the SSH client. Nothing is
# made outside the namespaces of the caller and the nodes but child cgroups, removed by lab_down:
# nr-lab-PID for CPU (cpuacct, else cgroup2) and memory accounting, and for systemd nodes the cgroup
# each one's manager takes as its root (nr-lab-PID-sd/NAME).
#
# LAB_NODE_KIND=systemd boots each node with systemd-nspawn instead (its own systemd, sshd as a unit:
# for tools that need a node's root and systemd, such as kubespray's reset); LAB_NODE_STATE=kubespray
# lays kubespray's worker. README.md says more.
#
# The interface, kept stable for its users:
#   lab_init DIR                  the layer, the template, the client key, the SSH and Ansible
#                                 configuration, the accounting cgroups
#   lab_up N                      nodes up to N (more bridges past LAB_PER_BRIDGE); adds to a running lab
#   lab_down                      every node, the receiver, what the controller left, by PID; the
#                                 bridges and cgroups by name
#   lab_name I                    the name of node I (1-based): n0001
#   LAB_NAMES (array), LAB_ADDR[NAME], LAB_PID[NAME] (the node's PID 1 as the lab sees it),
#   LAB_VETH[NAME] (its link on the switch), LAB_GATEWAY[NAME]
#   lab_restate [NAME...]         the worker's state again on nodes a reset cleaned (all by default)
#   lab_exec NAME CMD...          run CMD inside the node's namespaces (for assertions: no SSH)
#   lab_spawn NAME CMD...         CMD in the background as a process of the node: LAB_SPAWNED, its PID
#   lab_ssh NAME CMD...           run CMD over SSH, as a client of the node would
#   lab_inventory FILE [NAME...]  an Ansible inventory (kube_node, in k8s_cluster) of these nodes
#   lab_controller CMD...         run CMD as the controller: the lab's HOME, TMPDIR, ANSIBLE_CONFIG,
#                                 its PATH, in the controller's cgroup
#   lab_cpu ctl|nodes             CPU seconds used so far by the controller's or the nodes' processes
#   lab_controller_idle           end what the controller left running (ssh's ControlPersist masters)
#   lab_sessions                  SSH sessions every node's sshd has started so far
#   lab_status_start [PORT]       the status receiver (tests/integration/status-endpoint.py):
#                                 LAB_STATUS_URL (reachable from every node), LAB_STATUS_LOG (one
#                                 JSON line per POST or PUT)
#   lab_link_down NAME / lab_link_up NAME      cut a node's link (it does not answer) / mend it
#   lab_link_slow NAME [RATE] / lab_link_fast NAME   its link held to RATE both ways (htb, 128kbit)
# Files: LAB_DIR/lab.env (these variables, for another process), LAB_DIR/nodes.tsv (name, address,
# PID, switch link), LAB_SSH_CONFIG (ssh -F: every node by name), LAB_KNOWN_HOSTS, LAB_KEY,
# LAB_ANSIBLE_CFG, LAB_INVENTORY (every node), LAB_DIR/log/NAME.log (the node's start).

LAB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LAB_NODE_RESET=${LAB_NODE_RESET:-${NODE_RESET:-$LAB_TOP/build/node-reset}}
LAB_DEB_CACHE=${LAB_DEB_CACHE:-/var/cache/node-reset-tests}
LAB_PER_BRIDGE=${LAB_PER_BRIDGE:-1000}
LAB_PARALLEL=${LAB_PARALLEL:-8}
LAB_NODE_STATE=${LAB_NODE_STATE:-worker}
LAB_NODE_KIND=${LAB_NODE_KIND:-ns}
LAB_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
LAB_NAMES=()
declare -A LAB_ADDR LAB_PID LAB_VETH LAB_GATEWAY LAB_LAUNCHER
LAB_STATUS_PID=
LAB_CG=
LAB_CG_KIND=

lab_log() { echo "lab: $*" >&2; }

lab_name() { printf 'n%04d' "$1"; }
lab_index() { echo $((10#${1#n})); }
lab_bridge_of() { echo $((($(lab_index "$1") - 1) / LAB_PER_BRIDGE)); }
lab_bridge_mac() { printf '02:4c:41:42:%02x:%02x' $(($1 >> 8 & 255)) $(($1 & 255)); }
lab_mac() { # NAME: the node's eth0
        local i
        i=$(lab_index "$1")
        printf '02:4e:%02x:%02x:%02x:%02x' $((i >> 24 & 255)) $((i >> 16 & 255)) $((i >> 8 & 255)) $((i & 255))
}

# The namespaces of PID 1 are the machine's: the lab refuses to make anything there.
lab_refuse_host() {
        local what
        for what in net mnt; do
                if [ "$(readlink "/proc/self/ns/$what")" = "$(readlink "/proc/1/ns/$what" 2>/dev/null)" ]; then
                        lab_log "refusing to run in the machine's $what namespace (use lib.sh's in_private_ns)"
                        return 1
                fi
        done
}

lab_init() { # DIR
        local c
        LAB_DIR=$1
        lab_refuse_host || return 1
        [ "$(id -u)" -eq 0 ] || { echo "SKIP: the lab needs root"; return 77; }
        for c in unshare nsenter pivot_root ip tc ssh ssh-keygen dpkg-deb iptables-nft-restore ipset; do
                command -v "$c" >/dev/null 2>&1 || { echo "SKIP: '$c' is not installed (make deps)"; return 77; }
        done
        [ -x /usr/bin/python3 ] || { echo "SKIP: /usr/bin/python3 is not installed"; return 77; }
        [ -x "$LAB_NODE_RESET" ] || { lab_log "no node-reset at $LAB_NODE_RESET (make)"; return 1; }
        if [ "$LAB_NODE_KIND" = systemd ]; then
                for c in systemd-nspawn systemd-id128 dbus-daemon; do
                        command -v "$c" >/dev/null 2>&1 || { echo "SKIP: '$c' is not installed (make deps)"; return 77; }
                done
        fi
        mkdir -p "$LAB_DIR"/{layer,usr,mnt,tmpl,up,hostkeys,log,ssh,ctl/home,ctl/tmp,ctl/cp} || return 1
        LAB_SSH_CONFIG=$LAB_DIR/ssh/config LAB_KNOWN_HOSTS=$LAB_DIR/ssh/known_hosts LAB_KEY=$LAB_DIR/ssh/id_ed25519
        LAB_ANSIBLE_CFG=$LAB_DIR/ansible.cfg LAB_INVENTORY=$LAB_DIR/inventory.yml LAB_HOME=$LAB_DIR/ctl/home
        lab_layer || return $?
        lab_template || return 1
        lab_client_config || return 1
        lab_cgroups || return 1
        # The switch: no IPv6 (see node-init.sh), loopback up.
        echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6
        echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6
        ip link set lo up
        lab_log "initialised in $LAB_DIR (openssh-server $LAB_SSHD_VERSION, $LAB_NODE_RESET)"
}

# /usr for every node: Debian's openssh-server and the packages the host lacks, unpacked from the
# cache "make deps" fills (tools/install-deps.sh, openssh-server.debs), node-reset, and the lab's
# node scripts, laid over the host's /usr in one read-only overlay that each node binds.
lab_layer() {
        local l=$LAB_DIR/layer
        # shellcheck source=tests/integration/nspawn/tree.sh
        . "$LAB_TOP/tests/integration/nspawn/tree.sh"
        debs_listed "$LAB_DEB_CACHE" openssh-server.debs || { echo "SKIP: $DEBS_WHY (sudo make deps downloads them)"; return 77; }
        debs_unpack "$l" "${DEBS[@]}" >&2 || return 1
        LAB_SSHD_VERSION=$(dpkg-deb -f "${DEBS[0]}" Version)
        mkdir -p "$l/usr/sbin" "$l/usr/libexec/nr-lab" || return 1
        install -m 0755 "$LAB_NODE_RESET" "$l/usr/sbin/node-reset" || return 1
        # kubeadm join's preflight requires crictl in PATH (cri-tools' /usr/bin/crictl on a kubeadm
        # node), and node-reset's rejoin verdict fails a node whose own preparation lacks it: a
        # stand-in, as kubeadm's and kubectl's are (no runtime runs here, nothing calls it).
        mkdir -p "$l/usr/bin" && printf '\177ELF' >"$l/usr/bin/crictl" && chmod 0755 "$l/usr/bin/crictl" || return 1
        cp "$LAB_TOP/tests/lab/node-state.sh" "$LAB_TOP/tests/lab/node-boot.sh" "$l/usr/libexec/nr-lab/" || return 1
        # The worker's rules and sets, made once: the firewall fixture's, 10 services of 2 endpoints.
        (
                # shellcheck source=tests/integration/fixtures/firewall.sh
                . "$LAB_TOP/tests/integration/fixtures/firewall.sh"
                fw_restore_text 4 10 2 2 >"$l/usr/libexec/nr-lab/rules.v4" &&
                        unshare -n bash -c ". '$LAB_TOP/tests/integration/fixtures/firewall.sh'; fw_load_ipsets >&2 && ipset save" \
                                >"$l/usr/libexec/nr-lab/ipsets"
        ) || { lab_log "cannot make the worker's firewall state"; return 1; }
        mount -t overlay nr-lab-usr -o "ro,lowerdir=$l/usr:/usr" "$LAB_DIR/usr" ||
                { lab_log "cannot mount the nodes' /usr overlay"; return 1; }
}

# The root every node starts from (copied into its tmpfs): a minimal Debian /etc with sshd's
# configuration, root's own home (Debian's skeleton start-up files: the host's root's are not the
# node's), and a kubeadm worker's files (lab_worker_files).
lab_template() {
        local t=$LAB_DIR/tmpl d
        mkdir -p "$t"/{usr,proc,sys,dev,run,etc/ssh,var/log,var/lib,var/tmp,var/cache,mnt,opt,home,srv} || return 1
        mkdir -m 0700 "$t/root" "$t/root/.ssh" && mkdir -m 1777 "$t/tmp" && chmod 1777 "$t/var/tmp" || return 1
        ln -s /run "$t/var/run"
        for d in bin sbin lib lib32 lib64 libx32; do
                [ -L "/$d" ] && ln -s "$(readlink "/$d")" "$t/$d"
        done
        ln -s ../usr/lib/os-release "$t/etc/os-release"
        printf 'root:x:0:0:root:/root:/bin/bash\nsshd:x:102:65534::/run/sshd:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$t/etc/passwd"
        printf 'root:x:0:\nnogroup:x:65534:\n' >"$t/etc/group"
        printf 'root:*:19000:0:99999:7:::\nsshd:*:19000:0:99999:7:::\n' >"$t/etc/shadow"
        printf 'root:*::\n' >"$t/etc/gshadow"
        chmod 0640 "$t/etc/shadow" "$t/etc/gshadow"
        printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files\n' >"$t/etc/nsswitch.conf"
        # a node has a resolver (kubeadm warns without one, kubespray refuses); nothing answers there
        echo "nameserver 10.100.0.1" >"$t/etc/resolv.conf"
        cp -a /etc/ld.so.cache /etc/ld.so.conf /etc/ld.so.conf.d /etc/alternatives /etc/protocols /etc/services "$t/etc/" || return 1
        ln -s /usr/share/zoneinfo/Etc/UTC "$t/etc/localtime"
        cp -a /etc/skel/. "$t/root/" || return 1
        cat >"$t/etc/ssh/sshd_config" <<-'EOF'
	# The lab node's sshd (tests/lab/lab.sh): root by the lab's key only, no PAM (the tree has none),
	# many sessions at once (the controller runs up to forks at a time against one address); each
	# session logged (VERBOSE: "Starting session"), which lab_sessions counts.
	AddressFamily inet
	LogLevel VERBOSE
	HostKey /etc/ssh/ssh_host_ed25519_key
	PermitRootLogin prohibit-password
	AuthorizedKeysFile .ssh/authorized_keys
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	UsePAM no
	UseDNS no
	PrintMotd no
	PrintLastLog no
	MaxStartups 200:30:400
	Subsystem sftp /usr/lib/openssh/sftp-server
	EOF
        case "$LAB_NODE_STATE" in
        worker) lab_worker_files "$t" || return 1 ;;
        kubespray) lab_worker_files "$t" && lab_kubespray_files "$t" || return 1 ;;
        esac
        [ "$LAB_NODE_KIND" != systemd ] || lab_systemd_template "$t"
}

# A kubeadm worker's files with calico as its CNI, as they are after "kubeadm join" (the kernel's and
# mounts' part is node-state.sh's), and what must survive a reset: root's start-up files, the
# operator's data in /var/lib/site, the persistent volume's disk (/mnt/disks, mounted by node-state.sh).
lab_worker_files() { # TREE
        local t=$1 b
        mkdir -p "$t"/etc/kubernetes/{manifests,pki} "$t"/var/lib/kubelet/{pki,device-plugins} \
                "$t"/etc/systemd/system/kubelet.service.d "$t"/etc/cni/net.d "$t"/opt/cni/bin \
                "$t"/var/lib/calico "$t"/var/lib/cni/networks/k8s-pod-network \
                "$t"/var/log/pods/kube-system_calico-node-7xkqz_1b2c3d4e-aaaa-4bbb-8ccc-0123456789ab/calico-node \
                "$t"/var/log/containers "$t"/var/lib/site || return 1
        cat >"$t/etc/kubernetes/kubelet.conf" <<-'EOF'
	apiVersion: v1
	kind: Config
	clusters:
	- cluster:
	    certificate-authority: /etc/kubernetes/pki/ca.crt
	    server: https://10.100.0.1:6443
	  name: default-cluster
	contexts:
	- context:
	    cluster: default-cluster
	    namespace: default
	    user: default-auth
	  name: default-context
	current-context: default-context
	users:
	- name: default-auth
	  user:
	    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem
	    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem
	EOF
        echo "CERT" >"$t/etc/kubernetes/pki/ca.crt"
        echo "CERT KEY" >"$t/var/lib/kubelet/pki/kubelet-client-current.pem"
        printf 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n' \
                >"$t/var/lib/kubelet/config.yaml"
        echo 'KUBELET_KUBEADM_ARGS="--container-runtime=remote --container-runtime-endpoint=unix:///run/containerd/containerd.sock"' \
                >"$t/var/lib/kubelet/kubeadm-flags.env"
        printf '[Service]\nEnvironment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"\n' \
                >"$t/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"
        cat >"$t/etc/cni/net.d/10-calico.conflist" <<-'EOF'
	{
	  "name": "k8s-pod-network",
	  "cniVersion": "0.3.1",
	  "plugins": [
	    {"type": "calico", "datastore_type": "kubernetes", "nodename": "__KUBERNETES_NODE_NAME__",
	     "ipam": {"type": "calico-ipam"}, "policy": {"type": "k8s"},
	     "kubernetes": {"kubeconfig": "/etc/cni/net.d/calico-kubeconfig"}},
	    {"type": "portmap", "snat": true, "capabilities": {"portMappings": true}},
	    {"type": "bandwidth", "capabilities": {"bandwidth": true}}
	  ]
	}
	EOF
        echo "apiVersion: v1" >"$t/etc/cni/net.d/calico-kubeconfig"
        for b in calico calico-ipam bandwidth portmap host-local loopback; do printf '\177ELF' >"$t/opt/cni/bin/$b"; done
        echo 1450 >"$t/var/lib/calico/mtu"
        echo 0 >"$t/var/log/pods/kube-system_calico-node-7xkqz_1b2c3d4e-aaaa-4bbb-8ccc-0123456789ab/calico-node/0.log"
        ln -s /var/log/pods/kube-system_calico-node-7xkqz_1b2c3d4e-aaaa-4bbb-8ccc-0123456789ab/calico-node/0.log \
                "$t/var/log/containers/calico-node-7xkqz_kube-system_calico-node-0123.log"
        echo "the operator's data, must survive" >"$t/var/lib/site/keep.txt"
}

# The same worker as kubespray v2.23 leaves it (roles/kubernetes/node, roles/network_plugin/calico):
# kubelet's environment and configuration in /etc/kubernetes, its certificates in ssl/, its unit in
# /etc/systemd/system (a stand-in that sleeps, run by systemd on a systemd node), the binaries in
# /usr/local/bin, calico's
# client configuration, crictl's, kubespray's sysctl and module files. No crictl binary of its own
# (the layer's stand-in is in /usr/bin): no runtime runs here, and neither reset is asked to talk to one.
lab_kubespray_files() { # TREE
        local t=$1 b
        mkdir -p "$t"/etc/kubernetes/ssl "$t"/etc/calico "$t"/etc/modules-load.d "$t"/etc/sysctl.d \
                "$t"/usr/local/bin "$t"/etc/systemd/system/multi-user.target.wants || return 1
        rm -f "$t/etc/systemd/system/kubelet.service.d/10-kubeadm.conf" "$t/var/lib/kubelet/kubeadm-flags.env"
        rmdir "$t/etc/systemd/system/kubelet.service.d" 2>/dev/null
        mv "$t/etc/kubernetes/pki/ca.crt" "$t/etc/kubernetes/ssl/ca.crt" && rmdir "$t/etc/kubernetes/pki"
        sed -i 's|/etc/kubernetes/pki/ca.crt|/etc/kubernetes/ssl/ca.crt|' "$t/etc/kubernetes/kubelet.conf"
        printf 'KUBE_LOGTOSTDERR="--logtostderr=true"\nKUBELET_ARGS="--config=/etc/kubernetes/kubelet-config.yaml --kubeconfig=/etc/kubernetes/kubelet.conf --container-runtime-endpoint=unix:///var/run/containerd/containerd.sock"\n' \
                >"$t/etc/kubernetes/kubelet.env"
        printf 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n' \
                >"$t/etc/kubernetes/kubelet-config.yaml"
        cat >"$t/etc/systemd/system/kubelet.service" <<-'EOF'
	[Unit]
	Description=Kubernetes Kubelet Server (the lab's stand-in: it sleeps)
	[Service]
	EnvironmentFile=-/etc/kubernetes/kubelet.env
	ExecStart=/usr/local/bin/kubelet
	Restart=always
	[Install]
	WantedBy=multi-user.target
	EOF
        ln -sf /etc/systemd/system/kubelet.service "$t/etc/systemd/system/multi-user.target.wants/kubelet.service"
        printf '#!/bin/sh\nexec sleep infinity\n' >"$t/usr/local/bin/kubelet"
        for b in kubeadm kubectl calicoctl.sh; do printf '\177ELF' >"$t/usr/local/bin/$b"; done
        chmod 0755 "$t"/usr/local/bin/*
        echo "apiVersion: projectcalico.org/v3" >"$t/etc/calico/calicoctl.cfg"
        echo "runtime-endpoint: unix:///var/run/containerd/containerd.sock" >"$t/etc/crictl.yaml"
        echo br_netfilter >"$t/etc/modules-load.d/kubespray-br_netfilter.conf"
        echo "net.ipv4.ip_forward=1" >"$t/etc/sysctl.d/99-sysctl.conf"
}

# What a booted node needs beyond the namespace node's tree: its own os-release (nspawn looks for
# one before /usr is bound), the host's package database (a Debian system has one; kubespray asks
# apt whether dbus is installed), units a container does not want masked, sshd and the lab's first
# unit enabled, the lab's bridge directory for the line it waits for.
lab_systemd_template() { # TREE
        local t=$1 u
        rm -f "$t/etc/os-release" && cp /usr/lib/os-release "$t/etc/os-release" || return 1
        mkdir -p "$t/etc/systemd/system/multi-user.target.wants" "$t/etc/nr-lab" "$t/var/lib/dpkg" "$t/etc/default" \
                "$t/etc/dbus-1/system.d" "$t/run/nr-lab-up" || return 1
        cp /var/lib/dpkg/status "$t/var/lib/dpkg/status" || return 1
        printf 'root:x:0:0:root:/root:/bin/bash\nmessagebus:x:100:101::/nonexistent:/usr/sbin/nologin\nsshd:x:102:65534::/run/sshd:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' \
                >"$t/etc/passwd"
        printf 'root:x:0:\nmessagebus:x:101:\nsystemd-journal:x:102:\nnogroup:x:65534:\n' >"$t/etc/group"
        for u in console-getty.service getty@.service getty-static.service systemd-firstboot.service \
                systemd-networkd.service systemd-resolved.service systemd-timesyncd.service systemd-logind.service \
                apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer dpkg-db-backup.timer \
                man-db.timer logrotate.timer; do
                ln -sf /dev/null "$t/etc/systemd/system/$u"
        done
        ln -sf /usr/lib/systemd/system/ssh.service "$t/etc/systemd/system/multi-user.target.wants/ssh.service"
        echo 'SSHD_OPTS="-E /var/log/sshd.log"' >"$t/etc/default/ssh"
        cat >"$t/etc/systemd/system/nr-lab-node.service" <<-'EOF'
	[Unit]
	Description=The lab node's link and state (tests/lab/node-boot.sh)
	After=local-fs.target
	Before=ssh.service network.target kubelet.service
	[Service]
	Type=oneshot
	RemainAfterExit=yes
	ExecStart=/bin/sh /usr/libexec/nr-lab/node-boot.sh
	[Install]
	WantedBy=multi-user.target
	EOF
        ln -sf /etc/systemd/system/nr-lab-node.service "$t/etc/systemd/system/multi-user.target.wants/"
}

# The controller's side: one key, the nodes' host keys checked strictly, a configuration of its own
# (ssh -F reads neither ~/.ssh/config nor /etc/ssh/ssh_config), and Ansible's.
lab_client_config() {
        ssh-keygen -q -t ed25519 -N '' -C "nr-lab-controller-$$" -f "$LAB_KEY" || return 1
        install -m 0600 "$LAB_KEY.pub" "$LAB_DIR/tmpl/root/.ssh/authorized_keys" || return 1
        : >"$LAB_KNOWN_HOSTS"
        cat >"$LAB_DIR/ssh/config.head" <<-EOF
	Host *
	  User root
	  IdentityFile $LAB_KEY
	  IdentitiesOnly yes
	  UserKnownHostsFile $LAB_KNOWN_HOSTS
	  GlobalKnownHostsFile /dev/null
	  StrictHostKeyChecking yes
	  BatchMode yes
	  ConnectTimeout 10
	  LogLevel ERROR
	EOF
        cp "$LAB_DIR/ssh/config.head" "$LAB_SSH_CONFIG"
        # Ansible as shipped (ControlMaster auto, ControlPersist 60s), pipelining on, as fleets run it,
        # with the keepalive examples/ansible/README.md asks of a fleet's ansible.cfg: a master that a
        # check run left open to a node whose link then dies would otherwise wait out TCP's
        # retransmissions (~15 min) before Ansible may call that node unreachable.
        cat >"$LAB_ANSIBLE_CFG" <<-EOF
	[defaults]
	inventory = $LAB_INVENTORY
	retry_files_enabled = False
	interpreter_python = /usr/bin/python3
	host_key_checking = True
	gathering = explicit
	timeout = 10
	forks = 20
	[ssh_connection]
	pipelining = True
	ssh_args = -F $LAB_SSH_CONFIG -o ControlMaster=auto -o ControlPersist=60s -o ServerAliveInterval=5 -o ServerAliveCountMax=3
	control_path_dir = $LAB_DIR/ctl/cp
	EOF
}

# CPU accounting: nr-lab-PID/ctl (the controller) and nr-lab-PID/nodes (every node's processes) in
# the cpuacct hierarchy, else in cgroup2 (cpu.stat's usage_usec needs no controller). Without either
# the lab runs, and lab_cpu says it cannot count.
lab_cgroups() {
        local base
        if [ -e /sys/fs/cgroup/cpuacct/cpuacct.usage ]; then
                base=/sys/fs/cgroup/cpuacct LAB_CG_KIND=v1
        else
                base=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo) LAB_CG_KIND=v2
        fi
        [ -n "$base" ] && [ -d "$base" ] || { lab_log "no cpuacct or cgroup2 hierarchy: no CPU accounting"; return 0; }
        LAB_CG=$base/nr-lab-$$
        mkdir -p "$LAB_CG/ctl" "$LAB_CG/nodes" || { LAB_CG=; lab_log "cannot make $base/nr-lab-$$: no CPU accounting"; }
        # The nodes' memory (their processes, tmpfs pages and kernel objects) where cgroup v1 counts it.
        LAB_MEM_CG=
        if [ -e /sys/fs/cgroup/memory/memory.usage_in_bytes ] && mkdir -p "/sys/fs/cgroup/memory/nr-lab-$$"; then
                LAB_MEM_CG=/sys/fs/cgroup/memory/nr-lab-$$
        fi
        return 0
}

# KiB of memory the nodes hold (the memory cgroup), else the machine's MemAvailable going down.
lab_memory_kb() {
        if [ -n "${LAB_MEM_CG:-}" ]; then
                echo $(($(cat "$LAB_MEM_CG/memory.usage_in_bytes") / 1024))
        else
                awk '$1 == "MemAvailable:" { print -$2 }' /proc/meminfo
        fi
}

lab_cpu() { # ctl|nodes: CPU seconds, 3 decimals
        local u
        [ -n "$LAB_CG" ] || { echo "n/a"; return 1; }
        if [ "$LAB_CG_KIND" = v1 ]; then
                u=$(cat "$LAB_CG/$1/cpuacct.usage")
                awk -v u="$u" 'BEGIN { printf "%.3f\n", u / 1e9 }'
        else
                awk '$1 == "usage_usec" { printf "%.3f\n", $2 / 1e6 }' "$LAB_CG/$1/cpu.stat"
        fi
}

# SSH sessions (channels running a command or a shell) every node's sshd has started so far.
lab_sessions() {
        local n files=()
        for n in "${LAB_NAMES[@]}"; do files+=("/proc/${LAB_PID[$n]}/root/var/log/sshd.log"); done
        awk '/Starting session:/ { s++ } END { print s + 0 }' "${files[@]}" 2>/dev/null
}

lab_cgroup_enter() { # ctl|nodes: move the calling (sub)shell there
        [ -z "$LAB_CG" ] || echo "$BASHPID" >"$LAB_CG/$1/cgroup.procs"
        [ "$1" != nodes ] || [ -z "${LAB_MEM_CG:-}" ] || echo "$BASHPID" >"$LAB_MEM_CG/cgroup.procs"
}

lab_controller() { # CMD...
        (
                lab_cgroup_enter ctl
                export HOME=$LAB_HOME TMPDIR=$LAB_DIR/ctl/tmp PATH=$LAB_PATH ANSIBLE_CONFIG=$LAB_ANSIBLE_CFG \
                        ANSIBLE_LOCAL_TEMP=$LAB_DIR/ctl/tmp ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0
                exec "$@"
        )
}

# What the controller left running (ssh's ControlPersist masters), by PID: the next measurement
# starts from no connection, as a fresh controller does.
lab_controller_idle() {
        local p
        [ -n "$LAB_CG" ] || return 0
        for p in $(cat "$LAB_CG/ctl/cgroup.procs" 2>/dev/null); do kill "$p" 2>/dev/null; done
        for _ in $(seq 50); do [ -s "$LAB_CG/ctl/cgroup.procs" ] || break; sleep 0.1; done
}

# Node I's addresses: bridge b = (I-1) / LAB_PER_BRIDGE is lab<b> with 10.(100+b).0.1/16; the node
# is the j-th address after it.
lab_bridge_up() { # B
        local b=$1
        ip link show "lab$b" >/dev/null 2>&1 && return 0
        ip link add "lab$b" address "$(lab_bridge_mac "$b")" type bridge mcast_snooping 0 &&
                ip addr add "10.$((100 + b)).0.1/16" dev "lab$b" && ip link set "lab$b" up
}

lab_start_node() { # I
        local i=$1 n b j addr gw
        n=$(lab_name "$i")
        b=$(lab_bridge_of "$n") j=$(((i - 1) % LAB_PER_BRIDGE + 2))
        addr=10.$((100 + b)).$((j / 256)).$((j % 256)) gw=10.$((100 + b)).0.1
        lab_bridge_up "$b" || { lab_log "cannot make bridge lab$b"; return 1; }
        LAB_ADDR[$n]=$addr LAB_GATEWAY[$n]=$gw
        LAB_NAMES+=("$n")
        rm -f "$LAB_DIR/up/$n"
        if [ "$LAB_NODE_KIND" = systemd ]; then
                lab_start_systemd "$n" "$b" "$addr" "$gw"
                return
        fi
        LAB_VETH[$n]=ve$n
        (
                lab_cgroup_enter nodes
                exec env -i PATH=$LAB_PATH LAB_DIR="$LAB_DIR" LAB_NS_PID=$$ LAB_NODE_STATE="$LAB_NODE_STATE" \
                        unshare --mount --uts --net --pid --fork --propagation private -- \
                        /bin/sh "$LAB_TOP/tests/lab/node-init.sh" "$n" "$addr/16" "$gw" "$(lab_mac "$n")" \
                        "$(lab_bridge_mac "$b")" "ve$n"
        ) </dev/null >"$LAB_DIR/log/$n.log" 2>&1 &
        LAB_LAUNCHER[$n]=$!
}

# A systemd node: its own tree (the template, its identity, its host key) booted by systemd-nspawn
# with the lab's /usr bound read-only, a /usr/local of its own, a veth on the lab's bridge, from a
# cgroup of its own in the hierarchies systemd needs (nr-lab-PID-sd/NAME, its manager's root).
lab_start_systemd() { # NAME BRIDGE ADDR GW
        local n=$1 b=$2 addr=$3 gw=$4 d=$LAB_DIR/nodes/$1 h
        mkdir -p "$d/root" "$d/usr-local" && cp -a "$LAB_DIR/tmpl/." "$d/root/" || return 1
        [ -d "$d/root/usr/local" ] && cp -a "$d/root/usr/local/." "$d/usr-local/"
        echo "$n" >"$d/root/etc/hostname"
        printf '127.0.0.1\tlocalhost\n%s\t%s\n' "$addr" "$n" >"$d/root/etc/hosts"
        systemd-id128 new >"$d/root/etc/machine-id"
        printf 'LAB_ADDR=%s/16\nLAB_GW=%s\nLAB_MAC=%s\nLAB_GWMAC=%s\nLAB_NODE_STATE=%s\n' "$addr" "$gw" \
                "$(lab_mac "$n")" "$(lab_bridge_mac "$b")" "$LAB_NODE_STATE" >"$d/root/etc/nr-lab/node.env"
        ssh-keygen -q -t ed25519 -N '' -C "root@$n" -f "$d/root/etc/ssh/ssh_host_ed25519_key" || return 1
        echo "$addr $(cut -d' ' -f1,2 "$d/root/etc/ssh/ssh_host_ed25519_key.pub")" >"$LAB_DIR/hostkeys/$n"
        for h in $(lab_systemd_hierarchies); do mkdir -p "$h/nr-lab-$$-sd/$n" || return 1; done
        LAB_VETH[$n]=vb-$n
        (
                lab_cgroup_enter nodes
                for h in $(lab_systemd_hierarchies); do echo "$BASHPID" >"$h/nr-lab-$$-sd/$n/cgroup.procs" || exit 1; done
                SYSTEMD_SECCOMP=0 exec systemd-nspawn --quiet --boot --register=no --keep-unit --capability=all \
                        --console=passive --machine="$n" --directory="$d/root" --bind-ro="$LAB_DIR/usr:/usr" \
                        --bind="$d/usr-local:/usr/local" --bind="$LAB_DIR/up:/run/nr-lab-up" --network-bridge="lab$b"
        ) </dev/null >"$LAB_DIR/log/$n.log" 2>&1 &
        LAB_LAUNCHER[$n]=$!
}

# The hierarchies a booted node's systemd needs a cgroup of its own in.
lab_systemd_hierarchies() {
        awk '($9 == "cgroup" && $5 ~ /\/systemd$/) || $9 == "cgroup2" { print $5 }' /proc/self/mountinfo | sort -u
}

# Wait until each node of a wave says it is up (its PID 1), then plug their links into the switch:
# every veth into its bridge, and a permanent neighbour entry for each node.
lab_wave_wait() { # NAME...
        local n pid t0=$SECONDS batch=$LAB_DIR/switch.batch
        : >"$batch"
        for n; do
                until [ -s "$LAB_DIR/up/$n" ]; do
                        if ! kill -0 "${LAB_LAUNCHER[$n]}" 2>/dev/null || [ $((SECONDS - t0)) -gt 120 ]; then
                                lab_log "node $n did not start; its log:"
                                tail -n 20 "$LAB_DIR/log/$n.log" >&2
                                return 1
                        fi
                        sleep 0.05
                done
                read -r pid <"$LAB_DIR/up/$n"
                # a systemd node's PID 1 is nspawn's child
                [ "$pid" != ready ] || read -r pid _ <"/proc/${LAB_LAUNCHER[$n]}/task/${LAB_LAUNCHER[$n]}/children"
                LAB_PID[$n]=$pid
                echo "link set ${LAB_VETH[$n]} master lab$(lab_bridge_of "$n") up" >>"$batch"
                echo "neigh replace ${LAB_ADDR[$n]} lladdr $(lab_mac "$n") dev lab$(lab_bridge_of "$n") nud permanent" >>"$batch"
        done
        ip -batch "$batch"
}


# sshd answers with its banner: the node is up for a client.
lab_banner() { # NAME
        local line fd t0=$SECONDS
        while [ $((SECONDS - t0)) -lt 30 ]; do
                # (braces: a bare "exec ... 2>/dev/null" would silence this shell's stderr for good)
                if { exec {fd}<>"/dev/tcp/${LAB_ADDR[$1]}/22"; } 2>/dev/null; then
                        IFS= read -r -t 10 line <&"$fd"
                        exec {fd}>&-
                        [[ "$line" == SSH-2.0-* ]] && return 0
                fi
                sleep 0.1
        done
        lab_log "node $1: sshd does not answer on ${LAB_ADDR[$1]}:22"
        return 1
}

lab_up() { # N
        local want=$1 i n wave=() t0=$SECONDS mem0 mem1 have=${#LAB_NAMES[@]}
        # after lab_down, the same lab comes up again: its accounting first
        [ -n "$LAB_CG" ] || lab_cgroups || return 1
        mem0=$(lab_memory_kb)
        for ((i = have + 1; i <= want; i++)); do
                lab_start_node "$i" || return 1
                wave+=("$(lab_name "$i")")
                if [ ${#wave[@]} -ge "$LAB_PARALLEL" ] || [ "$i" -eq "$want" ]; then
                        lab_wave_wait "${wave[@]}" || return 1
                        wave=()
                fi
        done
        for n in "${LAB_NAMES[@]:$have}"; do lab_banner "$n" || return 1; done
        lab_files
        mem1=$(lab_memory_kb)
        LAB_UP_SECONDS=$((SECONDS - t0))
        LAB_UP_KB_PER_NODE=$(((mem1 - mem0) / (want - have > 0 ? want - have : 1)))
        lab_log "$want nodes up ($((want - have)) started in ${LAB_UP_SECONDS} s, $((LAB_UP_KB_PER_NODE)) KiB of memory each)"
}

# known_hosts, the SSH configuration with every node by name, the inventory, nodes.tsv and lab.env.
lab_files() {
        local n
        cat "$LAB_DIR"/hostkeys/* >"$LAB_KNOWN_HOSTS"
        {
                cat "$LAB_DIR/ssh/config.head"
                for n in "${LAB_NAMES[@]}"; do printf 'Host %s\n  HostName %s\n' "$n" "${LAB_ADDR[$n]}"; done
        } >"$LAB_SSH_CONFIG"
        for n in "${LAB_NAMES[@]}"; do
                printf '%s\t%s\t%s\t%s\n' "$n" "${LAB_ADDR[$n]}" "${LAB_PID[$n]}" "${LAB_VETH[$n]}"
        done >"$LAB_DIR/nodes.tsv"
        lab_inventory "$LAB_INVENTORY"
        {
                printf 'LAB_DIR=%q\nLAB_SSH_CONFIG=%q\nLAB_KNOWN_HOSTS=%q\nLAB_KEY=%q\n' \
                        "$LAB_DIR" "$LAB_SSH_CONFIG" "$LAB_KNOWN_HOSTS" "$LAB_KEY"
                printf 'LAB_ANSIBLE_CFG=%q\nLAB_INVENTORY=%q\nLAB_HOME=%q\nLAB_STATUS_URL=%q\nLAB_STATUS_LOG=%q\n' \
                        "$LAB_ANSIBLE_CFG" "$LAB_INVENTORY" "$LAB_HOME" "${LAB_STATUS_URL:-}" "${LAB_STATUS_LOG:-}"
                printf 'LAB_NODES=%q\nLAB_NS_PID=%q\nLAB_CG=%q\nLAB_CG_KIND=%q\n' "${#LAB_NAMES[@]}" "$$" "$LAB_CG" "$LAB_CG_KIND"
                printf 'LAB_STATUS_PID=%q\nLAB_MEM_CG=%q\n' "$LAB_STATUS_PID" "${LAB_MEM_CG:-}"
        } >"$LAB_DIR/lab.env"
}

# Another shell in the lab's namespaces (nsenter -t LAB_NS_PID -m -n -u, or a child of the lab's
# shell) takes up a running lab from its files.
lab_attach() { # DIR
        local n a p v
        LAB_DIR=$1
        # shellcheck source=/dev/null
        . "$LAB_DIR/lab.env" || return 1
        LAB_NAMES=()
        while IFS=$'\t' read -r n a p v; do
                LAB_NAMES+=("$n") LAB_ADDR[$n]=$a LAB_PID[$n]=$p LAB_VETH[$n]=$v
                LAB_GATEWAY[$n]=10.$((100 + $(lab_bridge_of "$n"))).0.1
        done <"$LAB_DIR/nodes.tsv"
}

lab_inventory() { # FILE [NAME...]
        local f=$1 n
        shift
        [ $# -gt 0 ] || set -- "${LAB_NAMES[@]}"
        {
                echo "all:"
                # root over SSH already: a play's "become: true" would ask for a sudo the node lacks
                echo "  vars: {ansible_user: root, ansible_become: false}"
                echo "  children:"
                echo "    k8s_cluster:"
                echo "      children:"
                echo "        kube_control_plane: {hosts: {}}"
                echo "        kube_node:"
                echo "          hosts:"
                for n; do echo "            $n: {ansible_host: ${LAB_ADDR[$n]}}"; done
        } >"$f"
}

# The worker's state again on nodes a reset cleaned (or any): its files from the template, then
# node-state.sh (mounts, namespaces, links, routes, rules), in each node's namespaces, LAB_PARALLEL at
# a time: what a fresh lab_up gives, without restarting the nodes.
lab_restate() { # [NAME...]
        local n pids=() rc=0 p
        [ $# -gt 0 ] || set -- "${LAB_NAMES[@]}"
        for n; do
                (tar -C "$LAB_DIR/tmpl" -c etc var opt $([ -d "$LAB_DIR/tmpl/usr/local" ] && echo usr/local) | lab_exec "$n" sh -c \
                        'tar -x -C / && LAB_NODE_STATE='"$LAB_NODE_STATE"' . /usr/libexec/nr-lab/node-state.sh') \
                        >>"$LAB_DIR/log/$n.log" 2>&1 &
                pids+=($!)
                if [ ${#pids[@]} -ge "$LAB_PARALLEL" ]; then
                        for p in "${pids[@]}"; do wait "$p" || rc=1; done
                        pids=()
                fi
        done
        for p in "${pids[@]}"; do wait "$p" || rc=1; done
        [ $rc -eq 0 ] || lab_log "a node's state could not be made again (LAB_DIR/log/NAME.log)"
        return $rc
}

# CMD in the background inside the node's namespaces (a process of the node, in its PID namespace):
# LAB_SPAWNED is its PID as the lab sees it, to kill it by.
lab_spawn() { # NAME CMD...
        local n=$1 nsenter_pid
        shift
        nsenter -t "${LAB_PID[$n]}" -m -u -n -p -- env -i PATH=$LAB_PATH HOME=/root "$@" </dev/null >/dev/null 2>&1 &
        nsenter_pid=$!
        LAB_SPAWNED=
        for _ in $(seq 100); do
                read -r LAB_SPAWNED _ <"/proc/$nsenter_pid/task/$nsenter_pid/children" 2>/dev/null
                [ -n "$LAB_SPAWNED" ] && return 0
                sleep 0.05
        done
        lab_log "cannot start $* in $n"
        return 1
}

lab_exec() { # NAME CMD...
        local n=$1
        shift
        nsenter -t "${LAB_PID[$n]}" -m -u -n -p -- env -i PATH=$LAB_PATH HOME=/root "$@"
}

lab_ssh() { # NAME CMD...
        local n=$1
        shift
        ssh -F "$LAB_SSH_CONFIG" "$n" -- "$@"
}

lab_status_start() { # [PORT]
        local port=${1:-8090}
        LAB_STATUS_LOG=$LAB_DIR/status.jsonl LAB_STATUS_URL=http://10.100.0.1:$port/status
        : >"$LAB_STATUS_LOG"
        rm -f "$LAB_DIR/status.ready"
        /usr/bin/python3 "$LAB_TOP/tests/integration/status-endpoint.py" "$LAB_STATUS_LOG" 0.0.0.0 "$port" \
                "$LAB_DIR/status.ready" >"$LAB_DIR/log/status.log" 2>&1 &
        LAB_STATUS_PID=$!
        for _ in $(seq 100); do [ -e "$LAB_DIR/status.ready" ] && break; sleep 0.05; done
        [ -e "$LAB_DIR/status.ready" ] || { lab_log "the status receiver did not start"; cat "$LAB_DIR/log/status.log" >&2; return 1; }
        lab_files
}

lab_link_down() { ip link set "${LAB_VETH[$1]}" down; }
lab_link_up() { ip link set "${LAB_VETH[$1]}" up; }
# A slow link: htb, not tbf, whose bucket drops the 64 KiB segments a veth hands it (GSO) and so
# stalls TCP for minutes; htb lets such a segment through and then holds the link to the rate.
lab_link_slow() { # NAME [RATE]
        local rate=${2:-128kbit} n=$1
        lab_shape "${LAB_VETH[$n]}" "$rate" && lab_exec "$n" sh -c "$(declare -f lab_shape); lab_shape eth0 $rate"
}
lab_shape() { # DEV RATE
        tc qdisc replace dev "$1" root handle 1: htb default 1 &&
                tc class replace dev "$1" parent 1: classid 1:1 htb rate "$2" ceil "$2"
}
lab_link_fast() { # NAME
        tc qdisc del dev "${LAB_VETH[$1]}" root 2>/dev/null
        lab_exec "$1" tc qdisc del dev eth0 root 2>/dev/null
        return 0
}

# Everything the lab started, by PID: each node's PID 1 (its PID namespace ends with it), the
# launchers, the receiver, what the controller left (ssh's ControlPersist masters); then the
# bridges and the cgroups by name.
lab_down() {
        local n p b
        [ -n "${LAB_DIR:-}" ] || return 0
        [ -n "$LAB_STATUS_PID" ] && kill "$LAB_STATUS_PID" 2>/dev/null
        for n in "${LAB_NAMES[@]}"; do
                [ -n "${LAB_PID[$n]:-}" ] && kill -KILL "${LAB_PID[$n]}" 2>/dev/null
        done
        for n in "${LAB_NAMES[@]}"; do
                [ -n "${LAB_LAUNCHER[$n]:-}" ] && { kill -KILL "${LAB_LAUNCHER[$n]}" 2>/dev/null; wait "${LAB_LAUNCHER[$n]}" 2>/dev/null; }
        done
        [ -n "$LAB_STATUS_PID" ] && wait "$LAB_STATUS_PID" 2>/dev/null
        if [ -n "$LAB_CG" ]; then
                for p in $(cat "$LAB_CG/ctl/cgroup.procs" "$LAB_CG/nodes/cgroup.procs" 2>/dev/null); do
                        # not the shell that calls (a command tests/lab/run.sh runs is in ctl)
                        [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] || kill -KILL "$p" 2>/dev/null
                done
        fi
        # The kernel dismantles a dead node's namespace later: its switch link goes with it. A lab_up
        # after this one would find the old names taken until then.
        for _ in $(seq 600); do
                ip -o link show 2>/dev/null | grep -Eq ': (ven|vb-n)[0-9]*@' || break
                sleep 0.1
        done
        for b in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '$2 ~ /^lab[0-9]+$/ { print $2 }'); do
                ip link del "$b"
        done
        if [ -n "$LAB_CG" ]; then
                for _ in $(seq 50); do
                        rmdir "$LAB_CG/ctl" "$LAB_CG/nodes" "$LAB_CG" 2>/dev/null
                        [ -d "$LAB_CG" ] || break
                        sleep 0.1
                done
                [ -d "$LAB_CG" ] && lab_log "cgroup $LAB_CG could not be removed"
        fi
        for p in $(lab_systemd_hierarchies); do
                [ -d "$p/nr-lab-$$-sd" ] || continue
                for _ in $(seq 50); do
                        find "$p/nr-lab-$$-sd" -depth -type d -exec rmdir {} + 2>/dev/null
                        [ -d "$p/nr-lab-$$-sd" ] || break
                        sleep 0.1
                done
                [ -d "$p/nr-lab-$$-sd" ] && lab_log "cgroup $p/nr-lab-$$-sd could not be removed"
        done
        if [ -n "${LAB_MEM_CG:-}" ]; then
                for _ in $(seq 50); do rmdir "$LAB_MEM_CG" 2>/dev/null && break; sleep 0.1; done
                [ -d "$LAB_MEM_CG" ] && lab_log "cgroup $LAB_MEM_CG could not be removed"
        fi
        LAB_NAMES=() LAB_STATUS_PID='' LAB_CG='' LAB_MEM_CG=''
        return 0
}
