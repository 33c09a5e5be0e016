#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The configuration examples that ship (examples/config, /usr/share/doc/node-reset/examples/config)
# do what their comments say, on a kubeadm worker's --root tree in private namespaces:
#   - manifest.conf passes "manifest check"; with its commented site lines turned on it EXTENDS the
#     detected profile (kubeadm's rows and the site's both planned and run; the protected CSI state
#     kept), where the same lines without "include profile:detected" replace it;
#   - node-reset.env's values are taken by the options they feed (--timeout, --for);
#   - report-headers, its header turned on, reaches the status endpoint with --report-url.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
require_cmd python3
EX=$TOP/examples/config
nr() { timeout 60 "$NODE_RESET" "$@"; }

worker() { # ROOT: a kubeadm worker with a site agent and a CSI driver's local state
        mkdir -p "$1"/etc/kubernetes/pki "$1"/var/lib/kubelet/plugins/my-csi "$1"/opt/site-agent/bin "$1"/etc/cni/net.d
        echo "apiVersion: v1" > "$1/etc/kubernetes/kubelet.conf"
        echo 'KUBELET_KUBEADM_ARGS=""' > "$1/var/lib/kubelet/kubeadm-flags.env"
        echo "kind: KubeletConfiguration" > "$1/var/lib/kubelet/config.yaml"
        echo state > "$1/var/lib/kubelet/plugins/my-csi/state"
        echo agent > "$1/opt/site-agent/bin/agent"
        echo node > "$1/etc/hostname"
        kubeadm_programs "$1"
}

# --- manifest.conf --------------------------------------------------------------------------------
nr manifest check "$EX/manifest.conf" > "$WORK/check.out" 2>&1
assert "manifest.conf passes manifest check" test $? -eq 0
sed -e 's|^#remove /opt/site-agent|remove /opt/site-agent|' \
        -e 's|^#protect /var/lib/kubelet/plugins/my-csi|protect /var/lib/kubelet/plugins/my-csi|' "$EX/manifest.conf" > "$WORK/site.conf"
assert "... its site lines are there to turn on" grep -q '^remove /opt/site-agent' "$WORK/site.conf"
worker "$WORK/a"
nr --root "$WORK/a" -m "$WORK/site.conf" -o json plan > "$WORK/plan.json" 2> "$WORK/plan.err"
assert "the site manifest's plan has the detected (kubeadm) profile's rows" \
        jq_ "$WORK/plan.json" "any(a['target'] == '/etc/kubernetes/kubelet.conf' for a in actions(r))"
assert "... and the site's own" jq_ "$WORK/plan.json" "any(a['target'] == '/opt/site-agent' for a in actions(r))"
nr --root "$WORK/a" -m "$WORK/site.conf" --yes run > "$WORK/run.out" 2>&1
assert "run: the detected profile's kubelet.conf is gone" test ! -e "$WORK/a/etc/kubernetes/kubelet.conf"
assert "run: the site's /opt/site-agent is gone" test ! -e "$WORK/a/opt/site-agent"
assert "run: the protected CSI state stays" grep -q state "$WORK/a/var/lib/kubelet/plugins/my-csi/state"
assert "run: the host's own files stay" test -s "$WORK/a/etc/hostname"
# The same lines without the include replace the profile: kubelet.conf stays.
grep -v '^include profile:detected' "$WORK/site.conf" > "$WORK/replace.conf"
worker "$WORK/b"
nr --root "$WORK/b" -m "$WORK/replace.conf" --yes run > "$WORK/replace.out" 2>&1
assert "without 'include profile:detected' the lines replace the profile: kubelet.conf stays" \
        test -e "$WORK/b/etc/kubernetes/kubelet.conf" -a ! -e "$WORK/b/opt/site-agent"

# --- node-reset.env -------------------------------------------------------------------------------
(
        set -a
        . "$EX/node-reset.env"
        set +a
        [ -n "$NODE_RESET_TIMEOUT" ] && [ -n "$NODE_RESET_ORPHAN_FOR" ] || exit 1
        worker "$WORK/c"
        nr --root "$WORK/c" --timeout="$NODE_RESET_TIMEOUT" plan > /dev/null 2> "$WORK/env.err" || exit 2
        # orphan-check's usage errors exit 255; a tree with no API server to ask is not orphaned (1)
        # or cannot decide (255 with no usage message).
        nr --root "$WORK/c" --for="$NODE_RESET_ORPHAN_FOR" orphan-check > /dev/null 2>> "$WORK/env.err"
        ! grep -q 'invalid --for' "$WORK/env.err"
)
assert "node-reset.env: NODE_RESET_TIMEOUT and NODE_RESET_ORPHAN_FOR are taken by --timeout and --for" test $? -eq 0

# --- report-headers -------------------------------------------------------------------------------
ip link set lo up
sed 's|^#Authorization: |Authorization: |' "$EX/report-headers" > "$WORK/headers"
chmod 600 "$WORK/headers"
kill_at_exit
python3 "$TOP/tests/integration/status-endpoint.py" "$WORK/posts" 127.0.0.1 8091 "$WORK/ready" 2> "$WORK/endpoint.log" &
PIDS+=($!)
for _ in $(seq 100); do [ -e "$WORK/ready" ] && break; sleep 0.05; done
worker "$WORK/d"
nr --root "$WORK/d" --yes --report-url=http://127.0.0.1:8091/nodes/d --report-header-file="$WORK/headers" run \
        > "$WORK/report.out" 2>&1
assert "report-headers: the POSTs carry its Authorization header" \
        grep -q '"_authorization": "Bearer REPLACE-WITH-THE-STATUS-STORE-TOKEN"' "$WORK/posts"
assert "... and the token is not logged" sh -c "! grep -q 'REPLACE-WITH-THE-STATUS-STORE-TOKEN' '$WORK/report.out'"
finish
