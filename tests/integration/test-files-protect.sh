#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One place decides what the files phase never touches (agent/phases/files/files-protect.c), and the
# edit (remove-block) and unlink (remove-symlink-to) rows ask it as the remove rows do. On a --root
# tree in a private mount namespace: node-reset's backups and what an out-of-scope etcd holds (its
# environment file, its data directory) are skipped with the remove rows' words and codes and stay
# byte-identical; a link whose target a remove line would keep is kept; a protect line holds both
# kinds as before; the lines that reach nothing protected act, and a second run changes nothing.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
nr() { "$NODE_RESET" --root "$root" --phases files -m "$WORK/m.conf" "$@"; }
name=protect
root=$WORK/node
B='# BEGIN site'
E='# END site'
block() { put "$1" "$(printf 'keep me\n%s\nnameserver 10.0.0.1\n%s' "$B" "$E")"; }

# A site's etcd: its own unit, no installer's files, so out of scope with its data and env file.
put /etc/systemd/system/etcd.service "$(printf '[Unit]\nDescription=the site etcd\n[Service]\nType=notify\nEnvironmentFile=/etc/default/etcd\nExecStart=/usr/bin/etcd --name site --data-dir=/srv/etcd $DAEMON_ARGS\n')"
put /etc/default/etcd "$(printf 'DAEMON_ARGS=\n%s\nETCD_QUOTA_BACKEND_BYTES=8589934592\n%s' "$B" "$E")"
put /srv/etcd/member/snap/db "etcd data"
ln -s /srv/etcd/gone "$root/srv/etcd/current"
put /srv/etcd/bin/etcdctl "the site's etcdctl"
mkdir -p "$root/usr/local/bin"
ln -s /srv/etcd/bin/etcdctl "$root/usr/local/bin/etcdctl"
# node-reset's backups.
block /var/backups/node-reset/20261206T000000Z/notes.conf
ln -s /var/backups/node-reset/gone "$root/var/backups/node-reset/latest"
# A protect line.
block /etc/protected.conf
ln -s /opt/gone "$root/etc/protected-link"
# What nothing protects.
block /etc/other.conf
ln -s /usr/local/bin/k3s "$root/usr/local/bin/kubectl"
# Every file and link but those two and the run's lock, as name, inode, size and time (directories
# change when those go).
snapshot() {
        (cd "$root" && find . \( -path ./etc/other.conf -o -path ./usr/local/bin/kubectl -o -path ./run \) -prune -o \
                ! -type d -print0 |
                sort -z | xargs -0 stat -c '%n %i %s %Y')
}
snapshot > "$WORK/before.txt"

cat > "$WORK/m.conf" << EOM
protect /etc/protected.conf
protect /etc/protected-link
remove-block /etc/default/etcd "$B" "$E"
remove-symlink-to /srv/etcd/current /srv/etcd/gone
remove /srv/etcd/bin/etcdctl
remove-symlink-to /usr/local/bin/etcdctl /srv/etcd/bin/etcdctl
remove-block /var/backups/node-reset/20261206T000000Z/notes.conf "$B" "$E"
remove-symlink-to /var/backups/node-reset/latest /var/backups/node-reset/gone
remove-block /etc/protected.conf "$B" "$E"
remove-symlink-to /etc/protected-link /opt/gone
remove-block /etc/other.conf "$B" "$E"
remove-symlink-to /usr/local/bin/kubectl /usr/local/bin/k3s
EOM

row() { # FILE KIND TARGET EXPR: EXPR holds on the row a (of that kind and target)
        jq_ "$1" "any($4 for a in actions(r, kind='$2') if a['target'] == '$3')"
}
nr -o json plan > "$WORK/plan.json" 2> "$WORK/plan.err"
rc=$?
assert "plan exits 0 ($rc)" test $rc -eq 0
assert "plan: the etcd is out of scope" row "$WORK/plan.json" remove /srv/etcd/bin/etcdctl \
        "'out of scope' in (a.get('skip_reason') or '')"
assert "plan: a link whose target the remove line keeps stays" row "$WORK/plan.json" unlink /usr/local/bin/etcdctl \
        "'/srv/etcd/bin/etcdctl stays: kept' in (a.get('detail') or '')"

nr --yes -o json run > "$WORK/run1.json" 2> "$WORK/run1.err"
rc=$?
assert "run exits 0 ($rc)" test $rc -eq 0
for k in "edit /etc/default/etcd" "unlink /srv/etcd/current"; do
        assert "out-of-scope etcd: $k skipped, code out-of-scope, the scope's words" row "$WORK/run1.json" $k \
                "a['result'] == 'skipped' and a['error'] == 'out-of-scope' and 'out of scope' in a['message']"
done
assert "backups: the edit is skipped" row "$WORK/run1.json" edit /var/backups/node-reset/20261206T000000Z/notes.conf \
        "a['result'] == 'skipped' and a['message'] == \"node-reset's backups (/var/backups/node-reset) are never edited\""
assert "backups: the unlink is skipped" row "$WORK/run1.json" unlink /var/backups/node-reset/latest \
        "a['result'] == 'skipped' and a['message'] == \"node-reset's backups (/var/backups/node-reset) are never removed\""
assert "protect line: the edit is skipped" row "$WORK/run1.json" edit /etc/protected.conf \
        "a['result'] == 'skipped' and a['error'] == 'protected' and a['message'].startswith('protected by ')"
assert "protect line: the unlink is skipped" row "$WORK/run1.json" unlink /etc/protected-link \
        "a['result'] == 'skipped' and a['error'] == 'protected'"
assert "the link to a kept target is kept, as unchanged" row "$WORK/run1.json" unlink /usr/local/bin/etcdctl \
        "a['result'] == 'unchanged' and 'stays: kept' in a['message']"
assert "every protected or kept file and link is as it was (name, inode, size, time)" cmp "$WORK/before.txt" <(snapshot)
assert "what nothing protects: the block is cut" cmp "$root/etc/other.conf" <(printf 'keep me\n')
gone /usr/local/bin/kubectl
assert "what nothing protects: reported changed" row "$WORK/run1.json" edit /etc/other.conf "a['result'] == 'changed'"

nr --yes -o json run > "$WORK/run2.json" 2> "$WORK/run2.err"
rc=$?
assert "second run exits 0 ($rc), changes nothing" test $rc -eq 0
assert "second run: no row changed" jq_ "$WORK/run2.json" "not any(a['result'] == 'changed' for a in actions(r))"
finish
