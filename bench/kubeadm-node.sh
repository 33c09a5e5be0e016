#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Side-by-side benchmark (not a test) on real Kubernetes: three workers of a real kubeadm 1.20 cluster
# (systemd-nspawn nodes, tests/e2e-k8s/, containerd 1.7) with the same pods (memory emptyDir, secret,
# local PV); one reset by "kubeadm reset -f" plus the manual steps kubeadm prints (rm -rf
# /etc/cni/net.d, the iptables flush), one by "node-reset run --yes", one by the floor
# (bench/cri-floor: kubelet stopped, then one RemovePodSandbox per pod, all in flight, each with the
# CNI's real DEL). BENCH_SIZES pods per worker, each size in turn (default "10 30 100"; BENCH_PODS=N
# for one size), BENCH_ROUNDS rounds of each on fresh workers (default 3). Prints the residue of each
# (first round), per size the time of each, the ratios and their medians, where node-reset's time
# goes (its fixed cost around the pods phase included) and the sampled time until no pod process was
# alive, with the load average at each reset; it ends with one line per size:
#   pods N: kubeadm/node-reset Xx, node-reset/floor Yx (medians of K rounds)
# Needs root and the Kubernetes build "make deps" caches; without it, says so and exits 0 (make bench
# runs every benchmark). On a shared machine run it alone: docs/BENCHMARKS.md has the command.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if ! "$TOP/tools/k8s-build.sh" --print-dir >/dev/null 2>&1; then
        echo "kubeadm-node: skipped: Kubernetes is not built (sudo make deps builds it into /var/cache/node-reset-k8s)"
        exit 0
fi
out=$(mktemp /tmp/nr-kubeadm-node.XXXXXX)
trap 'rm -f "$out"' EXIT
BENCH_SIZES=${BENCH_SIZES:-${BENCH_PODS:-10 30 100}} BENCH_ROUNDS=${BENCH_ROUNDS:-3} E2E_K8S_SCENARIOS="side-by-side" \
        "$TOP/tests/e2e-k8s/run.sh" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
echo
grep '^pods [0-9]*: kubeadm/node-reset' "$out" | awk '!seen[$0]++'
exit "$rc"
