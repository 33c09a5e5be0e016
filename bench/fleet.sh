#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Fleet benchmark (not a test): the Ansible path at scale, on FLEET_NODES (300) workers of the fleet
# lab (tests/lab/: each node its own namespaces and sshd, the controller in the switch namespace with
# a HOME of its own), with the real ansible-playbook:
#   (a) one task: a play of one ansible.builtin.command per node, the floor of any play;
#   (b) the role's fleet path, examples/ansible/fleet.yml (one node-reset call per node, then the
#       summary once): right after (a) at forks 20, then once more on the clean nodes (nothing to
#       change), in check mode, and resetting at each other of FLEET_FORKS (5 20 50) with each of
#       FLEET_STRATEGIES (linear free), the nodes' state made again between runs (lab_restate);
#   (c) the role's full path, reset.yml (~19 tasks per node), on FLEET_ROLE_SAMPLE (30) of the nodes;
#   (d) beside kubespray's own reset (FLEET_KUBESPRAY, its v2.23.3 tree; FLEET_KUBESPRAY_NODES, 20,
#       0 leaves it out): on systemd nodes (systemd-nspawn, their own root and systemd, a worker as
#       kubespray leaves it, kubelet.service running), the fleet path, then the same nodes made again
#       and kubespray's reset.yml, each at forks 20 with the same controller; what each leaves, counted
#       in every node with the system's tools, and what of the host's own firewall each keeps.
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
KS=${FLEET_KUBESPRAY:-/work/shared/peers/kubespray-v2.23.3}
KS_N=${FLEET_KUBESPRAY_NODES:-20}
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

# FLEET_OUT=DIR keeps every playbook's output, the summaries and the counts there.
[ -z "${FLEET_OUT:-}" ] || trap 'cp -r "$OUT/." "$FLEET_OUT/" 2>/dev/null; lab_down; cd /; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT
echo "fleet: $N nodes up in $LAB_UP_SECONDS s, $LAB_UP_KB_PER_NODE KiB each; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2046
{
        # The reference pair, one task then the fleet path at forks 20, side by side: the machine's
        # load moves both alike; the ratio R/T is theirs.
        measure one "$N" 20 linear -i "$LAB_INVENTORY" "$WORK/one.yml"
        measure fleet-20-linear "$N" 20 linear -i "$LAB_INVENTORY" "$EX/fleet.yml" -e node_reset_confirm=yes \
                $(fleet_args fleet-20-linear)
        measure fleet-again "$N" 20 linear -i "$LAB_INVENTORY" "$EX/fleet.yml" -e node_reset_confirm=yes \
                $(fleet_args fleet-again)
        lab_restate || exit 1
        measure fleet-check "$N" 20 linear -i "$LAB_INVENTORY" "$EX/fleet.yml" --check $(fleet_args fleet-check)
        for st in $STRATEGIES; do
                for f in $FORKS; do
                        [ "$f-$st" != 20-linear ] || continue
                        measure "fleet-$f-$st" "$N" "$f" "$st" -i "$LAB_INVENTORY" "$EX/fleet.yml" \
                                -e node_reset_confirm=yes $(fleet_args "fleet-$f-$st")
                        lab_restate || exit 1
                done
        done
        measure role "$SAMPLE" 20 linear -i "$WORK/sample.yml" "$EX/reset.yml" -e node_reset_hosts=kube_node \
                -e node_reset_confirm=yes -e node_reset_serial=100% -e node_reset_max_fail_percentage=100
}

# What a worker's reset may leave, counted in the node with the system's tools (not node-reset's own
# verdict), and the host's own state that must be kept; one line of key=count.
residue_of() { # NAME
        lab_exec "$1" bash -c '
                c() { printf "%s=%s " "$1" "$2"; }
                c mounts "$(findmnt -rn -o TARGET | grep -c "^/var/lib/kubelet/")"
                c netns "$(ls /run/netns 2>/dev/null | grep -c "^cni-")"
                c links "$(ip -o link show | grep -Ec ": (cali[0-9a-f]+|vxlan\.calico|cni0|tunl0)[@:]")"
                c routes "$(ip route show proto bird | wc -l)"
                c chains "$(iptables-save | grep -Ec "^:(KUBE-|cali-)")"
                c rules "$(iptables-save | grep -Ec "^-A .*(KUBE-|cali-)")"
                c ipsets "$(ipset list -n | grep -Ec "^(KUBE-|cali)")"
                c files "$(find /etc/kubernetes /etc/cni /opt/cni /var/lib/calico /var/lib/cni /etc/calico /var/log/pods \
                        /var/log/containers /usr/local/bin /etc/systemd/system/kubelet.service /var/lib/kubelet \
                        \( -type f -o -type l \) 2>/dev/null | wc -l)"
                c units "$(systemctl is-active kubelet.service 2>/dev/null | grep -c "^active")"
                c host_rules "$(iptables-save | grep -E "^-A (INPUT|FORWARD|OUTPUT|POSTROUTING|PREROUTING|MYFW) " | grep -Evc "KUBE-|cali|CNI-|FLANNEL|flannel")"
                c volume "$(grep -c must /mnt/disks/pv-data/important.db)"
                echo'
}

residue_sum() { # FILE: the sums over the nodes of residue_of's lines
        awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); s[kv[1]] += kv[2]; k[kv[1]] = 1 } }
             END { for (x in k) printf "%s=%d ", x, s[x]; print "" }' "$1"
}

residues() { # FILE: residue_of every node into FILE
        local n
        for n in "${LAB_NAMES[@]}"; do residue_of "$n"; done >"$1"
}

# (d): the same systemd nodes reset by the fleet path, then made again and reset by kubespray's role.
# kubespray is given what its reset needs on workers alone, as documented variables: reset_confirmation
# (no prompt), resolvconf_mode=none (its reset otherwise runs kubernetes/preinstall, which refuses an
# inventory without a control plane and installs packages), reset_restart_network=false (the nodes
# have no networking.service). Its inventory/sample is the configuration.
kubespray_side_by_side() {
        local n inv
        [ "$KS_N" -gt 0 ] || return 0
        [ -f "$KS/reset.yml" ] || { echo "fleet: kubespray: skipped: no kubespray tree at $KS"; return 0; }
        /usr/bin/python3 -c 'import ansible_collections.ansible.utils, jmespath' 2>/dev/null ||
                { echo "fleet: kubespray: skipped: no ansible.utils collection or jmespath (make deps)"; return 0; }
        lab_down
        LAB_NODE_KIND=systemd LAB_NODE_STATE=kubespray
        lab_init "$WORK/lab-ks" >/dev/null || { echo "fleet: kubespray: skipped: no systemd nodes"; return 0; }
        lab_up "$KS_N" || return 1
        echo "fleet: kubespray: $KS_N systemd nodes up in $LAB_UP_SECONDS s, $LAB_UP_KB_PER_NODE KiB each"
        inv=$LAB_DIR/ks-inv
        cp -r "$KS/inventory/sample" "$inv"
        {
                echo "all:"
                echo "  vars: {ansible_user: root, ansible_become: false}"
                echo "  hosts:"
                for n in "${LAB_NAMES[@]}"; do echo "    $n: {ansible_host: ${LAB_ADDR[$n]}, ip: ${LAB_ADDR[$n]}}"; done
                echo "  children:"
                echo "    kube_control_plane: {hosts: {}}"
                echo "    etcd: {hosts: {}}"
                echo "    calico_rr: {hosts: {}}"
                echo "    kube_node: {hosts: {$(printf '%s: {}, ' "${LAB_NAMES[@]}")}}"
                echo "    k8s_cluster: {children: {kube_control_plane: {}, kube_node: {}, calico_rr: {}}}"
        } >"$inv/hosts.yml"
        residues "$OUT/ks-before-1"
        # --with-runtime: kubespray's reset removes the runtime's units and binaries and /opt/cni too
        measure ks-node-reset "$KS_N" 20 linear -i "$LAB_INVENTORY" "$EX/fleet.yml" -e node_reset_confirm=yes \
                -e '{"node_reset_extra_args": ["--with-runtime"]}' $(fleet_args ks-node-reset)
        residues "$OUT/ks-after-node-reset"
        lab_restate || return 1
        residues "$OUT/ks-before-2"
        export ANSIBLE_ROLES_PATH=$KS/roles ANSIBLE_LIBRARY=$KS/library
        measure ks-kubespray "$KS_N" 20 linear -i "$inv/hosts.yml" "$KS/reset.yml" -e reset_confirmation=yes \
                -e resolvconf_mode=none -e '{"reset_restart_network": false}'
        unset ANSIBLE_ROLES_PATH ANSIBLE_LIBRARY
        residues "$OUT/ks-after-kubespray"
        echo "fleet: kubespray: summed over the $KS_N nodes (before, after node-reset's fleet path; before, after kubespray's reset.yml):"
        for f in ks-before-1 ks-after-node-reset ks-before-2 ks-after-kubespray; do
                printf 'fleet: kubespray:   %-20s %s\n' "$f" "$(residue_sum "$OUT/$f")"
        done
        awk '$1 == "ks-node-reset" { a = $5; an = $6 } $1 == "ks-kubespray" { b = $5; bn = $6; t = $8 }
             END { printf "fleet: kubespray: controller %.3f CPU-s/host with kubespray'"'"'s reset (%s tasks/host), %.3f with the fleet path: %.1fx; nodes %.3f against %.3f\n", b, t, a, b / a, bn, an }' "$OUT/rows"
}
kubespray_side_by_side

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
