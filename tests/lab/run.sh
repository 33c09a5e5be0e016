#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A lab of N nodes for one command: tests/lab/run.sh N [CMD...] (as root). Brings the nodes and the
# status receiver up in private namespaces of its own, runs CMD as the lab's controller (in the
# switch namespace, with the lab's HOME, ANSIBLE_CONFIG and cgroup, every variable of lab.env in its
# environment; without CMD, an interactive shell), then takes everything down. CMD can source
# tests/lab/lab.sh and call lab_attach "$LAB_DIR" to use the functions. Exit status: CMD's.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
in_private_ns "$@"
. "$TOP/tests/lab/lab.sh"
[ $# -ge 1 ] && [ "$1" -gt 0 ] 2>/dev/null || { echo "usage: tests/lab/run.sh N [CMD...]" >&2; exit 2; }
n=$1
shift
lab_init "$WORK/lab" || exit $?
trap 'lab_down; cd /; umount -R -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT
lab_up "$n" && lab_status_start || exit 1
set -a
# shellcheck source=/dev/null
. "$LAB_DIR/lab.env"
set +a
[ $# -gt 0 ] || set -- bash -i
lab_controller "$@"
