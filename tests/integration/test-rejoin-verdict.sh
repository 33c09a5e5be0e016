#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The rejoin verdict asks what kubeadm join (1.20) refuses, and no more, on --root trees: a
# bootstrap-kubelet.conf or a pki/ca.crt the manifest leaves makes the node "not rejoinable" (exit 1,
# though verify is clean); a resolv.conf without a nameserver, which join never reads, is a warning
# (exit 0, rejoinable); the running system's ports, swap and sysctls are "unknown" beneath --root,
# never "ok" and never "failed"; a control plane's etcd ports count only for an etcd of its installer.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
REPORT="$TOP/tests/integration/report.py"
row() { "$REPORT" "$1" "$2" > /dev/null; }
check_() { "$REPORT" "$1" "[c['state'] for c in r['rejoin']['checks'] if c['name'] == '$2'] == ['$3']" > /dev/null; }

# What the reset removes here: the kubelet's kubeconfig only, so that each case leaves one thing.
printf 'remove /etc/kubernetes/kubelet.conf\n' > "$WORK/m.conf"
tree() { # dir [relative-path...]: a node with a kubelet.conf, and each path as a file
        local d=$1 f
        shift
        mkdir -p "$d/etc/kubernetes/manifests" "$d/etc/kubernetes/pki"
        echo "apiVersion: v1" > "$d/etc/kubernetes/kubelet.conf"
        kubeadm_programs "$d"
        for f in "$@"; do
                mkdir -p "$d/$(dirname "$f")"
                echo "left" > "$d/$f"
        done
}
reset() { # dir json
        "$NODE_RESET" --root "$1" --manifest "$WORK/m.conf" --phases files,verify --yes -o json run > "$2" 2> "$2.err"
}

# --- bootstrap-kubelet.conf, pki/ca.crt (a failed join leaves it): join's FileAvailableCheck -------
refused() { # name relative-path check
        local j=$WORK/$1.json rc
        tree "$WORK/$1" "$2"
        reset "$WORK/$1" "$j"; rc=$?
        assert "/$2 left: exit 1" [ "$rc" -eq 1 ]
        assert "... the reset itself did its work: kubelet.conf removed (changed), verify clean" row "$j" \
                "[a['result'] for a in actions(r, phase='files')] == ['changed'] and r['verdict'] == 'clean'"
        assert "... not rejoinable: $3 failed, and only it" row "$j" \
                "r['rejoin']['rejoinable'] is False and [c['name'] for c in r['rejoin']['checks'] if c['state'] == 'failed'] == ['$3']"
        assert "... kubelet-kubeconfig ok" check_ "$j" kubelet-kubeconfig ok
        assert "... the log names it" grep -q "Not rejoinable: $3: /$2 exists" "$j.err"
        assert "... and it is still there (the manifest did not ask)" test -f "$WORK/$1/$2"
}
refused boot etc/kubernetes/bootstrap-kubelet.conf bootstrap-kubeconfig
refused ca etc/kubernetes/pki/ca.crt ca-cert

# --- a resolv.conf without a nameserver: join does not read it, a warning ------------------------
tree "$WORK/dns" etc/resolv.conf
printf 'search example.org\noptions ndots:2\n' > "$WORK/dns/etc/resolv.conf"
reset "$WORK/dns" "$WORK/dns.json"; rc=$?
assert "resolv.conf without a nameserver: exit 0" [ "$rc" -eq 0 ]
assert "... rejoinable, no check failed, none named resolver" row "$WORK/dns.json" \
        "r['rejoin']['rejoinable'] is True and not any(c['state'] == 'failed' or c['name'] == 'resolver' for c in r['rejoin']['checks'])"
assert "... a resolver warning says why" row "$WORK/dns.json" \
        "[w['name'] for w in r['rejoin']['warnings']] == ['resolver'] and 'no nameserver' in r['rejoin']['warnings'][0]['message']"
assert "... logged as a warning" grep -q "Rejoin warning: resolver: /etc/resolv.conf names no nameserver" "$WORK/dns.json.err"
assert "... every file check ok" row "$WORK/dns.json" \
        "all(c['state'] == 'ok' for c in r['rejoin']['checks'] if c['name'] in ('static-pods', 'kubelet-kubeconfig', 'bootstrap-kubeconfig', 'ca-cert'))"

# --- InPathCheck: a program missing refuses the join, whether the run removed it or the node lacked it
# before (the message tells which); a tree that had none of them is not judged ----------------------
tree "$WORK/crictl"
rm "$WORK/crictl/usr/bin/ip"
printf 'remove /etc/kubernetes/kubelet.conf\nremove /usr/local/bin/crictl\n' > "$WORK/m-crictl.conf"
"$NODE_RESET" --root "$WORK/crictl" --manifest "$WORK/m-crictl.conf" --phases files,verify --yes -o json run \
        > "$WORK/crictl.json" 2> "$WORK/crictl.json.err"; rc=$?
assert "crictl removed by the manifest (a cri-tools tarball's place): exit 1" [ "$rc" -eq 1 ]
assert "... verify clean, not rejoinable: executables failed, and only it" row "$WORK/crictl.json" \
        "r['verdict'] == 'clean' and r['rejoin']['rejoinable'] is False and [c['name'] for c in r['rejoin']['checks'] if c['state'] == 'failed'] == ['executables']"
assert "... naming crictl" row "$WORK/crictl.json" \
        "[c['message'] for c in r['rejoin']['checks'] if c['name'] == 'executables'] == ['the run removed crictl from PATH; not in PATH, before the run too (the node\\'s own preparation lacks it): ip: kubeadm join refuses it']"
assert "... and no warning repeats it (the verdict and its warnings agree)" row "$WORK/crictl.json" \
        "not [w for w in r['rejoin']['warnings'] if w['name'] == 'executables']"
assert "... the log says why" grep -q "Not rejoinable: executables: the run removed crictl" "$WORK/crictl.json.err"
tree "$WORK/lacked"
rm "$WORK/lacked/usr/bin/nsenter" "$WORK/lacked/usr/bin/socat"
reset "$WORK/lacked" "$WORK/lacked.json"; rc=$?
assert "nsenter missing before the run (the run removed none): not rejoinable, exit 1" [ "$rc" -eq 1 ]
assert "... executables failed naming nsenter as the node's own lack; socat only a warning" row "$WORK/lacked.json" \
        "r['rejoin']['rejoinable'] is False and [c['message'] for c in r['rejoin']['checks'] if c['name'] == 'executables'] == ['not in PATH, before the run too (the node\\'s own preparation lacks it): nsenter: kubeadm join refuses it'] and [w['message'] for w in r['rejoin']['warnings']] == ['not in PATH: socat (kubeadm join only warns)']"
tree "$WORK/bare"
rm -f "$WORK/bare/usr/bin/"* "$WORK/bare/usr/local/bin/crictl"
reset "$WORK/bare" "$WORK/bare.json"; rc=$?
assert "a tree with none of kubeadm's programs before the run: executables unchecked, exit 0" row "$WORK/bare.json" \
        "[c['state'] for c in r['rejoin']['checks'] if c['name'] == 'executables'] == ['unchecked'] and r['rejoin']['rejoinable'] is True"

# --- beneath --root, what only the running system holds is unknown ---------------------------------
for c in ports swap sysctl; do
        assert "--root, no phase of the running system: $c unknown" check_ "$WORK/dns.json" $c unknown
done
assert "... saying why" row "$WORK/dns.json" \
        "all('--root' in c['message'] for c in r['rejoin']['checks'] if c['name'] in ('ports', 'swap', 'sysctl'))"
assert "... the phases that did not run: unchecked (kubelet, runtime, node-object; etcd-data on a worker)" row "$WORK/dns.json" \
        "sorted(c['name'] for c in r['rejoin']['checks'] if c['state'] == 'unchecked') == ['etcd-data', 'kubelet', 'node-object', 'runtime']"

# --- a control plane's ports: 2379-2380 only for an etcd of this node's installer -----------------
# kubeadm 1.20's RunInitNodeChecks asks PortOpenCheck 2379/2380 only "if cfg.Etcd.Local != nil": the
# site's own etcd, named by etcd.external, listens there on after the reset and kubeadm does not ask.
printf 'remove /etc/kubernetes/kubelet.conf\nempty /etc/kubernetes/manifests\n' > "$WORK/m-cp.conf"
printf 'apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\netcd:\n  external:\n    endpoints:\n    - https://127.0.0.1:2379\n' \
        > "$WORK/external.yaml"
python3 -c 'import socket, time
ss = []
for p in (2379, 2380):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", p)); s.listen(); ss.append(s)
time.sleep(60)' &
listener=$!
for _ in $(seq 50); do grep -q ':0950 .* 0A ' /proc/net/tcp && grep -q ':094F .* 0A ' /proc/net/tcp && break; sleep 0.1; done
cp_ports() { # name [kubeadm-config]
        tree "$WORK/$1" etc/kubernetes/manifests/kube-apiserver.yaml
        [ -z "${2:-}" ] || cp "$2" "$WORK/$1/etc/kubernetes/kubeadm-config.yaml"
        "$NODE_RESET" --root "$WORK/$1" --manifest "$WORK/m-cp.conf" --phases network,files,verify --yes -o json run \
                > "$WORK/$1.json" 2> "$WORK/$1.json.err"
}
cp_ports cp-external "$WORK/external.yaml"; rc=$?
assert "control plane, etcd.external listening on 2379-2380: exit 0, rejoinable" [ "$rc" -eq 0 ]
assert "... ports ok, saying why 2379-2380 were not asked" row "$WORK/cp-external.json" \
        "[c['message'] for c in r['rejoin']['checks'] if c['name'] == 'ports' and c['state'] == 'ok'] == ['10250, 6443, 10257, 10259 free (2379-2380 not asked: the etcd is out of scope, /etc/kubernetes/kubeadm-config.yaml)']"
cp_ports cp-local; rc=$?
assert "control plane, no external etcd, 2379-2380 in use: exit 1" [ "$rc" -eq 1 ]
assert "... not rejoinable: ports failed, naming both" row "$WORK/cp-local.json" \
        "r['rejoin']['rejoinable'] is False and [c['message'] for c in r['rejoin']['checks'] if c['state'] == 'failed'] == ['in use (LISTEN): 2379, 2380']"
kill "$listener"
wait "$listener" 2> /dev/null

# --- in text ----------------------------------------------------------------------------------------
tree "$WORK/text" etc/kubernetes/bootstrap-kubelet.conf etc/resolv.conf
"$NODE_RESET" --root "$WORK/text" --manifest "$WORK/m.conf" --phases files,verify status > "$WORK/text.out" 2> /dev/null; rc=$?
assert "text: exit 1, rejoinable: no, the failed check and the warning" \
        test "$rc" -eq 1 -a -n "$(grep '^rejoinable: no' "$WORK/text.out")" \
        -a -n "$(grep -E '^ +bootstrap-kubeconfig +failed' "$WORK/text.out")" \
        -a -n "$(grep -E '^ +warning: resolver:' "$WORK/text.out")"
schema_valid "$WORK"/*.json > /dev/null || fail "a report does not match docs/report.schema.json"
finish
