# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# A systemd lab node's first unit (nr-lab-node.service, before sshd): what node-init.sh does for a
# namespace node, from inside a node systemd-nspawn booted: its link (host0, on the lab's bridge) with
# the address, MAC and permanent gateway entry of /etc/nr-lab/node.env, then its state
# (node-state.sh), then the line the lab waits for (/run/nr-lab-up, the lab's directory bound in).
set -eu
. /etc/nr-lab/node.env
echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6
echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 > /proc/sys/net/ipv4/ip_forward
ip -batch - <<EOT
link set host0 address $LAB_MAC
link set lo up
link set host0 up
addr add $LAB_ADDR dev host0
route add default via $LAB_GW
neigh replace $LAB_GW lladdr $LAB_GWMAC dev host0 nud permanent
EOT
# shellcheck source=tests/lab/node-state.sh
. /usr/libexec/nr-lab/node-state.sh
echo ready > "/run/nr-lab-up/$(cat /etc/hostname)"
