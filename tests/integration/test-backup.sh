#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The backup phase never copies across a mount, also a bind mount of the same file system (one
# st_dev, another mount id): in a private mount namespace, a --root tree whose /etc/kubernetes/pki
# holds a bind mount of a directory from elsewhere on the same tmpfs, and a tmpfs mounted at
# pki/etcd; the backup has the tree's own files and neither mount's. A source that is itself a mount
# point (a dedicated /etc/kubernetes/manifests) is saved: its own mount is the one the copy stays on.
. "$(dirname "$0")/lib.sh"
require_cmd unshare
in_private_ns -n "$@"

R=$WORK/root
mkdir -p "$R/etc/kubernetes/pki/outside" "$R/etc/kubernetes/pki/etcd" "$R/etc/kubernetes/manifests" "$WORK/elsewhere"
echo ca > "$R/etc/kubernetes/pki/ca.crt"
echo kubelet > "$R/etc/kubernetes/kubelet.conf"
echo "not the node's" > "$WORK/elsewhere/secret"
mount --bind "$WORK/elsewhere" "$R/etc/kubernetes/pki/outside" || { echo "FAIL: cannot bind mount"; exit 1; }
mount -t tmpfs nr-etcd "$R/etc/kubernetes/pki/etcd" && mount -t tmpfs nr-manifests "$R/etc/kubernetes/manifests" ||
        { echo "FAIL: cannot mount tmpfs"; exit 1; }
echo key > "$R/etc/kubernetes/pki/etcd/ca.key"
echo pod > "$R/etc/kubernetes/manifests/etcd.yaml"
[ "$(stat -c %d "$R/etc/kubernetes/pki")" = "$(stat -c %d "$R/etc/kubernetes/pki/outside")" ] ||
        skip "the bind mount shows another st_dev here: the case this test is for cannot be built"

"$NODE_RESET" --root "$R" --phases backup --yes -o json run > "$WORK/run.json" 2> "$WORK/run.err"; rc=$?
assert "backup run exits 0" [ "$rc" -eq 0 ] || cat "$WORK/run.err"
b=$(find "$R/var/backups/node-reset" -mindepth 1 -maxdepth 1 -type d | head -1)
assert "a backup directory was made" [ -n "$b" ]
assert "the tree's own files are saved" [ -f "$b/etc/kubernetes/pki/ca.crt" ] && [ -f "$b/etc/kubernetes/kubelet.conf" ]
assert "a bind mount of the same file system is not crossed" [ ! -e "$b/etc/kubernetes/pki/outside/secret" ]
assert "another file system's mount beneath a source is not crossed" [ ! -e "$b/etc/kubernetes/pki/etcd/ca.key" ]
assert "a source that is a mount point itself is saved" [ -f "$b/etc/kubernetes/manifests/etcd.yaml" ]
assert "the bind-mounted data is untouched" [ "$(cat "$WORK/elsewhere/secret")" = "not the node's" ]
schema_valid "$WORK/run.json" >/dev/null || fail "the report does not match docs/report.schema.json"
umount "$R/etc/kubernetes/pki/outside" "$R/etc/kubernetes/pki/etcd" "$R/etc/kubernetes/manifests"

# A node already reset keeps its sources as empty directories (kubeadm empties pki and manifests):
# nothing to save, so the row is unchanged and no empty backup directory is left (a second run on a
# clean node changes nothing).
E=$WORK/emptied
mkdir -p "$E/etc/kubernetes/pki/etcd" "$E/etc/kubernetes/manifests"
"$NODE_RESET" --root "$E" --phases backup --yes -o json run > "$WORK/empty.json" 2> "$WORK/empty.err"; rc=$?
assert "emptied sources: backup run exits 0" [ "$rc" -eq 0 ] || cat "$WORK/empty.err"
assert "emptied sources: the backup row is unchanged, the report not changed" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
rows = [a["result"] for p in r["phases"] for a in p["actions"] if a["kind"] == "backup"]
sys.exit(0 if rows == ["unchanged"] and not r["changed"] else 1)' "$WORK/empty.json"
assert "emptied sources: no backup directory left" [ -z "$(ls -A "$E/var/backups/node-reset" 2>/dev/null)" ]
assert "emptied sources: the emptied directories stay" [ -d "$E/etc/kubernetes/pki/etcd" ] && [ -d "$E/etc/kubernetes/manifests" ]

# --- the report names the backup; --backup-keep bounds how many stay --------------------------------
assert "the report names the backup it wrote, its bytes and files" python3 -c '
import json, os, sys
r = json.load(open(sys.argv[1]))
row = [a for p in r["phases"] for a in p["actions"] if a["kind"] == "backup"][0]
sys.exit(0 if os.path.isdir(sys.argv[2] + row["backup_path"]) and row["backup_bytes"] > 0 and row["backup_files"] >= 3 else 1)' \
        "$WORK/run.json" "$R"
K=$WORK/keep
mkdir -p "$K/etc/kubernetes/pki" "$K/var/backups/node-reset/operator-notes"
echo ca > "$K/etc/kubernetes/pki/ca.crt"
for n in 20250101T000000Z 20250102T000000Z 20250102T000000Z.1 20250102T000000Z.10 20250102T000000Z.2; do
        mkdir -p "$K/var/backups/node-reset/$n/etc" && echo old > "$K/var/backups/node-reset/$n/etc/f"
done
"$NODE_RESET" --root "$K" --phases backup --backup-keep=3 -o json plan > "$WORK/keep-plan.json" 2> /dev/null
assert "--backup-keep=3: the plan names the three oldest of five for removal (this run's will be the newest)" \
        jq_ "$WORK/keep-plan.json" "[a['detail'].split(':')[0] for a in actions(r, kind='backup-prune')] == ['remove 20250101T000000Z, 20250102T000000Z, 20250102T000000Z.1']"
"$NODE_RESET" --root "$K" --phases backup --backup-keep=3 --yes -o json run > "$WORK/keep.json" 2> "$WORK/keep.err"; rc=$?
assert "--backup-keep=3: exit 0" [ "$rc" -eq 0 ] || cat "$WORK/keep.err"
left=$(ls "$K/var/backups/node-reset" | sort | xargs)
written=$(basename "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print([a for p in r["phases"] for a in p["actions"] if a["kind"] == "backup"][0]["backup_path"])' "$WORK/keep.json")")
assert "... the two newest old ones (.2 and .10 of one second, by number), this run's and the operator's own directory stay ($left)" \
        test "$left" = "$(printf '%s\n' 20250102T000000Z.10 20250102T000000Z.2 "$written" operator-notes | sort | xargs)"
schema_valid "$WORK/keep.json" > /dev/null || fail "the --backup-keep report does not match docs/report.schema.json"
"$NODE_RESET" --root "$K" --phases backup --backup-keep=0 -o json plan > "$WORK/keep0.json" 2> /dev/null
assert "--backup-keep=0: the prune row is skipped, every backup kept" \
        jq_ "$WORK/keep0.json" "[a['skip_reason'] for a in actions(r, kind='backup-prune')] == ['--backup-keep=0: every backup is kept']"
"$NODE_RESET" --root "$K" --backup-keep=x plan > /dev/null 2>&1; rc=$?
assert "--backup-keep=x: a usage error (exit 2)" [ "$rc" -eq 2 ]
finish
