#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Under --root the node is the tree (issue 32): a tree that plants symlinks to the running system's
# sockets, /etc and host name reaches none of them, and the running system's cgroups are left unless
# --phases names the cgroups phase. The "running system" is made in private mount, network, UTS and
# cgroup namespaces: a host name set with hostname(1); unix sockets at /run/systemd/private and
# /run/dbus/system_bus_socket (a tmpfs /run) that record every connection; a kubepods cgroup tree in a
# throwaway child cgroup that is the namespace's root; its own /etc/kubernetes and hostname in a
# directory outside the tree; and a loopback API server stand-in that records every DELETE.
. "$(dirname "$0")/lib.sh"

# The host side: a throwaway child of the cgroup2 hierarchy, joined, then a cgroup namespace rooted
# there (as test-cgroups.sh does): nothing above the child is visible inside.
if [ -z "${NR_IN_CG:-}" ]; then
        require_root
        require_cmd openssl python3 unshare hostname
        unshare --help 2>&1 | grep -q -- '--cgroup' || skip "unshare has no --cgroup (cgroup namespaces)"
        [ -e /proc/self/ns/cgroup ] || skip "the kernel has no cgroup namespaces"
        hier=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
        [ -n "$hier" ] || skip "no cgroup2 hierarchy is mounted"
        child=$hier/nr-test-escape.$$
        mkdir "$child" || skip "cannot make a child cgroup in $hier"
        NR_IN_CG=$child bash -c '
                echo $$ > "$NR_IN_CG/cgroup.procs" || { echo "SKIP: cannot join $NR_IN_CG"; exit 77; }
                NR_IN_NS=1 exec unshare -C -m -n -u --propagation private -- "$BASH" "$0" "$@"' "$0" "$@"
        rc=$?
        find "$child" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | while read -r p; do kill -9 "$p"; done
        sleep 0.2
        find "$child" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
        rmdir "$child" 2>/dev/null || echo "note: cannot remove $child (still busy)"
        exit "$rc"
fi

# Inside: the one cgroup2 hierarchy mounted anew shows the child as its root; /sys/fs/cgroup's other
# hierarchies are hidden under a tmpfs.
mount -t tmpfs -o mode=0755 nr-cgroup /sys/fs/cgroup || { echo "FAIL: cannot mount tmpfs on /sys/fs/cgroup"; exit 1; }
cg=/sys/fs/cgroup/unified
mkdir -p "$cg" && mount -t cgroup2 none "$cg" || { echo "FAIL: cannot mount cgroup2 in the cgroup namespace"; exit 1; }
compgen -G "$cg/nr-test-escape.*" > /dev/null && { echo "FAIL: $cg shows the host's cgroups"; exit 1; }
unset NR_IN_CG
in_private_ns "$@"
REPORT="$TOP/tests/integration/report.py"
SERVER="$TOP/tests/integration/https-server.py"
jq_() { "$REPORT" "$@" > /dev/null; }

# ---- the running system -------------------------------------------------------------------------
hostname cp-1 || { echo "FAIL: cannot set the UTS namespace's host name"; exit 1; }
mkdir -p "$cg/kubepods/besteffort/pod1/c1" "$cg/kubepods/burstable"
host_etc=$WORK/host-etc
mkdir -p "$host_etc/kubernetes" /run/systemd/system /run/dbus
echo cp-1 > "$host_etc/hostname"

pki=$WORK/pki
mkdir -p "$pki"
. "$TOP/tests/integration/fixtures/pki.sh"
mkca ca kubernetes &&
        mkleaf apiserver ca "/CN=kube-apiserver" "subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth" &&
        mkleaf cp1 ca "/O=system:nodes/CN=system:node:cp-1" "extendedKeyUsage=clientAuth" &&
        mkleaf admin ca "/O=system:masters/CN=kubernetes-admin" "extendedKeyUsage=clientAuth" ||
        { echo "FAIL: cannot make the test PKI with openssl"; exit 1; }
kubeconfig_pem https://127.0.0.1:6443 cp1 > "$host_etc/kubernetes/kubelet.conf"
kubeconfig_pem https://127.0.0.1:6443 admin > "$host_etc/kubernetes/admin.conf"
kubeconfig_pem https://127.0.0.1:6443 admin > "$WORK/operator.conf"

# Sockets that record every connection, one line per accept, in $WORK/connections.
cat > "$WORK/listen.py" <<'PY'
import selectors, socket, sys
sel = selectors.DefaultSelector()
for path in sys.argv[2:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)
    sel.register(s, selectors.EVENT_READ, path)
open(sys.argv[1] + ".ready", "w").close()
while True:
    for key, _ in sel.select():
        c, _ = key.fileobj.accept()
        with open(sys.argv[1], "a") as f:
            f.write(key.data + "\n")
        c.close()
PY
: > "$WORK/connections"
python3 "$WORK/listen.py" "$WORK/connections" /run/systemd/private /run/dbus/system_bus_socket &
listener=$!
records=$WORK/records
mkdir -p "$records"
python3 "$SERVER" serve 6443 "$pki/apiserver.crt" "$pki/apiserver.key" "$pki/ca.crt" "$records" cp-1 worker-7 \
        2> "$WORK/server.log" &
server=$!
trap 'kill "$listener" "$server" 2>/dev/null; wait; cd /; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT
for _ in $(seq 100); do [ -e "$records/ready-6443" ] && [ -e "$WORK/connections.ready" ] && break; sleep 0.1; done
[ -e "$records/ready-6443" ] && [ -e "$WORK/connections.ready" ] ||
        { echo "FAIL: the stand-ins did not start"; cat "$WORK/server.log"; exit 1; }
deletes() { grep -l '"method": "DELETE"' "$records"/*.json 2> /dev/null | wc -l; }
no_connection() { [ ! -s "$WORK/connections" ]; }

# ---- the tree: symlinks to all of it --------------------------------------------------------------
tree=$WORK/tree
mkdir -p "$tree/etc" "$tree/run" "$tree/var/lib/kubelet"
ln -s /run/systemd "$tree/run/systemd"
ln -s /run/dbus "$tree/run/dbus"
ln -s "$host_etc/kubernetes" "$tree/etc/kubernetes"
ln -s "$host_etc/hostname" "$tree/etc/hostname"
nr() { # name args...: node-reset on the tree, JSON report in $WORK/name.json
        local n=$1
        shift
        env -u DBUS_SYSTEM_BUS_ADDRESS "$NODE_RESET" --root "$tree" --yes --output=json "$@" \
                > "$WORK/$n.json" 2> "$WORK/$n.err"
}

# 1. The tree's phases (backup, mounts, files): nothing outside the tree. The backup refuses the
# symlinked /etc/kubernetes, and so nothing is deleted; without a backup the files phase refuses it.
nr tree run; rc=$?
assert "tree phases: exit 1, the backup refused the symlink ($rc)" jq_ "$WORK/tree.json" \
        "r['exit_status'] == 1 and [(a['kind'], a['result'], a['error']) for a in actions(r, phase='backup')] == [('backup', 'failed', 'ELOOP'), ('backup-prune', 'unchanged', None)]"
assert "tree phases: the report's host name is unknown, not the running system's" jq_ "$WORK/tree.json" \
        "r['hostname'] is None"
nr nobackup run --no-backup; rc=$?
assert "tree phases, no backup: nothing failed ($rc)" test "$rc" -eq 0
assert "tree phases, no backup: the files phase refused the symlinked /etc/kubernetes" jq_ "$WORK/nobackup.json" \
        "any(a['result'] == 'skipped' and a['error'] == 'symlink' and a['target'].startswith('/etc/kubernetes')
             for a in actions(r, phase='files'))"
assert "tree phases: no cgroup row" jq_ "$WORK/nobackup.json" "actions(r, kind='cgroup') == []"
assert "tree phases: the running system's /etc/kubernetes is left" \
        test -f "$host_etc/kubernetes/admin.conf" -a -f "$host_etc/kubernetes/kubelet.conf"

# 2. The units, processes and reload, named: the tree's /run/systemd is a symlink, so no systemd.
nr units run --phases services-early,services-late,processes,reload; rc=$?
assert "units: exit 0 ($rc)" test "$rc" -eq 0
assert "units: no connection reached the running system's sockets" no_connection
assert "units: every unit row skipped, saying the symlink was refused" jq_ "$WORK/units.json" \
        "len(actions(r, kind='unit')) > 0 and all(a['result'] == 'skipped' and 'symlink on the way, refused' in a['message']
          for a in actions(r) if a['phase'] in ('services-early', 'services-late', 'reload'))"
assert "units: the processes phase planned no cgroup row" jq_ "$WORK/units.json" "actions(r, kind='cgroup') == []"

# 3. A tree whose run/systemd is its own but whose sockets are symlinks: refused one by one.
rm "$tree/run/systemd" "$tree/run/dbus"
mkdir -p "$tree/run/systemd/system" "$tree/run/dbus"
ln -s /run/systemd/private "$tree/run/systemd/private"
ln -s /run/dbus/system_bus_socket "$tree/run/dbus/system_bus_socket"
NODE_RESET_LOG_LEVEL=debug nr sockets run --phases services-early,reload; rc=$?
assert "socket symlinks: exit 0 ($rc)" test "$rc" -eq 0
assert "socket symlinks: no connection reached the running system's sockets" no_connection
assert "socket symlinks: the unit rows name the refused system bus" jq_ "$WORK/sockets.json" \
        "len(actions(r, phase='services-early')) > 0 and all('system bus at unix:path=$tree/run/dbus/system_bus_socket: a symlink on the way, refused'
          in a['message'] for a in actions(r, phase='services-early'))"
assert "socket symlinks: the private socket was refused as well" grep -q "manager at unix:path=$tree/run/systemd/private: a symlink on the way" \
        "$WORK/sockets.err"

# 4. --delete-node with the operator's admin credentials and no node name in the tree: refused, and
# the run fails; the running system's Node (its host name, cp-1) is not deleted.
nr node run --phases node-object --delete-node --kubeconfig "$WORK/operator.conf"; rc=$?
assert "node name unknown: exit 1 ($rc)" test "$rc" -eq 1
assert "node name unknown: the row failed with the reason" jq_ "$WORK/node.json" \
        "([(a['result'], a['error']) for a in actions(r, phase='node-object')] == [('failed', 'unknown')] and
          actions(r, phase='node-object')[0]['message'].startswith('node name unknown: the tree has no kubelet.conf'))"
assert "node name unknown: no DELETE was sent" test "$(deletes)" -eq 0
assert "node name unknown: no request named the running system's host name" \
        bash -c "! grep -l '/api/v1/nodes/cp-1' $records/*.json 2>/dev/null"

# 5. The tree's own /etc/hostname is the tree's host name: that Node, and only it, is deleted.
rm "$tree/etc/hostname"
printf '# the node\n  Worker-7 \n' > "$tree/etc/hostname"
nr named run --phases node-object --delete-node --kubeconfig "$WORK/operator.conf"; rc=$?
assert "the tree's /etc/hostname: exit 0 ($rc)" test "$rc" -eq 0
assert "the tree's /etc/hostname: the report names it" jq_ "$WORK/named.json" "r['hostname'] == 'worker-7'"
assert "the tree's /etc/hostname: Node worker-7 deleted, named from the tree" jq_ "$WORK/named.json" \
        "[(a['target'], a['result']) for a in actions(r, phase='node-object')] == [('Node/worker-7', 'changed')]"
assert "the tree's /etc/hostname: one DELETE, of worker-7" bash -c "[ $(deletes) -eq 1 ] &&
        grep -l '\"path\": \"/api/v1/nodes/worker-7\"' $records/*.json > /dev/null"

assert "the running system's kubepods cgroups survive every run above" test -d "$cg/kubepods/besteffort/pod1/c1"
assert "the running system's host name is still cp-1" test "$(hostname)" = cp-1

# 6. Named, the cgroups phase acts on the running system's cgroups (this namespace's): the operator's word.
printf 'cgroup kubepods\n' > "$WORK/cg.conf"
nr cgroups run --phases cgroups --manifest "$WORK/cg.conf"; rc=$?
assert "--phases cgroups: exit 0 ($rc)" test "$rc" -eq 0
assert "--phases cgroups: the kubepods tree went" test ! -e "$cg/kubepods"
assert "no connection reached the running system's sockets in any run" no_connection
schema_valid "$WORK"/*.json > /dev/null || fail "a report does not match docs/report.schema.json"
finish
