#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# orphan-check and --report-url over real TLS on loopback, in private mount and network namespaces:
# CAs and certificates made with the openssl CLI, a python3 ssl server answering as an API server
# (200, 404, 401, 403, 500), one with a certificate from another CA, a closed port, a black-holed
# connect and an unresolvable name; every class, kubeconfigs with file paths (relative, and an
# absolute symlink that must resolve beneath --root) and with -data fields, the persistence rule
# across runs (the fake clock is the state file's timestamps), malformed kubeconfigs; the start and
# final POSTs of a run with headers from a file, retries, and a status store that is down.
. "$(dirname "$0")/lib.sh"
require_cmd openssl python3 unshare
in_private_ns -n "$@"
REPORT="$TOP/tests/integration/report.py"
SERVER="$TOP/tests/integration/https-server.py"

nr() { "$NODE_RESET" "$@"; }
jq_() { "$REPORT" "$@" >/dev/null; }   # jq_ FILE EXPR: true when EXPR holds
rec() { python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$1"; }

# --- PKI: the cluster's CA, a rebuilt master's CA, servers and node clients ----------------------
pki=$WORK/pki
mkdir -p "$pki"
. "$TOP/tests/integration/fixtures/pki.sh"
server_ext="subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:apiserver.invalid
extendedKeyUsage=serverAuth"
client_ext="extendedKeyUsage=clientAuth"
mkca ca kubernetes && mkca ca2 kubernetes &&
mkleaf apiserver ca "/CN=kube-apiserver" "$server_ext" &&
mkleaf apiserver2 ca2 "/CN=kube-apiserver" "$server_ext" &&
mkleaf worker1 ca "/O=system:nodes/CN=system:node:worker-1" "$client_ext" &&
mkleaf gone1 ca "/O=system:nodes/CN=system:node:gone-1" "$client_ext" ||
        { echo "FAIL: cannot make the test PKI with openssl"; exit 1; }

# --- Servers, all on 127.0.0.1 in this private network namespace --------------------------------
# 6443 the cluster's API server and status store; 6444 a rebuilt master (another CA); 6445 closed;
# 6446 black-holed (a full accept queue drops the SYN).
records=$WORK/records records2=$WORK/records2
mkdir -p "$records" "$records2"
servers=()
python3 "$SERVER" serve 6443 "$pki/apiserver.crt" "$pki/apiserver.key" "$pki/ca.crt" "$records" worker-1 \
        2> "$WORK/server.log" &
servers+=($!)
python3 "$SERVER" serve 6444 "$pki/apiserver2.crt" "$pki/apiserver2.key" "$pki/ca2.crt" "$records2" worker-1 \
        2> "$WORK/server2.log" &
servers+=($!)
python3 "$SERVER" blackhole 6446 "$records" 2> "$WORK/blackhole.log" &
servers+=($!)
trap 'kill "${servers[@]}" 2>/dev/null; wait; cd /; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT
for _ in $(seq 100); do
        [ -e "$records/ready-6443" ] && [ -e "$records2/ready-6444" ] && [ -e "$records/ready-6446" ] && break
        sleep 0.1
done
[ -e "$records/ready-6443" ] && [ -e "$records2/ready-6444" ] && [ -e "$records/ready-6446" ] ||
        { echo "FAIL: the test servers did not start"; cat "$WORK"/*.log; exit 1; }

# --- Node trees -----------------------------------------------------------------------------------
# kubeadm's layout: the CA beside the kubeconfig (named relatively here), the client certificate and
# key in one PEM behind an absolute symlink — which must resolve beneath --root, not on the host.
make_node() { # root
        mkdir -p "$1/etc/kubernetes/pki" "$1/var/lib/kubelet/pki"
        cp "$pki/ca.crt" "$1/etc/kubernetes/pki/ca.crt"
        cat "$pki/worker1.crt" "$pki/worker1.key" > "$1/var/lib/kubelet/pki/kubelet-client-2026-01-01-00-00-00.pem"
        ln -sfn /var/lib/kubelet/pki/kubelet-client-2026-01-01-00-00-00.pem "$1/var/lib/kubelet/pki/kubelet-client-current.pem"
}
b64() { base64 -w0 "$1"; }
kubeconfig_data() { # server client-name [ca-file]
        cat <<-EOF
	apiVersion: v1
	kind: Config
	current-context: default
	contexts:
	- name: other
	  context: {cluster: other, user: other}
	- name: default
	  context: {cluster: local, user: node}
	clusters:
	- name: other
	  cluster: {server: "https://127.0.0.1:1"}
	- name: local
	  cluster:
	    server: $1
	    certificate-authority-data: $(b64 "${3:-$pki/ca.crt}")
	users:
	- name: other
	  user: {}
	- name: node
	  user:
	    client-certificate-data: $(b64 "$pki/$2.crt")
	    client-key-data: $(b64 "$pki/$2.key")
	EOF
}
kubeconfig_anonymous() { # server
        printf 'apiVersion: v1\nclusters:\n- name: c\n  cluster:\n    server: %s\n    certificate-authority-data: %s\n' \
                "$1" "$(b64 "$pki/ca.crt")"
        printf 'contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\nusers:\n- name: u\n  user: {}\n'
}
n=0
new_root() { # kubeconfig text on stdin (not from a pipe: \$root is set here)
        n=$((n + 1)); root=$WORK/node$n
        make_node "$root"
        cat > "$root/etc/kubernetes/kubelet.conf"
}
oc() { # root args...: orphan-check in JSON into $WORK/oc.json, stderr into $WORK/oc.err, rc in $rc
        local r=$1; shift
        nr --root "$r" --output=json "$@" orphan-check > "$WORK/oc.json" 2> "$WORK/oc.err"; rc=$?
}
expect_class() { # description class rc
        assert "$1: class $2" jq_ "$WORK/oc.json" "r['class'] == '$2'"
        assert "$1: exit $3" test "$rc" -eq "$3"
        assert "$1: the JSON matches docs/report.schema.json" schema_valid "$WORK/oc.json"
}
state_of() { echo "$1/var/lib/node-reset/orphan.state"; }

# --- Each class -----------------------------------------------------------------------------------
new_root < <(kubeconfig_files https://127.0.0.1:6443)
oc "$root"
expect_class "file paths (relative CA, absolute symlink to the client PEM)" healthy 1
assert "healthy: HTTP 200 is the evidence" jq_ "$WORK/oc.json" 'r["http_status"] == 200 and r["curl_code"] == 0'
assert "healthy: node name from the client certificate" jq_ "$WORK/oc.json" 'r["node"] == "worker-1" and r["node_source"] == "client certificate"'
assert "healthy: no state file" test ! -e "$(state_of "$root")"
nr --root "$root" orphan-check > "$WORK/oc.txt" 2>&1
assert "text output names the class and the server" grep -q "orphan-check: healthy, not orphaned" "$WORK/oc.txt"
assert "text output shows the evidence" grep -q "evidence    HTTP 200" "$WORK/oc.txt"

new_root < <(kubeconfig_data https://127.0.0.1:6443/ worker1)
rm -rf "$root/etc/kubernetes/pki" "$root/var/lib/kubelet/pki"
oc "$root"
expect_class "-data fields, second context of two, server with a trailing slash" healthy 1

new_root < <(kubeconfig_data https://127.0.0.1:6443 gone1)
oc "$root"
expect_class "a node the API server does not know" node-missing 1
assert "node-missing: HTTP 404" jq_ "$WORK/oc.json" 'r["http_status"] == 404 and r["node"] == "gone-1"'
assert "node-missing: a first sighting is recorded" grep -q "^class=node-missing" "$(state_of "$root")"
assert "node-missing: not orphaned yet" jq_ "$WORK/oc.json" 'not r["orphaned"] and r["verdict"] == "not orphaned yet"'

# No client certificate: the node's name is the tree's host name (its /etc/hostname), never the
# name of the machine the test runs on; without one it is unknown and orphan-check cannot decide.
new_root < <(kubeconfig_anonymous https://127.0.0.1:6443)
oc "$root"
assert "no client certificate, no /etc/hostname in the tree: cannot decide (255)" test "$rc" -eq 255
assert "... the node name is unknown, said" grep -q "node name unknown" "$WORK/oc.err"
echo Worker-1 > "$root/etc/hostname"
oc "$root"
expect_class "no client certificate" unauthorized 1
assert "unauthorized: HTTP 401, node name from the tree's /etc/hostname" jq_ "$WORK/oc.json" \
        'r["http_status"] == 401 and r["node"] == "worker-1" and r["node_source"] == "tree'"'"'s /etc/hostname" and r["hostname"] == "worker-1"'

new_root < <(kubeconfig_files https://127.0.0.1:6443)
oc "$root" --node-name worker-2
expect_class "--node-name another node's name" unauthorized 1
assert "unauthorized: HTTP 403, node name from --node-name" jq_ "$WORK/oc.json" 'r["http_status"] == 403 and r["node_source"] == "--node-name"'

new_root < <(kubeconfig_files https://127.0.0.1:6444)
oc "$root"
expect_class "a master rebuilt with another CA" ca-mismatch 1
assert "ca-mismatch: curl's verification error is the evidence" jq_ "$WORK/oc.json" 'r["curl_code"] == 60 and "certificate" in r["curl_error"] and r["http_status"] is None'

new_root < <(kubeconfig_files https://127.0.0.1:6445)
oc "$root"
expect_class "a closed port" unreachable 1
assert "unreachable: curl error 7" jq_ "$WORK/oc.json" 'r["curl_code"] == 7'

new_root < <(kubeconfig_files https://127.0.0.1:6446)
t0=$(date +%s.%N)
oc "$root" --probe-timeout 2s
t1=$(date +%s.%N)
expect_class "a black-holed connect" unreachable 1
assert "black hole: a timeout (curl error 28)" jq_ "$WORK/oc.json" 'r["curl_code"] == 28'
assert "black hole: bounded by --probe-timeout" python3 -c "import sys; sys.exit(0 if $t1 - $t0 < 6 else 1)"

printf 'nameserver 127.0.0.1\n' > "$WORK/resolv.conf"
printf 'hosts: files dns\n' > "$WORK/nsswitch.conf"
if mount --bind "$WORK/resolv.conf" /etc/resolv.conf 2>/dev/null && mount --bind "$WORK/nsswitch.conf" /etc/nsswitch.conf 2>/dev/null; then
        new_root < <(kubeconfig_files https://apiserver.invalid:6443)
        oc "$root"
        expect_class "a name that does not resolve" unreachable 1
        assert "DNS failure: curl error 6" jq_ "$WORK/oc.json" 'r["curl_code"] == 6'
else
        echo "SKIP (DNS case): cannot bind-mount over /etc/resolv.conf in the private namespace"
fi

new_root < <(kubeconfig_files https://127.0.0.1:6443)
oc "$root" --node-name broken
expect_class "an API server answering 500" api-error 1

root=$WORK/empty
mkdir -p "$root"
oc "$root"
expect_class "no kubeconfig" not-a-node 1

# --- An older libcurl, each fallback forced: the same verdicts through the real library ----------
# 7.81 (Ubuntu 22.04): CURLOPT_PROTOCOLS instead of _STR; 7.76 (RHEL 9): the CA in a memfd; 7.70:
# the client certificate and key in memfds too. ca-mismatch proves the memfd CA is the one used.
for v in 0x075100 0x074c00 0x074600; do
        new_root < <(kubeconfig_files https://127.0.0.1:6443)
        NODE_RESET_TEST_CURL_VERSION_NUM=$v NODE_RESET_LOG_LEVEL=debug oc "$root"
        expect_class "libcurl $v: file paths" healthy 1
        assert "libcurl $v: the CURLOPT_PROTOCOLS bitmask is used" grep -q "without CURLOPT_PROTOCOLS_STR" "$WORK/oc.err"
        assert "libcurl $v: HTTP 200 through the client certificate" jq_ "$WORK/oc.json" 'r["http_status"] == 200 and r["node"] == "worker-1"'
        new_root < <(kubeconfig_data https://127.0.0.1:6443 gone1)
        NODE_RESET_TEST_CURL_VERSION_NUM=$v oc "$root"
        expect_class "libcurl $v: -data fields" node-missing 1
        new_root < <(kubeconfig_files https://127.0.0.1:6444)
        NODE_RESET_TEST_CURL_VERSION_NUM=$v NODE_RESET_LOG_LEVEL=debug oc "$root"
        expect_class "libcurl $v: another CA is still refused" ca-mismatch 1
done
assert "libcurl 0x074600: the CA and the client PEM went as memfd files" \
        grep -q "without CURLOPT_CAINFO_BLOB CURLOPT_SSLCERT_BLOB: PEM material passed as memfd files" "$WORK/oc.err"

# --- Errors: exit 255 with the file named ---------------------------------------------------------
new_root < <(printf 'apiVersion: v1\nclusters:\n- cluster:\n    server: [https://x\n  name: a\n')
oc "$root"
assert "malformed YAML: exit 255" test "$rc" -eq 255
assert "malformed YAML: the error names the file and the line" grep -q "/etc/kubernetes/kubelet.conf: malformed YAML at line [0-9]" "$WORK/oc.err"
assert "malformed YAML: JSON still says why" jq_ "$WORK/oc.json" 'r["error"] and r["exit_status"] == 255 and r["class"] is None'

new_root < <(kubeconfig_files https://127.0.0.1:6443 | sed 's/current-context: .*/current-context: nowhere/')
oc "$root"
assert "unknown current-context: exit 255" test "$rc" -eq 255
assert "unknown current-context: named" grep -q 'context "nowhere" not found' "$WORK/oc.err"

new_root < <(kubeconfig_files https://127.0.0.1:6443)
rm "$root/var/lib/kubelet/pki/kubelet-client-2026-01-01-00-00-00.pem"
oc "$root"
assert "dangling client certificate: exit 255" test "$rc" -eq 255
assert "dangling client certificate: the path is named" grep -q "kubelet-client-current.pem" "$WORK/oc.err"

new_root < <(kubeconfig_data https://127.0.0.1:6443 worker1 "$pki/worker1.ext")
oc "$root"
assert "CA data that is no certificate: exit 255, not evidence" test "$rc" -eq 255 -a ! -e "$(state_of "$root")"

nr --root "$root" --for 5 orphan-check bogus > /dev/null 2>&1; rc=$?
assert "orphan-check with an argument: exit 255" test "$rc" -eq 255
nr --root "$root" --for 5x orphan-check > /dev/null 2>&1; rc=$?
assert "orphan-check with a bad --for: exit 255 (ExecCondition= must not skip quietly)" test "$rc" -eq 255

# --- The persistence rule across runs (the fake clock is the state file) ---------------------------
new_root < <(kubeconfig_files https://127.0.0.1:6444)
pr=$root st=$(state_of "$root")
now=$(date +%s)
oc "$pr"
assert "first sighting: not orphaned (exit 1)" test "$rc" -eq 1
assert "first sighting: recorded now" python3 -c "
import sys; d = dict(l.split('=', 1) for l in open('$st').read().split('\n') if '=' in l)
sys.exit(0 if abs(int(d['first_seen']) - $now) < 60 and d['class'] == 'ca-mismatch' else 1)"
assert "state file is written atomically (no temporary left)" test "$(ls -A "$pr/var/lib/node-reset")" = orphan.state

write_state() { printf 'first_seen=%s\nlast_seen=%s\nclass=%s\n' "$1" "$2" "${3:-unreachable}" > "$st"; }
now=$(date +%s)
write_state $((now - 7200)) $((now - 300))
oc "$pr"
assert "non-healthy for 2h, seen 5 min ago: orphaned (exit 0)" test "$rc" -eq 0
assert "orphaned: the report says so with its evidence" jq_ "$WORK/oc.json" 'r["orphaned"] and r["persisted_sec"] >= 7200 and r["class"] == "ca-mismatch"'
oc "$pr"
assert "still orphaned on the next check" test "$rc" -eq 0
nr --root "$pr" orphan-check > "$WORK/oc.txt" 2>&1
assert "text: the verdict and the duration" grep -q "ca-mismatch, orphaned" "$WORK/oc.txt"

write_state $((now - 7200)) $((now - 3600))
oc "$pr"
assert "a gap longer than --for in the checks: start over (exit 1)" test "$rc" -eq 1
assert "start over: first_seen is now" jq_ "$WORK/oc.json" 'r["persisted_sec"] < 60'

write_state $((now - 100)) $((now - 30))
oc "$pr" --for 90s
assert "--for 90s after 100 s: orphaned" test "$rc" -eq 0
oc "$pr" --for 2h
assert "--for 2h after 100 s: not orphaned" test "$rc" -eq 1
write_state $((now - 2 * 86400)) $((now - 3600))
oc "$pr" --for 1d
assert "--for 1d after 2 days, checked hourly: orphaned" test "$rc" -eq 0

write_state $((now + 3600)) $((now + 3600))
oc "$pr"
assert "a sighting in the future (clock set back): not orphaned" test "$rc" -eq 1
assert "a sighting in the future: start over at now" jq_ "$WORK/oc.json" 'r["persisted_sec"] == 0'

printf 'first_seen=yesterday\n' > "$st"
oc "$pr"
assert "malformed state: not orphaned, a warning" test "$rc" -eq 1
assert "malformed state: the warning names it" grep -q "orphan.state is malformed" "$WORK/oc.err"

write_state $((now - 7200)) $((now - 300))
kubeconfig_files https://127.0.0.1:6443 > "$pr/etc/kubernetes/kubelet.conf"
oc "$pr"
assert "healthy again: not orphaned, state cleared" test "$rc" -eq 1 -a ! -e "$st"

write_state $((now - 7200)) $((now - 300))
oc "$pr" --node-name broken
assert "api-error: our control plane answered, state cleared" test "$rc" -eq 1 -a ! -e "$st"

write_state $((now - 7200)) $((now - 300))
rm "$pr/etc/kubernetes/kubelet.conf"
oc "$pr"
assert "not-a-node: never orphaned, state cleared" test "$rc" -eq 1 -a ! -e "$st"

# --- --report-url: the start and final POSTs ----------------------------------------------------
make_reset_root() { # root
        rm -rf "$1"
        mkdir -p "$1/etc/kubernetes/manifests" "$1/run"
        echo "apiVersion: v1" > "$1/etc/kubernetes/admin.conf"
}
printf 'remove /etc/kubernetes\n' > "$WORK/m.conf"
printf '# status store credentials\nAuthorization: Bearer s3cr3t-t0ken\n\nX-Cluster-Id: c-123\n' > "$WORK/headers"
chmod 0600 "$WORK/headers"
rr=$WORK/reset
url=https://127.0.0.1:6443/clusters/c-123/nodes/worker-1?token=q
run_reset() { # extra args...
        nr --root "$rr" --manifest "$WORK/m.conf" --phases files,verify --yes "$@" run
}
count_records() { ls "$records"/*.json 2>/dev/null | wc -l; }

make_reset_root "$rr"
rm -f "$records"/*.json
run_reset --output=json --report-url "$url" --report-header-file "$WORK/headers" --report-header "X-Extra: 1" \
        --report-cacert "$pki/ca.crt" > "$WORK/run.json" 2> "$WORK/run.err"; rc=$?
assert "run with --report-url: exit 0" test "$rc" -eq 0
assert "run with --report-url: the node was reset" test ! -e "$rr/etc/kubernetes"
assert "two POSTs arrived" test "$(count_records)" -eq 2
rec "$records/000.json" > "$WORK/post0.json"; rec "$records/001.json" > "$WORK/post1.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); json.dump(json.loads(r["body"]), open(sys.argv[2], "w"))' \
        "$WORK/post0.json" "$WORK/body0.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); json.dump(json.loads(r["body"]), open(sys.argv[2], "w"))' \
        "$WORK/post1.json" "$WORK/body1.json"
assert "start body: status deleting, report null, host name unknown (the tree has no /etc/hostname)" jq_ "$WORK/body0.json" 'r["status"] == "deleting" and r["report"] is None and r["hostname"] is None and r["time"].endswith("Z") and sorted(r) == ["hostname", "report", "status", "time"]'
assert "final body: status deleted, the run's report" jq_ "$WORK/body1.json" 'r["status"] == "deleted" and r["report"]["command"] == "run" and r["report"]["exit_status"] == 0 and not r["report"]["failed"]'
assert "final body: the report has the start's outcome, not its own" jq_ "$WORK/body1.json" 'r["report"]["report_url"]["start"]["ok"] and r["report"]["report_url"]["final"] is None'
assert "final body: the URL in the report has no query (it may hold a secret)" jq_ "$WORK/body1.json" '"token" not in r["report"]["report_url"]["url"] and r["report"]["report_url"]["url"].startswith("https://127.0.0.1:6443/clusters/")'
assert "POSTs went to the URL as given, query included" jq_ "$WORK/post1.json" 'r["path"] == "/clusters/c-123/nodes/worker-1?token=q"'
for i in 0 1; do
        assert "POST $i: the headers from the file and the command line" jq_ "$WORK/post$i.json" 'r["headers"]["Authorization"] == "Bearer s3cr3t-t0ken" and r["headers"]["X-Cluster-Id"] == "c-123" and r["headers"]["X-Extra"] == "1" and r["headers"]["Content-Type"] == "application/json"'
done
assert "stdout's report has both outcomes" jq_ "$WORK/run.json" 'r["report_url"]["start"]["ok"] and r["report_url"]["final"]["ok"] and r["report_url"]["final"]["http_status"] == 200 and r["report_url"]["final"]["attempts"] == 1'
assert "the token is in no output" test -z "$(grep -l s3cr3t "$WORK/run.json" "$WORK/run.err")"

# A run that fails: a foreign mount inside the removed tree. The final status says so.
make_reset_root "$rr"
mkdir -p "$rr/etc/kubernetes/foreign"
mount -t tmpfs nr-foreign "$rr/etc/kubernetes/foreign"
rm -f "$records"/*.json
run_reset --output=json --report-url "$url" --report-cacert "$pki/ca.crt" > "$WORK/run.json" 2> "$WORK/run.err"; rc=$?
umount "$rr/etc/kubernetes/foreign"
assert "a failed run: exit 1" test "$rc" -eq 1
rec "$records/001.json" > "$WORK/post1.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); json.dump(json.loads(r["body"]), open(sys.argv[2], "w"))' \
        "$WORK/post1.json" "$WORK/body1.json"
assert "a failed run: final status failed, with the report" jq_ "$WORK/body1.json" 'r["status"] == "failed" and r["report"]["failed"] and r["report"]["exit_status"] == 1'

# Retries: the first attempt gets 503.
make_reset_root "$rr"
run_reset --output=json --report-url https://127.0.0.1:6443/flaky --report-cacert "$pki/ca.crt" > "$WORK/run.json" 2>/dev/null
assert "a 503 is retried: ok after 2 attempts" jq_ "$WORK/run.json" 'r["report_url"]["start"]["ok"] and r["report_url"]["start"]["attempts"] == 2'

# The status store is down: the reset still succeeds, and the report says the POSTs failed.
make_reset_root "$rr"
t0=$(date +%s.%N)
run_reset --output=json --report-url https://127.0.0.1:6445/status > "$WORK/run.json" 2> "$WORK/run.err"; rc=$?
t1=$(date +%s.%N)
assert "status store down: the run still exits 0" test "$rc" -eq 0
assert "status store down: the node was still reset" test ! -e "$rr/etc/kubernetes"
assert "status store down: the report says both POSTs failed after 3 attempts" jq_ "$WORK/run.json" 'not r["report_url"]["start"]["ok"] and r["report_url"]["start"]["attempts"] == 3 and "curl error 7" in r["report_url"]["start"]["error"] and not r["report_url"]["final"]["ok"]'
assert "status store down: the failures are logged" test "$(grep -c "Failed to POST the" "$WORK/run.err")" -eq 2
assert "status store down: bounded backoff (2 x 0.5 s + 1 s)" python3 -c "import sys; sys.exit(0 if 2.5 < $t1 - $t0 < 15 else 1)"
make_reset_root "$rr"
run_reset --report-url https://127.0.0.1:6445/status > "$WORK/run.txt" 2>/dev/null; rc=$?
assert "status store down, text output: exit 0 and a line saying so" \
        grep -q "report-url https://127.0.0.1:6445/status: start failed after 3 attempts: curl error 7" "$WORK/run.txt"

# Another CA: not retried, reported.
make_reset_root "$rr"
run_reset --output=json --report-url https://127.0.0.1:6443/x --report-cacert "$pki/ca2.crt" > "$WORK/run.json" 2>/dev/null; rc=$?
assert "a status store with an untrusted certificate: exit 0, failed once, not retried" jq_ "$WORK/run.json" 'r["exit_status"] == 0 and not r["report_url"]["start"]["ok"] and r["report_url"]["start"]["attempts"] == 1 and "curl error 60" in r["report_url"]["start"]["error"]'

# Bad options refuse before anything changes.
make_reset_root "$rr"
run_reset --report-url "$url" --report-header-file "$WORK/nonexistent" > /dev/null 2> "$WORK/run.err"; rc=$?
assert "a missing --report-header-file: exit 2, nothing changed" test "$rc" -eq 2 -a -e "$rr/etc/kubernetes/admin.conf"
printf 'X-Ok: 1\nAuthorization Bearer s3cr3t-t0ken\n' > "$WORK/bad-headers"
run_reset --report-url "$url" --report-header-file "$WORK/bad-headers" > /dev/null 2> "$WORK/run.err"; rc=$?
assert "a malformed header line: exit 2, FILE:LINE named" test "$rc" -eq 2 -a "$(grep -c "bad-headers:2: not a 'Name: value' header" "$WORK/run.err")" -eq 1
assert "a malformed header line is not echoed (it may hold a token)" test -z "$(grep s3cr3t "$WORK/run.err")"
run_reset --report-header "X-A: 1" > /dev/null 2>&1; rc=$?
assert "--report-header without --report-url: exit 2" test "$rc" -eq 2
assert "the refusals changed nothing" test -e "$rr/etc/kubernetes/admin.conf"

finish
