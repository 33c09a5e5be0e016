#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Side-by-side benchmark (not a test) on real Kubernetes: three workers of a real kubeadm 1.20 cluster
# (systemd-nspawn nodes, tests/e2e-k8s/) with the same pods (memory emptyDir, secret, local PV); one
# reset by "kubeadm reset -f" plus the manual steps kubeadm prints (rm -rf /etc/cni/net.d, the
# iptables flush), one by "node-reset run --yes", one by the floor (bench/cri-floor: kubelet stopped,
# then one RemovePodSandbox per pod, all in flight). BENCH_PODS pods per worker (10, 30, 100; default
# 30 here), BENCH_ROUNDS rounds on fresh workers (default 3). Prints the residue of each (mounts,
# sandboxes, netns, links, routes, iptables chains and rules, files, kubepods cgroups, kubelet's unit),
# the time of each, the ratios and their medians, where node-reset's time goes and the sampled time
# until no pod process was alive. Needs root and the Kubernetes build "make deps" caches; without it,
# says so and exits 0 (make bench runs every benchmark).
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if ! "$TOP/tools/k8s-build.sh" --print-dir >/dev/null 2>&1; then
        echo "kubeadm-node: skipped: Kubernetes is not built (sudo make deps builds it into /var/cache/node-reset-k8s)"
        exit 0
fi
BENCH_PODS=${BENCH_PODS:-30} BENCH_ROUNDS=${BENCH_ROUNDS:-3} E2E_K8S_SCENARIOS="side-by-side" exec "$TOP/tests/e2e-k8s/run.sh"
