#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guest's entry point, run by node-reset-e2e.service from the 9p share: runs the scenario named
# in /share/scenario. Its output and exit status go back to the host (out.log, rc).
set -u
cd /share || exit 1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export E2E_SHARE=/share E2E_RESULTS=/share/results
scenario=$(cat /share/scenario)
echo "guest: $(uname -r), systemd $(systemctl --version | awk 'NR == 1 { print $2 }'), up $(cut -d' ' -f1 /proc/uptime) s," \
        "$(systemctl is-system-running 2>/dev/null)"
# The agent, and the CRI test client that makes the pods (built against the same libraries).
for b in /share/node-reset /share/cri-helper; do
        [ -e "$b" ] || continue
        missing=$(ldd "$b" | awk '/not found/ { print $1 }' | xargs)
        if [ -n "$missing" ]; then
                echo "FAIL: the guest image lacks $missing for ${b##*/}: add its package to PACKAGES in tests/e2e/build-image.sh"
                exit 1
        fi
done
exec bash "/share/scenario-$scenario.sh"
