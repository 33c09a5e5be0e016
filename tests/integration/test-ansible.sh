#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/ansible driven by the real ansible-playbook against five local "nodes" (connection=local):
# each is a --root tree built by fixtures/node-tree.sh in this test's private mount namespace, with
# its own network namespace (made here, under the test's tmpfs /run) entered by nsenter --net. The
# play resets them in batches: check mode changes nothing; a node with a busy mount fails with the
# agent's message while the rest of its batch finishes; max_fail_percentage keeps later batches
# untouched; the second run reports nothing changed. Asserted through the JSON callback and the
# nodes' end state.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_cmd ansible-playbook nsenter ip iptables iptables-save python3
in_private_ns "$@"
. "$TOP/tests/integration/fixtures/node-tree.sh"

# The processes this test starts (a file holder, a lock holder, a status store) end with it.
pids=()
eval "$(trap -p EXIT | sed 's/^trap -- /lib_exit=/; s/ EXIT$//')"
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; eval "${lib_exit:-}"' EXIT

NODES="node1 node2 node3 node4 node5"
UID_DIR=var/lib/kubelet/pods/6f1c2d3e-0000-4a4a-9b9b-123456789abc/volumes
REPORT="$TOP/tests/integration/report.py"

# Ansible keeps its temporary files, its configuration and the staged agent inside $WORK.
mkdir -p "$WORK"/{home,tmp,ansible,bin,nodes,disks,callback_plugins}
export HOME=$WORK/home TMPDIR=$WORK/tmp ANSIBLE_LOCAL_TEMP=$WORK/ansible/local \
        ANSIBLE_REMOTE_TEMP=$WORK/ansible/remote ANSIBLE_CONFIG=$WORK/ansible.cfg \
        ANSIBLE_CALLBACK_PLUGINS=$WORK/callback_plugins ANSIBLE_STDOUT_CALLBACK=nrjson \
        ANSIBLE_NOCOLOR=1 ANSIBLE_FORKS=5
printf '[defaults]\nretry_files_enabled = False\ninterpreter_python = /usr/bin/python3\n[connection]\npipelining = True\n' > "$ANSIBLE_CONFIG"

# ansible-core has no JSON stdout callback (ansible.posix.json lives in the big "ansible" package):
# this one prints the same shape, {"plays": [{"tasks": [{"task", "hosts"}]}], "stats"}.
cat > "$WORK/callback_plugins/nrjson.py" <<'EOF'
import json
from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "nrjson"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.plays = []

    def v2_playbook_on_play_start(self, play):
        self.plays.append({"play": {"name": play.get_name()}, "tasks": []})

    def v2_playbook_on_task_start(self, task, is_conditional):
        self.plays[-1]["tasks"].append({"task": {"name": task.get_name()}, "hosts": {}})

    def _record(self, result, **flags):
        r = dict(result._result, **flags)
        self.plays[-1]["tasks"][-1]["hosts"][result._host.get_name()] = r

    def v2_runner_on_ok(self, result):
        self._record(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, failed=True)

    def v2_runner_on_skipped(self, result):
        self._record(result, skipped=True)

    def v2_runner_on_unreachable(self, result):
        self._record(result, unreachable=True)

    def v2_playbook_on_stats(self, stats):
        hosts = {h: stats.summarize(h) for h in sorted(stats.processed)}
        self._display.display(json.dumps({"plays": self.plays, "stats": hosts}, default=str))
EOF

# Queries over ansible's JSON callback output: q.py FILE EXPR, true when EXPR holds.
cat > "$WORK/q.py" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
def res(task, host):
    for p in j["plays"]:
        for t in p["tasks"]:
            if t["task"]["name"].split(" : ")[-1] == task and host in t["hosts"]:
                return t["hosts"][host]
    return {}
def stats(host):
    return j["stats"].get(host, {})
def ran(host):
    r = res("Reset (node-reset run)", host)
    return bool(r) and not r.get("skipped")
v = eval(sys.argv[2], {"j": j, "res": res, "stats": stats, "ran": ran})
if not v:
    print("  false: " + sys.argv[2], file=sys.stderr)
sys.exit(0 if v else 1)
EOF
q() { python3 "$WORK/q.py" "$@"; }
not() { ! "$@"; }

# --- Five nodes: a tree each, a network namespace each, CNI links inside ------------------------
for n in $NODES; do
        root=$WORK/nodes/$n
        build_node_tree "$root" "$WORK/disks/$n"
        echo "$n" > "$root/etc/hostname"
        ip netns add "nr-$n"
        ip -n "nr-$n" -batch - <<-EOF
	link set lo up
	link add eth1 type veth peer name eth1p
	link set eth1 up
	link set eth1p up
	addr add 192.0.2.10/24 dev eth1
	route add default via 192.0.2.1 dev eth1
	link add cni0 type bridge
	link add veth0a1 type veth peer name veth0b1
	link set veth0a1 master cni0
	link add cali0a1 type veth peer name cali0b1
	EOF
        # kube-proxy's chain, and the host's own SSH rule that must survive.
        nsenter --net="/run/netns/nr-$n" -- sh -ec 'iptables -t nat -N KUBE-SERVICES
                iptables -t nat -A PREROUTING -j KUBE-SERVICES
                iptables -A INPUT -p tcp --dport 22 -j ACCEPT'
        printf '#!/bin/sh\nexec nsenter --net=/run/netns/nr-%s -- %q "$@"\n' "$n" "$NODE_RESET" > "$WORK/bin/$n"
        chmod 0755 "$WORK/bin/$n"
done
# The test's own namespace has CNI-looking links and a kube-proxy chain too: no node may reach them.
ip link add cni0 type bridge && ip link add cali0ff type veth peer name cali0fe
iptables -t nat -N KUBE-SERVICES

# node2 sends its report to a status store: a small HTTP server inside node2's network namespace.
cat > "$WORK/store.py" <<'EOF'
import http.server, sys
class Store(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(sys.argv[1], "ab") as f:
            f.write(self.path.encode() + b" " + body.replace(b"\n", b" ") + b"\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_PUT = do_POST
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 8088), Store)
open(sys.argv[2], "w").close()
server.serve_forever()
EOF
nsenter --net=/run/netns/nr-node2 -- python3 "$WORK/store.py" "$WORK/posts" "$WORK/store.ready" &
store=$!
pids+=("$store")
for _ in $(seq 50); do [ -e "$WORK/store.ready" ] && break; sleep 0.1; done

# node4 brings its own manifest (copied by the role) and the firewall mode "keep" on top of it.
mkdir -p "$WORK/nodes/node4/srv/custom"
echo "custom" > "$WORK/nodes/node4/srv/custom/f"
cat > "$WORK/node4.conf" <<'EOF'
# node4's own manifest: no CNI files, but /srv/custom (and the etcd data: a node that keeps it is
# not rejoinable, and its run exits 1)
unmount /var/lib/kubelet/*
empty /var/lib/kubelet
remove /etc/kubernetes
remove /var/lib/etcd
remove /srv/custom
link-master cni0
link cni0
link cali[0-9a-f]*
firewall owned
EOF

# The phases whose state a --root tree and a network namespace isolate. services-*, pods,
# processes and reload act on the machine's systemd, process table and CRI socket: the nspawn and
# containerd tests cover them, never against the host.
cat > "$WORK/inventory.yml" <<EOF
k8s_cluster:
  vars:
    ansible_connection: local
    ansible_become: false
    node_reset_report_dir: $WORK/reports
    node_reset_phases: [mounts, firewall, network, files]
  hosts:
    node1: { node_reset_binary: $WORK/bin/node1, node_reset_root: $WORK/nodes/node1 }
    node2: { node_reset_binary: $WORK/bin/node2, node_reset_root: $WORK/nodes/node2,
             node_reset_report_url: "http://127.0.0.1:8088/nodes/node2" }
    node3: { node_reset_binary: $WORK/bin/node3, node_reset_root: $WORK/nodes/node3 }
    node4: { node_reset_binary: $WORK/bin/node4, node_reset_root: $WORK/nodes/node4,
             node_reset_manifest_src: $WORK/node4.conf, node_reset_firewall: keep }
    node5: { node_reset_binary_src: $NODE_RESET, node_reset_root: $WORK/nodes/node5,
             node_reset_command_prefix: [nsenter, --net=/run/netns/nr-node5, --],
             node_reset_phases: [mounts, files] }
EOF

playbook() { # NAME ARGS...: runs reset.yml in batches of 2, output in $WORK/NAME.json
        local name=$1 start=$SECONDS rc
        shift
        ansible-playbook -i "$WORK/inventory.yml" "$TOP/examples/ansible/reset.yml" -e node_reset_serial=2 "$@" \
                > "$WORK/$name.json" 2> "$WORK/$name.err"
        rc=$?
        echo "$name: ansible-playbook exit $rc in $((SECONDS - start)) s"
        return $rc
}
links() { ip -n "nr-$1" -br link show | awk '{ sub(/@.*/, "", $1); print $1 }' | sort | tr '\n' ' '; }
kube_chain() { nsenter --net="/run/netns/nr-$1" -- iptables-save -t nat | grep -q '^:KUBE-SERVICES'; }
ssh_rule() { nsenter --net="/run/netns/nr-$1" -- iptables-save -t filter | grep -q -- '--dport 22 -j ACCEPT'; }
intact() { test -e "$WORK/nodes/$1/etc/kubernetes/admin.conf" -a -n "$(links "$1" | grep -w cni0)" && kube_chain "$1"; }

# node3's emptyDir is held open: its unmount fails as "busy" and the agent names the holder.
( exec 3<"$WORK/nodes/node3/$UID_DIR/kubernetes.io~empty-dir/cache/scratch"; exec sleep 300 ) > /dev/null 2>&1 &
holder=$!
pids+=("$holder")

# --- Check mode: the plan and the status, nothing changes ---------------------------------------
playbook check --check; rc=$?
assert "check mode: exit 0" test $rc -eq 0
for n in $NODES; do
        assert "check mode: $n reported as would-change" q "$WORK/check.json" "stats('$n').get('changed') == 1 and stats('$n').get('failures') == 0"
        assert "check mode: $n untouched" intact "$n"
done
assert "check mode: no run task executed" q "$WORK/check.json" "not any(ran(h) for h in ['node1', 'node2', 'node3', 'node4', 'node5'])"
assert "check mode: the plan reports were kept on the controller" test -s "$WORK/reports/node1.plan.json" -a -s "$WORK/reports/node5.plan.json"
assert "check mode: a plan report is the agent's plan" "$REPORT" "$WORK/reports/node1.plan.json" 'r["command"] == "plan" and r["residue"] is None' > /dev/null
assert "check mode: the summary lists what would be reset" q "$WORK/check.json" "res('Residue per node', 'localhost')['msg']['node1'].startswith('would reset: ')"
assert "check mode: the staging directories are gone" test -z "$(ls -A "$WORK/tmp")"

# --- Without confirmation the playbook refuses --------------------------------------------------
playbook refuse; rc=$?
assert "without node_reset_confirm: refused, non-zero exit" test $rc -ne 0
assert "without node_reset_confirm: nobody reset" q "$WORK/refuse.json" "not any(ran(h) for h in ['node1', 'node2', 'node3', 'node4', 'node5'])"
for n in $NODES; do assert "without node_reset_confirm: $n untouched" intact "$n"; done

# --- Batches of 2 and max_fail_percentage 0: node3 fails, the batch finishes, node5 is never reset
playbook strict -e node_reset_confirm=yes -e node_reset_max_fail_percentage=0; rc=$?
assert "strict: exit 2 (a host failed)" test $rc -eq 2
assert "strict: node1 and node2 (first batch) changed" q "$WORK/strict.json" "stats('node1')['changed'] > 0 and stats('node2')['changed'] > 0 and stats('node1')['failures'] == 0"
assert "strict: node3 failed with the agent's message naming the busy mount and its holder" \
        q "$WORK/strict.json" "'busy, held by PID $holder (fd)' in res('Fail when node-reset failed', 'node3')['msg'] and 'kubernetes.io~empty-dir/cache' in res('Fail when node-reset failed', 'node3')['msg']"
assert "strict: node4 (same batch) was reset" q "$WORK/strict.json" "res('Reset (node-reset run)', 'node4').get('changed')"
assert "strict: node5 (next batch) never ran" q "$WORK/strict.json" "not ran('node5')"
assert "strict: node5 untouched" intact node5
assert "strict: node3's held emptyDir is still mounted, its data there" grep -q scratch "$WORK/nodes/node3/$UID_DIR/kubernetes.io~empty-dir/cache/scratch"
assert "strict: node3's report keeps the residue" "$REPORT" "$WORK/reports/node3.json" 'r["failed"] and any(x["target"].endswith("empty-dir/cache") for x in r["residue"])' > /dev/null
for n in node1 node2; do
        # Detected as kubeadm nodes: kubeadm's scope (the kubeconfigs go, /etc/kubernetes stays).
        assert "strict: $n reset: admin.conf gone, hostname kept" test ! -e "$WORK/nodes/$n/etc/kubernetes/admin.conf" -a -s "$WORK/nodes/$n/etc/hostname"
        assert "strict: $n PV data survived" grep -q "must survive" "$WORK/disks/$n/pv-data/important.db"
        assert "strict: $n CNI links gone, the uplink kept" test "$(links "$n")" = "eth1 eth1p lo "
        assert "strict: $n kube-proxy chain gone" not kube_chain "$n"
        assert "strict: $n SSH rule kept" ssh_rule "$n"
done
assert "node4: its own manifest was used (the firewall overlay on a copy of it)" \
        "$REPORT" "$WORK/reports/node4.json" 'any(m.endswith("/effective.conf") for m in r["manifests"])' > /dev/null
assert "node4: /srv/custom removed, /etc/cni/net.d (not in its manifest) kept" \
        test ! -e "$WORK/nodes/node4/srv/custom" -a -e "$WORK/nodes/node4/etc/cni/net.d/10-calico.conflist"
assert "node4: firewall keep: its kube-proxy chain stays" kube_chain node4
assert "node2: --report-url passed to run, and only where set" \
        q "$WORK/strict.json" "'--report-url' in res('Reset (node-reset run)', 'node2')['cmd'] and '--report-url' not in res('Reset (node-reset run)', 'node1')['cmd']"
assert "node2: the status store received its report" grep -q '^/nodes/node2 .*"changed"' "$WORK/posts"
assert "the test's own namespace kept its cni0, cali0ff and KUBE-SERVICES" \
        test -n "$(ip -br link show cni0)" -a -n "$(ip -br link show cali0ff)" -a -n "$(iptables-save -t nat | grep '^:KUBE-SERVICES')"

# --- Tolerant: node3 fails again, everyone else finishes; reset nodes report nothing changed ----
playbook tolerant -e node_reset_confirm=yes -e node_reset_max_fail_percentage=50; rc=$?
assert "tolerant: exit 2 (node3 failed)" test $rc -eq 2
assert "tolerant: node3 failed again" q "$WORK/tolerant.json" "stats('node3')['failures'] == 1"
assert "tolerant: node5 was reset this time" q "$WORK/tolerant.json" "res('Reset (node-reset run)', 'node5')['changed'] and stats('node5')['failures'] == 0"
for n in node1 node2 node4; do
        assert "tolerant: second run on $n: not changed" q "$WORK/tolerant.json" "ran('$n') and stats('$n')['changed'] == 0 and stats('$n')['failures'] == 0"
done
assert "node5: the copied agent ran (mounts,files only): files reset, its netns untouched" \
        test ! -e "$WORK/nodes/node5/etc/kubernetes/admin.conf" -a -n "$(links node5 | grep -w cni0)"
assert "node5: its kube-proxy chain untouched (firewall not selected)" kube_chain node5
assert "node5: only the selected phases ran" "$REPORT" "$WORK/reports/node5.json" '[p["name"] for p in r["phases"]] == ["mounts", "files"] and r["residue"] == []' > /dev/null
assert "the summary names node3's residue" q "$WORK/tolerant.json" "res('Residue per node', 'localhost')['msg']['node3'].startswith('FAILED, residue: ') and 'empty-dir/cache' in res('Residue per node', 'localhost')['msg']['node3']"
assert "the summary says node1 is clean" q "$WORK/tolerant.json" "res('Residue per node', 'localhost')['msg']['node1'] == 'unchanged, clean'"
assert "the staging directories are gone" test -z "$(ls -A "$WORK/tmp")"

# --- The holder goes: node3 converges, and nothing else changes ---------------------------------
kill "$holder"; wait "$holder" 2>/dev/null
playbook final -e node_reset_confirm=yes; rc=$?
assert "final: exit 0" test $rc -eq 0
assert "final: node3 changed" q "$WORK/final.json" "stats('node3')['changed'] > 0 and stats('node3')['failures'] == 0"
for n in node1 node2 node4 node5; do
        assert "final: $n not changed" q "$WORK/final.json" "stats('$n')['changed'] == 0 and stats('$n')['failures'] == 0"
done
for n in $NODES; do
        phases=mounts,firewall,network,files
        [ $n = node5 ] && phases=mounts,files
        [ $n = node4 ] && phases=mounts,network,files   # its firewall was kept on purpose
        nsenter --net="/run/netns/nr-$n" -- "$NODE_RESET" --root "$WORK/nodes/$n" --phases "$phases,verify" \
                $([ $n = node4 ] && echo "--manifest $WORK/node4.conf") status > /dev/null 2>&1
        assert "final: node-reset status on $n exits 0" test $? -eq 0
        assert "final: $n has no mount left beneath its root" test -z "$(findmnt -n -r -o TARGET | grep "^$WORK/nodes/$n/")"
done

# --- The agent refuses or rejects: the host fails with the agent's own words --------------------
python3 -c 'import fcntl, sys, time; f = open(sys.argv[1], "w"); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(60)' \
        "$WORK/nodes/node1/run/node-reset.lock" > /dev/null 2>&1 &
locker=$!
pids+=("$locker")
for _ in $(seq 100); do grep -q "FLOCK .* $locker " /proc/locks && break; sleep 0.1; done
playbook locked -e node_reset_confirm=yes --limit node1; rc=$?
assert "locked: the host fails" test $rc -eq 2
assert "locked: the message is the agent's refusal naming the lock holder" \
        q "$WORK/locked.json" "'node-reset run exited 3' in res('Fail when node-reset failed', 'node1')['msg'] and 'PID $locker' in res('Fail when node-reset failed', 'node1')['msg']"
kill "$locker"; wait "$locker" 2>/dev/null

printf 'remove /etc/kubernetes\nremov /var/lib/x\n' > "$WORK/bad.conf"
playbook badmanifest -e node_reset_confirm=yes -e node_reset_manifest="$WORK/bad.conf" --limit node2; rc=$?
assert "bad manifest: the host fails before any run" test $rc -eq 2 -a "$(q "$WORK/badmanifest.json" "not ran('node2')"; echo $?)" = 0
assert "bad manifest: the message is the plan's FILE:LINE error" \
        q "$WORK/badmanifest.json" "'node-reset plan exited 2' in res('Fail when node-reset failed', 'node2')['msg'] and 'bad.conf:2' in res('Fail when node-reset failed', 'node2')['msg']"

# meta/argument_specs.yml: a wrong value fails the host in the role's validation, before any run.
playbook badfirewall -e node_reset_confirm=yes -e node_reset_firewall=drop --limit node2; rc=$?
assert "argument spec: a node_reset_firewall outside its choices fails the host, nothing run" \
        test $rc -eq 2 -a "$(q "$WORK/badfirewall.json" "not ran('node2')"; echo $?)" = 0
assert "argument spec: Ansible's own validation (meta/argument_specs.yml) names the variable and its choices" \
        q "$WORK/badfirewall.json" "any('arg spec' in t['task']['name'] and 'node_reset_firewall' in str(t['hosts']['node2'].get('msg', '')) and 'owned' in str(t['hosts']['node2']['msg']) for p in j['plays'] for t in p['tasks'] if 'node2' in t['hosts'])"
playbook bothmanifests -e node_reset_confirm=yes -e node_reset_manifest="$WORK/bad.conf" \
        -e node_reset_manifest_src="$WORK/bad.conf" --limit node2; rc=$?
assert "both manifest variables: the host fails before any run, saying why" \
        eval 'test $rc -eq 2 && q "$WORK/bothmanifests.json" "not ran('"'"'node2'"'"') and any('"'"'not both'"'"' in str(t['"'"'hosts'"'"'].get('"'"'node2'"'"', {}).get('"'"'msg'"'"', '"'"''"'"')) for p in j['"'"'plays'"'"'] for t in p['"'"'tasks'"'"'])"'

for f in "$WORK"/*.err; do [ -s "$f" ] && { echo "--- $(basename "$f")"; grep -v '^\[WARNING\]: .*localhost' "$f" | head -20; }; done
kill "$store"; wait "$store" 2>/dev/null
# NR_DEBUG_DIR=DIR keeps the playbook outputs and the reports for a look after the test.
[ -n "${NR_DEBUG_DIR:-}" ] && cp -r "$WORK"/*.json "$WORK"/*.err "$WORK"/posts "$WORK"/reports "$NR_DEBUG_DIR"/
finish
