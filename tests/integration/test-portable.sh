#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The portable binary: build/node-reset copied alone into a chroot that holds only the dynamic
# loader and libc (on a tmpfs, in private mount and network namespaces, with /proc mounted there).
# --version, manifest print, plan, run --yes --root and status all work and exit 0; the phases whose
# library is missing are planned as one skipped row naming the library. Then the same chroot plus
# only libmnl and libnftnl: the firewall phase removes a KUBE- chain made with iptables-nft in this
# network namespace, keeps a host chain, and skips the legacy and ipset lines for their libraries.
# Last, the ELF checks: readelf names no library but libc, objdump no GLIBC_ version above 2.34.
. "$(dirname "$0")/lib.sh"
in_private_ns -n "$@"
require_cmd chroot readelf objdump python3
[ -x "$NODE_RESET" ] || skip "$NODE_RESET is not built"
# A sanitizer build (make check-asan) links libasan/libubsan by design: what this test proves is a
# property of the plain binary, which make check tests.
if readelf -d "$NODE_RESET" | grep -qE 'NEEDED.*lib(asan|ubsan)'; then
        skip "$NODE_RESET is a sanitizer build (it needs libasan/libubsan); make check tests the plain binary"
fi
REPORT="$TOP/tests/integration/report.py"
. "$TOP/tests/integration/fixtures/node-tree.sh"
jq_() { "$REPORT" "$@" > /dev/null; }   # jq_ FILE EXPR: true when EXPR holds

# --- The ELF file itself --------------------------------------------------------------------------
needed=$(readelf -d "$NODE_RESET" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
assert "readelf: libc.so.6 is the only library needed (got: $needed)" test "$needed" = "libc.so.6 "
newest=$(objdump -T "$NODE_RESET" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -u -V | tail -1)
assert "objdump: no glibc symbol version above GLIBC_2.34 (newest: $newest)" \
        test "$(printf '%s\nGLIBC_2.34\n' "$newest" | sort -V | tail -1)" = GLIBC_2.34
assert "objdump: no versioned symbol of any other library" \
        test -z "$(objdump -T "$NODE_RESET" | grep -E '\((OPENSSL|CURL|LIBMNL|LIBNFTNL|LIBSYSTEMD|LIBIPSET)' )"

# --- A chroot with the loader and libc only ------------------------------------------------------
C=$WORK/chroot
libdir=/lib/x86_64-linux-gnu
[ -e "$libdir/libc.so.6" ] && [ -e /lib64/ld-linux-x86-64.so.2 ] || skip "not an x86-64 Debian layout ($libdir)"
mkdir -p "$C/lib64" "$C$libdir" "$C/proc" "$C/run" "$C/tmp" "$C/etc"
cp -L /lib64/ld-linux-x86-64.so.2 "$C/lib64/"
cp -L "$libdir/libc.so.6" "$C$libdir/"
cp "$NODE_RESET" "$C/node-reset"
mount -t proc proc "$C/proc" || { fail "cannot mount /proc in the chroot"; finish; }
nrc() { chroot "$C" /node-reset "$@"; }
libs_in_chroot() { (cd "$C" && find . -path ./proc -prune -o -name '*.so*' -print | sort | tr '\n' ' '); }
assert "the chroot holds the loader and libc only" \
        test "$(libs_in_chroot)" = "./lib/x86_64-linux-gnu/libc.so.6 ./lib64/ld-linux-x86-64.so.2 "

nrc --version > "$WORK/version.txt" 2>&1; rc=$?
assert "--version exits 0 with only libc" test $rc -eq 0
assert "--version names itself" grep -q "^node-reset [0-9]" "$WORK/version.txt"
for l in libsystemd.so.0 libmnl.so.0 libnftnl.so.11 libip4tc.so.2 libip6tc.so.2 libipset.so.13 libcurl.so.4 libcrypto.so.3 libyaml-0.so.2 libsqlite3.so.0; do
        assert "--version: $l not found" grep -q "not loaded: $l not found" "$WORK/version.txt"
done

# Forwarders called with their library missing answer their API's error value, never crash.
PROBE="$O/tests/dlib-probe"
if [ -x "$PROBE" ]; then
        "$PROBE" loaded > "$WORK/probe-loaded.txt" 2>&1; rc=$?
        assert "dlib-probe: every library loads here and the variadic forwarders pass their arguments" test $rc -eq 0
        cp "$PROBE" "$C/dlib-probe"
        chroot "$C" /dlib-probe missing > "$WORK/probe.txt" 2>&1; rc=$?
        assert "dlib-probe in the chroot: each forwarder returns its error value ($(grep -c '^ok' "$WORK/probe.txt") checks)" test $rc -eq 0
        grep '^FAIL' "$WORK/probe.txt" "$WORK/probe-loaded.txt"
        rm "$C/dlib-probe"
else
        fail "$PROBE is not built (make check builds it)"
fi
assert "orphan-check without libcurl: exit 255 naming it" \
        sh -c 'chroot "$1" /node-reset orphan-check > /dev/null 2> "$2"; [ $? -eq 255 ] && grep -q "libcurl.so.4 not found: cannot ask the API server" "$2"' \
        sh "$C" "$WORK/orphan.err"

nrc manifest print > "$WORK/manifest.txt" 2>&1; rc=$?
assert "manifest print exits 0" test $rc -eq 0
assert "manifest print shows the embedded manifest" grep -q "^unit kubelet.service" "$WORK/manifest.txt"

root=$C/node disk=$C/disk
mkdir -p "$root" "$disk"
build_node_tree "$root" "$disk"
sum_before=$(sha256sum "$disk/pv-data/important.db")
mounts_beneath() { findmnt -rn -o TARGET | grep -F "$1/" || true; }
assert "the fixture has mounts beneath the node" test -n "$(mounts_beneath "$root")"

nrc --root /node plan > "$WORK/plan.txt" 2>&1; rc=$?
assert "plan exits 0" test $rc -eq 0
assert "plan lists the PV mount for unmounting" grep -q "unmount.*pvc-data/mount" "$WORK/plan.txt"
assert "plan lists files to remove" grep -q "remove.*/etc/kubernetes" "$WORK/plan.txt"
assert "plan says what is unavailable on this node" grep -q "libipset.so.13 not found: firewall ipset lines skipped" "$WORK/plan.txt"

# Every phase asked for: the ones that need a missing library are one skipped row naming it; the
# rest plan as usual. (This network namespace is private; systemd and the CRI are not reachable.)
nrc --root /node --phases services-early,pods,mounts,firewall,network,files,reload --output=json plan \
        > "$WORK/plan-all.json" 2> "$WORK/plan-all.err"; rc=$?
assert "plan of every phase exits 0" test $rc -eq 0
for p in services-early:libsystemd.so.0 pods:libcurl.so.4 firewall:libmnl.so.0 network:libmnl.so.0 reload:libsystemd.so.0; do
        assert "plan: phase ${p%%:*} skipped, naming ${p#*:}" jq_ "$WORK/plan-all.json" \
                "[(a['target'], a['skip_reason']) for a in actions(r, phase='${p%%:*}')] == [('${p#*:}', '${p#*:} not found: the ${p%%:*} phase skipped')]"
done
assert "plan: the unavailable list names libcurl and what it costs" jq_ "$WORK/plan-all.json" \
        "any(u['library'] == 'libcurl' and u['why'] == 'libcurl.so.4 not found' and 'pods phase skipped' in u['effect'] for u in r['unavailable'])"
# The YAML loader's one answer without libyaml: the file, and why it was not read (never "out of memory").
assert "plan: kubelet's config.yaml not read for want of libyaml, in the loader's words" jq_ "$WORK/plan-all.json" \
        "'/var/lib/kubelet/config.yaml: not read: libyaml is not available (libyaml-0.so.2 not found): not evidence' in r['runtime']['evidence']"

nrc --root /node --yes --output=json run > "$WORK/run.json" 2> "$WORK/run.err"; rc=$?
assert "run exits 0" test $rc -eq 0
assert "run: changed, nothing failed, no residue" jq_ "$WORK/run.json" 'r["changed"] and not r["failed"] and r["residue"] == []'
assert "run: the PV mount was unmounted" jq_ "$WORK/run.json" 'any(a["target"].endswith("pvc-data/mount") and a["result"] == "changed" for a in actions(r, kind="unmount"))'
assert "run: no mount left beneath the node" test -z "$(mounts_beneath "$root")"
assert "run: /etc/kubernetes/admin.conf is gone (the kubeadm profile of an undetected node)" test ! -e "$root/etc/kubernetes/admin.conf"
assert "run: PV data kept every byte" test "$(sha256sum "$disk/pv-data/important.db")" = "$sum_before"
assert "run: host files survive" test -s "$root/etc/hostname" -a -s "$root/usr/bin/bash"
assert "run: protected /var/openebs survives" grep -q "must survive" "$root/var/openebs/local/pvc-1/data"

# --report-url without libcurl: the run goes on, each POST fails once naming the library, and the
# URL in the report is still cut to scheme, host and path (no user info, query or fragment).
mkdir -p "$root/etc/kubernetes" && echo x > "$root/etc/kubernetes/admin.conf"
nrc --root /node --yes --output=json --report-url 'https://user:pw@127.0.0.1:1/status?token=s3cr3t#frag' run \
        > "$WORK/run-url.json" 2> "$WORK/run-url.err"; rc=$?
assert "run --report-url without libcurl: exit 0, the tree reset" test $rc -eq 0 -a ! -e "$root/etc/kubernetes/admin.conf"
assert "run --report-url without libcurl: both POSTs failed once, naming libcurl" jq_ "$WORK/run-url.json" \
        'all(not r["report_url"][p]["ok"] and r["report_url"][p]["attempts"] == 1 and r["report_url"][p]["error"] == "libcurl.so.4 not found" for p in ("start", "final"))'
assert "run --report-url without libcurl: the URL is redacted by hand" jq_ "$WORK/run-url.json" \
        'r["report_url"]["url"] == "https://127.0.0.1:1/status"'
assert "run --report-url without libcurl: the token is in no output" sh -c '! grep -q s3cr3t "$1" "$2"' sh "$WORK/run-url.json" "$WORK/run-url.err"

nrc --root /node status > "$WORK/status.txt" 2>&1; rc=$?
assert "status exits 0 on the cleaned tree" test $rc -eq 0
assert "status says which libraries are unavailable" grep -q "libsystemd.so.0 not found: services-early, services-late and reload phases skipped" "$WORK/status.txt"

# --- The same chroot plus libmnl and libnftnl: the firewall phase in this network namespace -------
if ! command -v iptables-nft > /dev/null || ! iptables-nft -L -n > /dev/null 2>&1; then
        echo "SKIP (firewall part): iptables-nft cannot reach nf_tables here"
        finish
fi
for l in libmnl.so.0 libnftnl.so.11; do
        [ -e "$libdir/$l" ] || skip "$libdir/$l is not installed"
        cp -L "$libdir/$l" "$C$libdir/"
done
assert "libnftnl needs nothing the chroot lacks" \
        test -z "$(chroot "$C" /lib64/ld-linux-x86-64.so.2 --list "$libdir/libnftnl.so.11" | grep 'not found')"
iptables-nft -N KUBE-PORTABLE-TEST && iptables-nft -A KUBE-PORTABLE-TEST -j ACCEPT &&
        iptables-nft -A INPUT -j KUBE-PORTABLE-TEST && iptables-nft -N HOST-KEEP && iptables-nft -A HOST-KEEP -j ACCEPT ||
        { fail "cannot build the iptables-nft fixture"; finish; }
have_legacy=0
command -v iptables-legacy > /dev/null && iptables-legacy -N KUBE-LEGACY-TEST 2> /dev/null && have_legacy=1
printf 'firewall owned\nipset KUBE-*\n' > "$C/fw.conf"

nrc --version > "$WORK/version2.txt" 2>&1
assert "--version: libmnl and libnftnl found" grep -q "libnftnl    libnftnl.so.11" "$WORK/version2.txt"
nrc --root /node --manifest /fw.conf --phases firewall --yes --output=json run > "$WORK/fw.json" 2> "$WORK/fw.err"; rc=$?
assert "firewall run exits 0" test $rc -eq 0
assert "firewall: the KUBE- chain is gone" sh -c '! iptables-nft -S 2>/dev/null | grep -q KUBE-PORTABLE-TEST'
assert "firewall: the host chain survives" sh -c 'iptables-nft -S HOST-KEEP 2>/dev/null | grep -q "^-A HOST-KEEP -j ACCEPT"'
assert "firewall: the nf_tables action changed it" jq_ "$WORK/fw.json" 'any(a["target"] == "nft ip filter" and a["result"] == "changed" for a in actions(r, phase="firewall"))'
assert "firewall: the ipset lines are skipped, naming libipset" jq_ "$WORK/fw.json" \
        'any(a["kind"] == "library" and a["result"] == "skipped" and a["message"] == "libipset.so.13 not found: ipset lines skipped" for a in actions(r, phase="firewall"))'
if [ $have_legacy = 1 ]; then
        assert "firewall: the legacy lines are skipped, naming libip4tc" jq_ "$WORK/fw.json" \
                'any(a["target"] == "libip4tc.so.2" and a["result"] == "skipped" and "legacy iptables lines skipped" in a["message"] for a in actions(r, phase="firewall"))'
        assert "firewall: the legacy chain is left as it was" sh -c 'iptables-legacy -S | grep -q KUBE-LEGACY-TEST'
fi
finish
