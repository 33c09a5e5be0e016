# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# The cluster side of make e2e-k8s: kubeadm init and join, the objects the scenarios create, waits,
# and the scenarios themselves. Sourced by tests/e2e-k8s/run.sh after node.sh.

CP_IP=10.240.0.11
W1_IP=10.240.0.12
declare -A NODE_PODCIDR=([cp1]=10.244.0.0/24 [w1]=10.244.1.0/24 [w2]=10.244.2.0/24 [w3]=10.244.3.0/24
        [w4]=10.244.4.0/24 [cp2]=10.244.5.0/24 [w5]=10.244.6.0/24 [d1]=10.244.7.0/24 [xe1]=10.244.8.0/24)
declare -A ALL_NODE_IP=([cp1]=$CP_IP [w1]=$W1_IP [w2]=10.240.0.13 [w3]=10.240.0.14 [w4]=10.240.0.15
        [cp2]=10.240.0.16 [w5]=10.240.0.17 [d1]=10.240.0.18 [xe1]=10.240.0.19)
CRI_SOCKET=/run/containerd/containerd.sock
# The containerd of the rejoin and side-by-side workers: Debian 13's 1.7 (node.sh's node_create; the
# others keep the host's 1.6). kubelet 1.20 speaks CRI v1alpha2 to it, node-reset v1.
# E2E_K8S_WORKER_RUNTIME=containerd: Debian 12's 1.6 there too.
WORKER_RUNTIME=${E2E_K8S_WORKER_RUNTIME:-containerd-1.7}
DOCKERSHIM_SOCKET=/var/run/dockershim.sock
TEST_IMAGE=nr.local/busybox:1
PEAK_RAM_MB=

kc() { "$K8S_DIR/bin/kubectl" --kubeconfig "$W/admin.conf" --request-timeout=20s "$@"; }

# wait_for SECONDS DESCRIPTION COMMAND...: poll every 2 s; prints how long it took.
wait_for() {
        local limit=$1 what=$2 t0=$SECONDS
        shift 2
        while ! "$@" >/dev/null 2>&1; do
                if [ $((SECONDS - t0)) -ge "$limit" ]; then
                        echo "e2e-k8s: $what: not after $limit s"
                        return 1
                fi
                sleep 2
        done
        echo "e2e-k8s: $what after $((SECONDS - t0)) s"
}

node_ready() { # NAME: the Ready condition is True
        [ "$(kc get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

pods_running() { local p; for p in "$@"; do pod_running "$p" || return 1; done; } # NAME...
pod_running() { # NAME
        [ "$(kc get pod "$1" -o 'jsonpath={.status.phase}')" = Running ]
}

# The CNI configuration as a CNI's DaemonSet installs it (flannel's install-cni): a hostNetwork pod on
# every node writes the bridge conflist for its node's pod range into /etc/cni/net.d, once, at start.
cni_daemonset() {
        local cases="" n
        for n in "${!NODE_PODCIDR[@]}"; do cases+="$n) s=${NODE_PODCIDR[$n]} ;; "; done
        cat <<-EOF
	apiVersion: apps/v1
	kind: DaemonSet
	metadata: {name: nr-cni-installer, namespace: kube-system}
	spec:
	  selector: {matchLabels: {app: nr-cni-installer}}
	  template:
	    metadata: {labels: {app: nr-cni-installer}}
	    spec:
	      hostNetwork: true
	      tolerations: [{operator: Exists}]
	      containers:
	      - name: install
	        image: $TEST_IMAGE
	        imagePullPolicy: Never
	        env: [{name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
	        command:
	        - sh
	        - -c
	        - |
	          case "\$NODE" in $cases *) echo "no pod range for \$NODE"; exit 1 ;; esac
	          c=/host/etc/cni/net.d/10-nr-bridge.conflist
	          printf '{"cniVersion":"0.4.0","name":"nr-bridge","plugins":[{"type":"bridge","bridge":"cni0","isGateway":true,"ipMasq":true,"hairpinMode":true,"ipam":{"type":"host-local","ranges":[[{"subnet":"%s"}]],"routes":[{"dst":"0.0.0.0/0"}]}},{"type":"portmap","capabilities":{"portMappings":true}}]}\n' "\$s" > \$c.tmp
	          mv \$c.tmp \$c
	          echo "wrote \$c for \$s"
	          exec sleep 2147483647
	        volumeMounts: [{name: netd, mountPath: /host/etc/cni/net.d}]
	      volumes: [{name: netd, hostPath: {path: /etc/cni/net.d, type: DirectoryOrCreate}}]
	EOF
}

kubeadm_config() {
        cat <<-EOF
	apiVersion: kubeadm.k8s.io/v1beta2
	kind: InitConfiguration
	localAPIEndpoint: {advertiseAddress: $CP_IP, bindPort: 6443}
	nodeRegistration: {name: cp1, criSocket: $CRI_SOCKET}
	---
	apiVersion: kubeadm.k8s.io/v1beta2
	kind: ClusterConfiguration
	kubernetesVersion: v1.20.2
	controlPlaneEndpoint: "$CP_IP:6443"
	networking: {podSubnet: 10.244.0.0/16, serviceSubnet: 10.96.0.0/12}
	---
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	cgroupDriver: cgroupfs
	---
	apiVersion: kubeproxy.config.k8s.io/v1alpha1
	kind: KubeProxyConfiguration
	mode: iptables
	conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
	EOF
}

# cp1: kubeadm init (no CoreDNS: not in Debian, and the cluster needs no DNS), the CNI DaemonSet.
cluster_init() {
        local t0=$SECONDS
        kubeadm_config >"$W/nodes/cp1/root/root/kubeadm.yaml"
        node_exec cp1 kubeadm init --config /root/kubeadm.yaml --skip-phases=addon/coredns \
                ${E2E_K8S_IGNORE_PREFLIGHT:+--ignore-preflight-errors=$E2E_K8S_IGNORE_PREFLIGHT} \
                >"$OUT/kubeadm-init.log" 2>&1 || {
                tail -n 30 "$OUT/kubeadm-init.log"
                return 1
        }
        echo "e2e-k8s: kubeadm init on cp1 in $((SECONDS - t0)) s"
        cp "$W/nodes/cp1/root/etc/kubernetes/admin.conf" "$W/admin.conf"
        cni_daemonset | kc apply -f - >/dev/null || return 1
        wait_for 180 "cp1 Ready" node_ready cp1 &&
                wait_for 120 "service account default" kc get serviceaccount default
}

# A fresh token and the join command from cp1, run on NODE; nothing else done on NODE.
cluster_join() { # NODE LOG [CRI-SOCKET]
        local node=$1 log=$2 sock=${3:-$CRI_SOCKET} cmd t0=$SECONDS
        cmd=$(node_exec cp1 kubeadm token create --print-join-command 2>>"$log") || return 1
        echo "e2e-k8s: join command from cp1: ${cmd%% --token*} --token <fresh> ..."
        # shellcheck disable=SC2086
        node_exec "$node" $cmd --cri-socket "$sock" --node-name "$node" \
                ${E2E_K8S_IGNORE_PREFLIGHT:+--ignore-preflight-errors=$E2E_K8S_IGNORE_PREFLIGHT} >>"$log" 2>&1 || {
                tail -n 30 "$log"
                return 1
        }
        echo "e2e-k8s: kubeadm join of $node in $((SECONDS - t0)) s"
}

# The volumes a worker's pods hold: emptyDir on disk and in memory, secret, configMap, projected
# (service account token, configMap, downward API), hostPath and a local PV whose data must survive.
data_objects() {
        local node=$1 token=$2
        cat <<-EOF
	apiVersion: v1
	kind: Secret
	metadata: {name: nr-secret}
	stringData: {password: s3cret}
	---
	apiVersion: v1
	kind: ConfigMap
	metadata: {name: nr-config}
	data: {greeting: hello}
	---
	apiVersion: v1
	kind: PersistentVolume
	metadata: {name: nr-local-pv}
	spec:
	  capacity: {storage: 1Gi}
	  accessModes: [ReadWriteOnce]
	  persistentVolumeReclaimPolicy: Retain
	  storageClassName: nr-local
	  local: {path: /mnt/nr-pv1}
	  nodeAffinity:
	    required:
	      nodeSelectorTerms:
	      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$node]}]
	---
	apiVersion: v1
	kind: PersistentVolumeClaim
	metadata: {name: nr-pvc}
	spec:
	  storageClassName: nr-local
	  volumeName: nr-local-pv
	  accessModes: [ReadWriteOnce]
	  resources: {requests: {storage: 1Gi}}
	---
	apiVersion: v1
	kind: Pod
	metadata: {name: nr-data}
	spec:
	  nodeSelector: {kubernetes.io/hostname: $node}
	  terminationGracePeriodSeconds: 1
	  containers:
	  - name: main
	    image: $TEST_IMAGE
	    imagePullPolicy: Never
	    command: [sh, -c, 'echo $token > /pv/data.txt; echo disk > /scratch/f; echo mem > /mem/f; echo host > /hostpath/f; exec sleep 2147483647']
	    volumeMounts:
	    - {name: scratch, mountPath: /scratch}
	    - {name: mem, mountPath: /mem}
	    - {name: secret, mountPath: /secret}
	    - {name: config, mountPath: /config}
	    - {name: projected, mountPath: /projected}
	    - {name: hostpath, mountPath: /hostpath}
	    - {name: pv, mountPath: /pv}
	  volumes:
	  - {name: scratch, emptyDir: {}}
	  - {name: mem, emptyDir: {medium: Memory}}
	  - {name: secret, secret: {secretName: nr-secret}}
	  - {name: config, configMap: {name: nr-config}}
	  - name: projected
	    projected:
	      sources:
	      - serviceAccountToken: {path: token, expirationSeconds: 3600}
	      - configMap: {name: nr-config}
	      - downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}
	  - {name: hostpath, hostPath: {path: /var/local/nr-hostpath, type: DirectoryOrCreate}}
	  - {name: pv, persistentVolumeClaim: {claimName: nr-pvc}}
	EOF
}

probe_pod() { # NAME NODE
        cat <<-EOF
	apiVersion: v1
	kind: Pod
	metadata: {name: $1}
	spec:
	  nodeSelector: {kubernetes.io/hostname: $2}
	  terminationGracePeriodSeconds: 1
	  containers:
	  - {name: main, image: $TEST_IMAGE, imagePullPolicy: Never, command: [sleep, "2147483647"]}
	EOF
}

# What the node holds that a reset must take: kubelet's mounts, sandboxes, cni0, kubepods cgroups.
node_residue() { # NAME: prints one line per thing left
        local n=$1
        node_exec "$n" awk '$5 ~ "^/var/lib/kubelet/" { print "mount " $5 }' /proc/self/mountinfo
        node_exec "$n" crictl pods -q | sed 's/^/sandbox /'
        node_exec "$n" ip -o link show cni0 2>/dev/null | awk '{ print "link " $2 }'
        node_exec "$n" sh -c 'ls -d /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/kubepods.slice 2>/dev/null' | sed 's/^/cgroup /'
        return 0
}

# Peak memory of every node's cgroup (v1 memory controller), summed, in MB.
nodes_peak_ram() {
        local n f total=0
        for n in "${NODES[@]}"; do
                f=/sys/fs/cgroup/memory/${NODE_CG[$n]}/memory.max_usage_in_bytes
                [ -r "$f" ] && total=$((total + $(cat "$f")))
        done
        PEAK_RAM_MB=$((total / 1048576))
}

json_field() { # FILE PYTHON-EXPRESSION-ON-r
        python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# Why a node is not Ready, from the node's containerd: its CRI NetworkReady condition.
network_diagnosis() {
        local n=$1
        node_exec "$n" crictl info 2>/dev/null | python3 -c '
import json, sys
st = json.load(sys.stdin)
for c in st.get("conditions", []):
    print("e2e-k8s: %s: CRI condition %s=%s %s %s" % (sys.argv[1], c.get("type"), bool(c.get("status")), c.get("reason", ""), c.get("message", "")))' "$n"
        echo "e2e-k8s: $n: /etc/cni/net.d now: $(node_exec "$n" ls -i /etc/cni/net.d 2>&1 | tr '\n' ' ')" \
                "(directory inode $(node_exec "$n" stat -c %i /etc/cni/net.d 2>&1), before the reset ${NETD_INODE:-?})"
        # containerd's watch: the directory's REMOVE is the last event it gets from /etc/cni/net.d
        node_exec "$n" journalctl -u containerd --no-pager -o cat 2>/dev/null |
                grep -E 'fs change event\((REMOVE|CREATE|WRITE)' | tail -n 3 | sed "s/^/e2e-k8s: $n: containerd: /"
}

cri_network_ready() {
        node_exec "$1" crictl info 2>/dev/null | python3 -c '
import json, sys
st = json.load(sys.stdin)
sys.exit(0 if any(c.get("type") == "NetworkReady" and c.get("status") for c in st.get("conditions", [])) else 1)'
}

# The control plane every scenario joins its workers to, made once.
CLUSTER_UP=
cluster_up() {
        [ -z "$CLUSTER_UP" ] || return "$CLUSTER_UP"
        CLUSTER_UP=1
        node_create cp1 "$CP_IP" && node_boot cp1 || { echo "FAIL: cp1 boots"; failed=$((failed + 1)); return 1; }
        check "kubeadm init on cp1 (addon/coredns skipped)" cluster_init || return 1
        CLUSTER_UP=0
}

scenario_rejoin() {
        local token rc ip
        echo "=== scenario: worker rejoin"
        cluster_up || return
        node_create w1 "$W1_IP" "$WORKER_RUNTIME" && node_boot w1 || { echo "FAIL: w1 boots"; failed=$((failed + 1)); return; }
        echo "e2e-k8s: w1 runs $(node_exec w1 containerd --version)"
        check "kubeadm join of w1" cluster_join w1 "$OUT/kubeadm-join-1.log" || return
        check "w1 Ready" wait_for 180 "w1 Ready" node_ready w1 || { network_diagnosis w1; return; }

        token=nr-pv-$RANDOM$RANDOM
        mkdir -p "$W/nodes/w1/root/mnt/nr-pv1"
        data_objects w1 "$token" | kc apply -f - >"$OUT/objects.log" 2>&1
        # and enough pods that the reset restarts containerd with their tasks cleared (pods.c's
        # RESTART_MIN_PODS): the rejoin below proves the runtime it leaves behind
        for i in 1 2 3 4 5 6; do probe_pod "nr-many-$i" w1; echo ---; done | kc apply -f - >>"$OUT/objects.log" 2>&1
        check "pod with emptyDir (disk, memory), secret, configMap, projected, hostPath and local PV runs on w1" \
                wait_for 180 "nr-data Running" pod_running nr-data || { kc describe pod nr-data | tail -n 20; return; }
        check "... beside 6 more pods" wait_for 120 "nr-many-* Running" pods_running nr-many-1 nr-many-2 nr-many-3 \
                nr-many-4 nr-many-5 nr-many-6
        check "the PV holds the pod's data" grep -qx "$token" "$W/nodes/w1/root/mnt/nr-pv1/data.txt"
        echo "e2e-k8s: w1 before the reset: $(node_residue w1 | cut -d' ' -f1 | sort | uniq -c | tr -s ' \n' ' ')"
        NETD_INODE=$(node_exec w1 stat -c %i /etc/cni/net.d)

        # --delete-node: with only the kubelet's credentials, the Node's Ready condition goes Unknown, so
        # that the join below is not refused ("a Node ... with status Ready already exists").
        local t0=$SECONDS args=(--delete-node)
        # E2E_K8S_NETD=empty: the detected profile with /etc/cni/net.d emptied instead of removed (the
        # directory, which containerd watches by inode, stays): shows what the scenario gives once
        # node-reset keeps that directory.
        if [ "${E2E_K8S_NETD:-}" = empty ]; then
                node_exec w1 sh -c "node-reset manifest print |
                        sed 's|^remove /etc/cni/net.d\$|empty /etc/cni/net.d|' >/run/nr-e2e-k8s-manifest.conf"
                args+=(--manifest /run/nr-e2e-k8s-manifest.conf)
                echo "e2e-k8s: E2E_K8S_NETD=empty: the detected profile with 'empty /etc/cni/net.d' for 'remove'"
        fi
        node_exec w1 node-reset --yes --output=json "${args[@]}" run >"$OUT/run.json" 2>"$OUT/run.log"
        rc=$?
        echo "e2e-k8s: node-reset run on w1: exit $rc in $((SECONDS - t0)) s (report $OUT/run.json)"
        check "node-reset run --yes on w1 exits 0" test "$rc" -eq 0 || tail -n 20 "$OUT/run.log"
        [ "${E2E_K8S_NETD:-}" = empty ] || check "... with the detected kubeadm profile" \
                test "$(json_field "$OUT/run.json" 'r["profile"]["name"]' 2>/dev/null)" = kubeadm
        check "... and no residue in its report" test "$(json_field "$OUT/run.json" 'len(r["residue"])' 2>/dev/null)" = 0
        check "... containerd was restarted with the pods' tasks cleared, around the kill pass" test "$(json_field "$OUT/run.json" \
                '[(a["kind"], a["result"]) for p in r["phases"] for a in p["actions"] if a["kind"] in ("runtime-stop", "kill-pods", "runtime-start")]' \
                2>/dev/null)" = "[('runtime-stop', 'changed'), ('kill-pods', 'changed'), ('runtime-start', 'changed')]"
        check "... the pods went through CRI v1 to $(worker_containerd)" test "$(json_field "$OUT/run.json" \
                '[(a["cri_api"], a["detail"].split(" answers")[0]) for p in r["phases"] for a in p["actions"] if a["kind"] == "runtime" and "cri_api" in a]' \
                2>/dev/null)" = "[('v1', '$(worker_containerd)')]"
        node_exec w1 node-reset --output=json "${args[@]}" status >"$OUT/status.json" 2>"$OUT/status.log"
        rc=$?
        check "node-reset status on w1 exits 0 (clean)" test "$rc" -eq 0
        check "... its residue is none" test "$(json_field "$OUT/status.json" 'len(r["residue"])' 2>/dev/null)" = 0
        node_residue w1 >"$OUT/residue-after-reset.txt"
        grep -v '^cgroup ' "$OUT/residue-after-reset.txt" >"$OUT/residue-mounts-sandboxes-links.txt"
        check "w1 holds no kubelet mount, sandbox or cni0 (seen from the node)" \
                test ! -s "$OUT/residue-mounts-sandboxes-links.txt" || cat "$OUT/residue-mounts-sandboxes-links.txt"
        # kubeadm reset leaves them too; kubelet reuses them on a rejoin, but they are the node's residue
        check "w1 holds no kubepods cgroup (seen from the node)" \
                sh -c "! grep -q '^cgroup ' '$OUT/residue-after-reset.txt'" ||
                echo "e2e-k8s: left: $(grep '^cgroup ' "$OUT/residue-after-reset.txt" | cut -d' ' -f2 | tr '\n' ' ')"
        check "the PV's data survived the reset" grep -qx "$token" "$W/nodes/w1/root/mnt/nr-pv1/data.txt"
        check "containerd on w1 still runs (the runtime is kept)" node_exec w1 systemctl is-active --quiet containerd

        check "node-reset set w1's Node NotReady with the kubelet's credentials (--delete-node)" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
rows = [a for p in r["phases"] for a in p["actions"] if a["phase"] == "node-object"]
sys.exit(0 if [(a["target"], a["result"]) for a in rows] == [("Node/w1", "changed")] else 1)' "$OUT/run.json"
        check "... its Ready condition is Unknown" \
                test "$(kc get node w1 -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = Unknown
        # nor may the old pod run again on the rejoined node and rewrite the PV: its object goes too
        echo "e2e-k8s: force-deleting the old pod objects nr-data, nr-many-* (they would run again on the rejoined w1)"
        kc delete pod nr-data nr-many-1 nr-many-2 nr-many-3 nr-many-4 nr-many-5 nr-many-6 --force --grace-period=0 \
                >/dev/null 2>&1
        check "kubeadm join of w1 again with a fresh token, nothing restarted or cleaned by hand" \
                cluster_join w1 "$OUT/kubeadm-join-2.log" || return
        check "w1 Ready again" wait_for 180 "w1 Ready again" node_ready w1
        check "containerd on w1 loaded the CNI configuration again (CRI NetworkReady)" cri_network_ready w1 ||
                network_diagnosis w1
        probe_pod nr-after w1 | kc apply -f - >/dev/null
        check "a new pod scheduled to w1 runs" wait_for 120 "nr-after Running" pod_running nr-after ||
                kc describe pod nr-after | tail -n 12
        ip=$(kc get pod nr-after -o 'jsonpath={.status.podIP}')
        check "... with a CNI address from w1's range ${NODE_PODCIDR[w1]} (got '${ip}')" \
                test "${ip%.*}.0/24" = "${NODE_PODCIDR[w1]}"
        check "the PV's data is intact after the rejoin" grep -qx "$token" "$W/nodes/w1/root/mnt/nr-pv1/data.txt"

}

# What node-reset's runtime row names the workers' containerd: "containerd 1.7.24~ds1" (over CRI v1,
# which containerd 1.6 and later serve beside kubelet 1.20's v1alpha2).
worker_containerd() {
        local tree=/usr
        [ "$WORKER_RUNTIME" = containerd ] || tree=$("$TOP/tools/fetch-runtimes.sh" --print "$WORKER_RUNTIME")/usr
        echo "containerd $("$tree/bin/containerd" --version | awk '{ print $3 }')"
}

# One line per kind of state a reset should take, with a count, as the node itself sees it.
residue_counts() { # NODE
        node_exec "$1" sh -c '
m=$(awk "\$5 ~ \"^/var/lib/kubelet/\" || \$5 ~ \"^/run/containerd/io.containerd\" || \$5 ~ \"^/run/netns/\"" /proc/self/mountinfo | wc -l)
echo "mounts (kubelet, containerd tasks, netns) $m"
echo "sandboxes $(crictl pods -q 2>/dev/null | wc -l)"
echo "netns (/run/netns) $(ls /run/netns 2>/dev/null | wc -l)"
echo "links (cni0, veth) $(ip -o link show | grep -c -E ": (cni0|veth[^:]*)[@:]")"
echo "routes (pod ranges) $(ip route show | grep -c "^10\.244\.")"
echo "iptables KUBE-/CNI- chains $(iptables-save 2>/dev/null | grep -c -E "^:(KUBE-|CNI-)")"
echo "iptables rules in nat/filter $(iptables-save 2>/dev/null | grep -c "^-A")"
echo "files /etc/kubernetes $(find /etc/kubernetes -mindepth 1 2>/dev/null | wc -l)"
echo "files /var/lib/kubelet $(find /var/lib/kubelet -mindepth 1 2>/dev/null | wc -l)"
echo "files /etc/cni/net.d $(find /etc/cni/net.d -mindepth 1 2>/dev/null | wc -l)"
echo "files /var/lib/cni $(find /var/lib/cni -mindepth 1 2>/dev/null | wc -l)"
echo "kubepods cgroups $(find /sys/fs/cgroup -maxdepth 3 -type d -name "kubepods*" 2>/dev/null | wc -l)"
echo "kubelet enabled $(systemctl is-enabled kubelet 2>/dev/null | grep -c "^enabled")"
echo "kubelet active $(systemctl is-active kubelet 2>/dev/null | grep -c "^active")"
'
}

# kubeadm reset -f, then the manual steps its output names (CNI configuration, iptables; no IPVS in
# this kernel, no $HOME/.kube/config on a worker), as an operator follows them.
kubeadm_reset_manual() { # NODE LOG
        node_exec "$1" kubeadm reset -f --cri-socket "$CRI_SOCKET" >"$2" 2>&1 || return 1
        node_exec "$1" sh -c 'rm -rf /etc/cni/net.d &&
                iptables -F && iptables -t nat -F && iptables -t mangle -F && iptables -X' >>"$2" 2>&1
}

# Scenario 2 (also bench/kubeadm-node.sh): three workers with the same pods, reset in the same run: one
# by kubeadm reset -f and the manual steps, one by node-reset, one by the floor (bench/cri-floor: the
# fewest CRI calls that remove every pod, all in flight at once, after kubelet is stopped: the pods
# only). BENCH_SIZES (or BENCH_PODS) pods per worker, each size in turn (default 1: the pod with every
# kind of volume; more add pods with a memory emptyDir and a secret), BENCH_ROUNDS rounds of each on
# fresh workers (default 1), the order of the three rotated each round. Prints the residue of each
# (first round), per size the time of each, the ratios, their medians, where node-reset's time goes
# (per phase and per kind of row, the fixed cost around the pods phase, its own CPU, the node's CPU,
# the CNI teardown it chose) and the sampled time until no pod process was alive on each worker, then
# one line per size: "pods N: kubeadm/node-reset Xx, node-reset/floor Yx (medians of K rounds)".
SBS_SIZES=${BENCH_SIZES:-${BENCH_PODS:-1}}
SBS_ROUNDS=${BENCH_ROUNDS:-1}
SBS_PODS=${SBS_SIZES%% *}
FLOOR=$O/bench/cri-floor

sbs_names() { # SIZE ROUND: the kubeadm, node-reset and floor workers of that round
        if [ "$1" = "${SBS_SIZES%% *}" ] && [ "$2" -eq 1 ]; then
                echo "w2 w3 wf"
        else
                echo "w2-s$1-r$2 w3-s$1-r$2 wf-s$1-r$2"
        fi
}

# Their addresses and pod ranges, known before cluster_init writes the CNI installer's ranges.
sbs_register() {
        local s r n i=0
        for s in $SBS_SIZES; do
                for r in $(seq "$SBS_ROUNDS"); do
                        for n in $(sbs_names "$s" "$r"); do
                                i=$((i + 1))
                                [ -n "${ALL_NODE_IP[$n]:-}" ] && continue
                                ALL_NODE_IP[$n]=10.240.0.$((20 + i))
                                NODE_PODCIDR[$n]=10.244.$((20 + i)).0/24
                        done
                done
        done
}
sbs_register

scenario_side_by_side() {
        local r
        echo "=== scenario: side by side with kubeadm reset -f and the floor ($SBS_SIZES pods per worker, $SBS_ROUNDS rounds)"
        cluster_up || return
        [ -x "$FLOOR" ] || { echo "FAIL: $FLOOR is not built (make bench builds it)"; failed=$((failed + 1)); return; }
        : >"$OUT/side-by-side.txt"
        for SBS_PODS in $SBS_SIZES; do
                SBS_FILE=$OUT/sbs-rounds-$SBS_PODS.txt
                : >"$SBS_FILE"
                for r in $(seq "$SBS_ROUNDS"); do
                        sbs_round "$r" || return
                done
                sbs_summary | tee -a "$OUT/side-by-side.txt"
        done
        grep '^pods [0-9]*: ' "$OUT/side-by-side.txt"
}

sbs_round() { # ROUND
        local r=$1 k n f w order i first=
        [ "$SBS_PODS" = "${SBS_SIZES%% *}" ] && [ "$r" -eq 1 ] && first=1
        read -r k n f <<<"$(sbs_names "$SBS_PODS" "$r")"
        for w in $k $n $f; do
                node_create "$w" "${ALL_NODE_IP[$w]}" "$WORKER_RUNTIME" && node_boot "$w" ||
                        { echo "FAIL: $w boots"; failed=$((failed + 1)); return 1; }
                check "kubeadm join of $w" cluster_join "$w" "$OUT/kubeadm-join-$w.log" || return 1
        done
        check "round $r: $k, $n and $f Ready" wait_for 240 "$k $n $f Ready" nodes_ready "$k" "$n" "$f" ||
                { network_diagnosis "$k"; return 1; }
        for w in $k $n $f; do
                node_exec "$w" mkdir -p /mnt/nr-pv-sbs
                side_objects "$w" | kc apply -f - >>"$OUT/objects-sbs.log" 2>&1
                sbs_more_pods "$w" | kc apply -f - >>"$OUT/objects-sbs.log" 2>&1
        done
        check "round $r: the same $SBS_PODS pods run on $k, $n and $f" \
                wait_for $((180 + 6 * SBS_PODS)) "sbs pods Running" sbs_running "$k" "$n" "$f" || return 1
        [ -n "$first" ] && residue_counts "$k" >"$OUT/sbs-before-w2.txt"
        cp "$FLOOR" "$W/nodes/$f/root/root/cri-floor"
        # The order turns each round: the machine's load drifts, and none of the three always goes first.
        order=("sbs_kubeadm $k" "sbs_node_reset $n" "sbs_floor $f")
        for i in 0 1 2; do
                ${order[$(((i + r - 1) % 3))]} "$r" || true
        done
        if [ -n "$first" ]; then
                residue_counts "$k" >"$OUT/sbs-kubeadm.txt"
                residue_counts "$n" >"$OUT/sbs-node-reset.txt"
                residue_counts "$f" >"$OUT/sbs-floor.txt"
        fi
        for w in $k $n $f; do
                kc delete node "$w" --wait=false >/dev/null 2>&1
                node_stop "$w"
                rm -rf --one-file-system "$W/nodes/$w"
        done
        return 0
}

nodes_ready() { local n; for n in "$@"; do node_ready "$n" || return 1; done; }
sbs_running() { # NODES...: each runs SBS_PODS pods
        local n
        for n in "$@"; do
                [ "$(kc get pods --field-selector "spec.nodeName=$n,status.phase=Running" -o name | wc -l)" -eq "$SBS_PODS" ] ||
                        return 1
        done
}

sbs_more_pods() { # NODE: pods 2..SBS_PODS, each with a memory emptyDir and a secret
        local i
        for i in $(seq 2 "$SBS_PODS"); do
                cat <<-EOF
		---
		apiVersion: v1
		kind: Pod
		metadata: {name: sbs-$1-$i}
		spec:
		  nodeSelector: {kubernetes.io/hostname: $1}
		  terminationGracePeriodSeconds: 1
		  containers:
		  - {name: main, image: $TEST_IMAGE, imagePullPolicy: Never, command: [sleep, "2147483647"],
		     volumeMounts: [{name: mem, mountPath: /mem}, {name: secret, mountPath: /secret}]}
		  volumes:
		  - {name: mem, emptyDir: {medium: Memory}}
		  - {name: secret, secret: {secretName: sbs-secret}}
		EOF
        done
}

# The node's CPU time so far (ns): its cgroup's cpuacct, every process of the node (containerd, its
# shims, runc, the CNI plugins, the reset itself).
node_cpu_ns() {
        local h
        h=$(cgroup_hierarchies | grep -m1 cpuacct)
        cat "$h/${NODE_CG[$1]}/cpuacct.usage" 2>/dev/null || echo 0
}

# Sampled from outside, every 50 ms: the processes in the node's kubepods cgroups (the pods' pause and
# workload processes; the shims live in containerd's cgroup). Prints the milliseconds from T0 until
# there were none, or "-" when they outlived LIMIT ms.
gone_sampler() { # NODE T0_NS LIMIT_MS
        local base f line n t
        base=$(cgroup_hierarchies | grep -m1 '/pids$')/${NODE_CG[$1]}
        while :; do
                n=0
                for f in "$base"/kubepods/pod*/*/cgroup.procs "$base"/kubepods/*/pod*/*/cgroup.procs; do
                        [ -e "$f" ] || continue
                        while read -r line; do n=$((n + 1)); done <"$f"
                done
                t=$((($(date +%s%N) - $2) / 1000000))
                [ "$n" -eq 0 ] && { echo "$t"; return; }
                [ "$t" -gt "$3" ] && { echo -; return; }
                sleep 0.05
        done
}

# Start the sampler and the clock; sbs_stop ends both and records NAME's wall time and sampled time.
sbs_start() { # NODE
        SBS_T0=$(date +%s%N) SBS_CPU0=$(node_cpu_ns "$1")
        gone_sampler "$1" "$SBS_T0" 120000 >"$W/gone.$1" &
        SBS_SAMPLER=$!
}
sbs_stop() { # NODE ROUND WHO
        local ms cpu
        ms=$((($(date +%s%N) - SBS_T0) / 1000000)) cpu=$((($(node_cpu_ns "$1") - SBS_CPU0) / 1000000))
        wait "$SBS_SAMPLER"
        echo "$2 $3 ms $ms node_cpu_ms $cpu gone_ms $(cat "$W/gone.$1") load $(cut -d' ' -f1 /proc/loadavg)" >>"$SBS_FILE"
}

sbs_kubeadm() { # NODE ROUND
        local rc
        sbs_start "$1"
        kubeadm_reset_manual "$1" "$OUT/kubeadm-reset-$1.log"
        rc=$?
        sbs_stop "$1" "$2" kubeadm
        check "round $2: kubeadm reset -f and the manual steps on $1" test "$rc" -eq 0
}

sbs_node_reset() { # NODE ROUND
        local rc
        sbs_start "$1"
        node_exec "$1" bash -c 'node-reset --yes --output=json run >/root/run.json 2>/root/run.log; rc=$?; times >/root/times; exit $rc'
        rc=$?
        sbs_stop "$1" "$2" node-reset
        cp "$W/nodes/$1/root/root/run.json" "$OUT/run-$1.json"
        cp "$W/nodes/$1/root/root/run.log" "$OUT/run-$1.log"
        sbs_breakdown "$1" "$2" >>"$SBS_FILE"
        check "round $2: node-reset run --yes on $1 exits 0" test "$rc" -eq 0
}

# Where node-reset's time went: per phase and, in the pods phase, per kind of row; its own CPU time
# (user and system, from the shell's "times"), the kill pass's sampled time, the CNI teardown chosen.
sbs_breakdown() { # NODE ROUND
        python3 - "$OUT/run-$1.json" "$W/nodes/$1/root/root/times" "$2" <<-'EOF'
	import json, sys
	r = json.load(open(sys.argv[1]))
	t = open(sys.argv[2]).read().split("\n")[1].split()
	user, sys_ = (float(x.split("m")[0]) * 60000 + float(x.split("m")[1].rstrip("s")) * 1000 for x in t)
	phases = {}
	kinds = {}
	gone = teardown = None
	for p in r["phases"]:
	    for a in p["actions"]:
	        phases[p["name"]] = phases.get(p["name"], 0) + a["duration_ms"]
	        if p["name"] == "pods":
	            kinds[a["kind"]] = kinds.get(a["kind"], 0) + a["duration_ms"]
	            if "pods_gone_ms" in a:
	                gone = a["pods_gone_ms"]
	            if a["kind"] == "cni-teardown":
	                teardown = (a["message"] or a["detail"] or "").split(":")[0]
	print("%s node-reset-phases %s" % (sys.argv[3], " ".join("%s=%d" % kv for kv in phases.items())))
	print("%s node-reset-pods %s" % (sys.argv[3], " ".join("%s=%d" % kv for kv in kinds.items())))
	print("%s node-reset-agent_cpu_ms %d (user %d, system %d) pods_gone_ms %s teardown %s" % (
	    sys.argv[3], user + sys_, user, sys_, gone, teardown))
	EOF
}

sbs_floor() { # NODE ROUND
        local rc
        # kubelet stopped first, as both resets do (not timed: the floor is the pods' removal).
        node_exec "$1" systemctl stop kubelet
        sbs_start "$1"
        node_exec "$1" /root/cri-floor "$CRI_SOCKET" >"$OUT/floor-$1.txt" 2>&1
        rc=$?
        sbs_stop "$1" "$2" floor
        check "round $2: the floor removed every pod of $1 ($(head -c 200 "$OUT/floor-$1.txt"))" test "$rc" -eq 0
}

sbs_summary() {
        echo "side by side ($(date -u +%Y-%m-%d), $(nproc) cores, $(awk '/MemTotal/ { printf "%d GiB", $2 / 1048576 }' /proc/meminfo)," \
                "Kubernetes v1.20.2 in nspawn nodes, $(worker_containerd), $SBS_PODS pods per worker," \
                "load average $(cut -d' ' -f1-3 /proc/loadavg))"
        side_by_side_table
        echo
        python3 - "$SBS_FILE" "$SBS_PODS" <<-'EOF'
	import statistics, sys
	rows = {}
	extra = []
	pods_ms = {}
	for line in open(sys.argv[1]):
	    f = line.split()
	    if f[1] in ("kubeadm", "node-reset", "floor"):
	        rows.setdefault(f[1], {})[int(f[0])] = dict(ms=int(f[3]), cpu=int(f[5]), gone=f[7], load=f[9])
	    else:
	        extra.append(line.rstrip())
	        if f[1] == "node-reset-phases":
	            pods_ms[int(f[0])] = int(dict(x.split("=") for x in f[2:]).get("pods", 0))
	rounds = sorted(set().union(*[set(v) for v in rows.values()]))
	def get(who, r, k):
	    return rows.get(who, {}).get(r, {}).get(k)
	print("%-6s %14s %14s %14s %10s %10s   %s" % ("round", "kubeadm+manual", "node-reset", "floor (pods)", "k/nr", "nr/floor", "pods gone (sampled, ms): kubeadm / node-reset / floor; load average (1 min) at each"))
	kr, nf = [], []
	for r in rounds:
	    k, n, f = get("kubeadm", r, "ms"), get("node-reset", r, "ms"), get("floor", r, "ms")
	    a = k / n if k and n else None
	    b = n / f if n and f else None
	    if a: kr.append(a)
	    if b: nf.append(b)
	    print("%-6d %11s ms %11s ms %11s ms %10s %10s   %s / %s / %s; %s / %s / %s" % (r, k, n, f, "%.2fx" % a if a else "-", "%.2fx" % b if b else "-",
	          get("kubeadm", r, "gone"), get("node-reset", r, "gone"), get("floor", r, "gone"),
	          get("kubeadm", r, "load"), get("node-reset", r, "load"), get("floor", r, "load")))
	med = lambda who, k: statistics.median([v[k] for v in rows.get(who, {}).values()]) if rows.get(who) else float("nan")
	mk, mn, mf = med("kubeadm", "ms"), med("node-reset", "ms"), med("floor", "ms")
	print("median %11.0f ms %11.0f ms %11.0f ms %9.2fx %9.2fx   (medians of the times; of the per-round ratios: %.2fx, %.2fx)" % (
	    mk, mn, mf, mk / mn, mn / mf, statistics.median(kr) if kr else float("nan"), statistics.median(nf) if nf else float("nan")))
	print("floor vs kubeadm: %.2fx (the most any reset that removes pods through the CRI can gain here)" % (mk / mf))
	print("node CPU during the reset (median ms): kubeadm %.0f, node-reset %.0f, floor %.0f" % (med("kubeadm", "cpu"), med("node-reset", "cpu"), med("floor", "cpu")))
	fixed = [get("node-reset", r, "ms") - pods_ms[r] for r in rounds if get("node-reset", r, "ms") and r in pods_ms]
	if fixed:
	    print("node-reset's fixed cost around the pods phase (its run minus the pods phase; median ms): %.0f (%s)" % (
	        statistics.median(fixed), ", ".join(str(x) for x in fixed)))
	print("where node-reset's time goes, per round:")
	for l in extra:
	    print("  " + l)
	print("pods %s: kubeadm/node-reset %.2fx, node-reset/floor %.2fx (medians of %d rounds)" % (sys.argv[2], mk / mn, mn / mf, len(rounds)))
	EOF
}

side_objects() { # NODE: a pod with a memory emptyDir and a local PV, on NODE
        cat <<-EOF
	apiVersion: v1
	kind: Secret
	metadata: {name: sbs-secret}
	stringData: {password: s3cret}
	---
	apiVersion: v1
	kind: PersistentVolume
	metadata: {name: sbs-pv-$1}
	spec:
	  capacity: {storage: 1Gi}
	  accessModes: [ReadWriteOnce]
	  storageClassName: nr-sbs
	  local: {path: /mnt/nr-pv-sbs}
	  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$1]}]}]}}
	---
	apiVersion: v1
	kind: PersistentVolumeClaim
	metadata: {name: sbs-pvc-$1}
	spec: {storageClassName: nr-sbs, volumeName: sbs-pv-$1, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
	---
	apiVersion: v1
	kind: Pod
	metadata: {name: sbs-$1}
	spec:
	  nodeSelector: {kubernetes.io/hostname: $1}
	  terminationGracePeriodSeconds: 1
	  containers:
	  - name: main
	    image: $TEST_IMAGE
	    imagePullPolicy: Never
	    command: [sh, -c, 'echo data > /pv/f; exec sleep 2147483647']
	    volumeMounts: [{name: mem, mountPath: /mem}, {name: secret, mountPath: /secret}, {name: pv, mountPath: /pv}]
	  volumes:
	  - {name: mem, emptyDir: {medium: Memory}}
	  - {name: secret, secret: {secretName: sbs-secret}}
	  - {name: pv, persistentVolumeClaim: {claimName: sbs-pvc-$1}}
	EOF
}

side_by_side_table() {
        echo "residue after the reset (round 1)"
        printf '%-40s %12s %26s %12s %14s\n' "" before "kubeadm reset -f + manual" node-reset "floor (pods)"
        paste -d'|' "$OUT/sbs-before-w2.txt" "$OUT/sbs-kubeadm.txt" "$OUT/sbs-node-reset.txt" "$OUT/sbs-floor.txt" |
                awk -F'|' '{ n = split($1, a, " "); k = split($2, b, " "); r = split($3, c, " "); f = split($4, d, " ");
                        name = $1; sub(/ [0-9]+$/, "", name);
                        printf "%-40s %12s %26s %12s %14s\n", name, a[n], b[k], c[r], d[f] }'
}

unit_prop() { # NODE UNIT PROPERTY: its value
        node_exec "$1" systemctl show -p "$3" --value "$2"
}

# Scenario 4: the control plane is gone for good. w4's orphan unit (as installed by the package, with
# a short NODE_RESET_ORPHAN_FOR) skips while cp1 answers and while the evidence is younger than that,
# then resets the node through its ExecStart=, within its --timeout; the node is clean and rejoinable.
# cp1 is stopped for good: this scenario runs last.
ORPHAN_FOR=60
W4_READY=
# w4 joins while the control plane is there: before scenario_control_plane resets it.
master_gone_prepare() {
        [ -z "$W4_READY" ] || return "$W4_READY"
        W4_READY=1
        cluster_up || return 1
        node_create w4 "${ALL_NODE_IP[w4]}" && node_boot w4 || { echo "FAIL: w4 boots"; failed=$((failed + 1)); return 1; }
        check "kubeadm join of w4" cluster_join w4 "$OUT/kubeadm-join-w4.log" || return 1
        check "w4 Ready" wait_for 180 "w4 Ready" node_ready w4 || { network_diagnosis w4; return 1; }
        probe_pod nr-orphan w4 | kc apply -f - >/dev/null
        check "a pod runs on w4" wait_for 120 "nr-orphan Running" pod_running nr-orphan || return 1

        # The units as "make install" puts them, and the settings file they read.
        install -m 0644 "$TOP/units/node-reset-orphan.service" "$TOP/units/node-reset-orphan.timer" \
                "$W/nodes/w4/root/etc/systemd/system/"
        mkdir -p "$W/nodes/w4/root/etc/node-reset"
        printf 'NODE_RESET_ORPHAN_FOR=%ss\nNODE_RESET_TIMEOUT=300\n' "$ORPHAN_FOR" \
                >"$W/nodes/w4/root/etc/node-reset/node-reset.env"
        node_exec w4 systemctl daemon-reload
        node_exec w4 systemctl start node-reset-orphan.service
        check "while cp1 answers, the orphan unit skips its reset (ExecCondition= exit 1)" \
                test "$(unit_prop w4 node-reset-orphan.service Result)/$(node_exec w4 systemctl is-active kubelet)" = success/active
        node_exec w4 node-reset --for="${ORPHAN_FOR}s" orphan-check >"$OUT/orphan-healthy.txt" 2>&1
        check "... orphan-check: healthy, exit 1" test $? -eq 1
        W4_READY=0
}

scenario_master_gone() {
        local t0 first rc i n
        echo "=== scenario: master gone"
        master_gone_prepare || return

        for n in cp1 cp2; do
                [ -n "${NODE_PID[$n]:-}" ] || continue
                echo "e2e-k8s: stopping $n for good"
                node_stop "$n"
        done
        first=$SECONDS
        node_exec w4 systemctl start node-reset-orphan.service
        check "the first check after cp1 went: evidence recorded, no reset yet" \
                test "$(node_exec w4 systemctl is-active kubelet)" = active
        node_exec w4 cat /var/lib/node-reset/orphan.state >"$OUT/orphan.state" 2>&1
        check "... orphan.state says unreachable" grep -qx 'class=unreachable' "$OUT/orphan.state" ||
                cat "$OUT/orphan.state"
        # The timer's pace, faster: a check every 20 s until the evidence is $ORPHAN_FOR s old.
        for i in 1 2 3 4 5; do
                sleep 20
                t0=$SECONDS
                node_exec w4 systemctl start node-reset-orphan.service
                rc=$?
                [ "$(node_exec w4 systemctl is-active kubelet)" = active ] || break
        done
        echo "e2e-k8s: the orphan unit reset w4 $((t0 - first)) s after cp1 went, in $((SECONDS - t0)) s (start exit $rc)"
        node_exec w4 journalctl -u node-reset-orphan.service --no-pager -o cat >"$OUT/orphan-unit.log" 2>&1
        check "the reset came after the evidence was ${ORPHAN_FOR} s old, not before" test $((t0 - first)) -ge "$ORPHAN_FOR"
        check "the orphan unit's reset succeeded (Result=success, exit 0)" \
                test "$(unit_prop w4 node-reset-orphan.service Result)/$(unit_prop w4 node-reset-orphan.service ExecMainStatus)" = success/0 ||
                tail -n 30 "$OUT/orphan-unit.log"
        check "... within its --timeout (300 s): $((SECONDS - t0)) s" test $((SECONDS - t0)) -lt 300
        node_exec w4 node-reset --output=json status >"$OUT/orphan-status.json" 2>"$OUT/orphan-status.log"
        rc=$?
        check "node-reset status on w4 exits 0, residue none" test "$rc/$(json_field "$OUT/orphan-status.json" 'len(r["residue"])' 2>/dev/null)" = 0/0 ||
                tail -n 20 "$OUT/orphan-status.log"
        check "... and says w4 can rejoin" \
                test "$(json_field "$OUT/orphan-status.json" 'r["rejoin"]["rejoinable"]' 2>/dev/null)" = True ||
                json_field "$OUT/orphan-status.json" 'r.get("rejoin")'
        node_residue w4 >"$OUT/residue-orphan.txt"
        check "w4 holds no kubelet mount, sandbox, cni0 or kubepods cgroup (seen from the node)" \
                test ! -s "$OUT/residue-orphan.txt" || cat "$OUT/residue-orphan.txt"
}

# cp1's etcd, asked through its v3 JSON gateway with the health-check client certificate.
etcd_ask() { # PATH [BODY]
        node_exec cp1 curl -s --max-time 10 --cacert /etc/kubernetes/pki/etcd/ca.crt \
                --cert /etc/kubernetes/pki/etcd/healthcheck-client.crt \
                --key /etc/kubernetes/pki/etcd/healthcheck-client.key "https://127.0.0.1:2379$1" ${2:+-X POST -d "$2"}
}
etcd_members() { # the member names, sorted, one line
        etcd_ask /v3/cluster/member/list '{}' |
                python3 -c 'import json,sys; print(" ".join(sorted(m.get("name", "?") for m in json.load(sys.stdin)["members"])))'
}
etcd_healthy() { etcd_ask /health | grep -q '"health":"true"'; }
etcd_members_are() { [ "$(etcd_members)" = "$1" ]; } # "cp1 cp2"
etcd_alone_healthy() { etcd_members_are cp1 && etcd_healthy; }
cp2_node_gone() { ! kc get node cp2 >/dev/null 2>&1 && kc get node cp1 >/dev/null; }
last_cp_data_gone() { # the data directory is empty and the backup holds a snapshot
        node_exec cp1 sh -c 'test ! -e /var/lib/etcd/member && ls /var/backups/node-reset/*/etcd-snapshot.db'
}

# A second control plane: kubeadm join --control-plane with the certificates cp1 uploads.
join_control_plane() { # LOG
        local key cmd t0=$SECONDS
        key=$(node_exec cp1 kubeadm init phase upload-certs --upload-certs 2>>"$1" | tail -n 1)
        cmd=$(node_exec cp1 kubeadm token create --print-join-command 2>>"$1") || return 1
        # shellcheck disable=SC2086
        node_exec cp2 $cmd --control-plane --certificate-key "$key" --apiserver-advertise-address "${ALL_NODE_IP[cp2]}" \
                --cri-socket "$CRI_SOCKET" --node-name cp2 \
                ${E2E_K8S_IGNORE_PREFLIGHT:+--ignore-preflight-errors=$E2E_K8S_IGNORE_PREFLIGHT} >>"$1" 2>&1 || {
                tail -n 30 "$1"
                return 1
        }
        echo "e2e-k8s: kubeadm join --control-plane of cp2 in $((SECONDS - t0)) s"
}

# node-reset run on a node: exit 0, no residue; its report in $OUT/NAME.json.
reset_node() { # NODE NAME ARGS...
        local n=$1 name=$2 rc t0=$SECONDS
        shift 2
        node_exec "$n" node-reset --yes --output=json "$@" run >"$OUT/$name.json" 2>"$OUT/$name.log"
        rc=$?
        echo "e2e-k8s: node-reset run on $n: exit $rc in $((SECONDS - t0)) s (report $OUT/$name.json)"
        check "node-reset run --yes on $n exits 0, no residue" \
                test "$rc/$(json_field "$OUT/$name.json" 'len(r["residue"])' 2>/dev/null)" = 0/0 || tail -n 20 "$OUT/$name.log"
}

etcd_rows() { # REPORT: the etcd phase's rows, "result: message" a line
        json_field "$1" '"\n".join("%s: %s" % (a["result"], a["message"]) for p in r["phases"] for a in p["actions"] if a["phase"] == "etcd")'
}

preflight() { # NODE LOG: kubeadm init's preflight checks (ports, manifests, etcd data directory)
        kubeadm_config | sed -e "s/advertiseAddress: $CP_IP,/advertiseAddress: ${ALL_NODE_IP[$1]},/" \
                -e "s/name: cp1,/name: $1,/" >"$W/nodes/$1/root/root/kubeadm-preflight.yaml"
        node_exec "$1" kubeadm init phase preflight --config /root/kubeadm-preflight.yaml \
                ${E2E_K8S_IGNORE_PREFLIGHT:+--ignore-preflight-errors=$E2E_K8S_IGNORE_PREFLIGHT} >"$2" 2>&1 ||
                { tail -n 15 "$2"; return 1; }
}

# Scenario 3: cp2 joins as a second control plane with stacked etcd; node-reset takes its member out
# of the cluster (which stays healthy) and it joins again as a control plane. Then cp2 leaves once
# more and cp1, the last control plane, is reset: both pass kubeadm init's preflight.
scenario_control_plane() {
        case " ${SCENARIOS[*]} " in *" master-gone "*) master_gone_prepare ;; esac
        echo "=== scenario: control plane"
        cluster_up || return
        node_create cp2 "${ALL_NODE_IP[cp2]}" && node_boot cp2 || { echo "FAIL: cp2 boots"; failed=$((failed + 1)); return; }
        check "kubeadm join --control-plane of cp2 (stacked etcd)" join_control_plane "$OUT/kubeadm-join-cp2.log" || return
        check "cp2 Ready" wait_for 240 "cp2 Ready" node_ready cp2 || { network_diagnosis cp2; return; }
        check "etcd has two members: cp1 cp2" wait_for 60 "etcd members cp1 cp2" etcd_members_are "cp1 cp2" ||
                echo "e2e-k8s: etcd members: $(etcd_members)"

        reset_node cp2 reset-cp2 --delete-node
        echo "e2e-k8s: cp2's etcd rows:"; etcd_rows "$OUT/reset-cp2.json" | sed 's/^/e2e-k8s:   /'
        check "... its etcd member left (the etcd phase changed)" \
                test "$(json_field "$OUT/reset-cp2.json" '[a["result"] for p in r["phases"] for a in p["actions"] if a["kind"] == "etcd-member"]')" = "['changed']"
        check "etcd is healthy with one member: cp1" etcd_alone_healthy ||
                echo "e2e-k8s: etcd members: $(etcd_members)"
        check "the API server answers, cp2's Node is gone (--delete-node with admin.conf)" cp2_node_gone
        check "cp2 passes kubeadm init's preflight" preflight cp2 "$OUT/preflight-cp2.log"

        check "kubeadm join --control-plane of cp2 again, nothing cleaned by hand" \
                join_control_plane "$OUT/kubeadm-join-cp2-again.log" || return
        check "cp2 Ready again" wait_for 240 "cp2 Ready again" node_ready cp2
        check "etcd has two members again: cp1 cp2" wait_for 60 "etcd members cp1 cp2" etcd_members_are "cp1 cp2"

        # cp2 leaves again; then cp1 is the last control plane and its etcd the last voting member
        reset_node cp2 reset-cp2-again --delete-node
        check "etcd is healthy with one member again: cp1" etcd_alone_healthy
        reset_node cp1 reset-cp1
        echo "e2e-k8s: cp1's etcd rows:"; etcd_rows "$OUT/reset-cp1.json" | sed 's/^/e2e-k8s:   /'
        check "the last control plane's data directory went with a snapshot in the backup" last_cp_data_gone ||
                node_exec cp1 ls -la /var/lib/etcd /var/backups/node-reset
        check "cp1, the last control plane, passes kubeadm init's preflight (ports, manifests, etcd data dir)" \
                preflight cp1 "$OUT/preflight-cp1.log"
}

# Scenario "rejoin-removed-netd": a manifest that removes /etc/cni itself (as kubespray's and
# kubekey's resets do) under a runtime the run keeps: the detected kubeadm profile with "remove
# /etc/cni" for its "remove /etc/cni/net.d" (kubespray's own profile would also remove the kubelet
# unit it installs, which a plain kubeadm join cannot bring back). containerd's watch on the deleted
# directory is dead, so node-reset restarts containerd through systemd (the runtime-restart row);
# kubeadm join again, nothing restarted by hand, must find a runtime that loads the CNI
# configuration written afterwards.
scenario_rejoin_removed_netd() {
        local rc pid_before pid_after ip
        echo "=== scenario: rejoin after the reset removed /etc/cni under the kept containerd"
        cluster_up || return
        node_create w5 "${ALL_NODE_IP[w5]}" && node_boot w5 || { echo "FAIL: w5 boots"; failed=$((failed + 1)); return; }
        check "kubeadm join of w5" cluster_join w5 "$OUT/kubeadm-join-w5.log" || return
        check "w5 Ready" wait_for 180 "w5 Ready" node_ready w5 || { network_diagnosis w5; return; }
        probe_pod nr-w5 w5 | kc apply -f - >/dev/null
        check "a pod runs on w5" wait_for 120 "nr-w5 Running" pod_running nr-w5 || return
        pid_before=$(unit_prop w5 containerd.service MainPID)
        node_exec w5 sh -c "node-reset manifest print |
                sed 's|^remove /etc/cni/net.d\$|remove /etc/cni|' >/run/nr-e2e-k8s-manifest.conf"
        check "the manifest removes /etc/cni" node_exec w5 grep -qx 'remove /etc/cni' /run/nr-e2e-k8s-manifest.conf
        node_exec w5 node-reset --yes --output=json --delete-node --manifest /run/nr-e2e-k8s-manifest.conf run \
                >"$OUT/run-w5.json" 2>"$OUT/run-w5.log"
        rc=$?
        check "node-reset run --yes on w5 exits 0, no residue" \
                test "$rc/$(json_field "$OUT/run-w5.json" 'len(r["residue"])' 2>/dev/null)" = 0/0 ||
                tail -n 20 "$OUT/run-w5.log"
        check "... /etc/cni holds only the empty net.d the restarted containerd made again" \
                test "$(node_exec w5 find /etc/cni | tr '\n' ' ')" = "/etc/cni /etc/cni/net.d "
        pid_after=$(unit_prop w5 containerd.service MainPID)
        check "... and containerd was restarted through systemd (runtime-restart row; MainPID $pid_before -> $pid_after)" \
                test "$(json_field "$OUT/run-w5.json" '[a["result"] for p in r["phases"] for a in p["actions"] if a["kind"] == "runtime-restart"]' 2>/dev/null)/$(node_exec w5 systemctl is-active containerd)" = "['changed']/active" -a "$pid_before" != "$pid_after"
        kc delete pod nr-w5 --force --grace-period=0 >/dev/null 2>&1
        check "kubeadm join of w5 again, nothing restarted or cleaned by hand" cluster_join w5 "$OUT/kubeadm-join-w5-again.log" || return
        check "w5 Ready again" wait_for 180 "w5 Ready again" node_ready w5
        check "containerd on w5 loaded the CNI configuration written after the reset (CRI NetworkReady)" \
                wait_for 60 "w5 NetworkReady" cri_network_ready w5 || network_diagnosis w5
        probe_pod nr-w5-after w5 | kc apply -f - >/dev/null
        check "a new pod on w5 runs" wait_for 120 "nr-w5-after Running" pod_running nr-w5-after
        ip=$(kc get pod nr-w5-after -o 'jsonpath={.status.podIP}')
        check "... with a CNI address from w5's range ${NODE_PODCIDR[w5]} (got '${ip}')" \
                test "${ip%.*}.0/24" = "${NODE_PODCIDR[w5]}"
        node_stop w5
}

# --- Scenario "dockershim": Docker as kubelet's runtime --------------------------------------------

dk() { node_exec d1 docker "$@"; }

# A Deployment of two replicas on NODE (its pods are Docker containers there, with an emptyDir each).
docker_deployment() { # NODE
        cat <<-EOF2
	apiVersion: apps/v1
	kind: Deployment
	metadata: {name: nr-dk}
	spec:
	  replicas: 2
	  selector: {matchLabels: {app: nr-dk}}
	  template:
	    metadata: {labels: {app: nr-dk}}
	    spec:
	      nodeSelector: {kubernetes.io/hostname: $1}
	      terminationGracePeriodSeconds: 1
	      containers:
	      - name: main
	        image: $TEST_IMAGE
	        imagePullPolicy: Never
	        command: [sh, -c, 'echo x > /scratch/f; exec sleep 2147483647']
	        volumeMounts: [{name: scratch, mountPath: /scratch}]
	      volumes: [{name: scratch, emptyDir: {}}]
	EOF2
}

deployment_running() { # NAME N
        [ "$(kc get deployment "$1" -o 'jsonpath={.status.readyReplicas}')" = "$2" ]
}

keepme_diagnosis() {
        cat "$OUT/keepme-d1.log"
        dk ps -a --filter name=keepme
        dk logs keepme 2>&1 | tail -n 5
        dk exec keepme cat /data/file
}

dk_network() { # Docker's nat and filter chains and its bridge, with keepme's port on it
        node_exec d1 iptables -t nat -S DOCKER >/dev/null 2>&1 && node_exec d1 iptables -S DOCKER-USER >/dev/null 2>&1 &&
                node_exec d1 ip -o link show master docker0 | grep -q veth
}

dk_k8s_containers() { dk ps -aq --filter name=k8s_ 2>/dev/null | wc -l; }
dk_keepme() { # the operator's container: running, its volume's data as written
        [ "$(dk inspect -f '{{.State.Running}}' keepme 2>/dev/null)" = true ] &&
                [ "$(dk exec keepme cat /data/file 2>/dev/null)" = "$1" ]
}

# d1 joins cp1 with Docker as its runtime (kubeadm join --cri-socket /var/run/dockershim.sock, kubelet
# 1.20's built-in dockershim); kube-proxy, the CNI installer and a Deployment run there as k8s_
# containers, beside an operator's own container with a named volume. node-reset --delete-node must
# find Docker to be kubelet's runtime, remove every k8s_ container through the Engine API and keep
# Docker, that container and its data; then kubeadm join again, nothing done by hand, gives a Ready
# node that runs a new pod.
scenario_dockershim() {
        local t_s=$SECONDS rc token n
        echo "=== scenario: Docker as kubelet's runtime (dockershim)"
        [ -n "$(docker_deb)" ] || { echo "SKIP: dockershim: no docker.io .deb in $DOCKER_DEB_CACHE (make deps caches it)"; return; }
        cluster_up || return
        node_create d1 "${ALL_NODE_IP[d1]}" docker && node_boot d1 || { echo "FAIL: d1 boots"; failed=$((failed + 1)); return; }
        check "Docker runs on d1 (Debian's docker.io laid into the node, its units enabled)" \
                node_exec d1 systemctl is-active --quiet docker
        check "kubeadm join of d1 with --cri-socket $DOCKERSHIM_SOCKET" \
                cluster_join d1 "$OUT/kubeadm-join-d1.log" "$DOCKERSHIM_SOCKET" || return
        check "... kubeadm-flags.env names no remote runtime (kubelet's default: dockershim)" \
                sh -c "! grep -q -- '--container-runtime=remote' '$W/nodes/d1/root/var/lib/kubelet/kubeadm-flags.env'"
        check "d1 Ready" wait_for 180 "d1 Ready" node_ready d1 ||
                { node_exec d1 journalctl -u kubelet --no-pager -o cat | tail -n 20; return; }
        docker_deployment d1 | kc apply -f - >/dev/null
        check "a Deployment's 2 pods run on d1" wait_for 180 "nr-dk 2/2" deployment_running nr-dk 2 ||
                { kc describe pods -l app=nr-dk | tail -n 20; return; }

        token=operator-$RANDOM$RANDOM
        dk volume create keepdata >/dev/null
        dk run -d --name keepme -v keepdata:/data --entrypoint /bin/sh "$TEST_IMAGE" \
                -c "echo $token > /data/file; exec sleep 2147483647" >"$OUT/keepme-d1.log" 2>&1
        check "an operator's own container (not Kubernetes') runs in d1's Docker with a named volume" \
                wait_for 30 "keepme's data" dk_keepme "$token" || { keepme_diagnosis; return; }
        n=$(dk_k8s_containers)
        echo "e2e-k8s: d1 before the reset: $n k8s_ containers in Docker;" \
                "$(node_residue d1 | cut -d' ' -f1 | sort | uniq -c | tr -s ' \n' ' ')"
        check "kubelet's pods are k8s_ containers in Docker ($n)" test "$n" -ge 8
        check "Docker's own firewall chains and docker0 are there" dk_network

        reset_node d1 run-d1 --delete-node
        check "... detection: Docker is kubelet's runtime (not co-hosted)" \
                test "$(json_field "$OUT/run-d1.json" '(r["runtime"]["name"], r["runtime"]["docker_cohosted"])' 2>/dev/null)" = "('docker', False)" ||
                json_field "$OUT/run-d1.json" 'r["runtime"]'
        check "... removed $n containers through Docker's Engine API, none failed" \
                test "$(json_field "$OUT/run-d1.json" 'sorted(set(a["result"] for p in r["phases"] for a in p["actions"] if a["kind"] in ("docker-remove-container", "docker-remove-pod"))) + [len([a for p in r["phases"] for a in p["actions"] if a["kind"] in ("docker-remove-container", "docker-remove-pod")])]' 2>/dev/null)" = "['changed', $n]"
        check "no k8s_ container is left in Docker" test "$(dk_k8s_containers)" -eq 0 || dk ps -a
        check "the operator's container still runs, its volume's data intact" dk_keepme "$token" || keepme_diagnosis
        check "Docker still runs (kept)" node_exec d1 systemctl is-active --quiet docker
        check "... its firewall chains (DOCKER, DOCKER-USER) and docker0 kept" dk_network
        node_residue d1 >"$OUT/residue-d1.txt"
        check "d1 holds no kubelet mount, cni0 or kubepods cgroup (seen from the node)" \
                sh -c "! grep -q -E '^(mount|link|cgroup) ' '$OUT/residue-d1.txt'" || cat "$OUT/residue-d1.txt"
        node_exec d1 node-reset --output=json status >"$OUT/status-d1.json" 2>"$OUT/status-d1.log"
        rc=$?
        check "node-reset status on d1 exits 0, residue none" \
                test "$rc/$(json_field "$OUT/status-d1.json" 'len(r["residue"])' 2>/dev/null)" = 0/0 ||
                tail -n 20 "$OUT/status-d1.log"

        check "kubeadm join of d1 again with --cri-socket $DOCKERSHIM_SOCKET, nothing restarted or cleaned by hand" \
                cluster_join d1 "$OUT/kubeadm-join-d1-again.log" "$DOCKERSHIM_SOCKET" || return
        check "d1 Ready again" wait_for 180 "d1 Ready again" node_ready d1
        probe_pod nr-dk-after d1 | kc apply -f - >/dev/null
        check "a new pod on d1 runs (a k8s_ container in Docker)" wait_for 120 "nr-dk-after Running" pod_running nr-dk-after ||
                kc describe pod nr-dk-after | tail -n 12
        check "... and the operator's container still runs with its data" dk_keepme "$token"
        # d1 leaves the cluster as it came: the scenarios after this one never see it
        kc delete deployment nr-dk --wait=false >/dev/null 2>&1
        kc delete node d1 --wait=false >/dev/null 2>&1
        node_stop d1
        echo "e2e-k8s: scenario dockershim took $((SECONDS - t_s)) s (cp1's own boot and init included when it ran first)"
}
