# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers for the integration tests. Each test is a script that re-executes itself in private
# namespaces; it exits 0 (pass), 77 (skipped: the reason is printed) or anything else (fail).

set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
O=${O:-build}
case "$O" in /*) ;; *) O="$TOP/$O" ;; esac
NODE_RESET="$O/node-reset"
_failures=0

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; _failures=$((_failures + 1)); }
ok() { echo "ok: $*"; }
assert() { # assert "description" command...
        local d=$1; shift
        if "$@"; then ok "$d"; else fail "$d"; fi
}
finish() { [ "$_failures" -eq 0 ] && exit 0; echo "$_failures assertion(s) failed"; exit 1; }

require_root() { [ "$(id -u)" -eq 0 ] || skip "needs root for private namespaces"; }
require_cmd() { for c in "$@"; do command -v "$c" >/dev/null 2>&1 || skip "'$c' is not installed"; done; }

# Re-run this script inside fresh mount, network and UTS namespaces with private propagation and a
# tmpfs on /run and on a work directory, so nothing touches the host's state: the agent's network
# and firewall phases act on the namespace they run in, whatever --root says. "-n" is accepted for
# clarity; the network namespace is always private, and so is the host name (a test may set one).
# Usage at the top of a test: in_private_ns [-n] "$@"
in_private_ns() {
        if [ "${1:-}" = -n ]; then shift; fi
        if [ -z "${NR_IN_NS:-}" ]; then
                require_root
                NR_IN_NS=1 exec unshare -m -n -u --propagation private -- "$BASH" "$0" "$@"
        fi
        # A private mount namespace still shows the host's cgroups, which the profiles' "cgroup
        # kubepods" lines act on: on a machine whose own kubelet made them, no test runs.
        if compgen -G '/sys/fs/cgroup/kubepods*' > /dev/null || compgen -G '/sys/fs/cgroup/*/kubepods*' > /dev/null; then
                skip "this machine has kubelet's cgroups (/sys/fs/cgroup/*/kubepods*): the tests would act on them"
        fi
        ip link set lo up 2>/dev/null || true
        mount -t tmpfs -o mode=0755 nr-run /run || { echo "FAIL: cannot mount tmpfs on /run"; exit 1; }
        # Pins are the host's even in a private mount namespace: the default manifest's bpf-pin lines
        # must see a private bpffs (or, without one, a tmpfs they refuse), never /sys/fs/bpf itself.
        mount -t bpf nr-bpf /sys/fs/bpf 2>/dev/null || mount -t tmpfs -o mode=0700 nr-bpf /sys/fs/bpf ||
                { echo "FAIL: cannot hide /sys/fs/bpf"; exit 1; }
        WORK=$(mktemp -d /tmp/nr-test.XXXXXX)
        mount -t tmpfs -o mode=0755 nr-work "$WORK" || { echo "FAIL: cannot mount tmpfs on $WORK"; exit 1; }
        # Unmounting happens with the namespace; the directory on the host is ours to remove.
        trap 'cd /; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT
}

# kill_at_exit: what a test starts in the background goes into PIDS (PIDS+=($!)); at exit each is
# killed and waited for, before in_private_ns's own exit trap unmounts the work directory.
kill_at_exit() {
        PIDS=()
        eval "set -- $(trap -p EXIT)"
        trap 'for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null; done; wait 2> /dev/null; '"${3:-}" EXIT
}

# elapsed_ms T0: the milliseconds since T0 (a "date +%s%N"), for the log lines of timed steps.
elapsed_ms() { echo $((($(date +%s%N) - $1) / 1000000)); }

# The etcd the etcd tests run: their members are started as "etcd", the first in PATH: Debian 12's 3.4
# as installed, or another version make deps unpacked (tools/fetch-runtimes.sh: 3.5 is Debian 13's
# etcd-server), whose usr/bin then comes first in PATH, so also for a member started through nsenter.
# etcdctl stays 3.4's: it only builds and checks the fixtures, and speaks to both.
# etcd_matrix "VERSIONS" "$@", at the top of such a test (before in_private_ns): the test once per
# version (NR_ETCD says which), each run in namespaces of its own; it passes when every run passes or
# skips. NR_ETCD_MATRIX=full runs every version of ETCD_VERSIONS, whatever the test chose. Under a
# sanitizer build (make check-asan) only the newest of VERSIONS: the agent's code is the same for
# each, and the plain run proves every version.
# etcd_only VERSION...: within a run, the cases after it run on these versions only (the others end
# the run there, with what they asserted).
ETCD_VERSIONS="3.4 3.5"
etcd_matrix() {
        local versions=$1 v r rc=77
        shift
        if [ -n "${NR_ETCD:-}" ]; then
                etcd_use "$NR_ETCD"
                return
        fi
        [ "${NR_ETCD_MATRIX:-}" = full ] && versions=$ETCD_VERSIONS
        [ -n "${NR_SANITIZER_RUN:-}" ] && [ "${NR_ETCD_MATRIX:-}" != full ] && versions=${versions##* }
        for v in $versions; do
                echo "=== $(basename "$0") with etcd $v"
                NR_ETCD=$v "$BASH" "$0" "$@"
                r=$?
                case $r in
                0) [ $rc -eq 77 ] && rc=0 ;;
                77) ;;
                *) echo "FAIL: $(basename "$0") with etcd $v (exit $r)"; rc=1 ;;
                esac
        done
        exit $rc
}
etcd_use() {
        local tree
        if [ "$1" != 3.4 ]; then
                tree=$("$TOP/tools/fetch-runtimes.sh" --print "etcd-$1") ||
                        skip "etcd $1 is not in the cache (sudo make deps fetches it: tools/fetch-runtimes.sh)"
                PATH=$tree/usr/bin:$PATH
        fi
        command -v etcd > /dev/null 2>&1 || skip "etcd is not installed (apt-get install etcd-server etcd-client)"
        etcd --version 2> /dev/null | grep -q "^etcd Version: ${1//./\\.}\\." ||
                skip "the etcd in PATH is not $1: $(etcd --version 2>&1 | head -n 1)"
}
etcd_only() {
        case " $* " in *" $NR_ETCD "*) return 0 ;; esac
        echo "  (etcd $NR_ETCD: the cases from here on run on etcd $* only)"
        finish
}

# etcd members: member N listens on ${MEMBER_NET}N (127.0.0.1N by default), clients on 2379, peers on 2380.
MEMBER_NET=127.0.0.1
ip_of() { echo "$MEMBER_NET$1"; }
# Other machines, for the tests whose tree (--root) is not the running machine: node-reset never takes
# a URL that leads to the running machine (loopback, its own addresses) as the tree's member, so the
# tree's members run in a second network namespace, nr-lan, reached over a veth pair. lan_up (inside
# in_private_ns) makes it: this namespace is 10.88.0.1 and 10.88.0.10 (ip_of 0: "the running
# machine"), the lan holds 10.88.0.11-29 (ip_of 1-9, and 21-29); it sets MEMBER_NET=10.88.0.1.
# "$LAN CMD... &" runs CMD there, $! its PID (nsenter execs it). A connection between two lan
# addresses comes from the one it goes to, one from here from 10.88.0.1, as on loopback every one came
# from 127.0.0.1: etcd checks a peer's certificate against the address it comes from, so a member's
# certificate names them all ($LAN_SANS, as it named 127.0.0.1).
LAN="nsenter --net=/run/netns/nr-lan"
LAN_SANS=
lan_up() {
        local i
        ip netns add nr-lan && ip link add nr-lan0 type veth peer name eth0 netns nr-lan &&
                ip addr add 10.88.0.1/24 dev nr-lan0 && ip addr add 10.88.0.10/24 dev nr-lan0 &&
                ip link set nr-lan0 up && ip -n nr-lan link set lo up && ip -n nr-lan link set eth0 up || return 1
        LAN_SANS=IP:10.88.0.1,IP:10.88.0.10
        for i in $(seq 11 29); do
                ip -n nr-lan addr add "10.88.0.$i/24" dev eth0 || return 1
                LAN_SANS="$LAN_SANS,IP:10.88.0.$i"
        done
        MEMBER_NET=10.88.0.1
}
# cluster_of PREFIX N...: the --initial-cluster of members named PREFIXN
cluster_of() { local p=$1 s="" i; shift; for i in "$@"; do s="$s${s:+,}$p$i=https://$(ip_of "$i"):2380"; done; echo "$s"; }

# remove_cgroup_parent /PARENT: a test's own cgroup_parent in every hierarchy, deepest first, once
# what ran in it is gone (the kernel takes a moment to empty a cgroup whose last process died).
remove_cgroup_parent() {
        local d
        for d in /sys/fs/cgroup/*/"${1#/}" /sys/fs/cgroup/"${1#/}"; do
                [ -d "$d" ] || continue
                for _ in $(seq 50); do
                        find "$d" -depth -type d -exec rmdir {} + 2> /dev/null
                        [ -d "$d" ] || break
                        sleep 0.1
                done
        done
}

# test_ca DIR: a throwaway EC certificate authority (DIR/ca.crt, DIR/ca.key) for TLS fixtures; the
# certificates cert() makes are signed by it ($CA).
test_ca() {
        CA=$1
        mkdir -p "$CA" && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
                -subj /CN=etcd-ca -keyout "$CA/ca.key" -out "$CA/ca.crt" 2> /dev/null
}
# cert DIR NAME CN SAN EKU: DIR/NAME.crt and .key, signed by $CA
cert() {
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$3" \
                -keyout "$1/$2.key" -out "$1/$2.csr" 2> /dev/null &&
        openssl x509 -req -in "$1/$2.csr" -CA "$CA/ca.crt" -CAkey "$CA/ca.key" -CAcreateserial -days 2 \
                -out "$1/$2.crt" -extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=%s\n' "$4" "$5") 2> /dev/null &&
                rm -f "$1/$2.csr"
}
# k3s_tls_dir DIR IP: k3s's etcd certificates, signed by $CA, under k3s's names (pkg/daemons/control/
# deps: ETCDServerCA, ETCDPeerCA, ServerETCDCert, PeerServerClientETCDCert, ClientETCDCert)
k3s_tls_dir() {
        mkdir -p "$1" && cp "$CA/ca.crt" "$1/server-ca.crt" && cp "$CA/ca.crt" "$1/peer-ca.crt" &&
        cert "$1" server-client etcd "IP:$2,IP:127.0.0.1${LAN_SANS:+,$LAN_SANS}" serverAuth,clientAuth &&
        cert "$1" peer-server-client etcd-peer "IP:$2,IP:127.0.0.1${LAN_SANS:+,$LAN_SANS}" serverAuth,clientAuth &&
        cert "$1" client etcd-client "DNS:client" clientAuth
}
# k3s_etcd_config FILE SERVER-DIR IP NAME INITIAL: the etcd configuration k3s writes for its embedded
# member (pkg/daemons/executor: ETCDConfig.ToConfigFile) into FILE; SERVER-DIR is the data dir's
# server/ as a node path, INITIAL the member's initial-* lines.
k3s_etcd_config() {
        cat > "$1" << EOF
advertise-client-urls: https://$3:2379
client-transport-security:
  cert-file: $2/tls/etcd/server-client.crt
  client-cert-auth: true
  key-file: $2/tls/etcd/server-client.key
  trusted-ca-file: $2/tls/etcd/server-ca.crt
data-dir: $2/db/etcd
election-timeout: 5000
heartbeat-interval: 500
$5
listen-client-urls: https://$3:2379,https://127.0.0.1:2379
listen-metrics-urls: http://127.0.0.1:2381
listen-peer-urls: https://$3:2380
log-outputs:
- stderr
logger: zap
name: $4
peer-transport-security:
  cert-file: $2/tls/etcd/peer-server-client.crt
  client-cert-auth: true
  key-file: $2/tls/etcd/peer-server-client.key
  trusted-ca-file: $2/tls/etcd/peer-ca.crt
EOF
}

# schema_valid FILE...: each file holds a node-reset JSON report that matches docs/report.schema.json
# (tests/integration/report.py also checks every report it reads).
schema_valid() { "$TOP/tests/integration/validate-json.py" "$@"; }

# Every program kubeadm join's InPathCheck looks for, as executable stubs beneath the tree DIR (in
# /usr/bin; crictl in /usr/local/bin, where a cri-tools tarball puts it): a tree the verdict may call
# rejoinable. Usage: kubeadm_programs DIR
kubeadm_programs() {
        local p
        mkdir -p "$1/usr/bin" "$1/usr/local/bin"
        for p in conntrack ip iptables mount nsenter ebtables ethtool socat tc touch; do
                printf '#!/bin/sh\n' > "$1/usr/bin/$p" && chmod 755 "$1/usr/bin/$p"
        done
        printf '#!/bin/sh\n' > "$1/usr/local/bin/crictl" && chmod 755 "$1/usr/local/bin/crictl"
}

# Tests on --root trees: $root is the tree, $name the case being asserted.
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" >/dev/null; } # jq_ FILE EXPR: true when EXPR holds on the report in FILE
gone() { for p in "$@"; do assert "$name: gone: $p" test ! -e "$root$p" -a ! -L "$root$p"; done; }
stays() { for p in "$@"; do assert "$name: stays: $p" test -e "$root$p"; done; }
put() { # node-path [text]
        mkdir -p "$(dirname "$root$1")"
        printf '%s\n' "${2:-x}" > "$root$1"
}
