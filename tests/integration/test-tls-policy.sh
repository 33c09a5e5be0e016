#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The one TLS policy of every HTTPS call (grpc/curl.h: curl_tls_options()) through each client path:
# orphan-check (the Kubernetes API client's request), --report-url, and the etcd client (gRPC over
# libcurl), in private mount and network namespaces, against openssl s_server and the tests' python
# API server.
#   - A server that speaks TLS 1.1 only is refused on every path. OpenSSL's own defaults on Debian 12
#     refuse TLS 1.1 already, so the server and node-reset both run under an OpenSSL configuration
#     that lets TLS 1.0 and 1.1 through (MinProtocol TLSv1, SECLEVEL 0): curl(1) under the same
#     configuration completes the handshake, so only node-reset's own floor can be what refuses.
#   - A CA given is the only one trusted: the system's store (a directory bound over /etc/ssl/certs in this
#     mount namespace) holds the CA that signed the server, the kubeconfig or etcd's flags name
#     another: refused, as client-go's and clientv3's RootCAs refuse it. The right CA is accepted.
. "$(dirname "$0")/lib.sh"
require_cmd openssl python3 curl
in_private_ns -n "$@"
kill_at_exit
SERVER="$TOP/tests/integration/https-server.py"
nr() { "$NODE_RESET" "$@"; }

# --- PKI: the cluster's CA, a CA the "system" trusts, servers and a node client ------------------
pki=$WORK/pki
mkdir -p "$pki"
. "$TOP/tests/integration/fixtures/pki.sh"
server_ext="subjectAltName=IP:127.0.0.1,IP:10.88.0.21,IP:10.88.0.22,DNS:localhost
extendedKeyUsage=serverAuth"
mkca ca kubernetes && mkca sysca public-ca &&
mkleaf apiserver ca "/CN=kube-apiserver" "$server_ext" &&
mkleaf public sysca "/CN=public" "$server_ext" &&
mkleaf worker1 ca "/O=system:nodes/CN=system:node:worker-1" "extendedKeyUsage=clientAuth" ||
        { echo "FAIL: cannot make the test PKI with openssl"; exit 1; }

# OpenSSL as it was before TLS 1.2 became the floor: for the TLS 1.1 server, curl(1) and node-reset.
cat > "$WORK/legacy.cnf" << 'EOF'
openssl_conf = openssl_init
[openssl_init]
ssl_conf = ssl_sect
[ssl_sect]
system_default = system_default_sect
[system_default_sect]
MinProtocol = TLSv1
CipherString = DEFAULT@SECLEVEL=0
EOF
legacy() { OPENSSL_CONF=$WORK/legacy.cnf "$@"; }
# s_server NETNS-PREFIX ADDR:PORT CERT-NAME ARGS...: openssl s_server answering each request with its
# session (-www), until the test ends.
s_server() {
        local run=$1 at=$2 name=$3
        shift 3
        $run openssl s_server -accept "$at" -cert "$pki/$name.crt" -key "$pki/$name.key" -www -quiet "$@" \
                > /dev/null 2>&1 &
        PIDS+=($!)
        for _ in $(seq 100); do (exec 3<> "/dev/tcp/${at%:*}/${at##*:}") 2> /dev/null && return 0; sleep 0.05; done
        return 1
}

lan_up || { echo "FAIL: cannot make the second network namespace"; exit 1; }
legacy s_server "" 127.0.0.1:8443 apiserver -tls1_1 || { echo "FAIL: openssl s_server -tls1_1 does not start"; exit 1; }
legacy s_server "$LAN" 10.88.0.21:2379 apiserver -tls1_1 || { echo "FAIL: the TLS 1.1 etcd stand-in does not start"; exit 1; }
s_server "$LAN" 10.88.0.22:2379 public || { echo "FAIL: the etcd stand-in does not start"; exit 1; }
python3 "$SERVER" serve 6443 "$pki/public.crt" "$pki/public.key" "$pki/ca.crt" "$WORK" worker-1 2> "$WORK/server.log" &
PIDS+=($!)
for _ in $(seq 100); do [ -e "$WORK/ready-6443" ] && break; sleep 0.1; done
[ -e "$WORK/ready-6443" ] || { echo "FAIL: the API server stand-in did not start"; cat "$WORK/server.log"; exit 1; }

# The control: a client with no floor of its own gets TLS 1.1 from these servers on this machine.
legacy curl -sS --cacert "$pki/ca.crt" https://127.0.0.1:8443/ > "$WORK/control.html" 2> "$WORK/control.err" ||
        skip "TLS 1.1 cannot be served here even with MinProtocol TLSv1 and SECLEVEL 0 ($(cat "$WORK/control.err")): curl_tls_options() is covered by tests/unit/test-http.c"
assert "control: curl(1) without a floor completes a TLS 1.1 handshake with the server" \
        grep -q "Protocol *: TLSv1.1" "$WORK/control.html"
assert "control: curl(1) with --tlsv1.2 is refused by the same server" \
        sh -c '! OPENSSL_CONF="$1" curl -sS --tlsv1.2 --cacert "$2" https://127.0.0.1:8443/ -o /dev/null 2> /dev/null' \
        sh "$WORK/legacy.cnf" "$pki/ca.crt"
TLS_REFUSED="protocol version|unsupported protocol|wrong version number"

# --- orphan-check: the API client's request -----------------------------------------------------
kc_root() { # ROOT SERVER CA-NAME: a node tree whose kubelet.conf names SERVER, trusting CA-NAME
        mkdir -p "$1/etc/kubernetes"
        kubeconfig_pem "$2" worker1 "$3" > "$1/etc/kubernetes/kubelet.conf"
}
kc_root "$WORK/oc1" https://127.0.0.1:8443 ca
legacy nr --root "$WORK/oc1" --output=json orphan-check > "$WORK/oc1.json" 2> "$WORK/oc1.err"; rc=$?
assert "orphan-check, TLS 1.1 server: refused in the handshake (curl error 35), unreachable" jq_ "$WORK/oc1.json" \
        "r['class'] == 'unreachable' and r['curl_code'] == 35 and r['http_status'] is None"
assert "orphan-check, TLS 1.1 server: the error says the version" jq_ "$WORK/oc1.json" \
        "any(t in r['curl_error'] for t in '$TLS_REFUSED'.split('|'))"

# The system's store trusts sysca, which signed the server; the kubeconfig's CA is another.
mkdir -p "$WORK/certs"
cp "$pki/sysca.crt" "$WORK/certs/ca-certificates.crt"
cp "$pki/sysca.crt" "$WORK/certs/sysca.pem"
openssl rehash "$WORK/certs" 2> /dev/null || { echo "FAIL: openssl rehash"; exit 1; }
mount --bind "$WORK/certs" /etc/ssl/certs || { echo "FAIL: cannot stand in for /etc/ssl/certs"; exit 1; }
assert "control: the system's store (here) trusts the server" \
        curl -sS -o /dev/null --cert "$pki/worker1.crt" --key "$pki/worker1.key" https://127.0.0.1:6443/api/v1/nodes/worker-1
kc_root "$WORK/oc2" https://127.0.0.1:6443 ca
nr --root "$WORK/oc2" --output=json orphan-check > "$WORK/oc2.json" 2> "$WORK/oc2.err"
assert "orphan-check, a CA given: the system's store is not trusted beside it (curl error 60, ca-mismatch)" \
        jq_ "$WORK/oc2.json" "r['class'] == 'ca-mismatch' and r['curl_code'] == 60 and 'certificate problem' in r['curl_error']"
kc_root "$WORK/oc3" https://127.0.0.1:6443 sysca
nr --root "$WORK/oc3" --output=json orphan-check > "$WORK/oc3.json" 2> "$WORK/oc3.err"
assert "orphan-check, the right CA given: the node is healthy" \
        jq_ "$WORK/oc3.json" "r['class'] == 'healthy' and r['http_status'] == 200"

# --- --report-url -------------------------------------------------------------------------------
rr=$WORK/reset
mkdir -p "$rr/etc/kubernetes"
printf 'remove /etc/kubernetes/x\n' > "$WORK/m.conf"
legacy nr --root "$rr" --manifest "$WORK/m.conf" --phases files --yes --output=json \
        --report-url https://127.0.0.1:8443/status --report-cacert "$pki/ca.crt" run > "$WORK/ru.json" 2> "$WORK/ru.err"
assert "--report-url, TLS 1.1 server: both POSTs refused in the handshake" jq_ "$WORK/ru.json" \
        "all(not r['report_url'][p]['ok'] and any(t in r['report_url'][p]['error'] for t in '$TLS_REFUSED'.split('|')) for p in ('start', 'final'))"
nr --root "$rr" --manifest "$WORK/m.conf" --phases files --yes --output=json \
        --report-url https://127.0.0.1:6443/status --report-cacert "$pki/ca.crt" run > "$WORK/ru2.json" 2> "$WORK/ru2.err"
assert "--report-url, --report-cacert given: the system's store is not trusted beside it" jq_ "$WORK/ru2.json" \
        "all(not r['report_url'][p]['ok'] and 'certificate problem' in r['report_url'][p]['error'] for p in ('start', 'final'))"

# --- the etcd client (gRPC): kubeadm's static pod names a member on another machine ---------------
etcd_root() { # ROOT IP CA-NAME
        local pki_dir="$1/etc/kubernetes/pki/etcd"
        mkdir -p "$1/etc/kubernetes/manifests" "$pki_dir" "$1/var/lib/etcd/member"
        cp "$pki/$3.crt" "$pki_dir/ca.crt"
        cp "$pki/worker1.crt" "$pki_dir/healthcheck-client.crt"
        cp "$pki/worker1.key" "$pki_dir/healthcheck-client.key"
        cat > "$1/etc/kubernetes/manifests/etcd.yaml" << EOF
apiVersion: v1
kind: Pod
metadata: {name: etcd, namespace: kube-system}
spec:
  containers:
  - name: etcd
    command:
    - etcd
    - --name=m1
    - --data-dir=/var/lib/etcd
    - --advertise-client-urls=https://$2:2379
    - --listen-client-urls=https://$2:2379
    - --initial-advertise-peer-urls=https://$2:2380
    - --initial-cluster=m1=https://$2:2380
    - --cert-file=/etc/kubernetes/pki/etcd/server.crt
    - --key-file=/etc/kubernetes/pki/etcd/server.key
    - --trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt
EOF
}
expect_member() { # description report expr: on failure, what the etcd-member rows said
        if jq_ "$2" "$3"; then ok "$1"; else fail "$1"; "$REPORT" "$2" "[a['detail'] for a in actions(r, kind='etcd-member')]"; fi
}
etcd_root "$WORK/e1" 10.88.0.21 ca
legacy nr --root "$WORK/e1" --phases etcd --etcd-timeout 3 -o json plan > "$WORK/e1.json" 2> "$WORK/e1.err"
expect_member "etcd, TLS 1.1 member: refused in the handshake" "$WORK/e1.json" \
        "any(t in (a['detail'] or '') for t in '$TLS_REFUSED'.split('|') for a in actions(r, kind='etcd-member'))"
etcd_root "$WORK/e2" 10.88.0.22 ca
nr --root "$WORK/e2" --phases etcd --etcd-timeout 3 -o json plan > "$WORK/e2.json" 2> "$WORK/e2.err"
expect_member "etcd, its own CA given: the system's store is not trusted beside it" "$WORK/e2.json" \
        "any('TLS: SSL certificate problem' in (a['detail'] or '') for a in actions(r, kind='etcd-member'))"
umount /etc/ssl/certs
finish
