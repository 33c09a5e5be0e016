#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# "make demo": a synthetic node in a private mount namespace — plan, run, status — and proof that
# the persistent volume's data, the protected OpenEBS volume and the host's own files survived.
# It runs in private mount and network namespaces: the network and firewall phases act on the
# namespace the agent runs in, and this one is empty.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-build}
case "$O" in /*) ;; *) O="$TOP/$O" ;; esac
NR="$O/node-reset"

if [ -z "${NR_DEMO_NS:-}" ]; then
        [ "$(id -u)" -eq 0 ] || { echo "demo: needs root for private namespaces (sudo make demo)" >&2; exit 1; }
        NR_DEMO_NS=1 exec unshare -m -n --propagation private -- "$BASH" "$0" "$@"
fi

work=$(mktemp -d /tmp/node-reset-demo.XXXXXX)
trap 'cd /; umount -R -l "$work" 2>/dev/null; rmdir "$work" 2>/dev/null' EXIT
mount -t tmpfs -o mode=0755 nr-demo "$work"
mount -t tmpfs -o mode=0755 nr-demo-run /run   # the xtables lock and named netns live in /run
mount -t bpf nr-demo-bpf /sys/fs/bpf 2>/dev/null || mount -t tmpfs nr-demo-bpf /sys/fs/bpf   # pins stay private
mkdir -p "$work/node" "$work/disk"
. "$TOP/tests/integration/fixtures/node-tree.sh"
build_node_tree "$work/node" "$work/disk"

# Bold on a terminal only (node-reset's own rule: never with NO_COLOR or TERM=dumb): piped into a
# file or a CI log, the headings carry no raw escape sequences.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ] && [ "${TERM:-dumb}" != dumb ]; then
        step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
else
        step() { printf '\n==> %s\n' "$*"; }
fi

step "A synthetic worker node beneath $work/node (its PV lives on $work/disk)"
findmnt -R -o TARGET,FSTYPE "$work" | sed "s|$work|<demo>|"

step "node-reset plan (dry run: nothing changes)"
"$NR" --root "$work/node" plan

step "node-reset run --yes"
rc=0
"$NR" --root "$work/node" --yes run || rc=$?
echo "exit status $rc"

step "node-reset status"
"$NR" --root "$work/node" status

step "What must have survived"
ok=1
check() { if "$@"; then echo "  ok: ${*: -1}"; else echo "  MISSING: ${*: -1}"; ok=0; fi; }
check grep -q "must survive" "$work/disk/pv-data/important.db"
check grep -q "must survive" "$work/node/var/openebs/local/pvc-1/data"
check test -s "$work/node/etc/hostname"
check test -s "$work/node/root/.bashrc"
check test -d "$work/node/var/lib/kubelet"
# The tree is a kubeadm worker (detected): kubeadm's scope, the runtime's images and the CNI
# plugin binaries stay for the rejoin.
check test -s "$work/node/var/lib/containerd/io.containerd.content.v1.content/blob"
check test -e "$work/node/opt/cni/bin/bridge"
echo
echo "What is gone:"
for p in etc/kubernetes/admin.conf etc/kubernetes/pki/ca.crt var/lib/etcd/member etc/cni/net.d var/lib/kubelet/pods; do
        if [ -e "$work/node/$p" ]; then echo "  STILL THERE: /$p"; ok=0; else echo "  gone: /$p"; fi
done
[ "$rc" -eq 0 ] && [ "$ok" -eq 1 ] || { echo "demo: FAILED"; exit 1; }
echo
echo "demo: the node is clean and nothing outside the manifest was lost."
