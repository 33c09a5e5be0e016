#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The mounts and files phases against --root trees in a private mount namespace: nothing outside the
# manifest is lost (PV bind mounts, symlink targets, foreign mounts, busy mounts, protected paths),
# and the lock, confirmation, root check and manifest errors refuse before anything changes.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
REPORT="$TOP/tests/integration/report.py"
. "$TOP/tests/integration/fixtures/node-tree.sh"

nr() { "$NODE_RESET" "$@"; }
jq_() { "$REPORT" "$@" >/dev/null; }   # jq_ FILE EXPR: true when EXPR holds

# --- The union profile ("all", the embedded default.conf) on a synthetic node -------------------
root=$WORK/node disk=$WORK/disk
mkdir -p "$root" "$disk"
build_node_tree "$root" "$disk"
sum_before=$(sha256sum "$disk/pv-data/important.db")
mounts_beneath() { findmnt -rn -o TARGET | grep -F "$1/" || true; }
assert "the fixture has mounts beneath the node" test -n "$(mounts_beneath "$root")"
ln -s "$WORK/outside-target" "$root/etc/kubernetes/link-out"
echo "not in the manifest" > "$WORK/outside-target"

nr --root "$root" --profile all plan > "$WORK/plan.txt"; rc=$?
assert "plan exits 0" test $rc -eq 0
assert "plan changes nothing" test -e "$root/etc/kubernetes/admin.conf"
assert "plan lists the PV mount for unmounting" grep -q "unmount.*pvc-data/mount" "$WORK/plan.txt"

nr --root "$root" --profile all --yes --output=json run > "$WORK/run1.json"; rc=$?
assert "run exits 0 on a node it can clean" test $rc -eq 0
assert "report says changed, not failed" jq_ "$WORK/run1.json" 'r["changed"] and not r["failed"] and r["residue"] == []'
assert "PV data kept every byte" test "$(sha256sum "$disk/pv-data/important.db")" = "$sum_before"
assert "PV mount was unmounted" jq_ "$WORK/run1.json" 'any(a["target"].endswith("pvc-data/mount") and a["result"] == "changed" for a in actions(r, kind="unmount"))'
assert "symlink's target outside the manifest survives" grep -q "not in the manifest" "$WORK/outside-target"
assert "the symlink itself is gone" test ! -L "$root/etc/kubernetes/link-out"
assert "/etc/kubernetes is gone" test ! -e "$root/etc/kubernetes"
assert "immutable file removed and the flag clearing reported" jq_ "$WORK/run1.json" 'any("immutable" in (a["message"] or "") for a in actions(r, kind="remove", result="changed"))'
assert "protected /var/openebs survives" grep -q "must survive" "$root/var/openebs/local/pvc-1/data"
assert "/var/lib/kubelet is emptied, not removed" test -d "$root/var/lib/kubelet" -a -z "$(ls -A "$root/var/lib/kubelet")"
assert "host files survive" test -s "$root/etc/hostname" -a -s "$root/root/.bashrc" -a -s "$root/usr/bin/bash"
assert "no mount left beneath the node" test -z "$(mounts_beneath "$root")"

nr --root "$root" --profile all --yes --output=json run > "$WORK/run2.json"; rc=$?
assert "second run exits 0" test $rc -eq 0
assert "second run: every action unchanged" jq_ "$WORK/run2.json" 'not r["changed"] and all(a["result"] in ("unchanged", "skipped") for a in actions(r))'
nr --root "$root" --profile all status > /dev/null; rc=$?
assert "status exits 0 on a clean node" test $rc -eq 0

# --- A hand-written manifest: foreign mounts, busy mounts, spaces, globs and protect --------------
root=$WORK/t2
mkdir -p "$root"/var/lib/stuff/{a,b,keep} "$root/opt/my dir/sub" "$root"/etc/cni/net.d/foreign \
        "$root/var/lib/kubelet/pods/p1/volumes/busy" "$root/var/lib/kubelet/pods/p 2/vol with space"
echo x > "$root/var/lib/stuff/a/f"; echo keep > "$root/var/lib/stuff/keep/data"
echo y > "$root/opt/my dir/sub/file"
mount -t tmpfs nr-foreign "$root/etc/cni/net.d/foreign"
echo "foreign data" > "$root/etc/cni/net.d/foreign/data"
mount -t tmpfs nr-busy "$root/var/lib/kubelet/pods/p1/volumes/busy"
echo "busy data" > "$root/var/lib/kubelet/pods/p1/volumes/busy/data"
mount -t tmpfs nr-space "$root/var/lib/kubelet/pods/p 2/vol with space"
( exec 3<"$root/var/lib/kubelet/pods/p1/volumes/busy/data"; exec sleep 120 ) > /dev/null 2>&1 &
holder=$!
# The mount is busy only once the holder has opened the file: under load the run could start first.
for _ in $(seq 100); do
        [ "$(readlink "/proc/$holder/fd/3" 2>/dev/null)" = "$root/var/lib/kubelet/pods/p1/volumes/busy/data" ] && break
        sleep 0.05
done
cat > "$WORK/m2.conf" <<'M'
# test manifest
unmount /var/lib/kubelet/*
remove /var/lib/kubelet/pods
remove "/opt/my dir"
remove /var/lib/stuff/*
protect /var/lib/stuff/keep
remove /etc/cni/net.d
M
nr --root "$root" --manifest "$WORK/m2.conf" --yes --output=json run > "$WORK/run3.json"; rc=$?
assert "run with a busy and a foreign mount exits 1" test $rc -eq 1
assert "busy mount reported failed with its holder" jq_ "$WORK/run3.json" "any(a['result'] == 'failed' and 'busy' in a['message'] and '$holder' in a['message'] for a in actions(r, kind='unmount'))"
assert "busy mount's data not deleted into" grep -q "busy data" "$root/var/lib/kubelet/pods/p1/volumes/busy/data"
assert "mount point with spaces unmounted" jq_ "$WORK/run3.json" 'any(a["target"].endswith("/p 2/vol with space") and a["result"] == "changed" for a in actions(r, kind="unmount"))'
assert "foreign tmpfs inside a remove path untouched" grep -q "foreign data" "$root/etc/cni/net.d/foreign/data"
assert "foreign mount reported as failed" jq_ "$WORK/run3.json" 'any(a["target"] == "/etc/cni/net.d" and a["result"] == "failed" and "foreign" in a["message"] for a in actions(r, kind="remove"))'
assert "the residue names the foreign mount" jq_ "$WORK/run3.json" 'any(x["target"] == "/etc/cni/net.d" for x in r["residue"])'
assert "path with a space removed" test ! -e "$root/opt/my dir"
assert "glob removed its matches" test ! -e "$root/var/lib/stuff/a" -a ! -e "$root/var/lib/stuff/b"
assert "protected dir under a glob survives" grep -q keep "$root/var/lib/stuff/keep/data"
assert "protected match reported skipped" jq_ "$WORK/run3.json" 'any(a["target"] == "/var/lib/stuff/keep" and a["result"] == "skipped" for a in actions(r))'
kill "$holder"; wait "$holder" 2>/dev/null

nr --root "$root" --manifest "$WORK/m2.conf" --yes --output=json run > "$WORK/run4.json"; rc=$?
assert "after the holder exits the busy mount goes" jq_ "$WORK/run4.json" 'any(a["target"].endswith("/busy") and a["result"] == "changed" for a in actions(r, kind="unmount"))'
assert "its data was never deleted (it lived on the unmounted tmpfs)" test ! -e "$root/var/lib/kubelet/pods"

# --- Killed half way (SIGKILL), then run again: converges ------------------------------------------
root=$WORK/t4
mkdir -p "$root/var/lib/etcd/member" "$root/var/lib/kubelet/pods/k/volumes/v" "$root/etc/kubernetes"
echo keep > "$root/etc/hostname"
( cd "$root/var/lib/etcd/member" && seq -f "d%g" 1 40 | xargs mkdir && for d in d*; do
        (cd "$d" && seq -f "f%g" 1 500 | xargs touch); done )
mount -t tmpfs nr-kill "$root/var/lib/kubelet/pods/k/volumes/v"
printf 'unmount /var/lib/kubelet/*\nremove /var/lib/etcd\nempty /var/lib/kubelet\nremove /etc/kubernetes\n' > "$WORK/m4.conf"
"$NODE_RESET" --root "$root" --manifest "$WORK/m4.conf" --yes run > /dev/null 2>&1 &
victim=$!
sleep 0.05
kill -KILL "$victim" 2>/dev/null && echo "note: the first run was killed while working"
wait "$victim" 2>/dev/null
nr --root "$root" --manifest "$WORK/m4.conf" --yes --output=json run > "$WORK/run5.json"; rc=$?
assert "the run after a SIGKILL converges: exit 0" test $rc -eq 0
assert "the run after a SIGKILL leaves no residue" jq_ "$WORK/run5.json" 'r["residue"] == []'
assert "the lock of the killed run did not block the next one" test $rc -ne 3
assert "host file untouched after the kill and rerun" grep -q keep "$root/etc/hostname"

# --- Refusals: lock, confirmation, root, manifest errors -----------------------------------------
root=$WORK/t3
mkdir -p "$root/etc/kubernetes" "$root/run"
echo keep > "$root/etc/kubernetes/admin.conf"
# The process that takes the flock is the one that keeps it (and that /proc/locks names).
python3 -c 'import fcntl, sys, time; f = open(sys.argv[1], "w"); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(60)' \
        "$root/run/node-reset.lock" > /dev/null 2>&1 &
locker=$!
for _ in $(seq 100); do grep -q "FLOCK .* $locker " /proc/locks && break; sleep 0.1; done
nr --root "$root" --yes run > /dev/null 2> "$WORK/lock.err"; rc=$?
assert "a second run is refused with exit 3 while the lock is held" test $rc -eq 3
assert "the refusal names the holder's PID" grep -q "PID $locker" "$WORK/lock.err"
assert "nothing changed while locked" test -e "$root/etc/kubernetes/admin.conf"
kill "$locker"; wait "$locker" 2>/dev/null

nr --root "$root" run < /dev/null > "$WORK/noyes.out" 2> "$WORK/noyes.err"; rc=$?
assert "run without --yes and without a terminal refuses with 3" test $rc -eq 3
assert "the plan is printed before the refusal" grep -q "/etc/kubernetes" "$WORK/noyes.out"
assert "nothing changed when not confirmed" test -e "$root/etc/kubernetes/admin.conf"

if command -v setpriv > /dev/null; then
        cp "$NODE_RESET" "$WORK/nr-copy" && chmod 0755 "$WORK/nr-copy"
        setpriv --reuid=65534 --regid=65534 --clear-groups "$WORK/nr-copy" plan > /dev/null 2>&1; rc=$?
        assert "not root and no --root: refused with 3" test $rc -eq 3
else
        echo "SKIP (non-root check): setpriv is not installed"
fi

printf 'remove /etc/kubernetes\nremov /var/lib/x\n' > "$WORK/bad1.conf"
printf 'remove etc/kubernetes\n' > "$WORK/bad2.conf"
printf 'remove /etc\n' > "$WORK/bad3.conf"
printf 'remove "/var/lib/x\n' > "$WORK/bad4.conf"
printf '# ok\ninclude bad1.conf\n' > "$WORK/bad5.conf"
for b in 1 2 3 4; do
        nr --root "$root" --manifest "$WORK/bad$b.conf" --yes run > /dev/null 2> "$WORK/bad.err"; rc=$?
        assert "malformed manifest bad$b.conf: exit 2" test $rc -eq 2
        assert "bad$b.conf: the error names file:line" grep -q "bad$b.conf:[0-9]" "$WORK/bad.err"
done
nr --root "$root" --manifest "$WORK/bad5.conf" --yes run > /dev/null 2> "$WORK/bad.err"; rc=$?
assert "an error in an included file names that file and line" grep -q "bad1.conf:2" "$WORK/bad.err"
assert "nothing executed on a bad manifest" test -e "$root/etc/kubernetes/admin.conf"
nr manifest check "$WORK/bad2.conf" > /dev/null 2>&1; rc=$?
assert "manifest check rejects with 2" test $rc -eq 2
nr --bogus > /dev/null 2> "$WORK/usage.err"; rc=$?
assert "unknown option: exit 2 and a pointer to --help" test $rc -eq 2 -a "$(grep -c "Try 'node-reset --help'" "$WORK/usage.err")" -eq 1

# --- Trees deeper than any fixed limit (issue 15, hole 2) -----------------------------------------
# A pod can nest directories in its emptyDir as deep as it likes: the walk must remove them all, or
# say what it could not remove; never call the node clean with the tree still there.

# deep_tree DIR DEPTH [NAME]: DEPTH nested directories NAME (default "d") below DIR and a file "leaf"
# at the bottom. Built relative to the working directory, so that no path given to the kernel is
# longer than PATH_MAX, as a pod would.
deep_tree() {
        python3 - "$@" <<'PY'
import os, sys
os.chdir(sys.argv[1])
name = sys.argv[3] if len(sys.argv) > 3 else "d"
for _ in range(int(sys.argv[2])):
    os.mkdir(name)
    os.chdir(name)
with open("leaf", "w") as f:
    f.write("bottom\n")
PY
}

# deep_do DIR DEPTH PYTHON: run PYTHON (with os, ctypes and libc imported) in DIR/d/d/... at DEPTH.
deep_do() {
        python3 - "$@" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(sys.argv[1])
for _ in range(int(sys.argv[2])):
    os.chdir("d")
exec(sys.argv[3])
PY
}

# deep_exists DIR DEPTH: is there a leaf at the bottom of the chain?
deep_exists() { deep_do "$1" "$2" 'sys.exit(0 if os.path.exists("leaf") else 1)'; }

test_deep_trees_removed() {
        local root=$WORK/deep1 kub
        kub=$root/var/lib/kubelet
        mkdir -p "$kub/pods/p1/volumes/kubernetes.io~empty-dir/v" "$kub/pods/p2" "$kub/pods/p3" "$root/etc"
        echo node-1 > "$root/etc/hostname"
        deep_tree "$kub/pods/p1/volumes/kubernetes.io~empty-dir/v" 4200
        deep_tree "$kub/pods/p2" 10000
        # 120 levels of 200-byte names: a path of 24 KB, far beyond PATH_MAX.
        deep_tree "$kub/pods/p3" 120 "$(printf 'n%.0s' $(seq 200))"
        printf 'empty /var/lib/kubelet\n' > "$WORK/deep1.conf"
        assert "deep: the fixture's leaves exist" deep_exists "$kub/pods/p2" 10000

        nr --root "$root" --manifest "$WORK/deep1.conf" plan > "$WORK/deep1-plan.txt" 2>&1; rc=$?
        assert "deep: plan exits 0" test $rc -eq 0
        assert "deep: the plan does not skip the line" bash -c "! grep -qi skip '$WORK/deep1-plan.txt'"
        nr --root "$root" --manifest "$WORK/deep1.conf" --yes --output=json run > "$WORK/deep1.json"; rc=$?
        assert "deep (4,200 and 10,000 levels, a 24 KB path): run exits 0" test $rc -eq 0
        assert "deep: the action changed, no residue" jq_ "$WORK/deep1.json" \
                'r["residue"] == [] and any(a["result"] == "changed" for a in actions(r, kind="empty"))'
        assert "deep: every tree is gone" test -z "$(ls -A "$kub")"
        assert "deep: /var/lib/kubelet itself stays" test -d "$kub"
        assert "deep: host file survives" grep -q node-1 "$root/etc/hostname"
        nr --root "$root" --manifest "$WORK/deep1.conf" status > /dev/null 2>&1; rc=$?
        assert "deep: status exits 0 afterwards" test $rc -eq 0
}

# A tmpfs mounted 4,500 levels down cannot be removed (no unmount line covers it): a failure and
# residue, the mount and its data untouched.
test_deep_mount_residue() {
        local root=$WORK/deep2 kub
        kub=$root/var/lib/kubelet
        mkdir -p "$kub/pods/p1" "$kub/pods/p2"
        deep_tree "$kub/pods/p1" 5000
        deep_tree "$kub/pods/p2" 50
        deep_do "$kub/pods/p1" 4500 '
os.mkdir("m")
if libc.mount(b"nr-deep", b"m", b"tmpfs", 0, None) != 0:
    sys.exit("mount: " + os.strerror(ctypes.get_errno()))
open("m/data", "w").write("deep mount data\n")'
        assert "deep mount: fixture mounted" test "$(findmnt -rn -S nr-deep | wc -l)" -eq 1
        printf 'empty /var/lib/kubelet\n' > "$WORK/deep2.conf"

        nr --root "$root" --manifest "$WORK/deep2.conf" --yes run > "$WORK/deep2.txt" 2>&1; rc=$?
        assert "deep mount: run exits 1" test $rc -eq 1
        assert "deep mount: the report never says clean" bash -c "! grep -q 'the node is clean' '$WORK/deep2.txt'"
        nr --root "$root" --manifest "$WORK/deep2.conf" --yes --output=json run > "$WORK/deep2.json"; rc=$?
        assert "deep mount: a second run exits 1 too" test $rc -eq 1
        assert "deep mount: the action failed and /var/lib/kubelet is residue" jq_ "$WORK/deep2.json" \
                'any(a["result"] == "failed" for a in actions(r, kind="empty")) and any(x["target"] == "/var/lib/kubelet" for x in r["residue"])'
        assert "deep mount: still mounted, its data intact" \
                deep_do "$kub/pods/p1" 4500 'sys.exit(0 if open("m/data").read() == "deep mount data\n" else 1)'
        assert "deep mount: everything else went" test ! -e "$kub/pods/p2"
        nr --root "$root" --manifest "$WORK/deep2.conf" status > /dev/null 2>&1; rc=$?
        assert "deep mount: status does not exit 0" test $rc -ne 0
}

# --- An immutable file hard-linked to a protected one (issue 15) ----------------------------------
# The flag belongs to the inode: clearing it to unlink the name inside the tree would strip the
# protected twin of its flag too. That entry must stay, flag and all, and the action fail.

# immutable_fs DIR: make DIR a file system where chattr +i works: the work tmpfs when it can (Linux
# 6.0 and later), else an ext4 image on a loop device. Sets $why and fails when neither can.
immutable_fs() {
        local probe=$1/.probe
        mkdir -p "$1"
        if touch "$probe" && chattr +i "$probe" 2>/dev/null; then
                chattr -i "$probe"; rm -f "$probe"; return 0
        fi
        rm -f "$probe"
        why="chattr +i fails on tmpfs here"
        command -v mkfs.ext4 > /dev/null || { why="$why, and mkfs.ext4 is not installed"; return 1; }
        truncate -s 64M "$WORK/ext4.img" && mkfs.ext4 -q -F "$WORK/ext4.img" ||
                { why="$why, and mkfs.ext4 failed"; return 1; }
        mount -o loop "$WORK/ext4.img" "$1" 2>/dev/null || { why="$why, and no loop device"; return 1; }
        touch "$probe" && chattr +i "$probe" || { why="chattr +i fails on ext4 too"; return 1; }
        chattr -i "$probe"; rm -f "$probe"
}

has_immutable() { lsattr -d "$1" 2>/dev/null | cut -d' ' -f1 | grep -q i; }

test_linked_immutable() {
        local root=$WORK/linked kub twin why=""
        if ! immutable_fs "$root"; then
                echo "SKIP (hard-linked immutable file): $why"
                return
        fi
        kub=$root/var/lib/kubelet twin=$root/var/openebs/local/pvc-1/data
        mkdir -p "$kub/pods/p1/volumes/v" "$kub/pods/p2" "${twin%/*}"
        echo "openebs volume, must survive" > "$twin"
        deep_tree "$kub/pods/p1/volumes/v" 50
        deep_do "$kub/pods/p1/volumes/v" 50 'os.link(sys.argv[4], "twin")' "$twin"
        echo x > "$kub/pods/p2/file"
        echo x > "$kub/pods/p1/volumes/v/d/own-immutable"
        chattr +i "$twin" "$kub/pods/p1/volumes/v/d/own-immutable"
        assert "linked: the twin in the tree shares the flag" deep_do "$kub/pods/p1/volumes/v" 50 \
                'sys.exit(0 if os.stat("twin").st_nlink == 2 else 1)'
        printf 'empty /var/lib/kubelet\nprotect /var/openebs\n' > "$WORK/linked.conf"

        nr --root "$root" --manifest "$WORK/linked.conf" --yes --output=json run > "$WORK/linked.json"; rc=$?
        assert "linked: run exits 1" test $rc -eq 1
        assert "linked: the protected twin keeps its immutable flag" has_immutable "$twin"
        assert "linked: the protected twin keeps its data" grep -q "must survive" "$twin"
        assert "linked: the name in the tree stays" deep_do "$kub/pods/p1/volumes/v" 50 \
                'sys.exit(0 if os.stat("twin").st_nlink == 2 else 1)'
        assert "linked: the failure names the hard-linked file" jq_ "$WORK/linked.json" \
                'any(a["result"] == "failed" and "other hard links" in a["message"] and "/d/twin" in a["message"] for a in actions(r, kind="empty"))'
        assert "linked: residue reported" jq_ "$WORK/linked.json" 'any(x["target"] == "/var/lib/kubelet" for x in r["residue"])'
        assert "linked: the rest of the tree went, an immutable file of its own too" \
                test ! -e "$kub/pods/p2" -a ! -e "$kub/pods/p1/volumes/v/d/own-immutable"
        nr --root "$root" --manifest "$WORK/linked.conf" --yes run > "$WORK/linked.txt" 2>&1; rc=$?
        assert "linked: a second run exits 1 and never says clean" \
                bash -c "test $rc -eq 1 && ! grep -q 'the node is clean' '$WORK/linked.txt'"
        chattr -i "$twin"
}

# The plan's counts are what the run does (a mount point the mounts phase removes first counts as a
# directory that goes); the residue never says "unmounted first" of a mount that was not.
test_counts_and_residue_words() {
        local root=$WORK/counts kub=$WORK/counts/var/lib/kubelet holder
        mkdir -p "$kub/pods/p1/volumes/v" "$kub/pods/p2/volumes/busy" "$root/etc"
        echo keep > "$root/etc/hostname"
        echo a > "$kub/pods/p1/state"
        mount -t tmpfs nr-counts "$kub/pods/p1/volumes/v"
        mkdir -p "$kub/pods/p1/volumes/v/a/b/c"
        echo x > "$kub/pods/p1/volumes/v/a/b/c/f"
        printf 'unmount /var/lib/kubelet/*\nempty /var/lib/kubelet\n' > "$WORK/counts.conf"
        nr --root "$root" --manifest "$WORK/counts.conf" --output=json plan > "$WORK/counts-plan.json"
        assert "counts: the plan counts the mount point and its parents as going" jq_ "$WORK/counts-plan.json" \
                "[a['detail'] for a in actions(r, kind='empty')] == ['1 file, 7 directories; 1 mount point beneath, unmounted first (what it hides is not counted)']"
        nr --root "$root" --manifest "$WORK/counts.conf" --yes --output=json run > "$WORK/counts-run.json"; rc=$?
        assert "counts: the run exits 0" test $rc -eq 0
        assert "counts: the run removed what the plan counted" jq_ "$WORK/counts-run.json" \
                "[a['message'] for a in actions(r, kind='empty')] == ['removed 1 file, 7 directories']"
        assert "counts: /var/lib/kubelet is empty, /etc/hostname is kept" \
                test -z "$(ls -A "$kub")" -a -f "$root/etc/hostname"

        # Nothing hidden: the plan's counts are exact and carry no "at least".
        mkdir -p "$kub/pods/p3/x"
        echo y > "$kub/pods/p3/x/f"
        nr --root "$root" --manifest "$WORK/counts.conf" --output=json plan > "$WORK/counts-plan2.json"
        assert "counts: with no mount beneath, the plan just counts" jq_ "$WORK/counts-plan2.json" \
                "[a['detail'] for a in actions(r, kind='empty')] == ['1 file, 3 directories']"

        # A busy mount stays: the residue says it was left alone, never "unmounted first".
        mkdir -p "$kub/pods/p2/volumes/busy"
        mount -t tmpfs nr-counts-busy "$kub/pods/p2/volumes/busy"
        echo data > "$kub/pods/p2/volumes/busy/data"
        ( exec 3<"$kub/pods/p2/volumes/busy/data"; exec sleep 120 ) > /dev/null 2>&1 &
        holder=$!
        for _ in $(seq 100); do [ -e "/proc/$holder/fd/3" ] && break; sleep 0.05; done
        nr --root "$root" --manifest "$WORK/counts.conf" --yes --output=json run > "$WORK/counts-busy.json"; rc=$?
        kill "$holder"; wait "$holder" 2>/dev/null
        assert "busy: the run exits 1" test $rc -eq 1
        assert "busy: the residue names the mount left alone" jq_ "$WORK/counts-busy.json" \
                "any(x['kind'] == 'empty' and x['message'].endswith('mount points left alone: /var/lib/kubelet/pods/p2/volumes/busy') for x in r['residue'])"
        assert "busy: no message and no residue says a mount was unmounted first" jq_ "$WORK/counts-busy.json" \
                "not any('unmounted first' in (x['message'] or '') for x in r['residue'] + actions(r))"
        assert "busy: the busy volume's data survived" test -f "$kub/pods/p2/volumes/busy/data"
        umount "$kub/pods/p2/volumes/busy"
}

test_deep_trees_removed
test_deep_mount_residue
test_linked_immutable
test_counts_and_residue_words

finish
