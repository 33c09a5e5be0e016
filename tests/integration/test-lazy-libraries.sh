#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A library is opened on the first call that needs it, never when its phase is merely chosen: the
# shared objects each run has mapped when it exits, read from its own /proc/PID/maps (maps-at-exit
# stops it at exit under ptrace). --version and a plan beneath --root map the loader and libc only;
# an idle firewall-only run maps libc and the netfilter libraries only, with a peak RSS under 4 MiB;
# the services phases of a tree without systemd map no libsystemd; a pods phase with no runtime to
# call maps no libcurl, and one whose CRI socket answers does.
. "$(dirname "$0")/lib.sh"
in_private_ns -n "$@"
require_cmd python3
[ -x "$NODE_RESET" ] || skip "$NODE_RESET is not built"
MAPS="$O/tests/maps-at-exit"
[ -x "$MAPS" ] || { fail "$MAPS is not built (make check builds it)"; finish; }
sanitizer=0
readelf -d "$NODE_RESET" 2> /dev/null | grep -qE 'NEEDED.*lib(asan|ubsan)' && sanitizer=1

ROOT=$WORK/empty
mkdir -p "$ROOT"
# mapped NAME ARGS...: run node-reset, leave the objects it mapped in $WORK/NAME.maps, one a line.
mapped() {
        local name=$1; shift
        "$MAPS" "$WORK/$name.maps" "$NODE_RESET" "$@" > "$WORK/$name.out" 2> "$WORK/$name.err"
        echo $? > "$WORK/$name.rc"
        grep -v '^VmHWM:' "$WORK/$name.maps" | sort > "$WORK/$name.objs"
        echo "$name maps $(wc -l < "$WORK/$name.objs") shared objects: $(tr '\n' ' ' < "$WORK/$name.objs")"
}
rc_of() { cat "$WORK/$1.rc"; }
# only NAME PATTERN...: every object mapped matches one of the patterns (the loader and libc always).
only() {
        local name=$1 o p ok; shift
        while read -r o; do
                ok=0
                for p in 'ld-linux*' 'ld64.so*' 'libc.so.6' "$@"; do
                        # shellcheck disable=SC2053
                        [[ $o == $p ]] && ok=1
                done
                [ $ok = 1 ] || { echo "unexpected: $o"; return 1; }
        done < "$WORK/$name.objs"
}
# has NAME SONAME: the file mapped is the soname or its real name (libmnl.so.0 -> libmnl.so.0.2.0).
has() { grep -qE "^${2//./\\.}(\\.[0-9]+)*\$" "$WORK/$1.objs"; }
count() { wc -l < "$WORK/$1.objs"; }
if [ $sanitizer = 1 ]; then
        only() { true; }
        echo "note: a sanitizer build maps libasan/libubsan: the lists are printed, not compared"
        # maps-at-exit traces node-reset, and LeakSanitizer does not work under ptrace.
        export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
        echo "note: a sanitizer build under ptrace: LeakSanitizer is off for this test"
fi

mapped version --version
assert "--version exits 0" test "$(rc_of version)" -eq 0
assert "--version still names the libraries it found" grep -q "^  libnftnl " "$WORK/version.out"
assert "--version maps the loader and libc only ($(count version) objects)" only version

mapped plan-root --root "$ROOT" plan
assert "plan --root exits 0" test "$(rc_of plan-root)" -eq 0
assert "plan --root (mounts and files) maps the loader and libc only ($(count plan-root) objects)" only plan-root

netfilter=('libmnl.so.*' 'libnftnl.so.*' 'libipset.so.*' 'libip4tc.so.*' 'libip6tc.so.*')
mapped idle --root "$ROOT" --phases firewall --yes run
assert "idle firewall run exits 0" test "$(rc_of idle)" -eq 0
assert "idle firewall run: nothing changed" grep -q "0 changed" "$WORK/idle.out"
assert "idle firewall run maps libc and the netfilter libraries only ($(count idle) objects)" only idle "${netfilter[@]}"
if [ $sanitizer = 0 ]; then
        assert "idle firewall run: libmnl was loaded for its calls" has idle libmnl.so.0
        assert "idle firewall run: libnftnl was loaded for its calls" has idle libnftnl.so.11
        hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "$WORK/idle.maps")
        assert "idle firewall run: peak RSS ${hwm:-?} kB is under 4 MiB" test "${hwm:-99999}" -lt 4096
fi

# The services phases and processes chosen, but no systemd in the tree: no unit touched, no libsystemd.
mapped services --root "$ROOT" --phases services-early,processes,services-late,reload plan
assert "services plan without systemd exits 0" test "$(rc_of services)" -eq 0
assert "services plan without systemd maps no libsystemd ($(count services) objects)" only services

# The pods phase chosen, but no runtime to call: no CRI call, no libcurl.
mapped pods-none --root "$ROOT" --phases pods --cri-endpoint "unix://$WORK/none.sock" plan
assert "pods plan without a runtime exits 0" test "$(rc_of pods-none)" -eq 0
assert "pods plan without a runtime maps no libcurl ($(count pods-none) objects)" only pods-none

# A socket that accepts and closes: the phase calls it, and libcurl is loaded for that call.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
while True:
    c, _ = s.accept(); c.close()' "$WORK/cri.sock" &
srv=$!
for _ in $(seq 50); do [ -S "$WORK/cri.sock" ] && break; sleep 0.1; done
mapped pods-call --root "$ROOT" --phases pods --cri-endpoint "unix://$WORK/cri.sock" plan
kill "$srv" 2> /dev/null; wait "$srv" 2> /dev/null
assert "pods plan against a socket exits 0" test "$(rc_of pods-call)" -eq 0
assert "pods plan against a socket asked it" grep -q "not answering" "$WORK/pods-call.out"
assert "pods plan against a socket loaded libcurl for the call" has pods-call libcurl.so.4
finish
