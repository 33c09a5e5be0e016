# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# The fleet side of make e2e-k8s: the real ansible-playbook, run in this namespace (the switch, which
# reaches the nodes on 10.240.0.0/24), drives the nodes over SSH (node.sh lays sshd into them) with
# examples/ansible's playbooks, as operators run them. Sourced by tests/e2e-k8s/run.sh after
# cluster.sh. Scenarios:
#   remove-node-live           cp1, w1, w2; two replicas behind a PodDisruptionBudget (minAvailable
#                              1), both on w1; remove-node.yml on w1 drains it from cp1 (node-reset
#                              drain w1 there): the pods move to w2 before w1 is reset, a watcher of
#                              the available replicas never sees fewer than one, a pod bound to w1
#                              while the drain waits for the budget is evicted too; no administrator
#                              credential on w1; w1 clean and rejoinable, its Node gone; w1 joins
#                              again. Then kubectl 1.20's drain of w2 and node-reset drain w1 from
#                              cp1, side by side with the same pods and flags: the same pods refuse,
#                              the same pods are evicted.
#   forget-dead-control-plane  cp1, cp2, cp3 stacked; cp3 stopped for good, its disk gone, its Node
#                              NotReady past node_reset_forget_after; remove-node.yml on cp3
#                              (unreachable, not Ready: node-reset forget cp3 on cp1):
#                              etcd healthy with two members, ClusterStatus without cp3, its Node
#                              gone; a new cp3 joins as a control plane with the same name and address.
#   cluster-delete             cluster-delete.yml on every node of the cluster with a status
#                              endpoint here that records every update: deleting, the workers, the
#                              control planes (cp1 last), deleted; every node clean and rejoinable;
#                              the fleet summary matches the nodes' reports; once more with a worker
#                              holding a busy emptyDir: the status ends fail, naming it.
#   argo-cluster-delete        examples/argo/cluster-delete.yaml run by the project's step runner
#                              (tests/argo/argo_runner.py): a Deployment with a claim and the CNI's
#                              DaemonSet deleted against the real API, waited for until NotFound;
#                              the nodes reset over SSH, workers first, cp1 last; deleted.
# In one run they go in this order (cluster-delete ends the cluster; argo-cluster-delete too, so it
# runs alone or instead of it), after rejoin and before side-by-side, control-plane and
# master-gone, which leave w1/w2 and cp1 in other states.

ALL_NODE_IP[cp3]=10.240.0.18
NODE_PODCIDR[cp3]=10.244.7.0/24
FLEET_STATUS_PORT=8090
FLEET_PIDS=() # process groups (setsid) this file starts; run.sh's cleanup ends them
EXAMPLES=$TOP/examples/ansible

# Ansible's home, temporary files and configuration in $W; the nodes' host keys checked strictly
# against $W/ssh/known_hosts; one connection per task (no control master left behind), retried
# and given time: on this shared 2-core machine sshd's banner can take more than 20 s.
fleet_init() {
        local f=$W/fleet
        [ -z "${FLEET_READY:-}" ] || return "$FLEET_READY"
        FLEET_READY=1
        [ -n "$NODE_SSH" ] || { echo "SKIP: the nodes run no sshd (no openssh-server .debs; tools/install-deps.sh)"; return 1; }
        command -v ansible-playbook >/dev/null || { echo "SKIP: ansible-playbook is not installed (make deps)"; return 1; }
        mkdir -p "$f/home" "$f/tmp" "$OUT/fleet"
        cat >"$f/ansible.cfg" <<-EOF
	[defaults]
	retry_files_enabled = False
	interpreter_python = /usr/bin/python3
	host_key_checking = True
	private_key_file = $W/ssh/id_ed25519
	remote_user = root
	timeout = 30
	forks = 5
	[ssh_connection]
	pipelining = True
	retries = 3
	ssh_args = -o ControlMaster=no -o UserKnownHostsFile=$W/ssh/known_hosts -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -o BatchMode=yes -o ConnectTimeout=30
	EOF
        FLEET_READY=0
}

# fleet_inventory FILE "CONTROL PLANES" "WORKERS": kubespray's groups, each node by its address.
fleet_inventory() {
        local n
        {
                echo "all:"
                echo "  vars: {node_reset_report_dir: $OUT/fleet/reports}"
                echo "  children:"
                echo "    kube_control_plane:"
                echo "      hosts:"
                for n in $2; do echo "        $n: {ansible_host: ${ALL_NODE_IP[$n]}}"; done
                echo "    kube_node:"
                echo "      hosts:"
                for n in $3; do echo "        $n: {ansible_host: ${ALL_NODE_IP[$n]}}"; done
                [ -n "$3" ] || echo "        {}"
        } >"$1"
}

# fleet_playbook NAME PLAYBOOK INVENTORY ARGS...: ansible-playbook as an operator runs it, from this
# namespace over SSH; its output in $OUT/fleet/NAME.log.
fleet_playbook() {
        local name=$1 pb=$2 inv=$3 rc t0=$SECONDS
        shift 3
        env HOME="$W/fleet/home" TMPDIR="$W/fleet/tmp" ANSIBLE_CONFIG="$W/fleet/ansible.cfg" ANSIBLE_NOCOLOR=1 \
                ANSIBLE_LOCAL_TEMP="$W/fleet/tmp" ansible-playbook -i "$inv" "$EXAMPLES/$pb" "$@" >"$OUT/fleet/$name.log" 2>&1
        rc=$?
        echo "e2e-k8s: ansible-playbook $pb $* ($name): exit $rc in $((SECONDS - t0)) s"
        return $rc
}

recap_changed() { # LOG HOST: the "changed=" count of HOST in ansible's recap
        awk -v h="$2" '$1 == h && $2 == ":" { for (i = 3; i <= NF; i++) if ($i ~ /^changed=/) { sub(/changed=/, "", $i); print $i } }' "$1"
}

# A worker joined and Ready, made once per run (a later scenario finds it as an earlier one left it).
fleet_worker() { # NAME
        local n=$1
        if [ -z "${NODE_PID[$n]:-}" ]; then
                node_create "$n" "${ALL_NODE_IP[$n]}" && node_boot "$n" || { echo "FAIL: $n boots"; failed=$((failed + 1)); return 1; }
        fi
        node_ready "$n" 2>/dev/null && return 0
        check "kubeadm join of $n" cluster_join "$n" "$OUT/kubeadm-join-fleet-$n.log" || return 1
        check "$n Ready" wait_for 180 "$n Ready" node_ready "$n" || { network_diagnosis "$n"; return 1; }
}

# A control plane with stacked etcd: kubeadm join --control-plane with the certificates cp1 uploads.
fleet_control_plane() { # NAME LOG
        local n=$1 log=$2 key cmd t0=$SECONDS
        if [ -z "${NODE_PID[$n]:-}" ]; then
                node_create "$n" "${ALL_NODE_IP[$n]}" && node_boot "$n" || { echo "FAIL: $n boots"; failed=$((failed + 1)); return 1; }
        fi
        node_ready "$n" 2>/dev/null && return 0
        key=$(node_exec cp1 kubeadm init phase upload-certs --upload-certs 2>>"$log" | tail -n 1)
        cmd=$(node_exec cp1 kubeadm token create --print-join-command 2>>"$log") || return 1
        # shellcheck disable=SC2086
        node_exec "$n" $cmd --control-plane --certificate-key "$key" --apiserver-advertise-address "${ALL_NODE_IP[$n]}" \
                --cri-socket "$CRI_SOCKET" --node-name "$n" \
                ${E2E_K8S_IGNORE_PREFLIGHT:+--ignore-preflight-errors=$E2E_K8S_IGNORE_PREFLIGHT} >>"$log" 2>&1 || {
                tail -n 30 "$log"
                return 1
        }
        echo "e2e-k8s: kubeadm join --control-plane of $n in $((SECONDS - t0)) s"
        check "$n Ready" wait_for 240 "$n Ready" node_ready "$n"
}

all_ready() { local n; for n; do node_ready "$n" || return 1; done; }
node_gone() { ! kc get node "$1" >/dev/null 2>&1 && kc get node cp1 >/dev/null; }

clean_and_rejoinable() { # NODE FILE: node-reset status on NODE says clean (exit 0) and rejoinable
        node_exec "$1" node-reset --output=json status >"$2" 2>"$2.log" &&
                test "$(json_field "$2" 'len(r["residue"])')/$(json_field "$2" 'r["rejoin"]["rejoinable"]')" = 0/True
}

# --- remove-node-live -----------------------------------------------------------------------------

web_objects() {
        cat <<-EOF
	apiVersion: apps/v1
	kind: Deployment
	metadata: {name: nr-web}
	spec:
	  replicas: 2
	  selector: {matchLabels: {app: nr-web}}
	  template:
	    metadata: {labels: {app: nr-web}}
	    spec:
	      terminationGracePeriodSeconds: 1
	      containers:
	      - name: main
	        image: $TEST_IMAGE
	        imagePullPolicy: Never
	        command: [sh, -c, 'echo ok > /tmp/ready; exec sleep 2147483647']
	        readinessProbe: {exec: {command: [cat, /tmp/ready]}, periodSeconds: 2}
	        volumeMounts: [{name: scratch, mountPath: /scratch}]
	      volumes: [{name: scratch, emptyDir: {}}]
	---
	apiVersion: policy/v1beta1
	kind: PodDisruptionBudget
	metadata: {name: nr-web}
	spec:
	  minAvailable: 1
	  selector: {matchLabels: {app: nr-web}}
	EOF
}

web_on() { # NODE: both replicas Running and Ready on NODE
        [ "$(kc get pods -l app=nr-web -o 'jsonpath={range .items[*]}{.spec.nodeName}/{.status.phase}/{.status.containerStatuses[0].ready}{"\n"}{end}' |
                grep -c "^$1/Running/true$")" = 2 ]
}

# Every value of the Deployment's status.availableReplicas as the API server reports it, with the
# time, until killed; and every pod event of the Deployment's pods.
web_watch() {
        local kubectl=("$K8S_DIR/bin/kubectl" --kubeconfig "$W/admin.conf" --request-timeout=0)
        # each in a process group of its own: the pipeline ends as one
        setsid bash -c '"${@:2}" | while read -r v; do echo "$(date +%s.%N) ${v:-0}"; done >"$1"' watch \
                "$OUT/fleet/available.txt" "${kubectl[@]}" get deployment nr-web --watch \
                -o 'jsonpath={.status.availableReplicas}{"\n"}' 2>>"$OUT/fleet/watch.err" &
        WATCH_PIDS=("$!")
        setsid bash -c '"${@:2}" | while read -r l; do echo "$(date +%s.%N) $l"; done >"$1"' watch \
                "$OUT/fleet/pods.txt" "${kubectl[@]}" get pods -l app=nr-web --watch \
                -o 'jsonpath={.metadata.name} {.spec.nodeName} {.status.phase} {.status.containerStatuses[0].ready} {.metadata.deletionTimestamp}{"\n"}' \
                2>>"$OUT/fleet/watch.err" &
        WATCH_PIDS+=("$!")
        FLEET_PIDS+=("${WATCH_PIDS[@]}")
        sleep 2 # the watches print the current state first
}

fleet_kill() { # PGID...: end the process groups
        local p
        for p; do kill -- "-$p" 2>/dev/null; done
        return 0
}

# The moment both replicas ran Ready on w2 (from the pod watch) against the moment w1's reset began
# (its run's start, from w1's own report; the drain ran before, on cp1): the first must come first.
moved_before_reset() { # REPORT
        python3 - "$OUT/fleet/pods.txt" "$1" <<-'EOF'
	import calendar, json, sys, time
	state, moved = {}, None
	for line in open(sys.argv[1]):
	    f = line.split()
	    if len(f) < 5:
	        continue
	    t, name, node, phase, ready = float(f[0]), f[1], f[2], f[3], f[4]
	    state[name] = (node, phase, ready, len(f) > 5)
	    if moved is None and sum(1 for s in state.values() if s == ("w2", "Running", "true", False)) >= 2:
	        moved = t
	r = json.load(open(sys.argv[2]))
	start = calendar.timegm(time.strptime(r["started"], "%Y-%m-%dT%H:%M:%SZ"))
	print("e2e-k8s: both replicas Ready on w2 at %+.1f s from w1's reset" % ((moved or 0) - start))
	sys.exit(0 if moved is not None and moved <= start + 1 else 1)
	EOF
}

# A pod bound to w1 by name (no scheduler: w1 is cordoned) with a controller reference the drain
# counts as managed (a ConfigMap's, as an operator may set), once the drain has cordoned w1.
late_pod() {
        local uid
        for _ in $(seq 120); do [ "$(kc get node w1 -o jsonpath={.spec.unschedulable})" = true ] && break; sleep 0.5; done
        kc create configmap nr-late >/dev/null 2>&1
        uid=$(kc get configmap nr-late -o jsonpath={.metadata.uid})
        kc apply -f - >/dev/null <<-EOF
	apiVersion: v1
	kind: Pod
	metadata:
	  name: nr-late
	  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: nr-late, uid: $uid, controller: true}]
	spec:
	  nodeName: w1
	  terminationGracePeriodSeconds: 1
	  containers: [{name: main, image: $TEST_IMAGE, imagePullPolicy: Never, command: [sleep, "3600"]}]
	EOF
}

drain_report_row() { # REPORT TARGET: the row's result and whether it was added after the plan
        json_field "$1" "[(a['result'], 'after the plan' in (a.get('detail') or '')) for p in r['phases'] for a in p['actions'] if a['target'] == '$2']"
}

scenario_remove_node_live() {
        local inv=$OUT/fleet/inventory-remove.yml min n p
        echo "=== scenario: remove-node-live"
        fleet_init || return
        cluster_up || return
        fleet_worker w1 || return
        fleet_worker w2 || return
        # both replicas on w1: w2 takes none while cordoned
        kc cordon w2 >/dev/null
        web_objects | kc apply -f - >>"$OUT/fleet/objects.log" 2>&1
        check "two replicas of nr-web Ready on w1, a PodDisruptionBudget minAvailable 1" \
                wait_for 180 "nr-web on w1" web_on w1 || { kc uncordon w2 >/dev/null; return; }
        kc uncordon w2 >/dev/null
        fleet_inventory "$inv" cp1 "w1 w2"

        fleet_playbook remove-check remove-node.yml "$inv" -e node=w1 --check
        check "remove-node.yml --check on w1: exit 0" test $? -eq 0 || tail -n 20 "$OUT/fleet/remove-check.log"
        check "... the drain's plan, made on cp1, lists the two pods it would evict" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
rows = [a for p in r["phases"] if p["name"] == "drain" for a in p["actions"] if "nr-web" in a["target"]]
sys.exit(0 if r["command"] == "drain" and len(rows) == 2 else 1)' "$OUT/fleet/reports/w1.drain.plan.json"
        check "... nothing changed: nr-web still on w1, w1 schedulable and Ready" \
                eval 'web_on w1 && node_ready w1 && [ -z "$(kc get node w1 -o jsonpath={.spec.unschedulable})" ]'

        web_watch
        late_pod &
        FLEET_PIDS+=("$!")
        fleet_playbook remove remove-node.yml "$inv" -e node=w1 -e node_reset_confirm=yes -e node_reset_drain_timeout=300s
        n=$?
        fleet_kill "${WATCH_PIDS[@]}"
        check "remove-node.yml on w1 over SSH: exit 0" test "$n" -eq 0 || tail -n 30 "$OUT/fleet/remove.log"
        check "... the drain ran on cp1 (delegated), and evicted both nr-web pods" eval \
                'grep -Eq "\[w1 -> cp1\(" "$OUT/fleet/remove.log" && python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
rows = [a for p in r[\"phases\"] for a in p[\"actions\"] if \"nr-web\" in a[\"target\"]]
sys.exit(0 if r[\"command\"] == \"drain\" and len(rows) == 2 and all(a[\"result\"] == \"changed\" for a in rows) else 1)" \
                "$OUT/fleet/reports/w1.drain.json"'
        check "... the pod bound to w1 during the drain has its row, and was evicted" \
                test "$(drain_report_row "$OUT/fleet/reports/w1.drain.json" Pod/default/nr-late)" = "[('changed', True)]"
        check "... w1's own report: reset, no residue" test "$(json_field "$OUT/fleet/reports/w1.json" 'r["command"] == "run" and r["residue"] == []')" = True
        check "... no administrator credential was ever written on w1" \
                test -z "$(node_exec w1 grep -rlF "$(grep client-key-data "$W/admin.conf" | awk '{print $2}' | cut -c1-40)" /etc /root /tmp /var/tmp 2>/dev/null)"
        check "both replicas run on w2" wait_for 60 "nr-web on w2" web_on w2
        min=$(awk 'NR == 1 || $2 < m { m = $2 } END { print m }' "$OUT/fleet/available.txt")
        echo "e2e-k8s: available replicas seen: $(cut -d' ' -f2 "$OUT/fleet/available.txt" | tr '\n' ' ')"
        check "the budget held: the watcher saw $(wc -l <"$OUT/fleet/available.txt") values, never fewer than 1 available" \
                test "$(wc -l <"$OUT/fleet/available.txt")" -ge 2 -a "${min:-0}" -ge 1
        check "the pods moved to w2 before w1 was reset" moved_before_reset "$OUT/fleet/reports/w1.json"
        check "w1's Node is gone" node_gone w1
        check "node-reset status on w1: clean and rejoinable" clean_and_rejoinable w1 "$OUT/fleet/status-w1.json"
        node_residue w1 >"$OUT/fleet/residue-w1.txt"
        check "w1 holds no kubelet mount, sandbox, cni0 or kubepods cgroup (seen from the node)" \
                test ! -s "$OUT/fleet/residue-w1.txt" || cat "$OUT/fleet/residue-w1.txt"

        fleet_playbook remove-again remove-node.yml "$inv" -e node=w1 -e node_reset_confirm=yes
        n=$?
        check "remove-node.yml on w1 again: exit 0, nothing changed" test "$n/$(recap_changed "$OUT/fleet/remove-again.log" w1)" = 0/0 ||
                tail -n 20 "$OUT/fleet/remove-again.log"

        check "kubeadm join of w1 again, nothing cleaned by hand" cluster_join w1 "$OUT/kubeadm-join-w1-after-remove.log" || return
        check "w1 Ready again" wait_for 180 "w1 Ready again" node_ready w1
        p=nr-after-remove
        probe_pod "$p" w1 | kc apply -f - >/dev/null
        check "a new pod on w1 runs" wait_for 120 "$p Running" pod_running "$p"
        drain_side_by_side
}

# --- kubectl drain and node-reset drain, side by side on the real cluster --------------------------

side_pods() { # X: on node X, by name: a bare pod, one a ConfigMap controls, one with emptyDir data
        local uid
        kc create configmap "nr-sbs-$1" >/dev/null 2>&1
        uid=$(kc get configmap "nr-sbs-$1" -o jsonpath={.metadata.uid})
        for p in bare owned empty; do
                cat <<-EOF
		apiVersion: v1
		kind: Pod
		metadata:
		  name: $1-$p
		  labels: {app: nr-sbs}
		$([ $p = bare ] || echo "  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: nr-sbs-$1, uid: $uid, controller: true}]")
		spec:
		  nodeName: $1
		  terminationGracePeriodSeconds: 1
		  containers: [{name: main, image: $TEST_IMAGE, imagePullPolicy: Never, command: [sleep, "3600"], volumeMounts: [{name: s, mountPath: /s}]}]
		  volumes: [{name: s, $([ $p = empty ] && echo 'emptyDir: {}' || echo 'configMap: {name: nr-sbs-'$1'}')}]
		---
		EOF
        done
}
drain_sbs_left() { # X: the pods left on X, without X's name, kube-system's included (kube-proxy's, ...)
        kc get pods -A --field-selector "spec.nodeName=$1" -o 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}' |
                sed -e "s|/$1-|/|" -e "s|-[a-z0-9]\{5\}$||" | sort | tr '\n' ' '
}
drain_sbs_refused_kubectl() { grep "cannot delete" "$1" | grep -oE "[a-z-]+/w2-[a-z]+" | sed 's|/w2-|/|' | sort -u | tr '\n' ' '; }
drain_sbs_refused_nr() {
        json_field "$1" "''.join(t + ' ' for t in sorted(a['target'][4:].replace('/w1-', '/') for p in r['phases'] for a in p['actions'] if a['result'] == 'failed' and a['kind'] == 'evict' and a['error'] in ('unmanaged', 'emptydir', 'daemonset-lookup')))"
}
drain_sbs_round() { # NAME FLAGS...: kubectl drain w2 from here, node-reset drain w1 on cp1
        local name=$1 kflags=() nflags=() f rk rn
        shift
        for f; do
                kflags+=("$f")
                case $f in --force) nflags+=(--drain-force) ;; --delete-emptydir-data) nflags+=(--drain-delete-emptydir-data) ;; esac
        done
        "$K8S_DIR/bin/kubectl" --kubeconfig "$W/admin.conf" drain w2 --ignore-daemonsets --timeout=120s "${kflags[@]}" \
                >"$OUT/fleet/sbs-$name.kubectl.out" 2>"$OUT/fleet/sbs-$name.kubectl.err"
        rk=$?
        node_exec cp1 node-reset --yes --output=json --drain-timeout 120s "${nflags[@]}" drain w1 \
                >"$OUT/fleet/sbs-$name.json" 2>"$OUT/fleet/sbs-$name.err"
        rn=$?
        check "side by side, $name: kubectl drain exits $rk, node-reset drain $rn: both fail or both succeed" \
                test $((rk != 0)) -eq $((rn != 0))
        check "side by side, $name: the same pods refuse ($(drain_sbs_refused_kubectl "$OUT/fleet/sbs-$name.kubectl.err"))" \
                test "$(drain_sbs_refused_kubectl "$OUT/fleet/sbs-$name.kubectl.err")" = "$(drain_sbs_refused_nr "$OUT/fleet/sbs-$name.json")"
        check "side by side, $name: the same pods are left ($(drain_sbs_left w2))" \
                wait_for 60 "the same pods left" eval 'test "$(drain_sbs_left w1)" = "$(drain_sbs_left w2)"'
}

side_running() { local x p; for x in w1 w2; do for p in bare owned empty; do pod_running "$x-$p" || return 1; done; done; }
no_default_pods() { [ -z "$(kc get pods -o name --field-selector "spec.nodeName=$1")" ]; }

drain_side_by_side() {
        # Only the pods of this comparison on w1 and w2 in the default namespace.
        kc delete deployment nr-web --wait=false >/dev/null 2>&1
        kc delete pdb/nr-web pod/nr-after-remove pod/nr-late --wait=false >/dev/null 2>&1
        check "side by side: w1 and w2 hold no pod of the default namespace" \
                wait_for 120 "default pods gone from w1 and w2" eval 'no_default_pods w1 && no_default_pods w2'
        { side_pods w1; side_pods w2; } | kc apply -f - >>"$OUT/fleet/objects.log" 2>&1
        check "side by side: the same pods run on w1 and w2" wait_for 120 "side-by-side pods Running" side_running
        drain_sbs_round "no flags"
        check "side by side, no flags: both refused for the bare pod and the emptyDir one" \
                test "$(drain_sbs_refused_kubectl "$OUT/fleet/sbs-no flags.kubectl.err")" = "default/bare default/empty "
        drain_sbs_round "--force --delete-emptydir-data" --force --delete-emptydir-data
        check "side by side, --force: only DaemonSets' pods are left on either" \
                eval '! drain_sbs_left w1 | grep -q "default/"'
        kc uncordon w1 w2 >/dev/null
}

# --- forget-dead-control-plane --------------------------------------------------------------------

cluster_status_endpoints() { # the control planes kubeadm-config's ClusterStatus lists, sorted, one line
        kc -n kube-system get configmap kubeadm-config -o 'jsonpath={.data.ClusterStatus}' |
                python3 -c 'import sys, yaml; print(" ".join(sorted((yaml.safe_load(sys.stdin) or {}).get("apiEndpoints", {}))))'
}
etcd_three() { etcd_members_are "cp1 cp2 cp3" && etcd_healthy; }
etcd_two() { etcd_members_are "cp1 cp2" && etcd_healthy; }

scenario_forget_dead_control_plane() {
        local inv=$OUT/fleet/inventory-forget.yml n
        echo "=== scenario: forget-dead-control-plane"
        fleet_init || return
        cluster_up || return
        fleet_control_plane cp2 "$OUT/kubeadm-join-cp2-fleet.log" || return
        fleet_control_plane cp3 "$OUT/kubeadm-join-cp3-fleet.log" || return
        check "etcd has three members: cp1 cp2 cp3" wait_for 60 "etcd cp1 cp2 cp3" etcd_three || return
        check "ClusterStatus lists cp1 cp2 cp3" test "$(cluster_status_endpoints)" = "cp1 cp2 cp3"

        echo "e2e-k8s: stopping cp3 for good, its disk gone"
        node_stop cp3
        rm -rf --one-file-system "$W/nodes/cp3"
        fleet_inventory "$inv" "cp1 cp2 cp3" ""
        # remove-node.yml forgets a node that does not answer only once its Node has been NotReady
        # for node_reset_forget_after (20 s here): the node lifecycle controller says so after 40 s.
        check "cp3's Node is NotReady" wait_for 120 "cp3 NotReady" eval '! node_ready cp3'
        sleep 20

        fleet_playbook forget-check remove-node.yml "$inv" -e node=cp3 -e node_reset_forget_after=20 --check
        check "remove-node.yml --check on cp3 (unreachable): exit 0, the forget plan only" test $? -eq 0 ||
                tail -n 20 "$OUT/fleet/forget-check.log"
        check "... nothing changed: etcd still has three members" etcd_members_are "cp1 cp2 cp3"

        fleet_playbook forget remove-node.yml "$inv" -e node=cp3 -e node_reset_confirm=yes -e node_reset_forget_after=20
        n=$?
        check "remove-node.yml on cp3 over SSH: cp3 unreachable, node-reset forget cp3 ran on cp1: exit 0" test "$n" -eq 0 ||
                tail -n 30 "$OUT/fleet/forget.log"
        cp "$OUT/fleet/reports/cp3.forget.json" "$OUT/fleet/forget-first.json"
        check "... forget ran on cp1 (delegated), its report changed the etcd member, the Node and kubeadm's record" \
                eval 'grep -Eq "(ok|changed): \[cp3 -> cp1\(" "$OUT/fleet/forget.log" && python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
rows = {a[\"kind\"]: a[\"result\"] for p in r[\"phases\"] for a in p[\"actions\"]}
sys.exit(0 if r[\"command\"] == \"forget\" and rows == {\"etcd-member\": \"changed\", \"node-object\": \"changed\", \"kubeadm-endpoint\": \"changed\"} else 1)" \
                "$OUT/fleet/forget-first.json"' ||
                json_field "$OUT/fleet/forget-first.json" '[(a["kind"], a["result"], a.get("message")) for p in r["phases"] for a in p["actions"]]'
        check "etcd is healthy with two members: cp1 cp2" etcd_two || echo "e2e-k8s: etcd members: $(etcd_members)"
        check "ClusterStatus no longer lists cp3" test "$(cluster_status_endpoints)" = "cp1 cp2"
        check "cp3's Node is gone" node_gone cp3

        fleet_playbook forget-again remove-node.yml "$inv" -e node=cp3 -e node_reset_confirm=yes -e node_reset_forget_after=20
        n=$?
        check "remove-node.yml on cp3 again: exit 0, nothing changed" test "$n/$(recap_changed "$OUT/fleet/forget-again.log" cp3)" = 0/0 ||
                tail -n 20 "$OUT/fleet/forget-again.log"

        # a new machine with the same name and address: a fresh tree, new host keys
        check "a new cp3 joins as a control plane with the same name and address" \
                fleet_control_plane cp3 "$OUT/kubeadm-join-cp3-new.log" || return
        check "etcd has three members again: cp1 cp2 cp3" wait_for 60 "etcd cp1 cp2 cp3" etcd_three
        check "ClusterStatus lists cp3 again" test "$(cluster_status_endpoints)" = "cp1 cp2 cp3"
}

# --- cluster-delete -------------------------------------------------------------------------------

# The cluster's status endpoint, here in the switch: every update as one JSON line, in order.
status_server() {
        setsid python3 "$TOP/tests/integration/status-endpoint.py" "$W/fleet/updates" "$SWITCH_IP" "$FLEET_STATUS_PORT" 2>"$OUT/fleet/status-server.log" &
        STATUS_PID=$!
        FLEET_PIDS+=("$STATUS_PID")
        for _ in $(seq 50); do
                python3 -c 'import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1)' \
                        "$SWITCH_IP" "$FLEET_STATUS_PORT" 2>/dev/null && return 0
                sleep 0.1
        done
        return 1
}

fleet_delete() { # NAME INVENTORY ARGS...: cluster-delete.yml; the updates it sent in $OUT/fleet/NAME.updates
        local name=$1 inv=$2 rc
        shift 2
        : >"$W/fleet/updates"
        fleet_playbook "$name" cluster-delete.yml "$inv" -e "node_reset_summary_file=$OUT/fleet/$name.summary.json" \
                -e "node_reset_status_url=http://$SWITCH_IP:$FLEET_STATUS_PORT/clusters/e2e/status" "$@"
        rc=$?
        cp "$W/fleet/updates" "$OUT/fleet/$name.updates"
        return $rc
}

updates_are() { # NAME EXPECTED: the updates as "status[/node[/result]]" words
        local got
        got=$(python3 -c '
import json, sys
print(" ".join("/".join(str(x[k]) for k in ("status", "node", "result") if k in x) for x in map(json.loads, open(sys.argv[1]))))' \
                "$OUT/fleet/$1.updates")
        [ "$got" = "$2" ] || { echo "e2e-k8s: updates: $got"; return 1; }
}

summary_matches_reports() { # SUMMARY NODE...: each node's line is its own report's counts and residue
        python3 - "$@" <<-EOF
	import json, sys
	s = json.load(open(sys.argv[1]))
	bad = []
	for n in sys.argv[2:]:
	    r = json.load(open("$OUT/fleet/reports/%s.json" % n))
	    acts = [a for p in r["phases"] for a in p["actions"]]
	    counts = {k: sum(1 for a in acts if a["result"] == k) for k in ("changed", "unchanged", "failed", "skipped")}
	    line = s["per_node"][n]
	    if line["actions"] != counts or line["residue"] != [x["target"] for x in r["residue"]] or line["changed"] != r["changed"]:
	        bad.append(n)
	print("e2e-k8s: summary: %d nodes, %d clean, actions %s, failed %s%s" % (s["nodes"], s["clean"], s["actions"], s["failed"],
	      "; differs from the report of " + " ".join(bad) if bad else ""))
	sys.exit(1 if bad else 0)
	EOF
}

scenario_cluster_delete() {
        local inv=$OUT/fleet/inventory-delete.yml cps="" n order rc busy
        echo "=== scenario: cluster-delete"
        fleet_init || return
        cluster_up || return
        fleet_worker w1 || return
        fleet_worker w2 || return
        for n in w1 w2; do probe_pod "nr-cd-$n" "$n" | kc apply -f - >/dev/null; done
        check "pods run on w1 and w2" wait_for 120 "nr-cd pods Running" eval 'pod_running nr-cd-w1 && pod_running nr-cd-w2' || return
        # every control plane the cluster has now (forget-dead-control-plane may have made cp2, cp3)
        for n in cp1 cp2 cp3; do [ -n "${NODE_PID[$n]:-}" ] && node_ready "$n" && cps+="$n "; done
        fleet_inventory "$inv" "$cps" "w1 w2"
        order="deleting deleting/w1/clean deleting/w2/clean"
        for n in ${cps#cp1 }; do order+=" deleting/$n/clean"; done
        order+=" deleting/cp1/clean deleted"
        check "the status endpoint listens in the switch" status_server || return

        fleet_delete delete-check "$inv" --check
        check "cluster-delete.yml --check: exit 0, no update sent" test $? -eq 0 -a ! -s "$OUT/fleet/delete-check.updates" ||
                tail -n 20 "$OUT/fleet/delete-check.log"
        # shellcheck disable=SC2086
        check "... every node still Ready" all_ready $cps w1 w2

        fleet_delete delete "$inv" -e node_reset_confirm=yes
        rc=$?
        check "cluster-delete.yml over SSH: exit 0" test "$rc" -eq 0 || tail -n 30 "$OUT/fleet/delete.log"
        check "the status endpoint got: $order" updates_are delete "$order"
        for n in $cps w1 w2; do
                check "node-reset status on $n: clean and rejoinable" clean_and_rejoinable "$n" "$OUT/fleet/status-$n.json"
        done
        check "the fleet summary matches every node's own report" \
                summary_matches_reports "$OUT/fleet/delete.summary.json" $cps w1 w2
        node_residue w2 >"$OUT/fleet/residue-cd-w2.txt"
        check "w2 holds no kubelet mount, sandbox, cni0 or kubepods cgroup (seen from the node)" \
                test ! -s "$OUT/fleet/residue-cd-w2.txt" || cat "$OUT/fleet/residue-cd-w2.txt"

        # Once more, w2 holding an emptyDir busy: the reset must not force it.
        busy=/var/lib/kubelet/pods/0b5e7a2c-1111-4b4b-8c8c-abcdefabcdef/volumes/kubernetes.io~empty-dir/busy
        node_exec w2 sh -c "mkdir -p $busy && mount -t tmpfs -o size=1m nr-busy $busy && echo held >$busy/f"
        node_exec w2 systemd-run --quiet --unit nr-busy-holder sh -c "exec 3<$busy/f; exec sleep 600"
        fleet_delete delete-busy "$inv" -e node_reset_confirm=yes
        rc=$?
        check "cluster-delete.yml with w2's emptyDir busy: exit 2" test "$rc" -eq 2 || tail -n 20 "$OUT/fleet/delete-busy.log"
        order=${order//deleting\/w2\/clean/deleting/w2/failed}
        check "the status endpoint got: ${order% deleted} fail" updates_are delete-busy "${order% deleted} fail"
        check "... the last update names w2 alone" \
                test "$(json_field "$OUT/fleet/delete-busy.summary.json" 'r["failed"]')" = "['w2']"
        check "... the summary's w2 residue is the busy emptyDir, its line matches its report" \
                eval 'summary_matches_reports "$OUT/fleet/delete-busy.summary.json" w2 &&
                        json_field "$OUT/fleet/delete-busy.summary.json" "r[\"residue\"][\"w2\"]" | grep -q "empty-dir/busy"'
        check "... w2's busy emptyDir still mounted, its data there" node_exec w2 grep -qx held "$busy/f"
        for n in $cps w1; do
                check "... $n clean, unchanged" test "$(json_field "$OUT/fleet/delete-busy.summary.json" "r['per_node']['$n']['result']")/$(recap_changed "$OUT/fleet/delete-busy.log" "$n")" = clean/0
        done
        node_exec w2 systemctl stop nr-busy-holder
        fleet_kill "$STATUS_PID"
}

# --- argo-cluster-delete --------------------------------------------------------------------------

# examples/argo/cluster-delete.yaml, run by the project's step runner (tests/argo/argo_runner.py, as
# test-argo-run.sh runs it against the lab) against this cluster: its app deletes and their waits
# meet a real API server, kubelet and CNI; its resets are the real nodes' over SSH. The apps: a
# namespace with a Deployment whose pod on w1 holds a claim on a local volume (Retain: its data must
# stay), and the CNI's DaemonSet. It ends the cluster: run it alone, or last.
argo_objects() {
        cat <<-EOF
	apiVersion: v1
	kind: Namespace
	metadata: {name: nr-argo}
	---
	apiVersion: v1
	kind: PersistentVolume
	metadata: {name: nr-argo-pv}
	spec:
	  capacity: {storage: 1Gi}
	  accessModes: [ReadWriteOnce]
	  persistentVolumeReclaimPolicy: Retain
	  storageClassName: nr-argo
	  local: {path: /mnt/nr-argo-pv}
	  nodeAffinity:
	    required:
	      nodeSelectorTerms:
	      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [w1]}]
	---
	apiVersion: v1
	kind: PersistentVolumeClaim
	metadata: {name: data, namespace: nr-argo}
	spec:
	  storageClassName: nr-argo
	  volumeName: nr-argo-pv
	  accessModes: [ReadWriteOnce]
	  resources: {requests: {storage: 1Gi}}
	---
	apiVersion: apps/v1
	kind: Deployment
	metadata: {name: web, namespace: nr-argo}
	spec:
	  replicas: 1
	  selector: {matchLabels: {app: nr-argo}}
	  template:
	    metadata: {labels: {app: nr-argo}}
	    spec:
	      nodeSelector: {kubernetes.io/hostname: w1}
	      terminationGracePeriodSeconds: 5
	      containers:
	      - name: main
	        image: $TEST_IMAGE
	        imagePullPolicy: Never
	        command: [sh, -c, 'echo kept > /data/data.txt; exec sleep 2147483647']
	        volumeMounts: [{name: data, mountPath: /data}]
	      volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
	EOF
}

argo_addresses() { local s="" n; for n; do s+="${s:+,}\"${ALL_NODE_IP[$n]}\""; done; echo "[$s]"; } # NODE...: a JSON list

argo_web_running() {
        [ "$(kc -n nr-argo get pods -l app=nr-argo -o 'jsonpath={.items[*].status.phase}')" = Running ] &&
                node_exec w1 grep -qx kept /mnt/nr-argo-pv/data.txt
}

# argo_log EXPR: EXPR (Python) holds over the run: u (the status receiver's lines), calls (the
# kubectl calls: t, rc, out, args), trace (the runner's events)
argo_log() {
        python3 - "$W/fleet/updates" "$W/argo-tools/kubectl.log" "$OUT/fleet/argo.trace" "$1" <<-'EOF'
	import json, sys
	u = [json.loads(l) for l in open(sys.argv[1])]
	calls = []
	for l in open(sys.argv[2]):
	    t, rc, rest = l.rstrip("\n").split(" ", 2)
	    out, args = rest.split(" :: ", 1)
	    calls.append({"t": float(t), "rc": int(rc), "out": out, "args": args})
	trace = [json.loads(l) for l in open(sys.argv[3])]
	cluster = [x["status"] for x in u if x["_path"] == "/clusters/e2e/status"]
	posts = [(x["_path"].rsplit("/", 1)[1], x["status"]) for x in u if x["_path"].startswith("/clusters/e2e/nodes/")]
	def gets(what):  # the calls "get KIND NAME"
	    return [c for c in calls if " get %s " % what in " %s " % c["args"]]
	r = eval(sys.argv[4])
	print(r if not isinstance(r, bool) else "", end="")
	sys.exit(0 if r else 1)
	EOF
}

scenario_argo_cluster_delete() {
        local cps=() n rc secrets=$W/argo-secrets tools=$W/argo-tools addr=()
        echo "=== scenario: argo-cluster-delete"
        fleet_init || return
        cluster_up || return
        fleet_worker w1 || return
        fleet_worker w2 || return
        node_exec w1 mkdir -p /mnt/nr-argo-pv
        argo_objects | kc apply -f - >>"$OUT/fleet/argo-objects.log" 2>&1
        check "the Deployment's pod runs on w1, writing to its claim" wait_for 120 "nr-argo web Running" argo_web_running || return
        for n in cp1 cp2 cp3; do [ -n "${NODE_PID[$n]:-}" ] && node_ready "$n" && cps+=("$n"); done
        mkdir -p "$secrets/ssh" "$secrets/kubeconfig" "$tools"
        cp "$W/ssh/id_ed25519" "$secrets/ssh/ssh-privatekey"
        cp "$W/ssh/known_hosts" "$secrets/ssh/known_hosts"
        cp "$W/admin.conf" "$secrets/kubeconfig/value"
        # kubectl as the steps' image would have it; each call logged with its exit status and
        # output (the log is in the tools directory, which the steps' pods see)
        cat >"$tools/kubectl" <<-EOF
	#!/bin/sh
	o=\$(mktemp)
	$K8S_DIR/bin/kubectl "\$@" >"\$o"
	rc=\$?
	printf '%s %s %s :: %s\n' "\$(date +%s.%N)" "\$rc" "\$(head -c 200 "\$o" | tr '\n' ' ')" "\$*" >>/opt/argo-runner/bin/kubectl.log
	cat "\$o"
	rm -f "\$o"
	exit \$rc
	EOF
        chmod 755 "$tools/kubectl"
        : >"$tools/kubectl.log"
        check "the status endpoint listens in the switch" status_server || return
        : >"$W/fleet/updates"
        python3 "$TOP/tests/argo/argo_runner.py" --template "$TOP/examples/argo/cluster-delete.yaml" --name cd-e2e \
                --work "$W/argo-run" --trace "$OUT/fleet/argo.trace" --tools "$tools" \
                --secret e2e-ssh="$secrets/ssh" --secret e2e-kubeconfig="$secrets/kubeconfig" \
                -p cluster=e2e -p image=registry.example/tools:1 \
                -p control-planes="$(argo_addresses "${cps[@]}")" -p workers="$(argo_addresses w1 w2)" \
                -p ssh-secret=e2e-ssh -p kubeconfig-secret=e2e-kubeconfig \
                -p status-url="http://$SWITCH_IP:$FLEET_STATUS_PORT/clusters/e2e/status" \
                -p report-url="http://$SWITCH_IP:$FLEET_STATUS_PORT/clusters/e2e/nodes" \
                -p workloads='["namespace/nr-argo"]' -p cni='["kube-system/daemonset/nr-cni-installer"]' \
                >"$OUT/fleet/argo.log" 2>&1
        rc=$?
        cp "$W/fleet/updates" "$OUT/fleet/argo.updates"
        cp "$tools/kubectl.log" "$OUT/fleet/argo.kubectl"
        echo "e2e-k8s: argo: the runner $(tail -n 1 "$OUT/fleet/argo.log"), exit $rc"
        check "the workflow Succeeded" test "$rc" -eq 0 || tail -n 20 "$OUT/fleet/argo.log"
        check "the status endpoint got deleting, then deleted" argo_log 'cluster == ["deleting", "deleted"]'
        check "the namespace was deleted, and waited for (the real namespace controller and kubelet) until the API said NotFound" \
                argo_log 'any(c["rc"] == 0 and "delete namespace nr-argo" in c["args"] for c in calls) and len(gets("namespace nr-argo")) >= 2 and gets("namespace nr-argo")[-1]["rc"] == 0 and gets("namespace nr-argo")[-1]["out"] == "" and all(g["out"] == "namespace/nr-argo " for g in gets("namespace nr-argo")[:-1])'
        echo "e2e-k8s: argo: the namespace took $(argo_log 'len(gets("namespace nr-argo"))') answers of the API server to go"
        check "then the CNI's DaemonSet, gone before any node was reset" \
                argo_log 'gets("daemonset nr-cni-installer")[-1]["out"] == "" and min(c["t"] for c in calls if "nr-cni-installer" in c["args"]) > gets("namespace nr-argo")[-1]["t"] and max(e["t"] for e in trace if e["event"] == "pod-end" and e["template"] == "delete-object") < min(e["t"] for e in trace if e["event"] == "pod-start" and e["template"] == "reset-node")'
        for n in w1 w2 "${cps[@]}"; do addr+=("${ALL_NODE_IP[$n]}"); done
        check "the workers were reset before the control planes, cp1 last; every node's report says deleted" \
                argo_log "[n for n, s in posts if s != 'deleting'][-1] == '${ALL_NODE_IP[cp1]}' and max(i for i, (n, s) in enumerate(posts) if n in ('${ALL_NODE_IP[w1]}', '${ALL_NODE_IP[w2]}')) < min(i for i, (n, s) in enumerate(posts) if n not in ('${ALL_NODE_IP[w1]}', '${ALL_NODE_IP[w2]}')) and sorted(n for n, s in posts if s == 'deleted') == sorted('${addr[*]}'.split())"
        for n in w1 w2 "${cps[@]}"; do
                check "node-reset status on $n: clean and rejoinable" clean_and_rejoinable "$n" "$OUT/fleet/argo-status-$n.json"
        done
        node_residue w1 >"$OUT/fleet/argo-residue-w1.txt"
        check "w1 holds no kubelet mount, sandbox, cni0 or kubepods cgroup (seen from the node)" \
                test ! -s "$OUT/fleet/argo-residue-w1.txt" || cat "$OUT/fleet/argo-residue-w1.txt"
        check "the local volume's data on w1 is still there" node_exec w1 grep -qx kept /mnt/nr-argo-pv/data.txt
        fleet_kill "$STATUS_PID"
}
