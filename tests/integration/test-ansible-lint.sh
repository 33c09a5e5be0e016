#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Ansible examples (examples/ansible) pass ansible-lint's production profile, offline and with
# no network, as Debian 12's ansible-lint (6.13) judges them: no failure. The one rule waived, for
# one file, is in examples/ansible/.ansible-lint-ignore with its reason (it stays a warning here).
. "$(dirname "$0")/lib.sh"
command -v ansible-lint > /dev/null 2>&1 || skip "ansible-lint is not installed (make deps installs it)"
cd "$TOP/examples/ansible" || exit 1
HOME=$(mktemp -d) timeout 600 unshare -n ansible-lint --offline --nocolor -p reset.yml remove-node.yml cluster-delete.yml \
        fleet.yml roles/node_reset roles/node_reset_fleet > "${TMPDIR:-/tmp}/ansible-lint.$$" 2>&1
rc=$?
tail -n 3 "${TMPDIR:-/tmp}/ansible-lint.$$"
assert "ansible-lint --offline -p: exit 0" test $rc -eq 0
assert "... 0 failure(s)" grep -q 'Passed with production profile: 0 failure(s)' "${TMPDIR:-/tmp}/ansible-lint.$$"
[ $rc -eq 0 ] || grep -E '^[a-z].*:[0-9]+:' "${TMPDIR:-/tmp}/ansible-lint.$$"
rm -f "${TMPDIR:-/tmp}/ansible-lint.$$"
finish
