#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The host resolver after a kubespray reset, on a real systemd-resolved (Debian 12's, 252) in a
# booted nspawn tree: kubespray's drop-in points resolved at NodeLocal DNS (169.254.25.10); the run
# removes it, restarts resolved through D-Bus (252 has no reload; 256 added one) and resolved then
# serves the site's own server from the drop-in that stays. A tree whose resolver is not running is
# left alone. This tree has no NetworkManager, as a node without one: its row is checked to say
# "not running". test-networkmanager.sh runs a real one (Debian 12's, 1.42.4) in a tree of its own.
# The resolved package is unpacked from the .deb that tools/install-deps.sh caches (never installed
# on the host: its postinst would take over the host's /etc/resolv.conf).
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" > /dev/null; }
CACHE=/var/cache/node-reset-tests

deb=$(ls "$CACHE"/systemd-resolved_*.deb 2> /dev/null | head -n 1)
[ -n "$deb" ] || skip "no systemd-resolved .deb in $CACHE (tools/install-deps.sh downloads it; the test runs offline)"
require_cmd systemd-nspawn busctl dpkg-deb

. "$TOP/tests/integration/nspawn/tree.sh"

# resolved on top of the host's /usr.
x=$WORK/resolved
nspawn_debs_tree "$x" "$deb"
nspawn_debs_lay "$x"
# build-rootfs.sh masks resolved (the host's /usr has none): this tree has one.
rm -f "$rootfs/etc/systemd/system/systemd-resolved.service"
mkdir -p "$rootfs/etc/systemd/resolved.conf.d"
printf '[Resolve]\nDNS=169.254.25.10\nDomains=cluster.local\n' > "$rootfs/etc/systemd/resolved.conf.d/kubespray.conf"
printf '[Resolve]\nDNS=192.0.2.53\n' > "$rootfs/etc/systemd/resolved.conf.d/site.conf"
printf 'nameserver 127.0.0.53\noptions edns0 trust-ad\n' > "$rootfs/etc/resolv.conf"
sed -n '/^\[Install\]/,$p' "$x/usr/lib/systemd/system/systemd-resolved.service" | grep -q WantedBy ||
        echo "note: the unit has no WantedBy; it is started by hand below"

nspawn_boot "$rootfs" "$WORK/c" "$x/usr/lib/systemd/system/systemd-resolved.service" ||
        { echo "FAIL: the container did not boot"; exit 1; }
manager_call StartUnit ss systemd-resolved.service replace > /dev/null
for _ in $(seq 100); do [ "$(unit_property systemd-resolved.service ActiveState)" = active ] && break; sleep 0.1; done
export DBUS_SYSTEM_BUS_ADDRESS
DBUS_SYSTEM_BUS_ADDRESS=$(nspawn_bus)
dns() { busctl --address="$DBUS_SYSTEM_BUS_ADDRESS" get-property org.freedesktop.resolve1 /org/freedesktop/resolve1 \
        org.freedesktop.resolve1.Manager DNS 2> /dev/null; }
pid_before=$(unit_property systemd-resolved.service ActiveEnterTimestamp | sed "s/^t //")
assert "before: resolved is active" test "$(unit_property systemd-resolved.service ActiveState)" = active
assert "before: it serves NodeLocal DNS (169.254.25.10) from kubespray's drop-in" sh -c "echo '$(dns)' | grep -q '4 169 254 25 10'"

printf 'remove /etc/systemd/resolved.conf.d/kubespray.conf\nunit kubelet.service stop,disable early\n' > "$WORK/m.conf"
"$NODE_RESET" --root "$rootfs" --manifest "$WORK/m.conf" --phases files,reload -o json plan > "$WORK/plan.json" 2> /dev/null
assert "the plan restarts resolved and reloads NetworkManager if they run, naming the drop-in" jq_ "$WORK/plan.json" \
        "[(a['target'], a['detail']) for a in actions(r, kind='resolver-reload')] == [
          ('systemd-resolved.service', 'restart if it runs: the run changes /etc/systemd/resolved.conf.d/kubespray.conf'),
          ('NetworkManager.service', 'Reload(0) over D-Bus if it runs: the run changes /etc/systemd/resolved.conf.d/kubespray.conf')]"
"$NODE_RESET" --root "$rootfs" --manifest "$WORK/m.conf" --phases files,reload,verify --yes -o json run \
        > "$WORK/run.json" 2> "$WORK/run.err"; rc=$?
assert "run exits 0" test $rc -eq 0
[ $rc -eq 0 ] || { cat "$WORK/run.err"; "$REPORT" "$WORK/run.json" "actions(r)"; }
assert "resolved restarted, the job waited for" jq_ "$WORK/run.json" \
        "[(a['result'], a['message']) for a in actions(r, kind='resolver-reload') if a['target'] == 'systemd-resolved.service'] == [('changed', 'restarted (job done)')]"
assert "NetworkManager: not running, unchanged" jq_ "$WORK/run.json" \
        "[a['result'] for a in actions(r, kind='resolver-reload') if a['target'] == 'NetworkManager.service'] == ['unchanged']"
pid_after=$(unit_property systemd-resolved.service ActiveEnterTimestamp | sed "s/^t //")
assert "resolved runs again, entered active anew ($pid_before -> $pid_after)" \
        test "$(unit_property systemd-resolved.service ActiveState)" = active -a "$pid_after" != "$pid_before" -a "$pid_after" != 0
assert "gone: kubespray's drop-in and NodeLocal DNS from what resolved serves" \
        sh -c "test ! -e '$rootfs/etc/systemd/resolved.conf.d/kubespray.conf' && ! echo '$(dns)' | grep -q '169 254 25 10'"
assert "stays: the site's drop-in, and resolved serves its server (192.0.2.53)" \
        sh -c "test -e '$rootfs/etc/systemd/resolved.conf.d/site.conf' && echo '$(dns)' | grep -q '4 192 0 2 53'"
assert "the verdict: the resolver is configured (no resolver warning)" jq_ "$WORK/run.json" \
        "not any(w['name'] == 'resolver' for w in r['rejoin']['warnings'])"
"$NODE_RESET" --root "$rootfs" --manifest "$WORK/m.conf" --phases files,reload --yes -o json run > "$WORK/run2.json" 2> /dev/null
assert "a second run restarts nothing" jq_ "$WORK/run2.json" "actions(r, kind='resolver-reload') == []"

# Stopped: a resolver that does not run is not started.
manager_call StopUnit ss systemd-resolved.service replace > /dev/null
for _ in $(seq 50); do [ "$(unit_property systemd-resolved.service ActiveState)" = inactive ] && break; sleep 0.1; done
printf '[Resolve]\nDNS=169.254.25.10\n' > "$rootfs/etc/systemd/resolved.conf.d/kubespray.conf"
"$NODE_RESET" --root "$rootfs" --manifest "$WORK/m.conf" --phases files,reload --yes -o json run > "$WORK/run3.json" 2> /dev/null
assert "resolved stopped: unchanged, not started" jq_ "$WORK/run3.json" \
        "[a['result'] for a in actions(r, kind='resolver-reload') if a['target'] == 'systemd-resolved.service'] == ['unchanged']"
assert "... and still inactive" test "$(unit_property systemd-resolved.service ActiveState)" = inactive
nspawn_poweroff
finish
