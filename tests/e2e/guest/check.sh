#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The independent check: what is on the node, read with the system's own tools (ip, ipvsadm, ipset,
# iptables-*-save, findmnt, find, systemctl, ps), never with the agent. What Kubernetes and the CNIs
# own is stated here once more, on its own (the *_OWNED patterns), not taken from the manifest. The
# pods worker.sh made are checked against its records, and against what containerd itself listed
# (CRI and ctr) when the reset stopped its unit (worker.sh build_cni's ExecStop= probe).
#
#   check.sh snapshot DIR EXPECT_DIR   the host's part of the node: every link, address, route,
#                                      rule, netns, firewall rule, ipset, mount and file that is not
#                                      Kubernetes' (EXPECT_DIR/files: what the reset removes)
#   check.sh compare BEFORE AFTER      two snapshots are identical
#   check.sh residue EXPECT_DIR        nothing Kubernetes' is left
#   check.sh report JSON EXPECT_DIR    the agent's report says what was built, and no more
#   check.sh pods-report JSON DIR [none|rung2]
#                                      the report's pods phase: every sandbox and container DIR
#                                      records (worker.sh record-pods) stopped and removed, through
#                                      the CRI alone (none) or with the rung 2 CNI rescue
#
# E2E_PHASES (blank separated) names the agent's phases; the checks of the others are skipped, and
# say so. Exit status: 0 when every check passed.

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# veth<8 hex>: the host ends of the CNI bridge plugin's pods (they go with the pods' namespaces).
LINK_OWNED='^(cali[0-9a-f]+|vxlan\.calico|vxlan-v6\.calico|tunl0|kube-ipvs0|nodelocaldns|cni0|cbr0|veth[0-9a-f]{8}|flannel[.-].*|cilium_.*|lxc.*|kube-bridge|kube-dummy-if)$'
FW_OWNED='KUBE-|CNI-|cali-|cali:|CILIUM_|FLANNEL-|flannel'
IPSET_OWNED='^(KUBE-|cali4|cali6|kube-router-)'
MOUNT_OWNED='^(/var/lib/kubelet/|/run/netns/cni-|/run/calico(/|$)|/run/containerd/|/run/cilium/)'
# Trees that change on a running system whatever the reset does, and the enablement links of the
# units the reset disables.
VOLATILE="^(/var/log/journal|/var/tmp|/var/cache|/var/lib/systemd|/var/lib/dpkg|/var/lib/apt|$NR_BACKUP_DIR)(/|\$)"
UNITS_RESET='^(kubelet|etcd|containerd)\.service$'
UNIT_LINKS='^/etc/systemd/system/[^/]+\.wants/(kubelet|etcd|containerd)\.service$'
FILE_ROOTS="/etc /opt /root /srv /usr/local /var"
E2E_PHASES=${E2E_PHASES:-mounts firewall network files}

has_phase() { case " $E2E_PHASES " in *" $1 "*) return 0 ;; esac; return 1; }
skip_phase() { echo "skip: $2 (this agent has no $1 phase yet)"; }

link_names() { ip -br link show | awk '{ sub(/@.*/, "", $1); print $1 }'; }
owned_links() { link_names | grep -E "$LINK_OWNED"; }
host_links() { link_names | grep -Ev "$LINK_OWNED"; }

# ---- snapshot ------------------------------------------------------------------------------------

dev_filter() { # drops route lines on links the reset deletes, and CNI routes
        grep -Ev ' dev (cali[0-9a-f]+|vxlan\.calico|tunl0|kube-ipvs0|nodelocaldns|cni0|veth[0-9a-f]{8})( |$)' |
                grep -v ' proto bird' | sed -E 's/ expires [0-9]+sec//'
}

# The host's rules in one iptables-save flavour. Without the packet counters of the built-in chains'
# policies: the legacy backend counts traffic there, and any commit to a legacy table (iptables -D,
# -A as well as the reset's) starts them from zero again.
fw_host() {
        "$1" 2>/dev/null | grep -v '^#' | grep -Ev "$FW_OWNED" | sed -E 's/^(:[^ ]+ [A-Z]+) \[[0-9]+:[0-9]+\]$/\1/' || true
}

removed_files_re() { # the files the reset removes, as one anchored regular expression
        local e
        e=$(sed -e 's/[.[\*^$+?(){}|]/\\&/g' "$1/files" | paste -sd'|')
        echo "^($e)(/|$)"
}

snapshot() {
        local d=$1 exp=$2 l rm_re
        mkdir -p "$d"
        for l in $(host_links); do ip -d link show dev "$l" | sed -E 's/^[0-9]+: //'; done >"$d/links"
        for l in $(host_links); do ip addr show dev "$l" | sed -E 's/^[0-9]+: //' | grep -v valid_lft; done >"$d/addresses"
        { ip -4 route show table all; ip -6 route show table all; } | dev_filter | sort >"$d/routes"
        { ip -4 rule; ip -6 rule; } >"$d/rules"
        ip netns list | sed 's/ (id.*//' | grep -v '^cni-' | sort >"$d/netns"
        ip -n upstream addr show 2>/dev/null | grep -v valid_lft >"$d/netns-upstream"
        for l in iptables-nft-save ip6tables-nft-save iptables-legacy-save ip6tables-legacy-save; do
                echo "== $l"
                fw_host "$l"
        done >"$d/firewall"
        ipset list -n | grep -Ev "$IPSET_OWNED" | sort | while read -r l; do ipset save "$l"; done >"$d/ipsets"
        findmnt -rn -o TARGET,SOURCE,FSTYPE | grep -Ev "$MOUNT_OWNED" | sort >"$d/mounts"
        rm_re=$(removed_files_re "$exp")
        # shellcheck disable=SC2086
        find $FILE_ROOTS -xdev 2>/dev/null | grep -Ev "$VOLATILE" | grep -Ev "$UNIT_LINKS" | grep -Ev "$rm_re" |
                sort >"$d/paths"
        # shellcheck disable=SC2086
        find /etc /opt /root /srv /usr/local /var/openebs -xdev -type f 2>/dev/null | grep -Ev "$rm_re" |
                sort | xargs -r -d '\n' sha256sum >"$d/contents"
        if [ -f "$exp/pv-source" ]; then
                (cd "$(cat "$exp/pv-source")" && find . -type f | sort | xargs -r -d '\n' sha256sum) >"$d/pv"
        fi
}

compare() {
        local f
        for f in links addresses routes rules netns netns-upstream firewall ipsets mounts paths contents pv; do
                [ -f "$1/$f" ] || continue
                same "host $f identical to before" "$1/$f" "$2/$f"
        done
        if [ -f "$1/pv" ]; then
                assert "the persistent volume's data is intact and not empty" test -s "$2/pv"
        fi
}

# ---- residue -------------------------------------------------------------------------------------

tunl0_clean() { # gone, or the ipip module's fallback device as the module made it: down, no address
        ip link show dev tunl0 >/dev/null 2>&1 || return 0
        ! ip link show dev tunl0 | grep -q ',UP' && [ -z "$(ip -4 addr show dev tunl0)" ]
}

files_left() {
        local f
        while read -r f; do
                if [ "$f" = /var/lib/kubelet ]; then
                        [ -z "$(ls -A /var/lib/kubelet 2>/dev/null)" ] || echo "$f: $(ls -A /var/lib/kubelet | head -5 | paste -sd' ')"
                elif [ -e "$f" ] || [ -L "$f" ]; then
                        echo "$f"
                fi
        done <"$1/files"
}

residue() {
        local exp=$1 l
        if has_phase mounts; then
                none "no mount left under /var/lib/kubelet, /run/netns/cni-*, /run/calico, /run/containerd" \
                        sh -c "findmnt -rn -o TARGET | grep -E '$MOUNT_OWNED'"
        else
                skip_phase mounts "mounts"
        fi
        if has_phase network; then
                none "no CNI or kube-proxy link left (cali*, vxlan.calico, kube-ipvs0, nodelocaldns)" \
                        sh -c "ip -br link show | awk '{ sub(/@.*/, \"\", \$1); print \$1 }' | grep -E '$LINK_OWNED' | grep -vx tunl0"
                assert_known tunl0-ipip-fallback "tunl0 gone, or down without an address (the ipip module's fallback device)" \
                        tunl0_clean
                none "no proto bird route left (IPv4, IPv6, every table)" \
                        sh -c 'ip -4 route show table all proto bird; ip -6 route show table all proto bird'
                none "no cni-* network namespace left" sh -c 'ip netns list | grep "^cni-"; ls /run/netns | grep "^cni-"'
        else
                skip_phase network "links, routes, network namespaces"
        fi
        if has_phase firewall; then
                for l in iptables-nft-save ip6tables-nft-save iptables-legacy-save ip6tables-legacy-save; do
                        none "no Kubernetes or calico chain or rule left ($l)" \
                                sh -c "$l 2>/dev/null | grep -v '^#' | grep -E '$FW_OWNED'"
                done
                none "no KUBE-* or cali* ipset left" sh -c "ipset list -n | grep -E '$IPSET_OWNED'"
                none "no IPVS virtual service left" ipvsadm -Sn
        else
                skip_phase firewall "netfilter, ipsets, IPVS"
        fi
        if has_phase files; then
                none "no file of kubekey's list left, /var/lib/kubelet empty" files_left "$exp"
        else
                skip_phase files "files"
        fi
        if has_phase services-early || has_phase services-late; then
                none "kubelet, etcd and containerd stopped" sh -c \
                        'systemctl is-active kubelet.service etcd.service containerd.service | grep -vx -e inactive -e failed'
                none "kubelet, etcd and containerd no longer enabled (no *.wants/ link left)" sh -c \
                        "ls /etc/systemd/system/*.wants/ | grep -E '$UNITS_RESET'"
        else
                skip_phase services "kubelet, etcd and containerd units"
        fi
        if has_phase processes; then
                # containerd's KillMode=process leaves its shims to whoever stops it.
                none "no containerd-shim, kubelet or etcd process left" \
                        pgrep -a -f '^(/usr/bin/containerd-shim|/usr/local/bin/kubelet|/usr/local/bin/etcd)'
        else
                skip_phase processes "containerd-shim, kubelet and etcd processes"
        fi
        if has_phase reload; then
                none "systemd has forgotten kubelet and etcd (unit files gone, daemon reloaded)" sh -c \
                        'systemctl show -p LoadState --value kubelet.service etcd.service | grep -vx not-found'
        fi
        if ! has_phase pods; then
                skip_phase pods "pod sandboxes and containers"
        elif [ -s "$exp/sandboxes" ]; then
                pods_residue "$exp"
        fi
}

# The pods, as worker.sh recorded them, are gone: seen by containerd itself when the reset stopped
# its unit (the ExecStop= probe: the CRI and ctr), and by the kernel afterwards.
pods_residue() {
        local exp=$1
        if [ -f "$CRI_AT_STOP" ]; then
                ok "containerd.service was stopped through its unit (its ExecStop= probe ran)"
                none "when the reset stopped containerd, the CRI listed no sandbox and no container" \
                        grep -Ev '^ctr (containers|tasks) ' "$CRI_AT_STOP"
                assert "when the reset stopped containerd, ctr listed no container and no task in k8s.io" \
                        test "$(grep -E '^ctr (containers|tasks) ' "$CRI_AT_STOP" | paste -sd' ')" = "ctr containers 0 ctr tasks 0"
        else
                fail "containerd.service was stopped through its unit (no $CRI_AT_STOP: its ExecStop= probe never ran)"
        fi
        none "none of the pods' $(lines "$exp/shims") containerd-shim processes is left (PIDs recorded)" \
                pod_shims_left "$exp"
        none "no pause or workload process left (the pods' $(($(lines "$exp/sandboxes") + $(lines "$exp/containers"))) processes)" \
                pgrep -a -x pause
        none "none of the pods' $(lines "$exp/pod-netns") cni-* network namespaces is left" pod_netns_left "$exp"
        none "none of the pods' $(lines "$exp/pod-mounts") rootfs and shm mounts is left" \
                sh -c "findmnt -rn -o TARGET | grep -xF -f '$exp/pod-mounts'"
        none "no CNI bridge port (veth*) left" sh -c "ip -br link show type veth | grep -E '^veth[0-9a-f]{8}'"
        none "no rescue conflist left in $CNI_CONF_DIR" sh -c "ls -A '$CNI_CONF_DIR' 2>/dev/null | grep node-reset-rescue"
}

lines() { grep -c . "$1" 2>/dev/null || true; }
# shellcheck disable=SC2053 # the right-hand side is the glob
matches() { [[ $1 == $2 ]]; } # string glob

pod_shims_left() { # a recorded PID that still runs a shim
        local p a
        while read -r p; do
                a=
                IFS= read -r -d '' a 2>/dev/null <"/proc/$p/cmdline"
                case "$a" in */containerd-shim*) echo "PID $p: $a" ;; esac
        done <"$1/shims"
}

pod_netns_left() {
        local n
        while read -r n; do
                if [ -e "/run/netns/$n" ]; then echo "/run/netns/$n"; fi
        done <"$1/pod-netns"
}

# ---- the agent's report --------------------------------------------------------------------------

# jq over the report; "targets PHASE KIND RESULT" prints the sorted targets.
rq() { jq -r "$2" "$1"; }
targets() { # json phase kind result
        jq -r --arg p "$2" --arg k "$3" --arg r "$4" \
                '.phases[] | select(.name == $p) | .actions[] | select(.kind == $k and .result == $r) | .target' "$1" | sort
}
count() { # json phase kind result
        targets "$@" | grep -c . || true
}

report() {
        local j=$1 exp=$2 p l
        assert_agent_clean "report: exit_status 0, residue []" "$(rq "$j" .exit_status)" "$j"
        assert "report: changed true" test "$(rq "$j" .changed)" = true
        for p in $E2E_PHASES; do
                assert "report: phase $p present, no action failed, counts add up" test "$(jq -r --arg p "$p" \
                        '.phases[] | select(.name == $p) | .counts | [.failed, .actions == .unchanged + .changed + .failed + .skipped] | @tsv' \
                        "$j")" = "$(printf '0\ttrue')"
        done
        if has_phase mounts; then
                # A CNI's own cgroup2 mount (calico's /run/calico/cgroup) is the network phase's: it
                # goes once its programs are detached and nothing else uses it (bpf-mount).
                same "report: the mounts unmounted (the CNI's cgroup2 by the network phase) are exactly the ones built" \
                        "$exp/mounts" <({ targets "$j" mounts unmount changed
                                         has_phase network && targets "$j" network bpf-mount changed; } | sort)
        fi
        if has_phase network; then
                # A pod's veth dies with its namespace: when that namespace goes first (the mounts
                # phase unmounts /run/netns/cni-*), the link is "already gone" by the time the network
                # phase acts. Each link built is accounted for once, either way.
                same "report: the links deleted (or found already gone) are exactly the ones built" "$exp/links" \
                        <(jq -r '.phases[] | select(.name == "network") | .actions[] | select(.kind == "link")
                                 | select(.result == "changed" or (.result == "unchanged" and .message == "already gone"))
                                 | .target' "$j" | sort)
                l=$(jq '[.phases[] | select(.name == "network") | .actions[] | select(.kind == "link" and .message == "already gone")] | length' "$j")
                [ "$l" -eq 0 ] || note "$l pod veth(s) were already gone when the network phase ran: their namespaces went first" \
                        "(the CNI bridge's with their pods in the pods phase, calico's unmounted by the mounts phase)"
                assert "report: $(cat "$exp/routes") proto bird routes deleted" \
                        test "$(count "$j" network route changed)" -eq "$(cat "$exp/routes")"
                same "report: the network namespaces deleted are exactly the cni-* ones built" \
                        <(sed 's|^|/run/netns/|' "$exp/netns") <(targets "$j" network netns changed)
        fi
        if has_phase firewall; then
                same "report: the ipsets destroyed are exactly the ones built" \
                        <(sed 's/^/ipset /' "$exp/ipsets" | sort) <(targets "$j" firewall ipset changed)
                assert "report: IPVS cleared ($(cat "$exp/ipvs") virtual services)" \
                        test "$(count "$j" firewall ipvs changed)" -eq 1
                assert "report: nf_tables changed" test "$(count "$j" firewall nft changed)" -ge 1
                assert "report: legacy x_tables changed" test "$(count "$j" firewall xtables changed)" -ge 1
        fi
        if has_phase services-early || has_phase services-late; then
                same "report: the units stopped are exactly the running ones built (kubelet, etcd, containerd)" \
                        "$exp/units" <(jq -r '.phases[] | select(.name | startswith("services")) | .actions[]
                                              | select(.kind == "stop" and .result == "changed") | .target' "$j" | sort)
                same "report: the units disabled are exactly the enabled ones built" \
                        "$exp/units" <(jq -r '.phases[] | select(.name | startswith("services")) | .actions[]
                                              | select(.kind == "disable" and .result == "changed") | .target' "$j" | sort)
        fi
        if has_phase files; then
                same "report: the files removed are exactly kubekey's list as built" "$exp/files" \
                        <(jq -r '.phases[] | select(.name == "files") | .actions[] | select(.result == "changed") | .target' "$j" | sort)
        fi
        if has_phase pods && [ -s "$exp/sandboxes" ]; then
                pods_report "$j" "$exp" none
        fi
}

# Sandbox and container targets end with the id's first 12 characters.
short_ids() { cut -c1-12 "$1" | sort; }

pods_report() { # json dir none|rung2
        local j=$1 d=$2 rescue=${3:-none} rows msg
        # The pods phase's rows, once (jq costs ~0.3 s here): kind, result, target, detail, message.
        rows=$(mktemp)
        jq -r '.phases[] | select(.name == "pods") | .actions[] | [.kind, .result, .target, .detail // "", .message // ""] | @tsv' \
                "$j" >"$rows"
        pod_ids() { # kind: the short ids of its changed rows
                awk -F'\t' -v k="$1" '$1 == k && $2 == "changed" { n = split($3, a, " "); print a[n] }' "$rows" | sort
        }
        same "report: pods: the sandboxes removed are exactly the $(lines "$d/sandboxes") recorded" \
                <(short_ids "$d/sandboxes") <(pod_ids remove-pod)
        # containerd's RemovePodSandbox stops the sandbox and removes its containers itself.
        same "report: pods: no StopContainer, StopPodSandbox or RemoveContainer row (RemovePodSandbox does them)" \
                /dev/null <(awk -F'\t' '$1 == "stop-pod" || $1 == "stop-container" || $1 == "remove-container"' "$rows")
        same "report: pods: the host-network pods are the $(lines "$d/pods-host") built so" "$d/pods-host" \
                <(awk -F'\t' '$1 == "remove-pod" && $4 ~ /^host network/ { sub(/ [^ ]*$/, "", $3); print $3 }' "$rows" | sort)
        # The kill pass ran before any CRI call; after a killed run (sigkill-pods) it finds nothing left
        # to kill although containerd may still list containers running: their processes died with
        # the first run's kill pass.
        msg=$(awk -F'\t' '$1 == "kill-pods" { print $2 ": " $5 }' "$rows")
        assert "report: pods: the kill pass ran before any CRI call, none alive after it ($msg)" \
                matches "$msg" '*: SIGKILL to * none alive after *'
        msg=$(awk -F'\t' '$1 == "runtime" { print $5 }' "$rows" | paste -sd'|')
        rm -f "$rows"
        case "$rescue" in
        none) assert "report: pods: no rescue was needed ($msg)" matches "$msg" 'no rescue needed*' ;;
        rung2) assert "report: pods: rung 2 did it, rung 3 was not needed ($msg)" \
                matches "$msg" 'rung 3 not needed*rung 2 rescue*' ;;
        esac
}

case "${1:-}" in
snapshot) snapshot "$2" "$3" ;;
compare) compare "$2" "$3" ;;
residue) residue "$2" ;;
report) report "$2" "$3" ;;
pods-report) pods_report "$2" "$3" "${4:-none}" ;;
*) echo "usage: check.sh snapshot DIR EXPECT_DIR | compare BEFORE AFTER | residue EXPECT_DIR | report JSON EXPECT_DIR | pods-report JSON DIR [none|rung2]" >&2; exit 2 ;;
esac
finish
