#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The services, reload and processes phases against the real thing. A Debian tree booted with
# systemd-nspawn: units stopped concurrently and waited for, disabled, masked, a failed stop reported
# with its job result, an absent unit unchanged, idempotent; reached through the system bus
# (DBUS_SYSTEM_BUS_ADDRESS) and through the manager's private socket, as on a node. Then, in a
# private PID namespace, the rescue-shell path: no systemd, units skipped with the reason, and the
# processes phase killing fake shims, kubelet and etcd by executable path while decoys survive.
. "$(dirname "$0")/lib.sh"
REPORT="$TOP/tests/integration/report.py"
HELPER="$O/tests/proc-helper"
UNITS="$TOP/tests/integration/nspawn/units"

nr() { "$NODE_RESET" --root "$WORK/root" "$@"; }
PYTHON=$(command -v /usr/bin/python3 || command -v python3)   # the distribution's starts fastest
jq_() { "$PYTHON" "$REPORT" "$@" >/dev/null; }   # jq_ FILE EXPR: true when EXPR holds
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# A process is alive while /proc has it and it is not a zombie.
alive() {
        local s
        s=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
        [ -n "$s" ] && [ "$s" != Z ]
}
dead() { ! alive "$1"; }

# ---- The rescue-shell path and the processes phase: PID 1 of a PID namespace of our own --------
# The node is a tree: $WORK/root, whose /usr is an overlay of the host's (so programs run chrooted
# in it). A process belongs to the node when the tree is its root directory, as "/" is on a node.
make_tree() {
        local t=$WORK/root l
        mkdir -p "$t"/{usr,proc,run,tmp,etc,containers/abc,srv/decoy} "$WORK/ov/up" "$WORK/ov/work"
        mount -t overlay nr-ov -o "lowerdir=/usr,upperdir=$WORK/ov/up,workdir=$WORK/ov/work" "$t/usr" || return 1
        mount --bind /proc "$t/proc" || return 1
        for l in bin sbin lib lib64; do [ -e "/usr/$l" ] && ln -s "usr/$l" "$t/$l"; done
        # The host's etcd-server package (make deps) ships /usr/lib/systemd/system/etcd.service: in
        # this tree it would read as a site's etcd unit, out of scope (etcd-owner.h). Hidden in the
        # overlay's upper layer only; the host's file stays.
        rm -f "$t/usr/lib/systemd/system/etcd.service"
        install -m 0755 "$HELPER" "$t/usr/bin/containerd-shim-runc-v2"
        install -m 0755 "$HELPER" "$t/usr/local/bin/kubelet"
        install -m 0755 "$HELPER" "$t/usr/local/bin/etcd"
        install -m 0755 "$HELPER" "$t/usr/local/bin/kubelet-exporter"
        install -m 0755 "$HELPER" "$t/containers/abc/pause"
        install -m 0755 "$HELPER" "$t/srv/decoy/kubelet"
        install -D -m 0755 "$NODE_RESET" "$t/usr/local/sbin/node-reset"
        cp /usr/bin/bash "$t/usr/bin/conmon"    # node-reset's parent in one run: a path the manifest names
}

processes_scenario() {
        local d shim pause kubelet etcd decoys=() out rc t0 ms

        [ $$ -eq 1 ] && [ -d /proc/1 ] || { fail "not PID 1 of a PID namespace with its own /proc"; return; }
        make_tree || { fail "cannot build the tree"; return; }
        chroot "$WORK/root" /usr/bin/containerd-shim-runc-v2 -namespace k8s.io /containers/abc/pause > /dev/null & shim=$!
        chroot "$WORK/root" /usr/local/bin/kubelet > /dev/null & kubelet=$!
        chroot "$WORK/root" /usr/local/bin/etcd > /dev/null & etcd=$!
        # Decoys: the name at another path, a longer name, and the same binary run from another root.
        chroot "$WORK/root" /srv/decoy/kubelet > /dev/null & decoys+=($!)
        chroot "$WORK/root" /usr/local/bin/kubelet-exporter > /dev/null & decoys+=($!)
        "$WORK/root/usr/local/bin/kubelet" > /dev/null & decoys+=($!)
        for _ in $(seq 100); do
                pause=$(tr -d ' ' < "/proc/$shim/task/$shim/children" 2>/dev/null)
                [ -n "$pause" ] && [ "$(readlink "/proc/$pause/exe")" = "$WORK/root/containers/abc/pause" ] && break
                sleep 0.05
        done
        assert "the fake shim runs its container process" test -n "$pause"
        rm "$WORK/root/usr/local/bin/etcd"      # replaced on disk while running: its exe reads "(deleted)"

        t0=$(date +%s%N)
        env -u DBUS_SYSTEM_BUS_ADDRESS "$NODE_RESET" --root "$WORK/root" --manifest "$TOP/manifests/default.conf" \
                --yes --output=json --phases services-early,services-late,processes,reload run > "$WORK/proc1.json"
        rc=$? ms=$(ms_since "$t0")
        out=$WORK/proc1.json
        assert "no systemd: run exits 0" test $rc -eq 0
        assert "no systemd: every unit line is skipped, saying why" jq_ "$out" \
                "len(actions(r, phase='services-early')) > 0 and all(a['result'] == 'skipped' and 'systemd not running: not booted with systemd (no $WORK/root/run/systemd/system)' in a['message'] for a in actions(r, phase='services-early') + actions(r, phase='services-late') + actions(r, phase='reload'))"
        assert "no systemd: the kill rows say the processes phase stands in" jq_ "$out" \
                'any("no systemd" in (a["detail"] or "") for a in actions(r, kind="kill"))'
        assert "the shim is gone" dead "$shim"
        assert "its container process (ignoring SIGTERM) is gone" dead "$pause"
        assert "kubelet is gone" dead "$kubelet"
        assert "etcd, whose binary was deleted, is gone" dead "$etcd"
        for d in "${decoys[@]}"; do
                assert "decoy $(readlink "/proc/$d/exe") (PID $d) survives" alive "$d"
        done
        assert "each PID reported: the shim exited on SIGTERM" jq_ "$out" \
                "any(a['target'] == '/usr/bin/containerd-shim-runc-v2[$shim]' and a['result'] == 'changed' and 'SIGTERM' in a['message'] for a in actions(r, kind='kill'))"
        assert "the container process needed SIGKILL, and is reported as part of the shim's tree" jq_ "$out" \
                "any(a['target'] == '/containers/abc/pause[$pause]' and a['result'] == 'changed' and 'SIGKILL' in a['message'] and 'containerd-shim-runc-v2[$shim]' in a['detail'] for a in actions(r, kind='kill'))"
        assert "exactly these four were killed" jq_ "$out" \
                "sorted(a['target'] for a in actions(r, kind='kill', result='changed')) == sorted(['/usr/bin/containerd-shim-runc-v2[$shim]', '/containers/abc/pause[$pause]', '/usr/local/bin/kubelet[$kubelet]', '/usr/local/bin/etcd[$etcd]'])"
        assert "one grace period for all (5 s), not one per process: ${ms} ms" test "$ms" -ge 4900 -a "$ms" -lt 9000

        # node-reset inside the tree, as on a node (--root /), started by a process the manifest names.
        chroot "$WORK/root" /usr/local/bin/kubelet > /dev/null & kubelet=$!
        chroot "$WORK/root" /usr/bin/conmon -c '/usr/local/sbin/node-reset --profile all --yes --output=json --phases processes run \
                > /tmp/proc2.json; rc=$?; exit $rc'; rc=$?
        out=$WORK/root/tmp/proc2.json
        assert "inside the tree (--root /): exit 0" test $rc -eq 0
        assert "inside the tree: kubelet is gone" dead "$kubelet"
        assert "inside the tree: node-reset's parent is left alone" jq_ "$out" \
                "any(a['target'].startswith('/usr/bin/conmon[') and a['result'] == 'skipped' and 'ancestor' in a['message'] for a in actions(r, kind='kill'))"
        assert "inside the tree: only kubelet was killed" jq_ "$out" \
                "[a['target'] for a in actions(r, kind='kill', result='changed')] == ['/usr/local/bin/kubelet[$kubelet]']"

        env -u DBUS_SYSTEM_BUS_ADDRESS "$NODE_RESET" --root "$WORK/root" --manifest "$TOP/manifests/default.conf" \
                --yes --output=json --phases processes run > "$WORK/proc3.json"; rc=$?
        assert "third run exits 0, every kill row unchanged" jq_ "$WORK/proc3.json" \
                'all(a["result"] in ("unchanged", "skipped") for a in actions(r)) and not r["changed"]'
        for d in "${decoys[@]}"; do
                assert "decoy PID $d still alive" alive "$d"
        done

        # --kill-grace: a shorter grace period, the same end (the container process ignores SIGTERM).
        chroot "$WORK/root" /usr/bin/containerd-shim-runc-v2 -namespace k8s.io /containers/abc/pause > /dev/null & shim=$!
        pause=
        for _ in $(seq 100); do
                pause=$(tr -d ' ' < "/proc/$shim/task/$shim/children" 2>/dev/null)
                [ -n "$pause" ] && [ "$(readlink "/proc/$pause/exe")" = "$WORK/root/containers/abc/pause" ] && break
                sleep 0.05
        done
        t0=$(date +%s%N)
        env -u DBUS_SYSTEM_BUS_ADDRESS "$NODE_RESET" --root "$WORK/root" --manifest "$TOP/manifests/default.conf" \
                --kill-grace=1 --yes --output=json --phases processes run > "$WORK/grace.json"; rc=$?
        ms=$(ms_since "$t0")
        assert "--kill-grace=1: exit 0" test $rc -eq 0
        assert "--kill-grace=1: the shim is gone" dead "$shim"
        assert "--kill-grace=1: its container process is gone" dead "$pause"
        assert "--kill-grace=1: SIGKILL came after about 1 s, not 5 (${ms} ms)" test "$ms" -ge 900 -a "$ms" -lt 4500
        assert "--kill-grace=1: the container process is reported killed with SIGKILL" jq_ "$WORK/grace.json" \
                "any(a['target'] == '/containers/abc/pause[$pause]' and 'SIGKILL' in a['message'] for a in actions(r, kind='kill', result='changed'))"

        # A /proc of another PID namespace: PIDs there are not ours to signal.
        chroot "$WORK/root" /usr/local/bin/kubelet > /dev/null & kubelet=$!
        unshare -p -f env -u DBUS_SYSTEM_BUS_ADDRESS "$NODE_RESET" --root "$WORK/root" \
                --manifest "$TOP/manifests/default.conf" --yes --output=json --phases processes run > "$WORK/proc4.json"
        assert "a /proc of another PID namespace: nothing signalled" alive "$kubelet"
        assert "... and the report says why" jq_ "$WORK/proc4.json" \
                'any("another PID namespace" in (a["message"] or "") for a in actions(r, kind="kill"))'
        kill -9 "$kubelet" "${decoys[@]}" 2>/dev/null
        wait 2>/dev/null
        umount "$WORK/root/usr" "$WORK/root/proc"
}

if [ "${1:-}" = --pid-namespace ]; then
        WORK=$2
        # default.conf's cgroup lines act on the cgroups this mount namespace shows: show none of
        # the host's (test-cgroups.sh proves them in a cgroup namespace of its own).
        mount -t tmpfs -o mode=0755 nr-no-cgroups /sys/fs/cgroup || { echo "FAIL: cannot hide /sys/fs/cgroup"; exit 1; }
        processes_scenario
        finish
fi

in_private_ns "$@"
require_cmd systemd-nspawn busctl python3 unshare
[ -x "$HELPER" ] || make --no-print-directory -s -C "$TOP" O="$O" "$HELPER" > /dev/null ||
        { echo "FAIL: cannot build $HELPER"; exit 1; }
mkdir -p "$WORK/root"

# ---- no bus at all, outside any container -------------------------------------------------------
cat > "$WORK/m.conf" <<'M'
unit kubelet stop,disable early
unit k3s* stop,disable early
unit containerd.service stop,disable late
unit etcd.service stop,disable late
unit crio stop,disable,mask late
unit stuck.service stop late
unit refuse.service stop late
unit masked.service stop,disable,mask late
unit backup-etcd.timer stop,disable late
unit absent.service stop,disable late
unit dbus.service stop late
M
DBUS_SYSTEM_BUS_ADDRESS="unix:path=$WORK/nowhere" nr --manifest "$WORK/m.conf" --yes --output=json \
        --phases services-early,services-late,reload run > "$WORK/nobus.json"; rc=$?
assert "a bus that is not there: exit 0, nothing failed" test $rc -eq 0
assert "... every unit line skipped with the reason" jq_ "$WORK/nobus.json" \
        "len(actions(r)) == 12 and all(a['result'] == 'skipped' and 'cannot connect to the system bus at unix:path=$WORK/nowhere' in a['message'] for a in actions(r))"

# ---- a real systemd ------------------------------------------------------------------------------
. "$TOP/tests/integration/nspawn/tree.sh"
nspawn_tree

mkdir -p "$WORK/c/systemd/system"
sed 's/Description=.*/Description=crio stand-in, a runtime unit in \/run/' "$UNITS/k3s-agent.service" \
        > "$WORK/c/systemd/system/crio.service"
t0=$(date +%s%N)
nspawn_boot "$rootfs" "$WORK/c" "$UNITS"/*.service "$UNITS"/*.timer masked.service ||
        { echo "FAIL: the container did not boot"; exit 1; }
mkdir -p "$WORK/c/units/multi-user.target.wants"
ln -s /run/systemd/system/crio.service "$WORK/c/units/multi-user.target.wants/crio.service"
manager_call Reload > /dev/null && manager_call StartUnit ss crio.service replace > /dev/null
for u in kubelet k3s-agent containerd etcd stuck refuse crio; do
        for _ in $(seq 50); do [ "$(unit_property $u.service ActiveState)" = active ] && break; sleep 0.1; done
done
echo "container booted in $(ms_since "$t0") ms"
export DBUS_SYSTEM_BUS_ADDRESS
DBUS_SYSTEM_BUS_ADDRESS=$(nspawn_bus)
for u in kubelet k3s-agent containerd etcd stuck refuse crio backup-etcd; do
        t=$u.service; [ $u = backup-etcd ] && t=$u.timer
        assert "before: $t active and enabled" test "$(unit_property $t ActiveState)" = active -a "$(unit_file_state $t)" = enabled
done
# A unit file edited on disk: only a reload makes systemd read the new description.
sed -i 's/^Description=.*/Description=edited on disk/' "$WORK/c/units/refuse.service"
assert "before: refuse.service needs a reload" test "$(unit_property refuse.service NeedDaemonReload)" = true

nr --manifest "$WORK/m.conf" --phases services-early,services-late,reload plan > "$WORK/plan.txt"; rc=$?
assert "plan exits 0" test $rc -eq 0
assert "plan names kubelet's state" grep -q "stop.*kubelet.service.*active (running)" "$WORK/plan.txt"
assert "plan expands the glob k3s*" grep -q "k3s-agent.service" "$WORK/plan.txt"
assert "plan changed nothing" test "$(unit_property kubelet.service ActiveState)" = active

t0=$(date +%s%N)
NODE_RESET_LOG_LEVEL=debug nr --manifest "$WORK/m.conf" --yes --output=json \
        --phases services-early,services-late,reload run > "$WORK/run1.json" 2> "$WORK/run1.err"; rc=$?
ms=$(ms_since "$t0")
echo "first run: $ms ms"
out=$WORK/run1.json
assert "run 1 exits 1 (two stops fail on purpose)" test $rc -eq 1
assert "run 1 went through the system bus" grep -q "via unix:path=$WORK/c/dbus/system_bus_socket" "$WORK/run1.err"
for t in kubelet.service k3s-agent.service containerd.service etcd.service crio.service backup-etcd.timer; do
        s=$(unit_property $t ActiveState)
        assert "$t stopped ($s)" test "$s" = inactive -o "$s" = not-loaded
        assert "$t stop reported changed" jq_ "$out" "any(a['target'] == '$t' and a['result'] == 'changed' for a in actions(r, kind='stop'))"
done
for t in kubelet.service k3s-agent.service containerd.service etcd.service backup-etcd.timer; do
        assert "$t disabled" test "$(unit_file_state $t)" = disabled
        assert "$t disable reported with the symlink removed" jq_ "$out" \
                "any(a['target'] == '$t' and a['result'] == 'changed' and 'removed /etc/systemd/system/' in a['message'] for a in actions(r, kind='disable'))"
done
assert "crio masked" test "$(unit_file_state crio.service)" = masked
assert "kubelet's slow ExecStop was waited for (the early stops took >= 2 s)" jq_ "$out" \
        "sum(a['duration_ms'] for a in actions(r, phase='services-early', kind='stop')) >= 1900"
assert "the late stops ran concurrently (the 4 s ExecStops of containerd and etcd took < 7 s together)" jq_ "$out" \
        "3900 <= sum(a['duration_ms'] for a in actions(r, phase='services-late', kind='stop')) < 7000"
assert "stuck.service failed with its job result" jq_ "$out" \
        "any(a['target'] == 'stuck.service' and a['result'] == 'failed' and \"result 'timeout'\" in a['message'] for a in actions(r, kind='stop'))"
assert "refuse.service failed with systemd's refusal" jq_ "$out" \
        "any(a['target'] == 'refuse.service' and a['result'] == 'failed' and 'refuse' in a['message'] for a in actions(r, kind='stop'))"
assert "the absent unit is unchanged (stop and disable)" jq_ "$out" \
        "[a['result'] for a in actions(r) if a['target'] == 'absent.service'] == ['unchanged', 'unchanged']"
assert "the masked unit is unchanged (stop, disable, mask)" jq_ "$out" \
        "[a['result'] for a in actions(r) if a['target'] == 'masked.service' and a['kind'] != 'reset-failed'] == ['unchanged'] * 3"
assert "dbus.service is protected: skipped, and still running" jq_ "$out" \
        "any(a['target'] == 'dbus.service' and a['result'] == 'skipped' and 'protected' in a['message'] for a in actions(r))"
assert "daemon-reload ran once" jq_ "$out" \
        "[a['result'] for a in actions(r, kind='daemon-reload')] == ['changed']"
assert "... and systemd really reloaded" test "$(unit_property refuse.service Description)" = "edited on disk" \
        -a "$(unit_property refuse.service NeedDaemonReload)" = false
assert "the failed stuck.service was reset" jq_ "$out" \
        "any(a['target'] == 'stuck.service' and a['result'] == 'changed' for a in actions(r, kind='reset-failed'))"
s=$(unit_property stuck.service ActiveState)
assert "stuck.service is no longer failed ($s)" test "$s" = inactive -o "$s" = not-loaded

# ---- the node's own path: no bus address, the tree's /run -------------------------------------
# The container's /run/systemd and /run/dbus appear in the tree: ROOT/run/systemd/system is
# sd_booted()'s marker, ROOT/run/systemd/private the manager. systemd drops private-socket peers
# whose PID it cannot see, so that run joins the container's PID namespace (see nspawn_leader); its
# /proc is then the host's, where LeakSanitizer (the ASan build) cannot find itself: no leak check.
mkdir -p "$WORK/root/run/systemd" "$WORK/root/run/dbus"
mount --bind "$WORK/c/systemd" "$WORK/root/run/systemd"
mount --bind "$WORK/c/dbus" "$WORK/root/run/dbus"
in_node() {
        nsenter --target "$(nspawn_leader)" --pid -- \
                env -u DBUS_SYSTEM_BUS_ADDRESS ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"
}
NODE_RESET_LOG_LEVEL=debug in_node "$NODE_RESET" --root "$WORK/root" --manifest "$WORK/m.conf" \
        --yes --output=json --phases services-early,services-late,reload run > "$WORK/run2.json" 2> "$WORK/run2.err"; rc=$?
assert "run 2 exits 1 (refuse.service still refuses)" test $rc -eq 1
assert "run 2 went through the tree's /run/systemd/private" \
        grep -q "via unix:path=$WORK/root/run/systemd/private" "$WORK/run2.err"
assert "run 2 is idempotent: all unchanged or skipped, but for refuse.service, which still runs" jq_ "$WORK/run2.json" \
        "not r['changed'] and all(a['result'] in ('unchanged', 'skipped') or (a['target'] == 'refuse.service' and a['result'] == 'failed') for a in actions(r))"

# From outside the container's PID namespace the private socket refuses: the tree's system bus.
manager_call StartUnit ss kubelet.service replace > /dev/null
for _ in $(seq 50); do [ "$(unit_property kubelet.service ActiveState)" = active ] && break; sleep 0.1; done
printf 'unit kubelet stop early\n' > "$WORK/k.conf"
NODE_RESET_LOG_LEVEL=debug env -u DBUS_SYSTEM_BUS_ADDRESS "$NODE_RESET" --root "$WORK/root" --manifest "$WORK/k.conf" \
        --yes --output=json --phases services-early run > "$WORK/run3.json" 2> "$WORK/run3.err"; rc=$?
assert "the tree's system bus: exit 0" test $rc -eq 0
assert "... reached after the private socket refused" grep -q "trying the system bus" "$WORK/run3.err"
assert "... at ROOT/run/dbus/system_bus_socket" grep -q "via unix:path=$WORK/root/run/dbus/system_bus_socket" "$WORK/run3.err"
assert "... kubelet stopped and waited for" jq_ "$WORK/run3.json" \
        "any(a['target'] == 'kubelet.service' and a['result'] == 'changed' and a['duration_ms'] >= 1900 for a in actions(r, kind='stop'))"
s=$(unit_property kubelet.service ActiveState)
assert "kubelet inactive ($s)" test "$s" = inactive -o "$s" = not-loaded

manager_call StartUnit ss slowstop.service replace > /dev/null
for _ in $(seq 50); do [ "$(unit_property slowstop.service ActiveState)" = active ] && break; sleep 0.1; done
printf 'unit slowstop stop late\n' > "$WORK/s.conf"
t0=$(date +%s%N)
nr --manifest "$WORK/s.conf" --unit-timeout=1 --yes --output=json --phases services-late run > "$WORK/run4.json"; rc=$?
ms=$(ms_since "$t0")
assert "--unit-timeout=1: exit 1 after about 1 s ($ms ms), not 20" test $rc -eq 1 -a "$ms" -lt 4000
assert "... reported failed, the job left to systemd" jq_ "$WORK/run4.json" \
        "any(a['target'] == 'slowstop.service' and a['result'] == 'failed' and 'left to systemd' in a['message'] for a in actions(r))"
manager_call KillUnit ssi slowstop.service all 9 > /dev/null    # or the poweroff would wait for its ExecStop

# ---- files, then reload: a unit file removed makes the reload happen --------------------------
mkdir -p "$WORK/root/etc/systemd/system"
mount --bind "$WORK/c/units" "$WORK/root/etc/systemd/system"
printf 'unit k3s* stop,disable early\nremove /etc/systemd/system/k3s-agent.service\n' > "$WORK/f.conf"
# Through the private socket: a Reload must not cost node-reset its connection.
in_node "$NODE_RESET" --root "$WORK/root" --manifest "$WORK/f.conf" --yes --output=json \
        --phases files,reload,verify run > "$WORK/run5.json"; rc=$?
assert "files + reload: exit 0, nothing left" test $rc -eq 0
assert "the reload names the removal that asked for it" jq_ "$WORK/run5.json" \
        "any(a['result'] == 'changed' and 'k3s-agent.service' in a['message'] for a in actions(r, kind='daemon-reload'))"
assert "systemd no longer knows k3s-agent.service's file" test "$(unit_file_state k3s-agent.service)" = absent
in_node "$NODE_RESET" --root "$WORK/root" --manifest "$WORK/f.conf" --yes --output=json \
        --phases files,reload,verify run > "$WORK/run6.json"; rc=$?
assert "files + reload again: all unchanged" jq_ "$WORK/run6.json" "not r['changed'] and r['residue'] == []"
umount "$WORK/root/etc/systemd/system" "$WORK/root/run/systemd" "$WORK/root/run/dbus"

t0=$(date +%s%N)
nspawn_poweroff
echo "container stopped in $(ms_since "$t0") ms"
assert "the test cgroup is gone" test ! -e "/sys/fs/cgroup/unified/node-reset-test-$$"

# ---- the processes phase and the rescue shell, in a PID namespace of their own -------------------
unshare -p -f --mount-proc -- "$BASH" "$0" --pid-namespace "$WORK"; rc=$?
assert "processes scenario (see above)" test $rc -eq 0

finish
