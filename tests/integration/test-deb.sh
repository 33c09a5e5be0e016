#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Packaging: debian/control builds with what tools/install-deps.sh installs; "dpkg-buildpackage -us
# -uc -b" builds a .deb in a copy of the tree (never in the checkout); the .deb holds the binary, the
# man page, the units, the manifests, the bash, zsh and fish completions (test-completion.sh checks
# what they offer), the README, the Ansible and Argo examples, the JSON schema and the journal
# catalog, starts nothing on install, purges orphan-check's state, and lintian finds no error; and
# "make install" / "make uninstall" put down and take away the same files.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
in_private_ns "$@"

not() { ! "$@"; }

# --- Build dependencies: debian/control and tools/install-deps.sh agree on the libraries --------
deps_libs=$(sed -n '/^\(build_\)\{0,1\}packages=(/,/^)/p' "$TOP/tools/install-deps.sh" | sed 's/#.*//' | xargs -n1 |
        grep -E '^lib.*-dev$' | grep -vE '^lib(cmocka|clang-rt-[0-9]+)-dev$' | sort -u | xargs)
control_libs=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$TOP/debian/control" | sed 's/^Build-Depends://' |
        tr ',|' '\n\n' | sed 's/[[(<].*//' | xargs -n1 | grep -E '^lib.*-dev$' | grep -v '^libcmocka-dev$' |
        sort -u | xargs)
assert "debian/control's Build-Depends libraries are install-deps.sh's ($deps_libs)" \
        test "$control_libs" = "$deps_libs"
version=$(sed -n 's/^VERSION *:= *//p' "$TOP/Makefile")
assert "debian/changelog's version is the Makefile's ($version)" \
        grep -q "^node-reset ($version)" "$TOP/debian/changelog"

# --- The package -----------------------------------------------------------------------------------
missing=""
for c in dpkg-buildpackage dh lintian dpkg-deb; do command -v "$c" > /dev/null || missing="$missing $c"; done
if [ -n "$missing" ]; then
        [ "$_failures" -eq 0 ] || finish
        skip "cannot build the package:$missing not installed (make deps)"
fi

# A copy of the tree: what git knows (tracked, and new files not ignored), never build outputs.
src=$WORK/src/node-reset-$version
mkdir -p "$src"
if git -C "$TOP" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
        git -C "$TOP" ls-files -z --cached --others --exclude-standard |
                (cd "$TOP" && xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
                tar -C "$TOP" --null -T - -cf - | tar -C "$src" -xf -
else
        tar -C "$TOP" --exclude=./.git --exclude='./build*' -cf - . | tar -C "$src" -xf -
fi
assert "the copy has debian/ and no build outputs" test -x "$src/debian/rules" -a ! -e "$src/build"

# make check / check-asan pass their variables down in MAKEFLAGS and O: the package is built with
# its own flags, into the copy's own build directory. "make check" runs the unit tests already: nocheck.
start=$SECONDS
(cd "$src" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u O -u CFLAGS -u LDFLAGS -u OPT -u CC -u V \
        DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" dpkg-buildpackage -us -uc -b -j"$(nproc)") \
        > "$WORK/build.log" 2>&1
rc=$?
echo "dpkg-buildpackage: exit $rc in $((SECONDS - start)) s"
[ $rc -eq 0 ] || tail -n 40 "$WORK/build.log"
deb=$WORK/src/node-reset_${version}_$(dpkg --print-architecture).deb
assert "dpkg-buildpackage -us -uc -b builds the .deb" test $rc -eq 0 -a -f "$deb"
assert "the checkout was not built in" test ! -e "$TOP/debian/.debhelper" -a ! -e "$TOP/debian/node-reset" \
        -a ! -e "$TOP/debian/files"
[ -f "$deb" ] || finish
mkdir -p "$O/deb" && cp "$deb" "$O/deb/"

dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's|^\./|/|' > "$WORK/contents"
in_deb() { grep -qxF "$1" "$WORK/contents"; }
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
assert "the .deb has /usr/sbin/node-reset" in_deb /usr/sbin/node-reset
assert "the .deb has the man page" in_deb /usr/share/man/man8/node-reset.8.gz
assert "the .deb has the bash completion" in_deb /usr/share/bash-completion/completions/node-reset
assert "the .deb has the zsh completion" in_deb /usr/share/zsh/vendor-completions/_node-reset
assert "the .deb has the fish completion" in_deb /usr/share/fish/vendor_completions.d/node-reset.fish
assert "the .deb has the copyright file" in_deb /usr/share/doc/node-reset/copyright
assert "the .deb has the README" eval 'in_deb /usr/share/doc/node-reset/README.md || in_deb /usr/share/doc/node-reset/README.md.gz'
assert "the .deb has the Ansible examples" in_deb /usr/share/doc/node-reset/examples/ansible/reset.yml
assert "the .deb has the configuration examples" \
        eval 'in_deb /usr/share/doc/node-reset/examples/config/manifest.conf && in_deb /usr/share/doc/node-reset/examples/config/node-reset.env && in_deb /usr/share/doc/node-reset/examples/config/report-headers'
assert "the .deb has the Argo example and its steps' scripts" \
        eval 'in_deb /usr/share/doc/node-reset/examples/argo/cluster-delete.yaml && in_deb /usr/share/doc/node-reset/examples/argo/steps/reset-node.sh'
assert "the .deb has the Ansible role's argument specs" \
        in_deb /usr/share/doc/node-reset/examples/ansible/roles/node_reset/meta/argument_specs.yml
assert "the .deb has the JSON report's schema" in_deb /usr/share/node-reset/report.schema.json
assert "the .deb has the journal message catalog" in_deb /usr/lib/systemd/catalog/node-reset.catalog
for m in "$TOP"/manifests/*.conf; do
        assert "the .deb has manifest $(basename "$m")" in_deb "/usr/share/node-reset/manifests/$(basename "$m")"
done
for u in "$TOP"/units/*; do
        [ -e "$u" ] || continue
        assert "the .deb has unit $(basename "$u") in $unitdir" in_deb "$unitdir/$(basename "$u")"
done

dpkg-deb -x "$deb" "$WORK/x"
dpkg-deb -e "$deb" "$WORK/x/DEBIAN"
assert "the packaged binary runs and says its version" \
        test "$("$WORK/x/usr/sbin/node-reset" --version | head -n1)" = "node-reset $version"
# dh_installsystemd --no-enable --no-start: a unit is re-enabled on upgrade only when the admin had
# enabled it ("was-enabled"), and nothing is ever started.
cat "$WORK"/x/DEBIAN/{preinst,postinst,prerm,postrm} 2>/dev/null > "$WORK/maintscripts"
assert "no maintainer script starts a unit" not grep -qE 'deb-systemd-invoke .*(start|restart)|systemctl .*start' "$WORK/maintscripts"
assert "no maintainer script enables a unit the admin had not enabled" \
        awk '/was-enabled/ { guard = NR } /deb-systemd-helper enable/ && NR - guard > 3 { bad = 1 } END { exit bad }' \
        "$WORK/maintscripts"
assert "the package depends on the libraries its core phases load (only libc is linked)" \
        grep -qE '^Depends:.*libmnl0' "$WORK/x/DEBIAN/control"
assert "no libnl in Build-Depends (nothing links it)" not grep -q libnl "$TOP/debian/control"

# postrm purge removes orphan-check's state; run here over a tmpfs on /var/lib (this namespace's
# only) with no systemd under /run, so neither the host's /var/lib nor its systemd is touched.
mount -t tmpfs nr-varlib /var/lib
mkdir -p /var/lib/node-reset /var/lib/keep
echo "evidence" > /var/lib/node-reset/orphan.state
echo keep > /var/lib/keep/file
sh "$WORK/x/DEBIAN/postrm" remove > /dev/null 2>&1
assert "postrm remove keeps /var/lib/node-reset" test -f /var/lib/node-reset/orphan.state
sh "$WORK/x/DEBIAN/postrm" purge > "$WORK/postrm.log" 2>&1
assert "postrm purge succeeds" test $? -eq 0
assert "postrm purge removes /var/lib/node-reset" test ! -e /var/lib/node-reset
assert "postrm purge leaves the rest of /var/lib" test -f /var/lib/keep/file
umount /var/lib

lintian --pedantic -I --tag-display-limit 0 "$deb" > "$WORK/lintian.txt" 2>&1
echo "lintian: $(grep -c '^E:' "$WORK/lintian.txt") errors, $(grep -c '^W:' "$WORK/lintian.txt") warnings"
grep -E '^[EWIP]:' "$WORK/lintian.txt"
assert "lintian reports no error" test "$(grep -c '^E:' "$WORK/lintian.txt")" -eq 0

# --- make install / make uninstall, in the copy, with the package's build ------------------------
(cd "$src" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u O make -s install DESTDIR="$WORK/inst" PREFIX=/usr) \
        > "$WORK/install.log" 2>&1
assert "make install DESTDIR PREFIX=/usr succeeds" test $? -eq 0
(cd "$WORK/inst" && find . -type f | sed 's|^\.||' | sort) > "$WORK/installed"
grep -v -e '^/usr/share/doc/' -e '^/usr/share/lintian/' "$WORK/contents" | grep -v '/$' | sed -E 's/\.([58])\.gz$/.\1/' | sort > "$WORK/packaged"
comm -3 "$WORK/installed" "$WORK/packaged" > "$WORK/install-diff"
assert "make install puts down the files the package has" test ! -s "$WORK/install-diff"
[ -s "$WORK/install-diff" ] && cat "$WORK/install-diff"
(cd "$src" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u O make -s uninstall DESTDIR="$WORK/inst" PREFIX=/usr) \
        >> "$WORK/install.log" 2>&1
assert "make uninstall takes every file away" test -z "$(find "$WORK/inst" -type f)"

finish
