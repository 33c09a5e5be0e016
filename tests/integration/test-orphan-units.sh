#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# units/ in a real systemd: a tree of the host's /usr (nspawn/build-rootfs.sh) booted with
# systemd-nspawn, the host-built agent at /usr/local/sbin/node-reset, node-reset.service,
# node-reset-orphan.service and the enabled node-reset-orphan.timer in /etc/systemd/system.
# systemd-analyze verify, run in the container, is clean on the three. A fake worker in the
# container (kubelet.conf, its CA and client certificate, a state file whose evidence is old enough)
# talks to an HTTPS API server on the container's loopback (https-server.py, run from the host in the
# container's network namespace):
#   - healthy (a certificate from the kubeconfig's CA, 200): ExecCondition= skips the reset, the
#     files stay, the state file is cleared;
#   - ca-mismatch (a rebuilt master: a certificate from another CA): the reset runs (a manifest of
#     remove lines only), the files go, the host file stays, the service succeeds, and the
#     container's journal holds the structured NODE_RESET_* entries of the files phase;
#   - run again: no kubeconfig left (not-a-node), skipped;
#   - a failed run leaves the mark (node-reset-orphan-failed.service, confined to writing it);
#   - a FULL reset under node-reset.service's exact sandbox (its capability bounding set, system call
#     filter, address families, namespace restrictions, UMask=0077), started through the bus on a
#     worker built in the container: kubelet's mounts (an emptyDir tmpfs, a bind-mounted PV), a CNI
#     bridge with a port into a cni-* netns, calico veths, KUBE-/cali- chains beside the host's own
#     rule, the worker's files and the detected profile (no manifest): the service succeeds, the
#     verdict is clean, and the PV's data, the host's link, route and firewall rule survive.
. "$(dirname "$0")/lib.sh"
require_cmd systemd-nspawn busctl openssl python3 nsenter unshare
in_private_ns "$@"
SERVER="$TOP/tests/integration/https-server.py"
UNITDIR="$TOP/units"
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
t_start=$(date +%s%N)

# --- PKI: the cluster's CA, a rebuilt master's CA, their API servers, the node's client ----------
pki=$WORK/pki
mkdir -p "$pki"
. "$TOP/tests/integration/fixtures/pki.sh"
server_ext="subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
mkca ca kubernetes && mkca ca2 kubernetes &&
mkleaf apiserver ca "/CN=kube-apiserver" "$server_ext" &&
mkleaf apiserver2 ca2 "/CN=kube-apiserver" "$server_ext" &&
mkleaf worker1 ca "/O=system:nodes/CN=system:node:worker-1" "extendedKeyUsage=clientAuth" ||
        { echo "FAIL: cannot make the test PKI with openssl"; exit 1; }

# --- The container --------------------------------------------------------------------------------
. "$TOP/tests/integration/nspawn/tree.sh"
nspawn_tree
servers=()
trap 'kill "${servers[@]}" 2>/dev/null; wait "${servers[@]}" 2>/dev/null; nspawn_poweroff; cd /; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT

# The tree's /usr is the host's, read-only: the host-built binary finds its libraries there, and
# /usr/local is a tmpfs of the tree's own.

# A sanitizer build (make check-asan): LeakSanitizer stops the world with ptrace at exit, which the
# units' SystemCallFilter (~@debug) forbids; leak checking is the unit tests' job, not the units'.
if readelf -d "$NODE_RESET" 2>/dev/null | grep -q 'NEEDED.*libasan'; then
        for u in node-reset.service node-reset-orphan.service; do
                mkdir -p "$rootfs/etc/systemd/system/$u.d"
                printf '[Service]\nEnvironment=ASAN_OPTIONS=detect_leaks=0\n' > "$rootfs/etc/systemd/system/$u.d/asan.conf"
        done
fi

t0=$(date +%s%N)
# The units' own sandbox must be the only one between the agent and the container's kernel state.
NSPAWN_AS_NODE=1
nspawn_boot "$rootfs" "$WORK/c" "$UNITDIR/node-reset.service" "$UNITDIR/node-reset-orphan.service" \
        "$UNITDIR/node-reset-orphan.timer" "$UNITDIR/node-reset-orphan-failed.service" || { echo "FAIL: the container did not boot"; exit 1; }
echo "container booted in $(ms_since "$t0") ms"
leader=$(nspawn_leader)
# The reset runs on the container's "/": the rejoin verdict reads its sysctls, and kubeadm join refuses
# ip_forward 0. Set as kubeadm's installer leaves a node, in the container's private network only.
nsenter --target "$leader" --net -- sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'
C=/proc/$leader/root     # the container's / (its overlay), as this process sees it
in_container() { nsenter --target "$leader" --mount --uts --ipc --net --pid -- "$@"; }
bus() { busctl --address="$(nspawn_bus)" "$@"; }
service_result() { # UNIT: the Service interface's Result
        local path
        path=$(bus call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager \
                GetUnit s "$1" 2>/dev/null | sed -n 's/^o "\(.*\)"$/\1/p')
        [ -n "$path" ] || { echo not-loaded; return; }
        bus get-property org.freedesktop.systemd1 "$path" org.freedesktop.systemd1.Service Result |
                sed 's/^[a-z]* //; s/"//g'
}

install -D -m 0755 "$NODE_RESET" "$C/usr/local/sbin/node-reset"
in_container /usr/local/sbin/node-reset --version > "$WORK/version.txt" 2>&1; rc=$?
assert "the agent runs in the container ($(head -n1 "$WORK/version.txt"))" test $rc -eq 0

assert "node-reset-orphan.timer is enabled" test "$(unit_file_state node-reset-orphan.timer)" = enabled
assert "node-reset-orphan.timer is active" test "$(unit_property node-reset-orphan.timer ActiveState)" = active
assert "node-reset.service is installed, not enabled" test "$(unit_file_state node-reset.service)" = static
# Neither service has run: the timer waits 15 min after boot.
assert "node-reset-orphan.service has not run at boot" \
        test "$(unit_property node-reset-orphan.service ActiveEnterTimestampMonotonic)" = 0 -o \
        "$(unit_property node-reset-orphan.service ActiveState)" = not-loaded

# systemd-analyze verify in the container, on the installed units (their binary resolves there).
# There is no man(1) in the tree to check Documentation=man:node-reset(8) with: --man=no.
in_container systemd-analyze verify --man=no /etc/systemd/system/node-reset.service \
        /etc/systemd/system/node-reset-orphan.service /etc/systemd/system/node-reset-orphan.timer \
        /etc/systemd/system/node-reset-orphan-failed.service > "$WORK/verify.txt" 2>&1; rc=$?
assert "systemd-analyze verify exits 0 on the four units" test $rc -eq 0
assert "systemd-analyze verify says nothing" test ! -s "$WORK/verify.txt"
[ -s "$WORK/verify.txt" ] && sed 's/^/    verify: /' "$WORK/verify.txt"

# --- The API servers, on the container's loopback ------------------------------------------------
# 6443: the cluster's (the kubeconfig's CA); 6444: a rebuilt master (another CA).
records=$WORK/records
mkdir -p "$records"
nsenter --target "$leader" --net -- python3 "$SERVER" serve 6443 "$pki/apiserver.crt" "$pki/apiserver.key" \
        "$pki/ca.crt" "$records" worker-1 2> "$WORK/server.log" &
servers+=($!)
nsenter --target "$leader" --net -- python3 "$SERVER" serve 6444 "$pki/apiserver2.crt" "$pki/apiserver2.key" \
        "$pki/ca2.crt" "$records" worker-1 2> "$WORK/server2.log" &
servers+=($!)
for _ in $(seq 100); do
        [ -e "$records/ready-6443" ] && [ -e "$records/ready-6444" ] && break
        sleep 0.05
done
[ -e "$records/ready-6443" ] && [ -e "$records/ready-6444" ] ||
        { echo "FAIL: the test servers did not start"; cat "$WORK"/server*.log; exit 1; }

# --- The fake worker ------------------------------------------------------------------------------
mkdir -p "$C/etc/kubernetes/pki" "$C/var/lib/kubelet/pki" "$C/etc/cni/net.d" "$C/etc/node-reset" \
        "$C/var/lib/node-reset"
cp "$pki/ca.crt" "$C/etc/kubernetes/pki/ca.crt"
cat "$pki/worker1.crt" "$pki/worker1.key" > "$C/var/lib/kubelet/pki/kubelet-client-current.pem"
echo '{"cniVersion": "1.0.0", "name": "k8s-pod-network"}' > "$C/etc/cni/net.d/10.conf"
echo "the host's own" > "$C/etc/host-keep.conf"
# A node has a resolver configuration; the run's rejoin verdict checks it.
printf 'nameserver 192.0.2.53\n' > "$C/etc/resolv.conf"
cat > "$C/etc/node-reset/manifest.conf" <<'M'
remove /etc/kubernetes/kubelet.conf
remove /etc/kubernetes/pki/ca.crt
remove /etc/cni/net.d/10.conf
M
kubeconfig() { # port
        kubeconfig_files "https://127.0.0.1:$1" > "$C/etc/kubernetes/kubelet.conf"
}
state=$C/var/lib/node-reset/orphan.state
old_state() { # the rebuilt master was first seen an hour ago, last seen a minute ago (no gap)
        local now; now=$(date +%s)
        printf 'first_seen=%s\nlast_seen=%s\nclass=ca-mismatch\n' $((now - 3600)) $((now - 60)) > "$state"
}

# Start node-reset-orphan.service through the bus, as the timer would, and wait for its end.
run_service() {
        local before t0 s
        before=$(unit_property node-reset-orphan.service StateChangeTimestampMonotonic)
        t0=$(date +%s%N)
        manager_call StartUnit ss node-reset-orphan.service replace > /dev/null ||
                { fail "StartUnit node-reset-orphan.service"; return 1; }
        for _ in $(seq 300); do
                s=$(unit_property node-reset-orphan.service ActiveState)
                if [ "$(unit_property node-reset-orphan.service StateChangeTimestampMonotonic)" != "$before" ] &&
                        { [ "$s" = inactive ] || [ "$s" = failed ]; }; then
                        echo "node-reset-orphan.service ran in $(ms_since "$t0") ms: $s, result $(service_result node-reset-orphan.service)"
                        return 0
                fi
                sleep 0.1
        done
        fail "node-reset-orphan.service did not finish in 30 s ($s)"
        return 1
}

# --- Healthy: skipped ------------------------------------------------------------------------------
kubeconfig 6443
old_state
in_container node-reset --output=json orphan-check > "$WORK/healthy.json" 2>&1; rc=$?
assert "healthy: orphan-check in the container exits 1 (not orphaned)" test $rc -eq 1
assert "healthy: class healthy" grep -q '"class" *: *"healthy"' "$WORK/healthy.json"
old_state
run_service
assert "healthy: ExecCondition= skipped the reset (ConditionResult false)" \
        test "$(unit_property node-reset-orphan.service ConditionResult)" = false
r=$(service_result node-reset-orphan.service)
assert "healthy: the service did not fail (result $r)" test "$r" = exec-condition -o "$r" = success
assert "healthy: the service is inactive, not failed" test "$(unit_property node-reset-orphan.service ActiveState)" = inactive
assert "healthy: kubelet.conf is still there" test -f "$C/etc/kubernetes/kubelet.conf"
assert "healthy: pki/ca.crt is still there" test -f "$C/etc/kubernetes/pki/ca.crt"
assert "healthy: the CNI config is still there" test -f "$C/etc/cni/net.d/10.conf"
assert "healthy: the old evidence was cleared" sh -c "! grep -qs first_seen '$state'"
assert "healthy: the API server was asked" grep -q '"GET /api/v1/nodes/worker-1 HTTP/1.1" 200' "$WORK/server.log"

# --- A rebuilt master (another CA), the evidence an hour old: the reset runs ---------------------
kubeconfig 6444
old_state
run_service
r=$(service_result node-reset-orphan.service)
assert "ca-mismatch: the service succeeded (result $r)" test "$r" = success
assert "ca-mismatch: its condition held" test "$(unit_property node-reset-orphan.service ConditionResult)" = true
assert "ca-mismatch: kubelet.conf removed" test ! -e "$C/etc/kubernetes/kubelet.conf"
assert "ca-mismatch: pki/ca.crt removed" test ! -e "$C/etc/kubernetes/pki/ca.crt"
assert "ca-mismatch: the CNI config removed" test ! -e "$C/etc/cni/net.d/10.conf"
assert "ca-mismatch: the host file is kept" test -f "$C/etc/host-keep.conf"
assert "ca-mismatch: the client certificate (not in the manifest) is kept" \
        test -f "$C/var/lib/kubelet/pki/kubelet-client-current.pem"

# The container's journal: orphan-check's verdict and the run's structured entries, from the unit.
journal_has() { # python expression over e (one entry) — true when some entry matches
        local _
        for _ in $(seq 20); do
                in_container journalctl --no-pager -o json -u node-reset-orphan.service > "$WORK/journal.json" 2>/dev/null
                python3 - "$WORK/journal.json" "$1" <<-'P' && return 0
		import json, sys
		entries = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
		sys.exit(0 if any(eval(sys.argv[2], {}, {"e": e}) for e in entries) else 1)
		P
                sleep 0.1
        done
        return 1
}
for f in /etc/kubernetes/kubelet.conf /etc/kubernetes/pki/ca.crt /etc/cni/net.d/10.conf; do
        assert "journal: NODE_RESET_PHASE=files NODE_RESET_RESULT=changed for $f" journal_has \
                "e.get('NODE_RESET_PHASE') == 'files' and e.get('NODE_RESET_RESULT') == 'changed' and e.get('NODE_RESET_TARGET') == '$f' and e.get('NODE_RESET_KIND') and e.get('_SYSTEMD_UNIT') == 'node-reset-orphan.service'"
done
assert "journal: orphan-check's healthy verdict" journal_has \
        "str(e.get('MESSAGE')).startswith('orphan-check: healthy, not orphaned')"
assert "journal: orphan-check's ca-mismatch verdict" journal_has \
        "str(e.get('MESSAGE')).startswith('orphan-check: ca-mismatch, orphaned')"
# (stdout reaches the journal line by line: the evidence is an entry of its own)
assert "journal: ... with curl's evidence" journal_has \
        "'evidence' in str(e.get('MESSAGE')) and 'curl error 60: SSL certificate problem' in e['MESSAGE']"
assert "journal: systemd skipped the healthy run" journal_has \
        "e.get('MESSAGE') == \"node-reset-orphan.service: Skipped due to 'exec-condition'.\""
if [ "$_failures" -gt 0 ]; then
        echo "    the unit's journal:"
        in_container journalctl --no-pager -o short-monotonic -u node-reset-orphan.service | sed 's/^/    /' | tail -n 40
fi

# --- Again: no kubeconfig left (not-a-node never resets) -----------------------------------------
echo keep > "$C/etc/cni/net.d/10.conf"
run_service
assert "after the reset: the next run is skipped (ConditionResult false)" \
        test "$(unit_property node-reset-orphan.service ConditionResult)" = false
assert "after the reset: nothing removed" test -f "$C/etc/cni/net.d/10.conf"

# --- A run that fails is not retried on every tick -------------------------------------------------
# An orphaned worker again (the rebuilt master), whose run fails: a --timeout it refuses (exit 2).
cp "$pki/ca.crt" "$C/etc/kubernetes/pki/ca.crt"
kubeconfig 6444
old_state
echo "NODE_RESET_TIMEOUT=never" > "$C/etc/node-reset/node-reset.env"
run_service
assert "failed run: the service failed (result $(service_result node-reset-orphan.service))" \
        test "$(unit_property node-reset-orphan.service ActiveState)" = failed
for _ in $(seq 50); do [ -e "$C/var/lib/node-reset/orphan-run.failed" ] && break; sleep 0.1; done
assert "failed run: OnFailure= left the mark" test -e "$C/var/lib/node-reset/orphan-run.failed"
manager_call ResetFailedUnit s node-reset-orphan.service > /dev/null
rm -f "$C/etc/node-reset/node-reset.env"
old_state
# A unit condition that fails leaves the unit inactive without a state change: wait for its check.
before=$(unit_property node-reset-orphan.service ConditionTimestampMonotonic)
manager_call StartUnit ss node-reset-orphan.service replace > /dev/null || fail "StartUnit node-reset-orphan.service"
for _ in $(seq 100); do
        [ "$(unit_property node-reset-orphan.service ConditionTimestampMonotonic)" != "$before" ] && break
        sleep 0.1
done
assert "marked: the next tick is skipped by the condition (ConditionResult false)" \
        test "$(unit_property node-reset-orphan.service ConditionResult)" = false
assert "marked: the worker's files stay" test -f "$C/etc/kubernetes/kubelet.conf" -a -f "$C/etc/cni/net.d/10.conf"
rm -f "$C/var/lib/node-reset/orphan-run.failed"
old_state
run_service
assert "mark removed: the reset runs again and succeeds" test "$(service_result node-reset-orphan.service)" = success
assert "mark removed: kubelet.conf removed" test ! -e "$C/etc/kubernetes/kubelet.conf"

# --- A full reset under node-reset.service's own sandbox ----------------------------------------------
# Not a manifest of remove lines: every phase that acts on a worker runs, with the unit's capability
# set and filters, against state the container's kernel namespaces hold.
uid=0c0ffee0-1111-4222-8333-444455556666
vols=/var/lib/kubelet/pods/$uid/volumes
netns=cni-7e57e57e-0000-4000-8000-000000000001
rm -f "$C/etc/node-reset/manifest.conf"
in_container sh -ec "
        mkdir -p /srv/disk/pv $vols/kubernetes.io~empty-dir/cache $vols/kubernetes.io~csi/pvc-1/mount \
                /etc/kubernetes/pki /etc/cni/net.d /var/lib/kubelet/pki
        echo 'must survive' > /srv/disk/pv/data
        mount --bind /srv/disk/pv $vols/kubernetes.io~csi/pvc-1/mount
        mount -t tmpfs nr-emptydir $vols/kubernetes.io~empty-dir/cache
        echo scratch > $vols/kubernetes.io~empty-dir/cache/f
        ip link set lo up
        ip link add eth1 type veth peer name eth1p
        ip link set eth1 up; ip link set eth1p up
        ip addr add 192.0.2.10/24 dev eth1
        ip route add default via 192.0.2.1 dev eth1
        ip link add cni0 type bridge; ip link set cni0 up
        ip netns add $netns
        ip link add veth7e57e57e type veth peer name eth0 netns $netns
        ip link set veth7e57e57e master cni0 up
        ip link add cali0123456789a type veth peer name cali0123456789b
        iptables-nft -A INPUT -p tcp --dport 22 -j ACCEPT
        iptables-nft -N KUBE-SERVICES
        iptables-nft -A INPUT -m comment --comment 'kubernetes service portals' -j KUBE-SERVICES
        iptables-nft -N cali-INPUT
        iptables-nft -A INPUT -m comment --comment 'cali:Cz_u1IQiXIMmKD4c' -j cali-INPUT
        echo '{\"cniVersion\":\"0.4.0\",\"name\":\"k8s\",\"plugins\":[{\"type\":\"calico\"}]}' > /etc/cni/net.d/10-calico.conflist
"
kubeconfig 6443
cp "$pki/ca.crt" "$C/etc/kubernetes/pki/ca.crt"
printf 'KUBELET_KUBEADM_ARGS=""\n' > "$C/var/lib/kubelet/kubeadm-flags.env"
manager_call StartUnit ss node-reset.service replace > /dev/null || fail "StartUnit node-reset.service"
# A oneshot nothing references is unloaded once it ends: its journal says how it ended.
for _ in $(seq 600); do
        in_container journalctl --no-pager -o cat -u node-reset.service > "$WORK/full-journal.txt" 2>&1
        grep -qE '^Finished node-reset.service|Failed with result' "$WORK/full-journal.txt" && break
        sleep 0.2
done
assert "full reset under node-reset.service: the service succeeded" \
        sh -c "grep -q '^Finished node-reset.service' '$WORK/full-journal.txt' && ! grep -q 'Failed with result' '$WORK/full-journal.txt'"
assert "full reset: the run's own verdict is clean, exit 0" grep -q 'no residue; exit status 0' "$WORK/full-journal.txt"
in_container node-reset --output=json status > "$WORK/full-status.json" 2> "$WORK/full-status.err"; rc=$?
assert "full reset: status afterwards exits 0 (clean)" test $rc -eq 0
in_container findmnt -rn -o TARGET > "$WORK/full-mounts.txt"
assert "full reset: no kubelet mount is left" sh -c "! grep -q '^/var/lib/kubelet' '$WORK/full-mounts.txt'"
assert "full reset: the PV's data survives on its disk" grep -q 'must survive' "$C/srv/disk/pv/data"
in_container ip -o link show > "$WORK/full-links.txt"
assert "full reset: cni0, its port and the calico veths are gone" \
        sh -c "! grep -qE ' (cni0|veth7e57e57e|cali0123456789[ab])[@:]' '$WORK/full-links.txt'"
assert "full reset: the host's eth1 stays" grep -q ' eth1@' "$WORK/full-links.txt"
in_container ip route show default > "$WORK/full-routes.txt"
assert "full reset: the default route stays" grep -q 'via 192.0.2.1' "$WORK/full-routes.txt"
assert "full reset: the cni-* netns is gone" test ! -e "$C/run/netns/$netns"
in_container iptables-nft-save > "$WORK/full-fw.txt" 2>/dev/null
assert "full reset: KUBE-SERVICES and cali-INPUT are gone" sh -c "! grep -qE 'KUBE-SERVICES|cali-INPUT' '$WORK/full-fw.txt'"
assert "full reset: the host's SSH rule stays" grep -q -- '-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT' "$WORK/full-fw.txt"
assert "full reset: kubelet.conf and the CNI config are gone" \
        test ! -e "$C/etc/kubernetes/kubelet.conf" -a ! -e "$C/etc/cni/net.d/10-calico.conflist"
backup=$(ls -d "$C"/var/backups/node-reset/* 2>/dev/null | head -n 1)
assert "full reset: the backup was written, readable by root alone (UMask=0077)" \
        sh -c "[ -n '$backup' ] && [ \"\$(stat -c %a '$backup')\" = 700 ]"
if [ "$_failures" -gt 0 ]; then
        echo "    node-reset.service's journal:"
        sed 's/^/    /' "$WORK/full-journal.txt" | tail -n 60
        sed 's/^/    status: /' "$WORK/full-status.err" | tail -n 20
fi

t0=$(date +%s%N)
kill "${servers[@]}" 2>/dev/null; wait "${servers[@]}" 2>/dev/null; servers=()
nspawn_poweroff
echo "container stopped in $(ms_since "$t0") ms; the test took $(ms_since "$t_start") ms"
assert "the test cgroup is gone" test ! -e "/sys/fs/cgroup/unified/node-reset-test-$$"
finish
