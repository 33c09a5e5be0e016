#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The manifest's rules end to end against --root trees in a private mount namespace (issue 15):
# one matching rule for every directive (a backslash is a character: what "remove" reaches by a
# spelling, "protect" keeps by the same spelling).
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

finish
