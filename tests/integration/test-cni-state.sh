#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Per-CNI state in the profiles, on --root trees of kubeadm nodes that differ only in their CNI
# configuration: only the detected CNI's state directories go (cilium's on a cilium node, calico's
# on a calico node, ...), every other CNI's stay, and "--profile all" removes the union. Only the
# files libcni loads count (a stale backup or an invalid file does not), and without a configuration
# the CNI's own state (state directories, pins, links of the running system) says which; two CNIs'
# state is ambiguous and keeps them all. The plan says which CNI was detected and from which
# evidence. canal (calico's plugin, flannel's daemon) is told by its file name. A second run changes
# nothing.
. "$(dirname "$0")/lib.sh"
in_private_ns "$@"
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" >/dev/null; }
gone() { for p in "$@"; do assert "$name: gone: $p" test ! -e "$root$p"; done; }
stays() { for p in "$@"; do assert "$name: stays: $p" test -e "$root$p"; done; }
put() { mkdir -p "$(dirname "$root$1")"; printf '%s\n' "${2:-x}" >"$root$1"; }

CILIUM_STATE="/run/cilium/state/health-endpoint.pid /var/lib/cilium/bpf/node_config.h"
CALICO_STATE="/var/lib/calico/nodename /run/calico/bird.ctl /etc/calico/calicoctl.cfg /var/log/calico/cni/cni.log"
FLANNEL_STATE="/run/flannel/subnet.env /etc/flannel/net-conf.json"
ROUTER_STATE="/var/lib/kube-router/kubeconfig"
WEAVE_STATE="/var/lib/weave/weave-netdata.db /etc/weave.env"
# /etc/cilium only goes with kubespray's profile: on a kubeadm node it stays.
KEPT_ALWAYS="/etc/cilium/config.yaml /opt/cni/bin/cilium-cni /etc/hostname"

new_node() { # name conflist-name conflist-text
        name=$1
        root=$WORK/$1
        mkdir -p "$root"
        put /etc/systemd/system/kubelet.service.d/10-kubeadm.conf "[Service]"
        put /var/lib/kubelet/kubeadm-flags.env 'KUBELET_KUBEADM_ARGS=""'
        put /etc/kubernetes/kubelet.conf "x"
        put /etc/hostname node-1
        # Every CNI's state, as a node that changed CNI or a careless image would have it (NO_STATE=1:
        # none of it).
        for p in $CILIUM_STATE $CALICO_STATE $FLANNEL_STATE $ROUTER_STATE $WEAVE_STATE; do
                [ -n "${NO_STATE:-}" ] || put "$p"
        done
        for p in $KEPT_ALWAYS; do put "$p"; done
        [ -z "${2:-}" ] || put "/etc/cni/net.d/$2" "$3"
}

run_node() { # extra args...
        "$NODE_RESET" --root "$root" "$@" plan >"$WORK/$name.plan" 2>&1
        "$NODE_RESET" --root "$root" --yes -o json "$@" run >"$WORK/$name.json" 2>"$WORK/$name.err"
        rc=$?
        assert "$name: run exits 0" test $rc -eq 0
        [ $rc -eq 0 ] || cat "$WORK/$name.err"
        "$NODE_RESET" --root "$root" --yes -o json "$@" run >"$WORK/$name.2.json" 2>"$WORK/$name.2.err"
        assert "$name: a second run changes nothing" jq_ "$WORK/$name.2.json" \
                "not [a for p in r['phases'] for a in p['actions'] if a['result'] in ('changed', 'failed')]"
}

# --- cilium ----------------------------------------------------------------------------------------
new_node cilium 05-cilium.conflist \
        '{"cniVersion":"0.3.1","name":"cilium","plugins":[{"type":"cilium-cni","enable-debug":false}]}'
run_node
assert "cilium: the plan names the detected CNI and its file" \
        grep -q "CNI: cilium-cni" "$WORK/cilium.plan"
assert "cilium: the plan's rows come from profile:cni-cilium" grep -q "profile:cni-cilium" "$WORK/cilium.plan"
assert "cilium: no other CNI's fragment is used" sh -c "! grep -q -e profile:cni-calico -e profile:cni-flannel '$WORK/cilium.plan'"
gone /run/cilium /var/lib/cilium /etc/cni/net.d
stays $CALICO_STATE $FLANNEL_STATE $ROUTER_STATE $WEAVE_STATE $KEPT_ALWAYS

# --- calico ----------------------------------------------------------------------------------------
new_node calico 10-calico.conflist \
        '{"name":"k8s-pod-network","plugins":[{"type":"calico","ipam":{"type":"calico-ipam"}},{"type":"portmap"},{"type":"bandwidth"}]}'
run_node
assert "calico: the plan's rows come from profile:cni-calico" grep -q "profile:cni-calico" "$WORK/calico.plan"
gone /var/lib/calico /run/calico /etc/calico /var/log/calico
stays $CILIUM_STATE $FLANNEL_STATE $ROUTER_STATE $WEAVE_STATE $KEPT_ALWAYS

# --- flannel (k3s's directory layout is covered by detection's unit test) --------------------------
new_node flannel 10-flannel.conflist '{"name":"cbr0","plugins":[{"type":"flannel"},{"type":"portmap"}]}'
run_node
gone /run/flannel /etc/flannel
stays $CILIUM_STATE $CALICO_STATE $ROUTER_STATE $WEAVE_STATE $KEPT_ALWAYS

# --- canal: calico's plugin on flannel's network, told by its file name ------------------------------
new_node canal 10-canal.conflist \
        '{"name":"k8s-pod-network","plugins":[{"type":"calico","ipam":{"type":"host-local"}},{"type":"portmap"}]}'
run_node
assert "canal: the plan's rows come from profile:cni-calico and cni-flannel" \
        sh -c "grep -q profile:cni-calico '$WORK/canal.plan' && grep -q profile:cni-flannel '$WORK/canal.plan'"
gone /var/lib/calico /run/calico /run/flannel /etc/flannel
stays $CILIUM_STATE $ROUTER_STATE $WEAVE_STATE $KEPT_ALWAYS

# --- kube-router: the plain bridge plugin on kube-bridge, in kube-router's file ----------------------
new_node kube-router 10-kuberouter.conflist \
        '{"name":"mynet","plugins":[{"name":"kubernetes","type":"bridge","bridge":"kube-bridge","ipam":{"type":"host-local"}}]}'
run_node
gone /var/lib/kube-router
stays $CILIUM_STATE $CALICO_STATE $FLANNEL_STATE $WEAVE_STATE $KEPT_ALWAYS

# --- no CNI configuration and no CNI's state: no CNI detected -------------------------------------
NO_STATE=1 new_node none
run_node
assert "none: the plan says no CNI was detected" grep -q "No known CNI\|CNI: unknown" "$WORK/none.plan"
stays $KEPT_ALWAYS

# --- no CNI configuration, every CNI's state: ambiguous, said, and no CNI's state goes ----------------
new_node every-state
run_node
assert "every-state: the plan says the CNI evidence is ambiguous, naming each" \
        sh -c "grep -q 'CNI: ambiguous' '$WORK/every-state.plan' && grep -q \"/var/lib/calico: calico's state directory\" '$WORK/every-state.plan' && grep -q \"/run/cilium: cilium's state directory\" '$WORK/every-state.plan'"
assert "every-state: no CNI's fragment is used" jq_ "$WORK/every-state.json" \
        "not [m for m in r['manifests'] if m.startswith('profile:cni-') and m != 'profile:cni-detected']"
stays $CILIUM_STATE $CALICO_STATE $FLANNEL_STATE $ROUTER_STATE $WEAVE_STATE $KEPT_ALWAYS

# --- the configuration is gone (an operator deleted it, or a rerun): calico's own state says calico --
NO_STATE=1 new_node config-gone
for p in $CALICO_STATE; do put "$p"; done
run_node
assert "config-gone: the plan names calico from its state directory" \
        grep -q "/var/lib/calico: calico's state directory exists" "$WORK/config-gone.plan"
gone /var/lib/calico /run/calico /etc/calico /var/log/calico

# --- a stale backup of cilium's list sorts first: not a name the runtime loads, calico's decides ------
new_node stale-backup 10-calico.conflist \
        '{"name":"k8s-pod-network","plugins":[{"type":"calico","ipam":{"type":"calico-ipam"}}]}'
put /etc/cni/net.d/05-cilium.conflist.cilium_bak \
        '{"cniVersion":"0.3.1","name":"cilium","plugins":[{"type":"cilium-cni"}]}'
run_node
assert "stale-backup: the plan's rows come from profile:cni-calico" grep -q "profile:cni-calico" "$WORK/stale-backup.plan"
gone /var/lib/calico /run/calico /etc/calico /var/log/calico
stays $CILIUM_STATE $FLANNEL_STATE $ROUTER_STATE $WEAVE_STATE $KEPT_ALWAYS

# --- an invalid configuration sorts first: skipped as libcni skips it, and said -------------------
new_node invalid-first 10-calico.conflist \
        '{"name":"k8s-pod-network","plugins":[{"type":"calico","ipam":{"type":"calico-ipam"}}]}'
put /etc/cni/net.d/05-cilium.conflist '{"name":"cilium","plugins":[{"type":"cilium-cni"}]'
run_node
assert "invalid-first: the plan says the invalid file was skipped" \
        grep -q "05-cilium.conflist: not valid JSON: skipped" "$WORK/invalid-first.plan"
gone /var/lib/calico /run/calico /etc/calico /var/log/calico
stays $CILIUM_STATE $FLANNEL_STATE $ROUTER_STATE $WEAVE_STATE $KEPT_ALWAYS

# --- live links (this test's own network namespace), read by a plan of the running system ---------
# (no --root: links are never a --root tree's). This kernel has no dummy driver: bridges stand in.
if ip link add cilium_host type bridge 2>/dev/null; then
        "$NODE_RESET" -o json plan >"$WORK/links.json" 2>"$WORK/links.err"
        assert "links: cilium_host says cilium, and the plan uses cilium's fragment" jq_ "$WORK/links.json" \
                "r['cni']['name'] == 'cilium' and any('link cilium_host' in e for e in r['cni']['evidence']) and 'profile:cni-cilium' in r['manifests']"
        ip link add flannel.1 type bridge
        "$NODE_RESET" -o json plan >"$WORK/links2.json" 2>"$WORK/links2.err"
        assert "links: cilium's and flannel's links are ambiguous, no CNI's fragment" jq_ "$WORK/links2.json" \
                "r['cni']['name'] is None and r['cni']['ambiguous'] and 'profile:cni-cilium' not in r['manifests'] and 'profile:cni-flannel' not in r['manifests']"
        ip link del flannel.1
        ip link del cilium_host
        # calico's workload links are "cali" and 11 hex digits: a host's "calibre0" is no evidence.
        ip link add calibre0 type bridge
        "$NODE_RESET" -o json plan >"$WORK/links3.json" 2>"$WORK/links3.err"
        assert "links: calibre0 is not calico's" jq_ "$WORK/links3.json" "r['cni']['name'] is None and not r['cni']['ambiguous']"
        ip link add cali0a1b2c3d4e5 type bridge
        "$NODE_RESET" -o json plan >"$WORK/links4.json" 2>"$WORK/links4.err"
        assert "links: cali0a1b2c3d4e5 says calico" jq_ "$WORK/links4.json" \
                "r['cni']['name'] == 'calico' and 'profile:cni-calico' in r['manifests']"
        ip link del cali0a1b2c3d4e5
        ip link del calibre0
else
        fail "cannot add a bridge named cilium_host in the test's network namespace"
fi

# --- "--profile all": the union, whatever was detected ----------------------------------------------
new_node all 10-calico.conflist '{"plugins":[{"type":"calico"}]}'
run_node --profile all
gone /run/cilium /var/lib/cilium /var/lib/calico /run/calico /run/flannel /var/lib/kube-router
finish
