#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# NetworkManager after a kubespray reset, on a real running NetworkManager (Debian 12's, 1.42.4) in
# a booted nspawn tree: kubespray's conf.d/dns.conf gives NetworkManager a global DNS configuration
# naming NodeLocal DNS (169.254.25.10), which the daemon keeps serving when the file is merely gone;
# the run removes the file and calls NetworkManager's Reload(0) over D-Bus from the node's PID
# namespace, and the same daemon process then has no global DNS, while the site's own conf.d file
# stays in effect. A second run leaves NetworkManager alone. From another PID namespace (the host,
# --root on the running tree) NetworkManager refuses the call, as it cannot tell the caller's PID,
# and systemd's ReloadUnit does it instead. A NetworkManager that does not run is not started. The
# package is unpacked from the .debs tools/install-deps.sh caches (never installed on the host:
# NetworkManager would manage its links), with those of the libraries it depends on that the host
# lacks (on the machine this was written on, libndp0 is the one its daemon needs). In the
# container, which has no link but lo, NetworkManager manages no device and leaves
# /etc/resolv.conf alone (rc-manager=unmanaged, the site's file).
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" > /dev/null; }
CACHE=/var/cache/node-reset-tests

debs=()
# NetworkManager and the libraries it needs that the host lacks (tools/install-deps.sh lists them).
libs=$(cat "$CACHE/network-manager.libs" 2> /dev/null) || skip "no $CACHE/network-manager.libs (tools/install-deps.sh writes it)"
for p in network-manager $libs; do
        d=$(ls "$CACHE/${p}"_*.deb 2> /dev/null | head -n 1)
        [ -n "$d" ] || skip "no $p .deb in $CACHE (tools/install-deps.sh downloads it; the test runs offline)"
        debs+=("$d")
done
require_cmd systemd-nspawn busctl dpkg-deb ldconfig chroot

. "$TOP/tests/integration/nspawn/tree.sh"

# NetworkManager on top of the host's /usr: the packages' /lib goes to usr/lib (the tree's /lib is a
# link). The device plugins whose libraries the tree lacks (Bluetooth, team, WWAN) are left out;
# the daemon loads the others, and a container with only lo has no device for any of them.
x=$WORK/nm
nspawn_debs_tree "$x" "${debs[@]}"
version=$(dpkg-deb -f "${debs[0]}" Version)
rm -f "$x"/usr/lib/*/NetworkManager/*/libnm-device-plugin-{bluetooth,team,wwan}.so "$x"/usr/lib/*/NetworkManager/*/libnm-wwan.so
nspawn_debs_lay "$x"
# The tree's loader cache, from its own /usr: libndp.so.0 is in the multiarch directory.
ldconfig -X -r "$rootfs" || { echo "FAIL: ldconfig in the tree"; exit 1; }
missing=$(chroot "$rootfs" ldd /usr/sbin/NetworkManager | grep 'not found')
assert "in the tree, NetworkManager $version finds every library its daemon needs" test -z "$missing"
[ -z "$missing" ] || echo "$missing"

# Debian's NetworkManager.conf, with what keeps the daemon's hands off every device; kubespray's
# dns.conf as its preinstall role writes it (roles/kubernetes/preinstall/tasks/0063-networkmanager-dns.yml,
# ini_file, mode 0600); and the site's own file, which stays: rc-manager=unmanaged.
nm=$rootfs/etc/NetworkManager
mkdir -p "$nm/conf.d" "$rootfs/var/lib/NetworkManager"
printf '[main]\nplugins=ifupdown,keyfile\nno-auto-default=*\n\n[ifupdown]\nmanaged=false\n\n[keyfile]\nunmanaged-devices=*\n' \
        > "$nm/NetworkManager.conf"
kubespray_dns() {
        printf '[global-dns-domain-*]\nservers = 169.254.25.10,192.0.2.53\n\n[global-dns]\n%s\n%s\n' \
                'searches = default.svc.cluster.local,svc.cluster.local' 'options = ndots:2,timeout:2,attempts:2' \
                > "$nm/conf.d/dns.conf"
        chmod 0600 "$nm/conf.d/dns.conf"
}
kubespray_dns
printf '[main]\nrc-manager=unmanaged\n' > "$nm/conf.d/site.conf"
printf 'nameserver 192.0.2.53\n' > "$rootfs/etc/resolv.conf"

nspawn_boot "$rootfs" "$WORK/c" "$x/usr/lib/systemd/system/NetworkManager.service" ||
        { echo "FAIL: the container did not boot"; exit 1; }
manager_call StartUnit ss NetworkManager.service replace > /dev/null
for _ in $(seq 100); do [ "$(unit_property NetworkManager.service ActiveState)" = active ] && break; sleep 0.1; done
export DBUS_SYSTEM_BUS_ADDRESS
DBUS_SYSTEM_BUS_ADDRESS=$(nspawn_bus)
nm_property() { # [OBJECT INTERFACE] PROPERTY: busctl's text of it
        local path=/org/freedesktop/NetworkManager iface=org.freedesktop.NetworkManager
        [ $# -eq 3 ] && { path=$path/$1 iface=$iface.$2; shift 2; }
        busctl --address="$DBUS_SYSTEM_BUS_ADDRESS" get-property org.freedesktop.NetworkManager "$path" "$iface" "$1" 2> /dev/null
}
global_dns() { nm_property GlobalDnsConfiguration; }
# As on a node: the agent in the PID namespace of NetworkManager and the bus (its /proc is then the
# host's, where LeakSanitizer cannot find itself: no leak check).
in_node() { nsenter --target "$(nspawn_leader)" --pid -- env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"; }
kubespray_global_dns() { echo "$(global_dns)" | grep -q '"servers" as 2 "169.254.25.10" "192.0.2.53"'; }
# The unit's state and its main process, "active 123": the same PID after a reload, a new one after
# a restart.
nm_unit() {
        echo "$(unit_property NetworkManager.service ActiveState) $(busctl --address="$DBUS_SYSTEM_BUS_ADDRESS" \
                get-property org.freedesktop.systemd1 /org/freedesktop/systemd1/unit/NetworkManager_2eservice \
                org.freedesktop.systemd1.Service MainPID 2> /dev/null | sed 's/^u //')"
}
running=$(nm_unit) pid=${running#active }
resolv=$(sha256sum < "$rootfs/etc/resolv.conf")
assert "before: NetworkManager $(nm_property Version | tr -d '"s ') is active (MainPID $pid) and answers on the bus" \
        sh -c "test '$running' = 'active $pid' -a '${pid:-0}' -gt 0 && test -n '$(nm_property Version)'"
assert "before: its global DNS is kubespray's, NodeLocal DNS first ($(global_dns))" kubespray_global_dns
assert "before: the site's rc-manager=unmanaged is in effect" test "$(nm_property DnsManager DnsManager RcManager)" = 's "unmanaged"'
[ "$(unit_property NetworkManager.service ActiveState)" = active ] || tail -n 30 "$WORK/c/nspawn.log"

printf 'remove /etc/NetworkManager/conf.d/dns.conf\n' > "$WORK/m.conf"
# The reason for the row: with the file gone and no reload, the daemon goes on with kubespray's DNS.
in_node "$NODE_RESET" --root "$rootfs" --manifest "$WORK/m.conf" --phases files --yes -o json run > /dev/null 2>&1
assert "control: dns.conf removed with no reload phase, NetworkManager still has NodeLocal DNS" \
        sh -c "test ! -e '$nm/conf.d/dns.conf' && echo '$(global_dns)' | grep -q 169.254.25.10"
kubespray_dns
"$NODE_RESET" --root "$rootfs" --manifest "$WORK/m.conf" --phases files,reload -o json plan > "$WORK/plan.json" 2> /dev/null
assert "the plan reloads NetworkManager if it runs, naming dns.conf" jq_ "$WORK/plan.json" \
        "[(a['target'], a['detail']) for a in actions(r, kind='resolver-reload') if a['target'] == 'NetworkManager.service'] == [
          ('NetworkManager.service', 'Reload(0) over D-Bus if it runs: the run changes /etc/NetworkManager/conf.d/dns.conf')]"
t0=$(date +%s%N)
in_node "$NODE_RESET" --root "$rootfs" --manifest "$WORK/m.conf" --phases files,reload,verify --yes -o json run \
        > "$WORK/run.json" 2> "$WORK/run.err"; rc=$?
# Read at once: Reload(0) answers once the configuration is read again, so no wait is due.
after=$(global_dns)
echo "the run took $((($(date +%s%N) - t0) / 1000000)) ms"
assert "run exits 0" test $rc -eq 0
[ $rc -eq 0 ] || { cat "$WORK/run.err"; "$REPORT" "$WORK/run.json" "actions(r)"; }
assert "NetworkManager reloaded" jq_ "$WORK/run.json" \
        "[(a['result'], a['message']) for a in actions(r, kind='resolver-reload') if a['target'] == 'NetworkManager.service'] == [
          ('changed', 'reloaded (Reload(0): configuration and DNS)')]"
assert "resolved (masked in this tree): unchanged, not started" jq_ "$WORK/run.json" \
        "[a['result'] for a in actions(r, kind='resolver-reload') if a['target'] == 'systemd-resolved.service'] == ['unchanged']"
assert "the same NetworkManager process runs: reloaded, not restarted (MainPID $pid)" \
        test "$(nm_unit)" = "$running"
assert "gone: dns.conf, and the global DNS in the daemon as soon as the run returns ($after)" \
        sh -c "test ! -e '$nm/conf.d/dns.conf' && test '$after' = 'a{sv} 0'"
assert "stays: the site's conf.d file, and its rc-manager=unmanaged in the reloaded daemon" \
        sh -c "test -e '$nm/conf.d/site.conf' && test '$(nm_property DnsManager DnsManager RcManager)' = 's \"unmanaged\"'"
assert "stays: /etc/resolv.conf, which the daemon does not manage here" test "$(sha256sum < "$rootfs/etc/resolv.conf")" = "$resolv"
assert "the verdict: the resolver is configured (no resolver warning)" jq_ "$WORK/run.json" \
        "not any(w['name'] == 'resolver' for w in r['rejoin']['warnings'])"

"$NODE_RESET" --root "$rootfs" --manifest "$WORK/m.conf" --phases files,reload --yes -o json run > "$WORK/run2.json" 2> /dev/null
assert "a second run plans no reload" jq_ "$WORK/run2.json" "actions(r, kind='resolver-reload') == []"
assert "... and NetworkManager is the same process still (MainPID $pid)" \
        test "$(nm_unit)" = "$running"

# From the host's PID namespace, --root on the running tree: NetworkManager cannot tell the caller's
# PID and refuses; systemd's ReloadUnit runs the unit's ExecReload= (busctl ... Reload u 0) in the node.
kubespray_dns
manager_call ReloadUnit ss NetworkManager.service replace > /dev/null
for _ in $(seq 50); do kubespray_global_dns && break; sleep 0.1; done
assert "dns.conf again, and a ReloadUnit by hand: NetworkManager has NodeLocal DNS again" kubespray_global_dns
"$NODE_RESET" --root "$rootfs" --manifest "$WORK/m.conf" --phases files,reload --yes -o json run > "$WORK/run4.json" 2> "$WORK/run4.err"; rc=$?
after=$(global_dns)
assert "from another PID namespace: run exits 0" test $rc -eq 0
[ $rc -eq 0 ] || { cat "$WORK/run4.err"; "$REPORT" "$WORK/run4.json" "actions(r)"; }
assert "... Reload(0) refused, systemd reloaded NetworkManager" jq_ "$WORK/run4.json" \
        "[(a['result'], a['message']) for a in actions(r, kind='resolver-reload') if a['target'] == 'NetworkManager.service'] == [
          ('changed', \"reloaded by systemd's ReloadUnit (job done): NetworkManager refused the bus call (Reload: Unable to authenticate the request)\")]"
assert "... the same process (MainPID $pid), and no global DNS once the run returns ($after)" \
        test "$(nm_unit) $after" = "$running a{sv} 0"

# Stopped: a NetworkManager that does not run is not started, and its dns.conf still goes.
manager_call StopUnit ss NetworkManager.service replace > /dev/null
for _ in $(seq 50); do [ "$(unit_property NetworkManager.service ActiveState)" = inactive ] && break; sleep 0.1; done
kubespray_dns
"$NODE_RESET" --root "$rootfs" --manifest "$WORK/m.conf" --phases files,reload --yes -o json run > "$WORK/run3.json" 2> /dev/null
assert "NetworkManager stopped: unchanged, not started" jq_ "$WORK/run3.json" \
        "[(a['result'], a['message']) for a in actions(r, kind='resolver-reload') if a['target'] == 'NetworkManager.service'] == [
          ('unchanged', 'inactive')]"
assert "... still inactive, and dns.conf is gone" \
        test "$(unit_property NetworkManager.service ActiveState)" = inactive -a ! -e "$nm/conf.d/dns.conf"
nspawn_poweroff
finish
