#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/argo/cluster-delete.yaml run for real: the project's step runner (tests/argo/argo_runner.py)
# executes its steps in the order, parallelism, retries, conditions, outputs and exit handler the
# template declares, each as a pod would run (its scripts, the machine's kubectl, ssh and curl).
# Against:
#   - nine lab nodes (tests/lab: each its own namespaces with sshd, node-reset, a kubeadm worker's
#     mounts, CNI links, cni-* netns and chains), three as control planes, six as workers;
#   - the status receiver (tests/integration/status-endpoint.py), which records every POST in
#     order: the workflow's cluster status and each node's own start and report (--report-url);
#   - a real kube-apiserver 1.20 on etcd 3.4 with kube-controller-manager's namespace, claim and
#     volume controllers (no kubelet: objects only), holding the cluster's apps: a namespace with a
#     Deployment and a claim whose volume a CSI driver must delete (the test plays that driver,
#     and records whether the driver's objects were still there), the CSI driver's objects, the CNI's;
#     and what must survive: another namespace, a volume kept by its Retain policy.
# First, the runner refuses what it does not model (a field, withItems, an expression tag). Then
# (1) all clean: "deleting" first; the apps gone, the CNI last among them, the volume reclaimed
# while the CSI driver was there; the workers before the control planes, never more than the
# parallelism (5) at once; the control planes one at a time, the first last; "deleted" at the end;
# every node clean, its volume data and the site's file there. (2) again: nothing changes,
# "deleted" (an empty list skips its step). (3) a worker holding a busy emptyDir and a worker whose
# sshd is stopped (its reset tried 4 times, SSH's exit 255): the summary names both, residue and
# unreachable; the others reset; "fail" with the failures. (4) the API server answers but refuses
# the credentials: the workflow stops, nothing deleted or reset, "fail". (5) the API server down: no
# app step runs, the nodes are reset, "deleted". (6) delete-pull, the workers resetting themselves
# (the test plays their orphan timer: each resets once the first control plane's final report is
# in), one never posts: "fail" naming it after the bound; (7) once it posts too: "deleted".
. "$(dirname "$0")/lib.sh"
require_cmd python3 unshare nsenter ssh ssh-keygen curl
command -v etcd >/dev/null 2>&1 || skip "etcd is not installed (apt-get install etcd-server)"
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed (make deps)"
in_private_ns -n "$@"
KUBE_CONTROLLERS=namespace,persistentvolume-binder,pvc-protection,pv-protection
. "$TOP/tests/integration/fixtures/kube-api.sh"
. "$TOP/tests/lab/lab.sh"
LAB_NODE_RESET=$NODE_RESET
lab_init "$WORK/lab" || exit $?
eval "set -- $(trap -p EXIT)"
trap 'lab_down; '"${3:-}" EXIT

T=$TOP/examples/argo/cluster-delete.yaml
RUNNER=$TOP/tests/argo/argo_runner.py
CPS=(n0001 n0002 n0003)
WORKERS=(n0004 n0005 n0006 n0007 n0008 n0009)

# The runner refuses what it does not model, before anything runs (exit 2, naming it).
refuses() { # DESCRIPTION EXPECTED SED-EXPRESSION
        local out rc want=$2
        sed "$3" "$T" >"$WORK/unmodeled.yaml"
        out=$(python3 "$RUNNER" --template "$WORK/unmodeled.yaml" --work "$WORK/unmodeled" -p x=y 2>&1)
        rc=$?
        assert "the runner refuses $1: exit 2, '$2'" eval '[ "$rc" -eq 2 ] && grep -qF "$want" <<<"$out"'
}
refuses "a field it does not model (securityContext)" "script.securityContext: not modeled by this runner" \
        '0,/^      command: \[sh\]$/s//      command: [sh]\n      securityContext: {runAsUser: 1000}/'
refuses "withItems" "withItems: not modeled by this runner" \
        '0,/^        withParam: "{{workflow.parameters.workloads}}"$/s//        withItems: [a, b]/'
refuses "an expression tag" "expression tags ({{=...}}) are not modeled" \
        '0,/value: "{{steps.plan.outputs.parameters.nodes}}"/s//value: "{{=steps.plan.outputs.parameters.nodes}}"/'

lab_up 9 || { echo "FAIL: the lab did not come up"; exit 1; }
lab_status_start || exit 1
RECEIVER=${LAB_STATUS_URL%/status}
json_list() { local n s=""; for n; do s+="${s:+,}\"${LAB_ADDR[$n]}\""; done; echo "[$s]"; }
name_of() { local n; for n in "${LAB_NAMES[@]}"; do [ "${LAB_ADDR[$n]}" = "$1" ] && echo "$n"; done; }

etcd --name kube --data-dir "$WORK/etcd" --listen-client-urls http://127.0.0.1:2379 \
        --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 >"$WORK/etcd.log" 2>&1 &
PIDS+=($!)
start_kube_apiserver "$WORK/apiserver.log" --etcd-servers=http://127.0.0.1:2379 || { echo "FAIL: kube-apiserver"; exit 1; }
APISERVER=${PIDS[-1]}
start_kube_controller_manager "$WORK/kcm.log"

# --- the steps' pods: the secrets, the tools ------------------------------------------------------
mkdir -p "$WORK/secrets/ssh" "$WORK/secrets/kubeconfig" "$WORK/secrets/stranger" "$WORK/tools"
cp "$LAB_KEY" "$WORK/secrets/ssh/ssh-privatekey"
cp "$LAB_KNOWN_HOSTS" "$WORK/secrets/ssh/known_hosts"
cp "$WORK/admin.conf" "$WORK/secrets/kubeconfig/value"
# credentials the API server does not take (a client certificate of another CA): it answers, 401
mkca other-ca other-ca && mkleaf stranger other-ca /CN=stranger extendedKeyUsage=clientAuth &&
        kubeconfig_pem "$KUBE_SERVER" stranger kca >"$WORK/secrets/stranger/value" || { echo "FAIL: the stranger's kubeconfig"; exit 1; }
# kubectl as the image would have it, each call logged (the log is in the tools directory: a pod
# sees that directory and the machine's own file system, nothing else of $WORK)
cat >"$WORK/tools/kubectl" <<EOF
#!/bin/sh
printf '%s %s\n' "\$(date +%s.%N)" "\$*" >>/opt/argo-runner/bin/kubectl.log
exec $KBIN/kubectl "\$@"
EOF
chmod 755 "$WORK/tools/kubectl"
case $KBIN in /tmp/nr-test.*) skip "the Kubernetes build is on the test's tmpfs: a pod would not see kubectl" ;; esac

# --- the cluster's apps -------------------------------------------------------------------------
pod_template='template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c, image: k8s.gcr.io/pause:3.2}]}}'
kc apply -f - >"$WORK/objects.log" 2>&1 <<EOF || { echo "FAIL: cannot create the cluster's objects"; cat "$WORK/objects.log"; exit 1; }
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Namespace
metadata: {name: keep-me}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kept, namespace: keep-me}
data: {a: b}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {replicas: 1, selector: {matchLabels: {app: x}}, $pod_template}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-shop, annotations: {pv.kubernetes.io/provisioned-by: csi.lab}}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Delete
  storageClassName: ""
  csi: {driver: csi.lab, volumeHandle: vol-shop}
  claimRef: {namespace: shop, name: data}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-archive}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  csi: {driver: csi.lab, volumeHandle: vol-archive}
  claimRef: {namespace: shop, name: archive}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: shop}
spec: {accessModes: [ReadWriteOnce], storageClassName: "", volumeName: pv-shop, resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: archive, namespace: shop}
spec: {accessModes: [ReadWriteOnce], storageClassName: "", volumeName: pv-archive, resources: {requests: {storage: 1Gi}}}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.lab}
spec: {attachRequired: false}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: csi-node, namespace: kube-system}
spec: {selector: {matchLabels: {app: x}}, $pod_template}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: csi-controller, namespace: kube-system}
spec: {replicas: 1, selector: {matchLabels: {app: x}}, $pod_template}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: calico-node, namespace: kube-system}
spec: {selector: {matchLabels: {app: x}}, $pod_template}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: calico-kube-controllers, namespace: kube-system}
spec: {replicas: 1, selector: {matchLabels: {app: x}}, $pod_template}
EOF
bound() { [ "$(kc get pvc -n shop data -o jsonpath='{.status.phase}')/$(kc get pvc -n shop archive -o jsonpath='{.status.phase}')" = Bound/Bound ]; }
for _ in $(seq 60); do bound && break; sleep 0.5; done
assert "the claims are bound to their volumes (kube-controller-manager's binder)" bound
WORKLOADS='["namespace/shop"]'
CSI='["kube-system/daemonset/csi-node","kube-system/deployment/csi-controller","csidriver/csi.lab"]'
CNI='["kube-system/deployment/calico-kube-controllers","kube-system/daemonset/calico-node"]'

# The CSI driver's part (external-provisioner's): a released volume it provisioned is deleted, and
# whether the driver's own objects were still there then is written down. Once pv-shop is done, so
# is this (each kubectl costs CPU).
csi_driver() {
        local pv present
        until grep -q "^pv-shop " "$WORK/csi-reclaimed" 2>/dev/null; do
                for pv in $(kc get pv -o jsonpath='{range .items[?(@.status.phase=="Released")]}{.metadata.name} {.metadata.annotations.pv\.kubernetes\.io/provisioned-by} {.spec.persistentVolumeReclaimPolicy}{"\n"}{end}' 2>/dev/null |
                        awk '$2 == "csi.lab" && $3 == "Delete" { print $1 }'); do
                        sleep 1 # the disk takes a moment
                        present=no
                        kc get -n kube-system daemonset/csi-node deployment/csi-controller csidriver/csi.lab >/dev/null 2>&1 && present=yes
                        kc delete pv "$pv" --wait=false >/dev/null 2>&1 && echo "$pv driver-present=$present" >>"$WORK/csi-reclaimed"
                done
                sleep 1
        done
}
csi_driver &
PIDS+=($!)

# --- running the workflow -------------------------------------------------------------------------
RUN=0
# workflow NAME ARGS...: the runner; its trace in $WORK/NAME.trace, its output in $WORK/NAME.log, the
# receiver's lines of the run in $WORK/NAME.status, the kubectl calls in $WORK/NAME.kubectl
# children_cpu: the CPU seconds of this shell's reaped children (called in this shell, not in $(...))
children_cpu() { times >"$WORK/times"; CHILDREN_CPU=$(awk 'NR == 2 { gsub(/[ms]/, " "); print $1 * 60 + $2 + $3 * 60 + $4 }' "$WORK/times"); }
workflow() {
        local name=$1 rc t0=$SECONDS cpu0 nodes0
        shift
        children_cpu
        cpu0=$CHILDREN_CPU nodes0=$(lab_cpu nodes)
        RUN=$((RUN + 1))
        : >"$LAB_STATUS_LOG"
        : >"$WORK/tools/kubectl.log"
        # in the background, waited for: a signal to the test reaches its trap, which stops the runner
        python3 "$RUNNER" --template "$T" --name "cd-$name" --work "$WORK/run-$name" --trace "$WORK/$name.trace" \
                --tools "$WORK/tools" --secret lab-ssh="$WORK/secrets/ssh" --secret lab-kubeconfig="$WORK/secrets/kubeconfig" \
                --secret lab-stranger="$WORK/secrets/stranger" \
                --backoff-scale 0.1 -p cluster=lab -p image=registry.example/tools:1 \
                -p control-planes="$(json_list "${CPS[@]}")" -p workers="$(json_list "${WORKERS[@]}")" \
                -p ssh-secret=lab-ssh -p kubeconfig-secret=lab-kubeconfig -p ssh-connect-timeout=2 \
                -p status-url="$LAB_STATUS_URL" -p report-url="${REPORTS:-$RECEIVER/reports/$name}" \
                -p workloads="$WORKLOADS" -p csi="$CSI" -p cni="$CNI" -p object-wait-seconds=120 "$@" >"$WORK/$name.log" 2>&1 &
        PIDS+=($!)
        wait $!
        rc=$?
        children_cpu
        cp "$LAB_STATUS_LOG" "$WORK/$name.status"
        cp "$WORK/tools/kubectl.log" "$WORK/$name.kubectl"
        echo "argo-run: workflow $name: exit $rc in $((SECONDS - t0)) s, $(grep -c '"event": "pod-start"' "$WORK/$name.trace") pods," \
                "CPU-s: runner and pods $(awk -v a="$CHILDREN_CPU" -v b="$cpu0" 'BEGIN { printf "%.1f", a - b }')," \
                "nodes $(awk -v a="$(lab_cpu nodes)" -v b="$nodes0" 'BEGIN { printf "%.1f", a - b }')"
        [ "$rc" -eq 0 ] || tail -n 5 "$WORK/$name.log"
        return "$rc"
}

# check RUN EXPR: EXPR holds over the run's receiver lines, trace and kubectl calls (Python; names below)
check() {
        python3 - "$WORK/$1" "$2" "$(for n in "${LAB_NAMES[@]}"; do echo "$n=${LAB_ADDR[$n]}"; done)" <<-'EOF'
	import json, sys
	base, expr = sys.argv[1], sys.argv[2]
	addr = dict(l.split("=") for l in sys.argv[3].split())
	name = {a: n for n, a in addr.items()}
	lines = [json.loads(l) for l in open(base + ".status")]
	# the cluster's statuses, and each node's posts as (node, status) in the order received
	cluster = [x["status"] for x in lines if x["_path"] == "/status"]
	posts = [(name[x["_path"].rsplit("/", 1)[1]], x["status"]) for x in lines if x["_path"].startswith("/reports/")]
	final = {n: s for n, s in posts if s != "deleting"}
	reports = {name[x["_path"].rsplit("/", 1)[1]]: x["report"] for x in lines if x["_path"].startswith("/reports/") and x["report"]}
	fail = [x for x in lines if x["_path"] == "/status" and x["status"] == "fail"]
	trace = [json.loads(l) for l in open(base + ".trace")]
	calls = [l.split(" ", 1) for l in open(base + ".kubectl").read().splitlines()]
	def index(node, status):  # the position of a post among all the receiver's lines
	    return next(i for i, x in enumerate(lines) if x["_path"].endswith("/" + addr[node]) and x["status"] == status)
	def at_once(nodes=None):  # the most node-reset runs at once, as their start and final posts arrived
	    running, most = set(), 0
	    for n, s in posts:
	        if nodes and n not in nodes:
	            continue
	        (running.add if s == "deleting" else running.discard)(n)
	        most = max(most, len(running))
	    return most
	def attempts(node):  # the attempts of a worker's reset, by the runner's trace: reset(I:ADDRESS)(ATTEMPT)
	    return [e for e in trace if e["event"] == "pod-end" and e["template"] == "reset-node" and ":%s)(" % addr[node] in e["node"]]
	def pods(template):
	    return [e for e in trace if e["event"] == "pod-start" and e["template"] == template]
	def ended(template):
	    return [e for e in trace if e["event"] == "pod-end" and e["template"] == template]
	def first_call(word):
	    return min(float(t) for t, a in calls if word in a)
	def last_call(word):
	    return max(float(t) for t, a in calls if word in a)
	r = eval(expr)
	print(r if not isinstance(r, bool) else "", end="")
	sys.exit(0 if r else 1)
	EOF
}

node_clean() { lab_exec "$1" node-reset --output=json status >"$WORK/status-$1.json" 2>/dev/null; }
all_clean() { local n; for n in "$@"; do node_clean "$n" || return 1; done; }
survivors() { # NODE: what a reset must leave
        lab_exec "$1" grep -q "must survive" /mnt/disks/pv-data/important.db && lab_exec "$1" test -s /var/lib/site/keep.txt
}
api_has() { kc get "$@" >/dev/null 2>&1; }
# dirty NODE: a worker's state made again in the node (the lab's own node-state.sh, its ipsets
# restored over the host's own, which a reset leaves)
dirty() {
        lab_exec "$1" sh -c "sed 's/^\\( *\\)ipset restore/\\1ipset -exist restore/' /usr/libexec/nr-lab/node-state.sh | sh"
}
api_gone() { ! kc get "$@" >/dev/null 2>&1 && kc get namespace kube-system >/dev/null 2>&1; }

# --- (1) everything clean -------------------------------------------------------------------------
workflow clean
assert "run 1: the workflow Succeeded" test $? -eq 0
assert "run 1: the cluster's status: deleting first, deleted at the end, nothing else" check clean 'cluster == ["deleting", "deleted"] and lines[0]["status"] == "deleting" and lines[-1]["status"] == "deleted"'
assert "run 1: the apps are gone: the namespace with its Deployment and claims, the CSI driver's and the CNI's objects" \
        api_gone namespace shop -o name
assert "... csi-node, csi-controller, csidriver/csi.lab, calico-node, calico-kube-controllers" \
        eval '! api_has -n kube-system daemonset/csi-node && ! api_has -n kube-system deployment/csi-controller && ! api_has csidriver/csi.lab && ! api_has -n kube-system daemonset/calico-node && ! api_has -n kube-system deployment/calico-kube-controllers && api_has namespace kube-system'
assert "... what was not asked for stays: namespace keep-me and its ConfigMap, the Retain volume" \
        eval 'api_has -n keep-me configmap kept && api_has pv pv-archive'
assert "... the claim's volume (reclaim Delete) was deleted by the CSI driver while its objects were still there" \
        eval 'grep -qx "pv-shop driver-present=yes" "$WORK/csi-reclaimed" && api_gone pv pv-shop'
assert "... the CSI driver was deleted after the volumes were waited for (wait-volumes), the CNI after the CSI driver" \
        check clean 'last_call("shop") < first_call("persistentvolumes") and last_call("persistentvolumes") < first_call("csi-node") and last_call("csi.lab") < first_call("calico")'
assert "... every app step ended before the first node was reset" \
        check clean 'max(e["t"] for t in ("delete-object", "wait-volumes") for e in ended(t)) < min(e["t"] for e in pods("reset-node"))'
assert "run 1: every worker's reset ended before the first control plane's began" \
        check clean 'max(index(n, "deleted") for n in ('"$(printf '"%s",' "${WORKERS[@]}")"')) < min(index(n, "deleting") for n in ('"$(printf '"%s",' "${CPS[@]}")"'))'
assert "run 1: the workers were reset in parallel, never more than the parallelism (5) at once" \
        check clean '2 <= at_once() <= 5'
assert "run 1: the control planes one at a time, in order, the first (n0001) last" \
        check clean '[n for n, s in posts if n in ("n0001", "n0002", "n0003")] == ["n0002", "n0002", "n0003", "n0003", "n0001", "n0001"]'
assert "run 1: every node's final report says deleted, and changed something" \
        check clean 'sorted(final) == sorted(addr) and set(final.values()) == {"deleted"} and all(r["changed"] for r in reports.values())'
for n in "${LAB_NAMES[@]}"; do
        assert "run 1: $n is clean (node-reset status on it) and kept its volume data and the site's file" \
                eval 'node_clean "$n" && survivors "$n"'
done
assert "run 1: no step was retried" check clean 'not [e for e in trace if e["event"] == "retry"]'

# --- (2) submitted again (without the CSI driver's list: an empty list skips its step) -------------
workflow again -p csi='[]'
rc=$?
assert "run 2: the workflow Succeeded, deleting then deleted" eval 'test "$rc" -eq 0 && check again "cluster == [\"deleting\", \"deleted\"]"'
assert "run 2: every node's report: nothing changed" \
        check again 'sorted(final) == sorted(addr) and set(final.values()) == {"deleted"} and not any(r["changed"] for r in reports.values())'
assert "run 2: the app steps found every object gone (NotFound is done) and deleted nothing; the empty CSI list skipped its step" \
        check again 'len(ended("delete-object")) == 3 and all(e["phase"] == "Succeeded" for e in ended("delete-object")) and any(e["event"] == "skipped" and e["node"].endswith(".csi") for e in trace)'
assert "run 2: what was kept is still there" eval 'api_has -n keep-me configmap kept && api_has pv pv-archive'

# --- (3) a worker that cannot be cleaned, a worker whose sshd is stopped --------------------------
busy=/var/lib/kubelet/pods/0b5e7a2c-1111-4b4b-8c8c-abcdefabcdef/volumes/kubernetes.io~empty-dir/busy
lab_exec n0005 sh -c "mkdir -p $busy && mount -t tmpfs -o size=1m nr-busy $busy && echo held >$busy/f"
lab_exec n0005 sh -c "echo \$\$ >/run/nr-busy-holder; exec 3<$busy/f; exec sleep 600" &
PIDS+=($!)
kill -STOP "${LAB_PID[n0008]}"
workflow unclean
rc=$?
kill -CONT "${LAB_PID[n0008]}"
assert "run 3: the workflow Failed" test "$rc" -eq 1
assert "run 3: the cluster's status: deleting, then fail" check unclean 'cluster == ["deleting", "fail"]'
assert "run 3: n0008's reset was tried 4 times, each time SSH's own failure (255), then given up" \
        check unclean '[e["exit"] for e in attempts("n0008")] == ["255"] * 4 and len([e for e in trace if e["event"] == "retry" and addr["n0008"] in e["node"]]) == 3'
assert "run 3: n0005's reset ran once (node-reset's own failure is not retried) and failed: its busy emptyDir" \
        check unclean '[e["exit"] for e in attempts("n0005")] == ["1"] and final["n0005"] == "failed" and any("empty-dir/busy" in x["target"] for x in reports["n0005"]["residue"])'
assert "run 3: the other nodes were reset, clean" \
        check unclean 'all(final.get(n) == "deleted" for n in addr if n not in ("n0005", "n0008"))'
assert "run 3: the control planes were still reset after the failed workers, the first last" \
        check unclean '[n for n, s in posts if n in ("n0001", "n0002", "n0003")] == ["n0002", "n0002", "n0003", "n0003", "n0001", "n0001"]'
assert "run 3: fail names n0005 (residue) and n0008 (unreachable), the summary's verdict, and no other node" \
        check unclean 'any("not clean: %s (residue), %s (unreachable)" % (addr["n0005"], addr["n0008"]) in f["message"] for f in fail[0]["failures"]) and not any(addr[n] in json.dumps(fail[0]) for n in addr if n not in ("n0005", "n0008"))'
assert "run 3: n0005's busy emptyDir is still mounted, its data there" lab_exec n0005 grep -qx held "$busy/f"
lab_exec n0005 sh -c 'kill "$(cat /run/nr-busy-holder)"'

# --- (4) the API server answers, but refuses the workflow's credentials ---------------------------
dirty n0004
workflow refused -p kubeconfig-secret=lab-stranger
rc=$?
assert "run 4: the workflow Failed: the probe was refused (401), which is not a cluster that is gone" \
        eval 'test "$rc" -eq 1 && check refused "[e[\"phase\"] for e in ended(\"probe-api\")] == [\"Failed\"]"'
assert "run 4: nothing was deleted or reset: kubectl called once, by the probe; no node posted; the apps' objects kept" \
        check refused 'len(calls) == 1 and not posts and not pods("delete-object") and not pods("reset-node") and not pods("summary")'
assert "run 4: fail posted with the failures: the probe's" \
        check refused 'cluster == ["deleting", "fail"] and any(f["displayName"] == "probe" and f["templateName"] == "probe-api" for f in fail[0]["failures"])'
assert "run 4: n0004's state is still there (not reset)" eval '! node_clean n0004'

# --- (5) the API server does not answer -----------------------------------------------------------
{ kill "$APISERVER" && wait "$APISERVER"; } 2>/dev/null
workflow api-down
rc=$?
assert "run 5: the workflow Succeeded, deleting then deleted" eval 'test "$rc" -eq 0 && check api-down "cluster == [\"deleting\", \"deleted\"]"'
assert "run 5: the probe said down; no app step ran, kubectl was called once, by the probe" \
        check api-down 'not pods("delete-object") and not pods("wait-volumes") and len(calls) == 1 and "get namespace kube-system" in calls[0][1]'
assert "run 5: n0004 (state made again) and n0005 (its emptyDir no longer held) were reset, changed; every node clean" \
        check api-down 'reports["n0004"]["changed"] and reports["n0005"]["changed"] and set(final.values()) == {"deleted"} and len(final) == 9'
assert "run 5: every node is clean (node-reset status)" all_clean "${LAB_NAMES[@]}"

# --- (6), (7) delete-pull: the workers reset themselves -------------------------------------------
REPORTS=$RECEIVER/reports/pull
for n in "${WORKERS[@]}"; do dirty "$n"; done
# each worker's orphan timer, played: it resets once the API is gone, which here is when the first
# control plane's final report is in (its API server went with its reset)
orphan_timer() { # NODE
        local a=${LAB_ADDR[$1]}
        until curl -fsS "$REPORTS/${LAB_ADDR[n0001]}" 2>/dev/null | grep -q '^{"status":"deleted"'; do sleep 0.5; done
        lab_exec "$1" node-reset --yes --output=json --report-url="$REPORTS/$a" run >"$WORK/self-$1.json" 2>&1
}
TIMERS=()
for n in "${WORKERS[@]}"; do
        [ "$n" = n0009 ] && continue # this one never reports
        orphan_timer "$n" &
        TIMERS+=($!)
done
PIDS+=("${TIMERS[@]}")
workflow pull-missing --entrypoint delete-pull -p report-wait-seconds=40
assert "run 6: delete-pull Failed: n0009 posted no final report within the bound" test $? -eq 1
wait "${TIMERS[@]}"
assert "run 6: the control planes were reset by the workflow, the first last; the workers by themselves, after it" \
        check pull-missing '[n for n, s in posts if n in ("n0001", "n0002", "n0003")] == ["n0002", "n0002", "n0003", "n0003", "n0001", "n0001"] and min(index(n, "deleting") for n in ("n0004", "n0005", "n0006", "n0007", "n0008")) > index("n0001", "deleted")'
assert "run 6: no reset step ran for a worker" check pull-missing 'not any(addr[n] in e["node"] for e in pods("reset-node") for n in ("n0004", "n0005", "n0006", "n0007", "n0008", "n0009"))'
assert "run 6: fail names n0009 (no final report), and no other node" \
        check pull-missing 'cluster == ["deleting", "fail"] and any("not clean: %s (no final report)" % addr["n0009"] in f["message"] for f in fail[0]["failures"]) and not any(addr[n] in json.dumps(fail[0]) for n in addr if n != "n0009")'
orphan_timer n0009
workflow pull --entrypoint delete-pull -p report-wait-seconds=40
rc=$?
assert "run 7: delete-pull Succeeded once every node had posted its final report: deleting, deleted" \
        eval 'test "$rc" -eq 0 && check pull "cluster == [\"deleting\", \"deleted\"]"'
assert "run 7: every node is clean (node-reset status)" all_clean "${LAB_NAMES[@]}"
finish
