#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's commands on a machine that has never built node-reset: "make build-deps demo" (the
# build packages only) and "make deps demo", each in one make, with -j2. The fresh machine is simulated honestly around the real Makefile and the
# real tools/install-deps.sh: pkg-config ($PKG_CONFIG, a wrapper) knows no library until the
# marker file exists, and only apt-get's "install" (a stand-in early in PATH, like dpkg-query, which
# reports every package missing, and debootstrap, which writes an empty package tarball) creates it,
# as apt installing the -dev packages would. The wrapper logs every call with the marker's state.
#   - build-deps then demo: only the build packages are installed (no etcd, no containerd), nothing
#     is downloaded beside them, and the demo passes;
#   - deps then demo: every pkg-config call comes after the install, the build and the demo pass;
#     no daemon may start during the install (a policy-rc.d answering 101 is in place while apt
#     runs, and gone after), and a unit a newly installed package enabled is disabled again;
#   - a library pkg-config cannot find: the build stops before compiling, naming the library.
# Everything happens in private namespaces with the build directory and the e2e cache on a tmpfs.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
in_private_ns "$@"
require_cmd pkg-config make cc

mark=$WORK/installed fake=$WORK/bin log=$WORK/calls.log
mkdir -p "$fake"
policy=$WORK/policy-rc.d
# Every package is missing; "-L etcd-server" lists the unit its postinst enables.
cat > "$fake/dpkg-query" <<'EOF'
#!/bin/sh
[ "$1 $2" = "-L etcd-server" ] && echo /lib/systemd/system/etcd.service
exit 1
EOF
cat > "$fake/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >> "$log"
case " \$* " in *" install "*)
        touch "$mark"
        if [ -x "$policy" ] && { "$policy" etcd start; [ \$? -eq 101 ]; }; then
                echo "apt-get: policy-rc.d refuses starts" >> "$log"
        fi ;;
esac
EOF
cat > "$fake/deb-systemd-helper" <<EOF
#!/bin/sh
echo "deb-systemd-helper \$*" >> "$log"
EOF
cat > "$fake/debootstrap" <<EOF
#!/bin/sh
echo "debootstrap \$*" >> "$log"
for a in "\$@"; do case "\$a" in --make-tarball=*) tar czf "\${a#--make-tarball=}" -T /dev/null ;; esac; done
EOF
cat > "$WORK/pkg-config" <<EOF
#!/bin/sh
if [ ! -e "$mark" ]; then
        echo "pkg-config (before deps) \$*" >> "$log"
        echo "Package libcurl was not found in the pkg-config search path." >&2
        exit 1
fi
echo "pkg-config (after deps) \$*" >> "$log"
exec pkg-config "\$@"
EOF
chmod +x "$fake"/* "$WORK/pkg-config"

# The make this test runs is a fresh one: a calling "make -s check" would hand it -s through
# MAKEFLAGS, and the compile lines asserted below would never be printed.
unset MAKEFLAGS MFLAGS MAKELEVEL
export POLICY_RC_D=$policy

PATH=$fake:$PATH E2E_CACHE=$WORK/e2e K8S_BUILD=no make -C "$TOP" --no-print-directory -j2 O="$WORK/build0" \
        PKG_CONFIG="$WORK/pkg-config" build-deps demo > "$WORK/make0.log" 2>&1; rc=$?
assert "make -j2 build-deps demo on a fresh machine: exit 0" test $rc -eq 0
assert "... it installed the -dev packages" grep -q '^apt-get .*install .*libcurl4-openssl-dev' "$log"
assert "... and no test package (etcd-server, containerd, qemu)" \
        sh -c "! grep -E '^apt-get .*install .*(etcd-server|containerd|qemu-system-x86)' '$log'"
assert "... nothing else was fetched (no e2e guest packages)" test ! -e "$WORK/e2e"
assert "... the demo ran to its end" grep -q '^demo: the node is clean' "$WORK/make0.log"
[ $rc -eq 0 ] || tail -n 30 "$WORK/make0.log"
rm -f "$mark" "$log"

t0=$(date +%s)
PATH=$fake:$PATH E2E_CACHE=$WORK/e2e K8S_BUILD=no make -C "$TOP" --no-print-directory -j2 O="$WORK/build" \
        PKG_CONFIG="$WORK/pkg-config" V=1 deps demo > "$WORK/make.log" 2>&1; rc=$?
echo "make -j2 deps demo took $(($(date +%s) - t0)) s"
assert "make -j2 deps demo on a fresh machine: exit 0" test $rc -eq 0
assert "... deps installed the -dev packages (apt-get install libcurl4-openssl-dev ...)" \
        grep -q '^apt-get .*install .*libcurl4-openssl-dev' "$log"
assert "... no daemon could start while apt installed (policy-rc.d answered 101)" \
        grep -q '^apt-get: policy-rc.d refuses starts' "$log"
assert "... and the policy-rc.d is gone again" test ! -e "$policy"
assert "... the unit a newly installed package enabled (etcd.service) is disabled again" \
        grep -q '^deb-systemd-helper disable etcd.service' "$log"
assert "... deps fetched the e2e guest's packages into the cache" test -f "$(ls "$WORK"/e2e/debs-*.tgz 2>/dev/null)"
assert "... pkg-config was asked, and only after the install" \
        sh -c "grep -q '^pkg-config (after deps) --cflags' '$log' && ! grep -q 'before deps' '$log'"
assert "... the agent was compiled with pkg-config's flags (libcurl's include path)" \
        grep -q -- '-I/usr/include/x86_64-linux-gnu' "$WORK/make.log"
assert "... the demo ran to its end" grep -q '^demo: the node is clean' "$WORK/make.log"
[ $rc -eq 0 ] || tail -n 30 "$WORK/make.log"

# A library pkg-config does not know: a clear stop naming it, before anything compiles.
cat > "$WORK/pkg-config-partial" <<'EOF'
#!/bin/sh
case " $* " in *" libmnl "*) exit 1 ;; esac
exec pkg-config "$@"
EOF
chmod +x "$WORK/pkg-config-partial"
make -C "$TOP" --no-print-directory -j2 O="$WORK/build2" PKG_CONFIG="$WORK/pkg-config-partial" all \
        > "$WORK/make2.log" 2>&1; rc=$?
assert "libmnl unknown to pkg-config: make fails" test $rc -ne 0
assert "... saying which library and what to run" \
        grep -q 'cannot find libmnl; run "sudo make deps"' "$WORK/make2.log"
assert "... before compiling anything" test -z "$(find "$WORK/build2" -name '*.o' 2>/dev/null)"
cat "$WORK/make2.log"
finish
