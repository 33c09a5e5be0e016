#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rke2 with cilium leaves its deny chains RKE2-CILIUM-FWD-DENY and RKE2-CILIUM-INP-DENY, and the jumps
# to them from FORWARD and INPUT, behind rke2-killall.sh (rke2#10654). In a private network namespace,
# with real iptables-nft and iptables-legacy, v4 and v6: the rke2 profile's firewall phase removes
# them and their jumps; the host's own rules (an SSH accept, its own chain with a lookalike
# RKE2-HOST name, a DROP policy) stay byte for byte; a second run changes nothing.
. "$(dirname "$0")/lib.sh"
in_private_ns -n "$@"
require_cmd iptables-nft-restore ip6tables-nft-restore iptables-legacy-restore ip6tables-legacy-restore \
        iptables-nft-save ip6tables-nft-save iptables-legacy-save ip6tables-legacy-save python3
. "$TOP/tests/integration/fixtures/firewall.sh"
mkdir -p "$WORK/root"

ruleset() { # FAMILY: rke2-killall.sh's survivors (as rke2#10654 shows them) and the host's own rules
        local lxc=lxc+
        cat <<R
*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
:RKE2-CILIUM-FWD-DENY - [0:0]
:RKE2-CILIUM-INP-DENY - [0:0]
:RKE2-HOST - [0:0]
-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT
-A INPUT -j RKE2-HOST
-A INPUT -j RKE2-CILIUM-INP-DENY
-A FORWARD -j RKE2-CILIUM-FWD-DENY
-A FORWARD -i eth9 -j ACCEPT
-A RKE2-CILIUM-FWD-DENY -i $lxc -j RETURN
-A RKE2-CILIUM-FWD-DENY -i cilium_host -j RETURN
-A RKE2-CILIUM-FWD-DENY -o cilium_net -j RETURN
-A RKE2-CILIUM-FWD-DENY -j DROP
-A RKE2-CILIUM-INP-DENY -i cilium_host -j RETURN
-A RKE2-CILIUM-INP-DENY -j DROP
-A RKE2-HOST -p tcp -m tcp --dport 443 -j ACCEPT
COMMIT
R
}
host_part() { # BACKEND FAMILY
        fw_save "$1" "$2" | grep -v "RKE2-CILIUM-"
}
no_deny_chains() { ! fw_save "$1" "$2" | grep -q "RKE2-CILIUM-"; }
host_jump_stays() { fw_save "$1" "$2" | grep -qx -- "-A INPUT -j RKE2-HOST"; }

for b in nft legacy; do
        for f in 4 6; do
                ruleset "$f" | $(fw_restore "$b" "$f") -w 5 || { fail "cannot load the $b v$f ruleset"; finish; }
                host_part "$b" "$f" > "$WORK/host-$b-$f.before"
        done
done
assert "the fixture holds the deny chains (legacy v4)" fw_save legacy 4 | grep -q '^:RKE2-CILIUM-FWD-DENY'

"$NODE_RESET" --root "$WORK/root" --profile rke2 --phases firewall,verify --yes -o json run > "$WORK/run.json" 2> "$WORK/run.err"
rc=$?
assert "run exits 0" test $rc -eq 0
[ $rc -eq 0 ] || cat "$WORK/run.err"
for b in nft legacy; do
        for f in 4 6; do
                assert "$b v$f: no RKE2-CILIUM- chain or jump is left" no_deny_chains "$b" "$f"
                host_part "$b" "$f" > "$WORK/host-$b-$f.after"
                assert "$b v$f: the host's rules stay byte for byte" cmp -s "$WORK/host-$b-$f.before" "$WORK/host-$b-$f.after"
                assert "$b v$f: the lookalike RKE2-HOST chain and its jump stay" host_jump_stays "$b" "$f"
        done
done
"$NODE_RESET" --root "$WORK/root" --profile rke2 --phases firewall,verify --yes -o json run > "$WORK/again.json" 2>/dev/null
assert "a second run exits 0" test $? -eq 0
assert "a second run changes nothing" jq_ "$WORK/again.json" "len(actions(r, phase='firewall', result='changed')) == 0"
finish
