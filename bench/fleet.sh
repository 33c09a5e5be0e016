#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Fleet benchmark (not a test): the Ansible path at scale, on FLEET_NODES (300) workers of the fleet
# lab (tests/lab/: each node its own namespaces and sshd, the controller in the switch namespace with
# a HOME of its own), with the real ansible-playbook:
#   (a) one task: a play of one ansible.builtin.command per node, the floor of any play;
#   (b) the role's fleet path, examples/ansible/fleet.yml (one node-reset call per node, then the
#       summary once), in check mode, then resetting at each of FLEET_FORKS (5 20 50) with each of
#       FLEET_STRATEGIES (linear free), the nodes' state made again between runs (lab_restate), and
#       once more on clean nodes (nothing to change);
#   (c) the role's full path, reset.yml (~19 tasks per node), on FLEET_ROLE_SAMPLE (30) of the nodes.
# For each: CPU seconds per host on the controller and on the nodes (the lab's cgroups: ansible, its
# workers and ssh; sshd, the shells, python and node-reset), wall time, tasks and SSH sessions per
# host, the nodes left clean, the load average. Then the extrapolation to 10,000 nodes, and the line
#   fleet: N nodes, role R CPU-s/host, one task T CPU-s/host, ratio R/T, wall W s, clean C/N
# with R, W and C the fleet path's at forks 20, linear, and T one task's at forks 20. The machine may
# be shared: the load is printed beside each run; on a quiet machine the command is
#   sudo FLEET_NODES=1000 bench/fleet.sh
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$TOP/tests/integration/lib.sh"
N=${FLEET_NODES:-300}
FORKS=${FLEET_FORKS:-5 20 50}
STRATEGIES=${FLEET_STRATEGIES:-linear free}
SAMPLE=${FLEET_ROLE_SAMPLE:-30}
command -v ansible-playbook >/dev/null || { echo "fleet: skipped: ansible-playbook is not installed (make deps)"; exit 0; }
in_private_ns "$@"
. "$TOP/tests/lab/lab.sh"
EX=$TOP/examples/ansible
lab_init "$WORK/lab" >/dev/null || { rc=$?; [ $rc -eq 77 ] && { echo "fleet: skipped"; exit 0; }; exit $rc; }
trap 'lab_down; cd /; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT
lab_up "$N" || exit 1
lab_status_start || exit 1
OUT=$WORK/out
mkdir -p "$OUT"
[ "$SAMPLE" -le "$N" ] || SAMPLE=$N
lab_inventory "$WORK/sample.yml" "${LAB_NAMES[@]:0:$SAMPLE}"
printf -- '- hosts: kube_node\n  gather_facts: false\n  tasks:\n    - ansible.builtin.command: "true"\n      changed_when: false\n' \
        >"$WORK/one.yml"

# measure LABEL HOSTS FORKS STRATEGY PLAYBOOK ARGS...: one ansible-playbook as the controller, from no
# connection; one line of results, and the same as a row in $OUT/rows (label hosts forks strategy
# ctl node wall tasks sessions clean load rc).
measure() {
        local l=$1 h=$2 f=$3 st=$4 c0 n0 s0 t0 rc c1 n1 s1 wall load tasks clean
        shift 4
        lab_controller_idle
        load=$(cut -d' ' -f1 /proc/loadavg)
        c0=$(lab_cpu ctl) n0=$(lab_cpu nodes) s0=$(lab_sessions) t0=$EPOCHREALTIME
        lab_controller env ANSIBLE_STRATEGY="$st" ansible-playbook -f "$f" "$@" >"$OUT/$l.log" 2>&1
        rc=$?
        wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
        lab_controller_idle
        c1=$(lab_cpu ctl) n1=$(lab_cpu nodes) s1=$(lab_sessions)
        # tasks per node from the recap: ok + failed + skipped of the lab's nodes
        tasks=$(awk '$1 ~ /^n[0-9]+$/ && $2 == ":" { for (i = 3; i <= NF; i++) { split($i, kv, "=");
                if (kv[1] == "ok" || kv[1] == "failed" || kv[1] == "skipped") t += kv[2] } n++ }
                END { printf "%.1f", n ? t / n : 0 }' "$OUT/$l.log")
        clean=$(python3 -c 'import json, sys
try:
    print(len(json.load(open(sys.argv[1]))["states"].get("clean", [])))
except Exception:
    print("-")' "$OUT/$l.summary.json" 2>/dev/null)
        echo "$l $h $f $st $(awk -v a="$c0" -v b="$c1" -v h="$h" 'BEGIN { printf "%.3f", (b - a) / h }') \
$(awk -v a="$n0" -v b="$n1" -v h="$h" 'BEGIN { printf "%.3f", (b - a) / h }') $wall $tasks \
$(awk -v a="$s0" -v b="$s1" -v h="$h" 'BEGIN { printf "%.1f", (b - a) / h }') $clean $load $rc" >>"$OUT/rows"
        tail -n 1 "$OUT/rows" | awk '{ printf "fleet: %-16s %4d hosts forks %2d %-6s  controller %.3f CPU-s/host  node %.3f CPU-s/host  wall %6.1f s  tasks %s/host  sessions %s/host  clean %s  load %s  exit %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }'
}

fleet_args() { # LABEL: the fleet path's arguments, its summary kept for the clean count
        echo "-e node_reset_hosts=kube_node -e node_reset_summary_file=$OUT/$1.summary.json"
}

echo "fleet: $N nodes up in $LAB_UP_SECONDS s, $LAB_UP_KB_PER_NODE KiB each; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2046
{
        measure one "$N" 20 linear -i "$LAB_INVENTORY" "$WORK/one.yml"
        measure fleet-check "$N" 20 linear -i "$LAB_INVENTORY" "$EX/fleet.yml" --check $(fleet_args fleet-check)
        for st in $STRATEGIES; do
                for f in $FORKS; do
                        measure "fleet-$f-$st" "$N" "$f" "$st" -i "$LAB_INVENTORY" "$EX/fleet.yml" \
                                -e node_reset_confirm=yes $(fleet_args "fleet-$f-$st")
                        [ "$f-$st" = 20-linear ] &&
                                measure fleet-again "$N" 20 linear -i "$LAB_INVENTORY" "$EX/fleet.yml" \
                                        -e node_reset_confirm=yes $(fleet_args fleet-again)
                        lab_restate || exit 1
                done
        done
        measure role "$SAMPLE" 20 linear -i "$WORK/sample.yml" "$EX/reset.yml" -e node_reset_hosts=kube_node \
                -e node_reset_confirm=yes -e node_reset_serial=100% -e node_reset_max_fail_percentage=100
}

# The extrapolation: controller CPU grows with the nodes (per host, as measured here); the wall time
# at forks 20 on this machine scales with the nodes over the measured rate.
awk -v n="$N" '
$1 == "one" { one = $5 }
$1 == "fleet-20-linear" { r = $5; rn = $6; w = $7; c = $10 }
$1 == "role" { full = $5; fulln = $6 }
END {
        printf "fleet: 10,000 nodes: controller %.1f CPU-h with the fleet path, %.1f with one task, %.1f with the full role; nodes %.1f CPU-h (fleet path), %.1f (full role); %.1f h at forks 20 on this machine\n",
                r * 1e4 / 3600, one * 1e4 / 3600, full * 1e4 / 3600, rn * 1e4 / 3600, fulln * 1e4 / 3600, w * 1e4 / n / 3600
        printf "fleet: full role %.3f CPU-s/host on the controller: %.2fx the fleet path, %.2fx one task\n", full, full / r, full / one
        printf "fleet: %d nodes, role %.3f CPU-s/host, one task %.3f CPU-s/host, ratio %.2f, wall %.1f s, clean %s/%d\n", n, r, one, r / one, w, c, n
}' "$OUT/rows"
