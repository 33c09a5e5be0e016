#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Plan-only tests of the phases that plan beneath --root (the fast tier: make check-fast), on the
# fixture worker tree (tests/integration/fixtures/node-tree.sh) and on an empty tree, in a private
# mount namespace. Asserted, row by row: what each phase plans and why (the manifest line), what it
# leaves out (host files, PV data), the skip reasons of the phases --root keeps away from systemd
# and the runtime, and that planning changes no byte and no mount.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
require_cmd python3 findmnt
[ -x "$NODE_RESET" ] || skip "$NODE_RESET is not built"
REPORT="$TOP/tests/integration/report.py"
. "$TOP/tests/integration/fixtures/node-tree.sh"
jq_() { "$REPORT" "$@" > /dev/null; }   # jq_ FILE EXPR: true when EXPR holds
PHASES=backup,etcd,services-early,pods,services-late,processes,mounts,files,reload

root=$WORK/node disk=$WORK/disk
mkdir -p "$root" "$disk"
build_node_tree "$root" "$disk"
uid=6f1c2d3e-0000-4a4a-9b9b-123456789abc
vol=/var/lib/kubelet/pods/$uid/volumes
snapshot() { (cd "$root" && find . -printf '%p %y %s %m %T@\n' | sort; findmnt -rn -o TARGET | grep -F "$root/" | sort); }
before=$(snapshot)

"$NODE_RESET" --root "$root" --phases "$PHASES" --output=json plan > "$WORK/plan.json" 2> "$WORK/plan.err"; rc=$?
assert "plan of the worker tree exits 0" test $rc -eq 0
P=$WORK/plan.json
row() { jq_ "$P" "$1"; }   # row EXPR over the planned actions

assert "plan: a dry run" row 'r["dry_run"] and not r["changed"] and not r["failed"]'
assert "plan: the tree is detected as kubeadm's (its kubelet drop-in and kubeconfig)" row 'r["installer"]["name"] == "kubeadm" and r["profile"]["name"] == "kubeadm"'
assert "plan: every row not skipped names the manifest line that asked for it" \
        row 'all(a["reason"] for a in actions(r) if not a["skip_reason"])'

# backup: the backup row, the PKI and kubeconfigs it will copy, beneath the tree; then the row that
# prunes older backups to --backup-keep (none here).
assert "backup: a backup row and a prune row for /var/backups/node-reset" \
        row '[(a["kind"], a["target"]) for a in actions(r, phase="backup")] == [("backup", "/var/backups/node-reset"), ("backup-prune", "/var/backups/node-reset")]'
assert "backup: no older backup to prune" row 'not actions(r, phase="backup")[1]["detail"].startswith("remove")'
assert "backup: it copies the PKI and admin.conf" \
        row 'all(p in actions(r, phase="backup")[0]["detail"] for p in ("/etc/kubernetes/pki", "/etc/kubernetes/admin.conf"))'

# --root keeps the runtime and systemd out: rows skipped with the reason, nothing probed.
assert "services-early: kubelet.service is skipped, the tree not booted with systemd" \
        row 'any(a["target"] == "kubelet.service" and "not booted with systemd" in a["skip_reason"] for a in actions(r, phase="services-early"))'
assert "pods: no runtime probed beneath --root, with the reason" \
        row '[(a["kind"], a["target"]) for a in actions(r, phase="pods")] == [("runtime", "cri")] and "file system state only" in actions(r, phase="pods")[0]["skip_reason"]'
assert "reload: daemon-reload skipped for the same reason" \
        row 'all("not booted with systemd" in a["skip_reason"] for a in actions(r, phase="reload")) and actions(r, phase="reload")'

# mounts: the PV's bind mount and the emptyDir, each with what is mounted; patterns with no mount say so.
assert "mounts: the PV bind mount is planned for unmounting" \
        row "any(a['target'] == '$vol/kubernetes.io~csi/pvc-data/mount' and 'mount id' in a['detail'] for a in actions(r, kind='unmount'))"
assert "mounts: the emptyDir tmpfs is planned, naming its source" \
        row "any(a['target'] == '$vol/kubernetes.io~empty-dir/cache' and 'tmpfs from nr-emptydir' in a['detail'] for a in actions(r, kind='unmount'))"
assert "mounts: a pattern with nothing mounted says so" \
        row 'any(a["detail"] == "nothing mounted there" for a in actions(r, kind="unmount"))'
assert "mounts: only mounts beneath the kubelet's directory are planned" \
        row "all(a['target'].startswith('/var/lib/kubelet/') for a in actions(r, kind='unmount') if a['detail'] != 'nothing mounted there')"

# files: what each row counts; what is not in the manifest is in no row.
assert "files: /var/lib/etcd emptied (1 file, 2 directories)" \
        row 'any(a["kind"] == "empty" and a["target"] == "/var/lib/etcd" and a["detail"] == "1 file, 2 directories" for a in actions(r, phase="files"))'
assert "files: admin.conf removed (1 file)" \
        row 'any(a["kind"] == "remove" and a["target"] == "/etc/kubernetes/admin.conf" and a["detail"] == "1 file, 0 directories" for a in actions(r, phase="files"))'
assert "files: a kubeconfig the tree lacks is 'nothing matches'" \
        row 'any(a["target"] == "/etc/kubernetes/super-admin.conf" and a["detail"] == "nothing matches" for a in actions(r, phase="files"))'
assert "files: /var/lib/kubelet counts the mounts beneath it as unmounted first" \
        row 'any(a["target"] == "/var/lib/kubelet" and "2 mount points beneath" in a["detail"] for a in actions(r, phase="files"))'
assert "files: the CNI configuration directory is removed" \
        row 'any(a["target"] == "/etc/cni/net.d" and a["kind"] == "remove" for a in actions(r, phase="files"))'
assert "files: no row for host files (hostname, .bashrc, OpenEBS data, bash, CNI binaries)" \
        row 'not any(a["target"].startswith(p) for a in actions(r, phase="files") for p in ("/etc/hostname", "/root", "/var/openebs", "/usr/bin", "/opt/cni"))'
assert "planning changed no byte, mode, time and no mount beneath the tree" test "$(snapshot)" = "$before"

# The text plan says the same in its closing line.
"$NODE_RESET" --root "$root" --phases "$PHASES" plan > "$WORK/plan.txt" 2> /dev/null
n=$("$REPORT" "$P" 'len(actions(r))') present=$("$REPORT" "$P" 'len([a for a in actions(r) if a["detail"] not in ("nothing matches", "nothing mounted there") and not a["skip_reason"] and "nothing runs it" not in a["detail"] and a["detail"] != "no mounted cgroup hierarchy holds it" and not (a["kind"] == "backup-prune" and not a["detail"].startswith("remove "))])')
assert "text plan: '$n actions, $present with something to do'" grep -q "^plan: $n actions, $present with something to do" "$WORK/plan.txt"

# An empty tree: every row is there, none with anything to do.
mkdir -p "$WORK/empty"
"$NODE_RESET" --root "$WORK/empty" --phases mounts,files --output=json plan > "$WORK/empty.json" 2> /dev/null; rc=$?
assert "plan of an empty tree exits 0" test $rc -eq 0
assert "empty tree: the same file rows as the worker tree, each 'nothing matches'" jq_ "$WORK/empty.json" \
        'actions(r, phase="files") and all(a["detail"] == "nothing matches" for a in actions(r, phase="files"))'
assert "empty tree: no unmount row has a mount" jq_ "$WORK/empty.json" \
        'all(a["detail"] == "nothing mounted there" for a in actions(r, kind="unmount"))'
assert "empty tree: the kubeadm profile, the conservative default" jq_ "$WORK/empty.json" 'r["profile"]["name"] == "kubeadm"'
assert "empty tree: planning created nothing" test -z "$(ls -A "$WORK/empty")"
finish
