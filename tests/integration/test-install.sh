#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Install layout and build output (issue 16): "make install" with PREFIX=/usr/local puts everything,
# units and the journal catalog included, beneath /usr/local (systemd reads
# /usr/local/lib/systemd/system); PREFIX=/usr puts the units in the distribution's directory;
# UNITDIR= still wins; "make -s" prints nothing; tests/demo.sh prints no escape sequence into a
# pipe; the units bound their start and narrow their capabilities. Writes only beneath a temporary
# directory in a private mount namespace. The completions: bash's, zsh's (site-functions beneath a
# local prefix, Debian's vendor-completions beneath /usr) and fish's.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
[ -x "$NODE_RESET" ] || skip "build $NODE_RESET first"

inst() { # DIR ARGS...: make -s install into DIR, the list of files in $WORK/DIR.files
        local d=$1; shift
        (cd "$TOP" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s O="$O" install DESTDIR="$WORK/$d" "$@") \
                > "$WORK/$d.out" 2>&1
        rc=$?
        (cd "$WORK/$d" && find . -type f | sed 's|^\.||' | sort) > "$WORK/$d.files"
}

inst local PREFIX=/usr/local
assert "PREFIX=/usr/local: make -s install succeeds, silently" test $rc -eq 0 -a ! -s "$WORK/local.out"
assert "PREFIX=/usr/local: every file is beneath /usr/local" test -z "$(grep -v '^/usr/local/' "$WORK/local.files")"
for f in sbin/node-reset lib/systemd/system/node-reset.service lib/systemd/system/node-reset-orphan.service \
        lib/systemd/system/node-reset-orphan.timer lib/systemd/catalog/node-reset.catalog \
        share/node-reset/report.schema.json share/node-reset/manifests/default.conf share/man/man8/node-reset.8 \
        share/bash-completion/completions/node-reset share/zsh/site-functions/_node-reset \
        share/fish/vendor_completions.d/node-reset.fish; do
        assert "PREFIX=/usr/local: /usr/local/$f" grep -qxF "/usr/local/$f" "$WORK/local.files"
done

inst usr PREFIX=/usr
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
assert "PREFIX=/usr: make -s install succeeds" test $rc -eq 0
assert "PREFIX=/usr: the units in the distribution's $unitdir" grep -qxF "$unitdir/node-reset.service" "$WORK/usr.files"
assert "PREFIX=/usr: the binary in /usr/sbin, the catalog in /usr/lib/systemd/catalog" \
        eval 'grep -qxF /usr/sbin/node-reset "$WORK/usr.files" && grep -qxF /usr/lib/systemd/catalog/node-reset.catalog "$WORK/usr.files"'
assert "PREFIX=/usr: the zsh completion in Debian's vendor-completions" \
        grep -qxF /usr/share/zsh/vendor-completions/_node-reset "$WORK/usr.files"

inst given PREFIX=/usr/local UNITDIR=/etc/systemd/system
assert "UNITDIR= given: it wins" grep -qxF /etc/systemd/system/node-reset.service "$WORK/given.files"

# "make -s" on something to compile: no "  CC ..." line.
(cd "$TOP" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s O="$WORK/obj" "$WORK/obj/agent/base/json.o") > "$WORK/s.out" 2>&1
assert "make -s compiles silently" test $? -eq 0 -a ! -s "$WORK/s.out" -a -f "$WORK/obj/agent/base/json.o"
(cd "$TOP" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make O="$WORK/obj" "$WORK/obj/agent/base/path.o") > "$WORK/v.out" 2>&1
assert "make without -s still says what it compiles" grep -q "CC .*agent/base/path.c" "$WORK/v.out"

# The demo into a pipe: no raw escape sequence.
O="$O" bash "$TOP/tests/demo.sh" 2>&1 | cat > "$WORK/demo.out"
assert "demo into a pipe: headings but no escape sequence" \
        eval 'grep -q "^==> node-reset plan" "$WORK/demo.out" && ! grep -q $'"'"'\e'"'"' "$WORK/demo.out"'

# The units: a bounded start, a narrowed capability set, a lower exposure than the 8.5 of before.
for u in node-reset.service node-reset-orphan.service; do
        assert "$u: TimeoutStartSec= above the run's --timeout" eval '
                t=$(sed -n "s/^TimeoutStartSec=\([0-9]*\)min$/\1/p" "$TOP/units/$u")
                n=$(sed -n "s/^Environment=NODE_RESET_TIMEOUT=//p" "$TOP/units/$u")
                grep -q -- "--timeout=\${NODE_RESET_TIMEOUT}" "$TOP/units/$u" && test -n "$t" -a -n "$n" &&
                        test $((t * 60)) -gt "$n"'
        assert "$u: CapabilityBoundingSet= names what a reset needs" \
                grep -qE '^CapabilityBoundingSet=CAP_SYS_ADMIN .*CAP_NET_ADMIN .*CAP_KILL ' "$TOP/units/$u"
        if command -v systemd-analyze > /dev/null &&
                systemd-analyze security --offline=yes "$TOP/units/$u" > "$WORK/sec.txt" 2>&1; then
                score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$WORK/sec.txt")
                echo "  $u: systemd-analyze security: $score"
                assert "$u: exposure below 6 (was 8.5)" python3 -c "import sys; sys.exit(0 if float('$score') < 6 else 1)"
        fi
done
# Every service creates what it writes for root alone; the failed-notice unit, which only leaves a
# mark, is confined to that (no capability, no network, a read-only system but its state directory).
for u in "$TOP"/units/*.service; do
        assert "${u##*/}: UMask=0077" grep -qx 'UMask=0077' "$u"
done
# test-orphan-units.sh runs a full reset under node-reset.service's sandbox; the orphan unit's run
# is the same reset, so its sandbox must be the same, line for line.
sandbox() { grep -E '^(UMask|NoNewPrivileges|LockPersonality|Protect[A-Za-z]*|Private[A-Za-z]*|KeyringMode|MemoryDenyWriteExecute|Restrict[A-Za-z]*|SystemCall[A-Za-z]*|CapabilityBoundingSet|SocketBind[A-Za-z]*)=' "$1"; }
sandbox "$TOP/units/node-reset.service" > "$WORK/sandbox-run"
sandbox "$TOP/units/node-reset-orphan.service" > "$WORK/sandbox-orphan"
assert "node-reset-orphan.service has node-reset.service's sandbox, line for line" \
        cmp -s "$WORK/sandbox-run" "$WORK/sandbox-orphan"
u=$TOP/units/node-reset-orphan-failed.service
assert "node-reset-orphan-failed.service: no capability at all" grep -qx 'CapabilityBoundingSet=' "$u"
assert "node-reset-orphan-failed.service: writes only its state directory" \
        sh -c "grep -qx 'ProtectSystem=strict' '$u' && grep -qx 'StateDirectory=node-reset' '$u'"
if command -v systemd-analyze > /dev/null && systemd-analyze security --offline=yes "$u" > "$WORK/sec.txt" 2>&1; then
        score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$WORK/sec.txt")
        echo "  node-reset-orphan-failed.service: systemd-analyze security: $score"
        assert "node-reset-orphan-failed.service: exposure below 1.5 (was 9.6)" \
                python3 -c "import sys; sys.exit(0 if float('$score') < 1.5 else 1)"
fi
finish
