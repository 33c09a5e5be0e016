# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Scenario "external-etcd" of make e2e-k8s: a control plane whose kubeadm ClusterConfiguration names
# etcd.external, pointing at an etcd the node runs as the site's own systemd unit (issue 31, fault 1:
# kubeadm#3225, kubernetes#133437). Sourced by tests/e2e-k8s/run.sh after cluster.sh; boots its own
# node, xe1, and needs no other.
#
# kubeadm 1.20 with etcd.external writes no etcd static pod and, in preflight
# (cmd/kubeadm/app/preflight/checks.go, RunInitNodeChecks), checks neither ports 2379/2380 nor the
# data directory: only that caFile, certFile and keyFile exist (FileExistingCheck) and that each
# endpoint's /version, fetched with those client certificates, is >= MinExternalEtcdVersion
# (ExternalEtcdVersionCheck). So a node that passes it again after the reset has that etcd running,
# reachable and with its certificates.

XE=xe1
XE_PKI=/etc/etcd/pki
# Where kubeadm init reads its configuration: kubeadm-config.yaml in /etc/kubernetes (kubespray's path,
# the one issue 31 names) by default; E2E_K8S_XE_CONFIG=/root/kubeadm.yaml leaves nothing of it in
# /etc/kubernetes, so that only the site's etcd.service tells node-reset about that etcd.
XE_CONFIG=${E2E_K8S_XE_CONFIG:-/etc/kubernetes/kubeadm-config.yaml}

xe_ip() { echo "${ALL_NODE_IP[$XE]}"; }
xe_root() { echo "$W/nodes/$XE/root"; }

# The site's etcd certificates, made with openssl outside any Kubernetes directory: a CA, a server
# certificate (also the peer one, a single member), and the client certificate kube-apiserver and the
# operator's etcdctl use.
xe_certs() { # DIR IP
        local d=$1 ip=$2 n
        mkdir -p "$d" && chmod 0700 "$d" || return 1
        openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=site-etcd-ca" \
                -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null || return 1
        printf 'subjectAltName=IP:127.0.0.1,IP:%s,DNS:localhost,DNS:%s\nextendedKeyUsage=serverAuth,clientAuth\n' \
                "$ip" "$XE" >"$d/server.ext"
        printf 'extendedKeyUsage=clientAuth\n' >"$d/client.ext"
        for n in server:server apiserver-etcd-client:client; do
                openssl req -newkey rsa:2048 -nodes -subj "/CN=${n%%:*}" -keyout "$d/${n%%:*}.key" \
                        -out "$d/${n%%:*}.csr" 2>/dev/null &&
                        openssl x509 -req -in "$d/${n%%:*}.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
                                -days 30 -extfile "$d/${n#*:}.ext" -out "$d/${n%%:*}.crt" 2>/dev/null || return 1
        done
        rm -f "$d"/*.csr "$d"/*.ext
        chmod 0600 "$d"/*.key
}

# etcd.service as a site writes it: Debian's /usr/bin/etcd (the host's, in the node's /usr), its data
# in /var/lib/etcd, TLS for clients and peers from the site's own directory.
xe_unit() { # IP
        cat <<-EOF
	[Unit]
	Description=etcd of the site (external to Kubernetes)
	After=network-online.target
	Wants=network-online.target

	[Service]
	Type=notify
	ExecStart=/usr/bin/etcd --name=$XE --data-dir=/var/lib/etcd \\
	  --listen-client-urls=https://127.0.0.1:2379,https://$1:2379 --advertise-client-urls=https://$1:2379 \\
	  --listen-peer-urls=https://$1:2380 --initial-advertise-peer-urls=https://$1:2380 \\
	  --initial-cluster=$XE=https://$1:2380 --initial-cluster-state=new \\
	  --cert-file=$XE_PKI/server.crt --key-file=$XE_PKI/server.key \\
	  --client-cert-auth --trusted-ca-file=$XE_PKI/ca.crt \\
	  --peer-cert-file=$XE_PKI/server.crt --peer-key-file=$XE_PKI/server.key \\
	  --peer-client-cert-auth --peer-trusted-ca-file=$XE_PKI/ca.crt
	Restart=on-failure
	LimitNOFILE=65536

	[Install]
	WantedBy=multi-user.target
	EOF
}

# cluster.sh's kubeadm configuration for this node, with etcd.external (block style, as an operator
# writes it) naming the site's etcd and certificates.
xe_kubeadm_config() {
        local ip
        ip=$(xe_ip)
        kubeadm_config | sed -e "s/$CP_IP/$ip/g" -e "s/name: cp1,/name: $XE,/" |
                awk -v ip="$ip" -v pki="$XE_PKI" '{ print }
                /^networking:/ {
                        print "etcd:"
                        print "  external:"
                        print "    endpoints:"
                        print "    - https://" ip ":2379"
                        print "    caFile: " pki "/ca.crt"
                        print "    certFile: " pki "/apiserver-etcd-client.crt"
                        print "    keyFile: " pki "/apiserver-etcd-client.key"
                }'
}

xe_etcdctl() {
        node_exec "$XE" etcdctl --endpoints="https://$(xe_ip):2379" --cacert="$XE_PKI/ca.crt" \
                --cert="$XE_PKI/apiserver-etcd-client.crt" --key="$XE_PKI/apiserver-etcd-client.key" \
                --command-timeout=10s "$@"
}

xe_member() { xe_etcdctl member list -w simple 2>/dev/null; } # "ID, started, NAME, PEER, CLIENT, LEARNER"
xe_registry_keys() { xe_etcdctl get /registry --prefix --keys-only 2>/dev/null | grep -c '^/registry/'; }
xe_pki_sums() { (cd "$(xe_root)$XE_PKI" && find . -type f | sort | xargs sha256sum); }
xe_member_data() { # the member's database and WAL are there, under /var/lib/etcd
        local d
        d=$(xe_root)/var/lib/etcd/member
        test -s "$d/snap/db" && ls "$d"/wal/*.wal >/dev/null 2>&1
}

# The site's own keys, besides what the API server writes.
XE_SITE_KEYS="/site/owner /site/dns/zone /site/token"
xe_site_put() { # TOKEN
        xe_etcdctl put /site/owner ops-team >/dev/null &&
                xe_etcdctl put /site/dns/zone example.internal >/dev/null &&
                xe_etcdctl put /site/token "$1" >/dev/null
}
xe_site_get() { # the site's keys as "key=value" on one line
        local k out=""
        for k in $XE_SITE_KEYS; do
                out+="$k=$(xe_etcdctl get "$k" --print-value-only 2>/dev/null) "
        done
        echo "$out"
}

# The rows of REPORT that say an etcd is external or out of scope, "phase result kind target: message".
xe_external_rows() { # REPORT
        json_field "$1" '"\n".join("%s %s %s %s: %s" % (a["phase"], a["result"], a["kind"], a["target"], a["message"] or a["detail"] or "")
                for p in r["phases"] for a in p["actions"]
                if any(w in " ".join(str(a[k] or "") for k in ("target", "detail", "message")).lower()
                        for w in ("external", "out of scope")))'
}

# Rows of REPORT that changed something of the site's etcd: its unit, its process, its data, its
# certificates.
xe_touched_rows() { # REPORT
        json_field "$1" '"\n".join("%s %s %s" % (a["result"], a["kind"], a["target"])
                for p in r["phases"] for a in p["actions"]
                if a["result"] in ("changed", "failed") and any(s in (a["target"] or "")
                        for s in ("/var/lib/etcd", "/etc/etcd", "etcd.service", "/usr/bin/etcd")))'
}

xe_setup() {
        local root ip
        root=$(xe_root)
        ip=$(xe_ip)
        xe_certs "$root$XE_PKI" "$ip" || { node_log "$XE: cannot make the etcd certificates"; return 1; }
        mkdir -p "$root/etc/kubernetes" && mkdir -m 0700 "$root/var/lib/etcd"
        xe_unit "$ip" >"$root/etc/systemd/system/etcd.service"
        ln -s /etc/systemd/system/etcd.service "$root/etc/systemd/system/multi-user.target.wants/etcd.service"
        mkdir -p "$root$(dirname "$XE_CONFIG")" && xe_kubeadm_config >"$root$XE_CONFIG"
        # the operator's copy, for preflight afterwards whatever happens to the one in /etc/kubernetes
        [ "$XE_CONFIG" = /root/kubeadm-external.yaml ] || cp "$root$XE_CONFIG" "$root/root/kubeadm-external.yaml"
}

xe_init() {
        local t0=$SECONDS
        node_exec "$XE" kubeadm init --config "$XE_CONFIG" --skip-phases=addon/coredns \
                ${E2E_K8S_IGNORE_PREFLIGHT:+--ignore-preflight-errors=$E2E_K8S_IGNORE_PREFLIGHT} \
                >"$OUT/kubeadm-init-$XE.log" 2>&1 || {
                tail -n 30 "$OUT/kubeadm-init-$XE.log"
                return 1
        }
        echo "e2e-k8s: kubeadm init on $XE in $((SECONDS - t0)) s"
}

xe_preflight() { # LOG
        node_exec "$XE" kubeadm init phase preflight --config /root/kubeadm-external.yaml \
                ${E2E_K8S_IGNORE_PREFLIGHT:+--ignore-preflight-errors=$E2E_K8S_IGNORE_PREFLIGHT} >"$1" 2>&1 ||
                { tail -n 15 "$1"; return 1; }
}

xe_state() { # the site's etcd as seen from the node, for the log
        echo "e2e-k8s: $XE: etcd.service $(node_exec "$XE" systemctl is-active etcd.service 2>&1)," \
                "$(node_exec "$XE" systemctl is-enabled etcd.service 2>&1); /var/lib/etcd:" \
                "$(node_exec "$XE" find /var/lib/etcd -maxdepth 2 2>&1 | tr '\n' ' ')"
}

scenario_external_etcd() {
        local t_s=$SECONDS member registry token pki pid rows
        echo "=== scenario: control plane with an external etcd the node runs as the site's own unit"
        node_create "$XE" "$(xe_ip)" && xe_setup && node_boot "$XE" ||
                { echo "FAIL: $XE boots"; failed=$((failed + 1)); return; }
        check "the site's etcd.service runs on $XE (Debian's /usr/bin/etcd, data in /var/lib/etcd, TLS from $XE_PKI)" \
                wait_for 60 "$XE etcd healthy" xe_etcdctl endpoint health || { xe_state; return; }
        check "kubeadm init on $XE with etcd.external (no etcd static pod)" xe_init || return
        check "... no etcd static pod was written" test ! -e "$(xe_root)/etc/kubernetes/manifests/etcd.yaml"
        registry=$(xe_registry_keys)
        check "the API server keeps the cluster in the site's etcd ($registry keys under /registry)" \
                test "${registry:-0}" -gt 0

        token=site-$RANDOM$RANDOM
        check "the site's own keys are written into its etcd" xe_site_put "$token"
        member=$(xe_member)
        pki=$(xe_pki_sums)
        pid=$(unit_prop "$XE" etcd.service MainPID)
        echo "e2e-k8s: $XE: etcd member before the reset: $member (MainPID $pid)"

        node_exec "$XE" node-reset plan >"$OUT/plan-$XE.txt" 2>&1
        echo "e2e-k8s: $XE: the plan's lines about an external etcd:"
        grep -i -E 'external|out of scope' "$OUT/plan-$XE.txt" | sed 's/^/e2e-k8s:   /'
        check "the plan (dry run) says that this etcd is external, out of scope" \
                grep -qi -E 'external|out of scope' "$OUT/plan-$XE.txt"

        reset_node "$XE" reset-$XE
        rows=$(xe_external_rows "$OUT/reset-$XE.json" 2>&1)
        echo "e2e-k8s: $XE: the report's rows about an external etcd:"
        echo "${rows:-(none)}" | sed 's/^/e2e-k8s:   /'
        # one row of the etcd phase says it; a profile row it refuses (kubeadm's "empty /var/lib/etcd")
        # may say why too, so long as it is skipped (the next check)
        check "... the etcd phase says in one row that this etcd is external, out of scope (skipped)" \
                test "$(printf '%s\n' "$rows" | grep -c '^etcd ')/$(printf '%s\n' "$rows" | grep -c '^etcd skipped ')" = 1/1
        rows=$(xe_touched_rows "$OUT/reset-$XE.json" 2>&1)
        check "... and no row of it changed the site's etcd (unit, process, data, certificates)" test -z "$rows" ||
                echo "$rows" | sed 's/^/e2e-k8s:   /'
        check "etcd.service still runs, not restarted (MainPID $pid), still enabled" \
                test "$(node_exec "$XE" systemctl is-active etcd.service)/$(unit_prop "$XE" etcd.service MainPID)/$(node_exec "$XE" systemctl is-enabled etcd.service)" = "active/$pid/enabled" ||
                xe_state
        check "its member list still holds its member, same ID" test "$(xe_member)" = "$member" ||
                echo "e2e-k8s: member list now: $(xe_member)"
        check "the site's keys are still readable" \
                test "$(xe_site_get)" = "/site/owner=ops-team /site/dns/zone=example.internal /site/token=$token " ||
                echo "e2e-k8s: site keys now: $(xe_site_get)"
        check "... and the API server's ($(xe_registry_keys) keys under /registry)" test "$(xe_registry_keys)" -gt 0
        check "/var/lib/etcd still holds the member's data (member/snap/db, member/wal)" xe_member_data || xe_state
        check "$XE_PKI is intact (every file, same content)" test "$(xe_pki_sums)" = "$pki"
        check "$XE passes kubeadm init's preflight with the same configuration (etcd.external, the same etcd running)" \
                xe_preflight "$OUT/preflight-$XE.log"
        # A running etcd keeps serving a data directory emptied beneath it (open and mapped files):
        # only a restart shows what is on disk.
        node_exec "$XE" systemctl restart etcd.service
        check "after a restart of etcd.service: its member, same ID, and the site's keys (read from disk)" \
                test "$(xe_member)|$(xe_site_get)" = "$member|/site/owner=ops-team /site/dns/zone=example.internal /site/token=$token " ||
                { echo "e2e-k8s: member list now: $(xe_member); site keys now: $(xe_site_get)"; xe_state; }
        echo "e2e-k8s: $XE: peak RAM $(($(cat "/sys/fs/cgroup/memory/${NODE_CG[$XE]}/memory.max_usage_in_bytes" 2>/dev/null || echo 0) / 1048576)) MB"
        node_stop "$XE"
        echo "e2e-k8s: scenario external-etcd took $((SECONDS - t_s)) s (kubeadm configuration in $XE_CONFIG)"
}
