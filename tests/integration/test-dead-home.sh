#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A home and a data directory on a file system that never answers (a dead NFS server; here a FUSE
# mount whose daemon never reads /dev/fuse, so that every access waits in the kernel): plan, status
# and run on a --root tree in a private mount namespace end, within --timeout, naming each mount;
# the verdict is unknown for them, never clean; the homes that answer are reset as usual, and
# nothing beneath the dead mounts is touched. Once the mounts' connections are aborted, a status
# reads them again in a new process.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
[ -c /dev/fuse ] || skip "/dev/fuse is absent: no file system that never answers can be made"
REPORT="$TOP/tests/integration/report.py"
FUSE_DEAD="$O/tests/fuse-dead"
kubeconfig() { # server
        printf 'apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: %s\n  name: k\ncontexts:\n- context:\n    cluster: k\n    user: u\n  name: c\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n' "$1"
}
kill_at_exit

name=dead root=$WORK/node
put /etc/passwd "root:x:0:0:root:/root:/bin/bash
alice:x:1000:1000::/home/alice:/bin/bash
bob:x:1001:1001::/home/bob:/bin/bash"
put /var/lib/kubelet/kubeadm-flags.env 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock"'
put /etc/kubernetes/kubelet.conf "$(kubeconfig https://10.0.0.1:6443)"
put /root/.kube/config "$(kubeconfig https://10.0.0.1:6443)"
put /home/bob/.kube/config "$(kubeconfig https://10.0.0.1:6443)"
mkdir -p "$root/home/alice" "$root/var/lib/etcd"

# The daemon holds /dev/fuse open and reads nothing until its stdin closes.
mkfifo "$WORK/fuse.ctl"
"$FUSE_DEAD" "$root/home/alice" "$root/var/lib/etcd" < "$WORK/fuse.ctl" > "$WORK/fuse.out" &
PIDS+=($!)
exec 9> "$WORK/fuse.ctl"
for _ in $(seq 50); do grep -q ready "$WORK/fuse.out" 2> /dev/null && break; sleep 0.1; done
grep -q ready "$WORK/fuse.out" || { fail "the FUSE mounts were not made"; finish; }
# A guard against a hang, not a measurement: each command is given three times its --timeout.
bounded() { timeout -s KILL 30 "$NODE_RESET" --root "$root" --timeout 10 "$@"; }

bounded plan > "$WORK/plan.txt" 2> "$WORK/plan.err"
rc=$?
assert "$name: plan ends (exit $rc)" test $rc -ne 137
assert "$name: plan names the home's dead mount" grep -q "unanswered  */home/alice .*fuse file system .*does not answer" "$WORK/plan.txt"
assert "$name: plan names the data directory's dead mount" grep -q "unanswered  */var/lib/etcd " "$WORK/plan.txt"
assert "$name: detection says the home was not read" grep -q "kubeconfigs of the home /home/alice were not read" "$WORK/plan.err"
assert "$name: bob's home, which answers, is read" grep -q "kubeconfig  */home/bob/.kube/config" "$WORK/plan.txt"

bounded --yes -o json run > "$WORK/run.json" 2> "$WORK/run.err"
rc=$?
assert "$name: run ends, exit 1 (exit $rc)" test $rc -eq 1
assert "$name: run's verdict is unknown, not clean" "$REPORT" "$WORK/run.json" 'r["verdict"] == "unknown"'
gone /root/.kube/config /home/bob/.kube/config /etc/kubernetes/kubelet.conf
stays /etc/passwd
assert "$name: the dead mounts are still mounted, untouched" \
        test "$(grep -c " fuse " /proc/self/mountinfo)" -eq 2

bounded -o json status > "$WORK/status.json" 2> "$WORK/status.err"
rc=$?
assert "$name: status ends, exit 1 (exit $rc)" test $rc -eq 1
assert "$name: status's verdict is unknown" "$REPORT" "$WORK/status.json" 'r["verdict"] == "unknown"'
assert "$name: status names both mounts as unobserved" "$REPORT" "$WORK/status.json" \
        '{"/home/alice", "/var/lib/etcd"} <= {a["target"] for a in r["unobserved"]}'
assert "$name: status says why" "$REPORT" "$WORK/status.json" \
        'any(a["target"] == "/var/lib/etcd" and "fuse file system nodev mounted at /var/lib/etcd does not answer" in a["message"] for a in r["unobserved"])'

# The daemon goes: the connections are aborted, every access fails at once, and a new status reads on.
exec 9>&-
wait "${PIDS[@]}" 2> /dev/null
PIDS=()
bounded -o json status > "$WORK/after.json" 2> "$WORK/after.err"
rc=$?
assert "$name: status after the daemon went ends (exit $rc)" test $rc -ne 137
assert "$name: nothing is called unanswered any more" "$REPORT" "$WORK/after.json" \
        'not [a for a in actions(r, kind="unanswered")]'
umount -l "$root/home/alice" "$root/var/lib/etcd"
finish
