#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The manifest's rules end to end against --root trees in a private mount namespace (issue 15):
# one matching rule for every directive (a backslash is a character: what "remove" reaches by a
# spelling, "protect" keeps by the same spelling), the system-path guard that no glob gets around
# (with its loud opt-in), and manifests that are FIFOs refused at once instead of hanging.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"

nr() { timeout 60 "$NODE_RESET" "$@"; }

# --- Hole 3: protect with a backslash, as spelled for remove --------------------------------------
root=$WORK/h3
k=$root/var/lib/kubelet
mkdir -p "$k/a\\b" "$k/pods/foo\\x2dbar/volumes" "$k/other" "$root/x/a\\b" "$root/x/ab"
echo keep > "$k/a\\b/data"
echo keep > "$k/pods/foo\\x2dbar/volumes/data"
echo gone > "$k/other/f"
echo gone > "$root/x/a\\b/f"
echo keep > "$root/x/ab/f"
cat > "$WORK/h3.conf" <<'M'
empty /var/lib/kubelet
protect /var/lib/kubelet/a\b
protect /var/lib/kubelet/pods/*\x2d*
remove /x/a\b
M
nr --root "$root" -m "$WORK/h3.conf" --yes run > "$WORK/h3.out" 2>&1; rc=$?
assert "run with backslash names exits 0" test $rc -eq 0
assert "protect /var/lib/kubelet/a\\b keeps that directory under an emptied parent" grep -q keep "$k/a\\b/data"
assert "protect of a glob with \\x2d keeps the systemd-escaped name" grep -q keep "$k/pods/foo\\x2dbar/volumes/data"
assert "the unprotected rest of /var/lib/kubelet is gone" test ! -e "$k/other"
assert "remove /x/a\\b removed the name with the backslash" test ! -e "$root/x/a\\b"
assert "remove /x/a\\b left /x/ab alone" grep -q keep "$root/x/ab/f"

# --- Hole 4: the system paths, by literal and by glob --------------------------------------------
root=$WORK/h4
mkdir -p "$root"/etc/ssh "$root"/etc/kubernetes "$root"/usr/bin "$root"/var/lib/dpkg "$root"/root "$root/home/alice"
echo "root:x:0:0::/root:/bin/bash" > "$root/etc/passwd"
echo node > "$root/etc/hostname"
echo key > "$root/etc/ssh/ssh_host_ed25519_key"
echo conf > "$root/etc/kubernetes/admin.conf"
echo sh > "$root/usr/bin/sh"
echo db > "$root/var/lib/dpkg/status"
echo rc > "$root/root/.bashrc"
echo me > "$root/home/alice/notes"
lineno=0
for line in "remove /etc/*" "remove /usr/*" "remove /var/*" "empty /root/*" "remove /var/lib" "remove /usr/bin" \
        "remove /usr/lib" "remove /lib/modules" "remove /etc/ssh" "remove /home/*" "remove /lost+found" \
        "empty /etc" "remove /usr" "unmount /var/lib/*" "remove /usr/local/bin/*"; do
        printf 'remove /etc/kubernetes\n%s\n' "$line" > "$WORK/bad.conf"
        out=$(nr --root "$root" -m "$WORK/bad.conf" --yes run 2>&1); rc=$?
        assert "'$line' refused with exit 2" test $rc -eq 2
        assert "'$line' refused with FILE:LINE and a reason" grep -q "$WORK/bad.conf:2: '[a-z]*' refuses " <<<"$out"
        out=$("$NODE_RESET" manifest check "$WORK/bad.conf" 2>&1); rc=$?
        assert "manifest check refuses '$line'" test $rc -eq 2 -a -n "$out"
done
assert "nothing was removed by a refused manifest" test -s "$root/etc/passwd" -a -s "$root/etc/hostname" \
        -a -s "$root/etc/ssh/ssh_host_ed25519_key" -a -s "$root/usr/bin/sh" -a -s "$root/var/lib/dpkg/status" \
        -a -s "$root/root/.bashrc" -a -s "$root/home/alice/notes" -a -s "$root/etc/kubernetes/admin.conf"

for f in "$TOP"/manifests/*.conf; do
        out=$("$NODE_RESET" manifest check "$f" 2>&1); rc=$?
        assert "shipped $(basename "$f") passes manifest check" test $rc -eq 0
done

# The opt-in: the exact path, before its line; plan and run say so.
printf 'allow-system-path /etc/ssh\nremove /etc/ssh\nremove /etc/kubernetes\n' > "$WORK/allow.conf"
nr --root "$root" -m "$WORK/allow.conf" plan > "$WORK/allow-plan.out" 2> "$WORK/allow-plan.err"; rc=$?
assert "plan with allow-system-path exits 0" test $rc -eq 0
assert "plan shows the system path" grep -q "SYSTEM PATH" "$WORK/allow-plan.out"
assert "plan warns on stderr with FILE:LINE" grep -q "allow.conf:2: remove /etc/ssh (SYSTEM PATH" "$WORK/allow-plan.err"
nr --root "$root" -m "$WORK/allow.conf" --yes --output=json run > "$WORK/allow-run.json" 2> "$WORK/allow-run.err"; rc=$?
assert "run with allow-system-path exits 0" test $rc -eq 0
assert "run warns on stderr" grep -q "SYSTEM PATH, allowed by allow-system-path" "$WORK/allow-run.err"
assert "the report's reason names the opt-in" grep -q "SYSTEM PATH, allowed by allow-system-path" "$WORK/allow-run.json"
assert "the allowed system path is gone" test ! -e "$root/etc/ssh"
assert "the rest of /etc stays" test -s "$root/etc/passwd" -a -s "$root/etc/hostname"

# --- A FIFO as a manifest: refused at once, never waited on --------------------------------------
mkfifo "$WORK/fifo.conf"
printf 'remove /etc/kubernetes\ninclude fifo.conf\n' > "$WORK/inc.conf"
start=$SECONDS
out=$(nr manifest check "$WORK/fifo.conf" 2>&1); rc=$?
assert "manifest check FIFO exits 2" test $rc -eq 2
assert "manifest check FIFO says why" test "$out" = "$WORK/fifo.conf: not a regular file"
out=$(nr --root "$root" -m "$WORK/fifo.conf" plan 2>&1); rc=$?
assert "-m FIFO exits 2" test $rc -eq 2
assert "-m FIFO says why" grep -qF "$WORK/fifo.conf: not a regular file" <<<"$out"
out=$(nr --root "$root" -m "$WORK/inc.conf" plan 2>&1); rc=$?
assert "include FIFO exits 2" test $rc -eq 2
assert "include FIFO names the including line" grep -qF "$WORK/inc.conf:2: cannot read include '$WORK/fifo.conf': not a regular file" <<<"$out"
assert "no FIFO was waited on" test $((SECONDS - start)) -lt 10

finish
