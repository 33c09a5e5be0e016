# SPDX-License-Identifier: LGPL-2.1-or-later
# A real systemd for tests: boot the tree build-rootfs.sh assembled from the host's /usr with
# systemd-nspawn, from a dedicated cgroup, inside the caller's private mount namespace. The tree is
# the test's own (on its tmpfs), so it is booted as it is: no --volatile overlay, which would not
# show the tree's /usr mount anyway. The container's /run/dbus and
# /run/systemd are host directories, so a program on the host reaches its system bus through
# DBUS_SYSTEM_BUS_ADDRESS and its manager's private socket through /run/systemd/private.
#
#   nspawn_boot ROOTFS DIR UNITS...   boot; DIR holds the state, UNITS are installed and enabled
#   nspawn_bus                        the bus address (after nspawn_boot)
#   nspawn_leader                     the container's PID 1, as the host sees it
#   nspawn_poweroff                   stop the container and remove its cgroup
# Sourced by tests; needs lib.sh's helpers.

_nspawn_pid= _nspawn_cg= _nspawn_dir=

_nspawn_cgroup_create() {
        local h
        _nspawn_cg=node-reset-test-$$
        for h in systemd unified; do
                [ -d "/sys/fs/cgroup/$h" ] || continue
                mkdir "/sys/fs/cgroup/$h/$_nspawn_cg" || return 1
        done
}

_nspawn_cgroup_remove() {
        local h
        [ -n "$_nspawn_cg" ] || return 0
        for h in systemd unified; do
                [ -d "/sys/fs/cgroup/$h/$_nspawn_cg" ] || continue
                # The container's manager made sub-cgroups; they are empty once it has exited.
                find "/sys/fs/cgroup/$h/$_nspawn_cg" -depth -type d -exec rmdir {} + 2>/dev/null
        done
        _nspawn_cg=
}

# Units to /etc/systemd/system of the container (a copy of the tree's, bound in), enabled per their
# [Install] WantedBy=; "masked.service" becomes a mask.
_nspawn_install_units() {
        local dir=$1 u wanted; shift
        cp -a "$_nspawn_rootfs/etc/systemd/system" "$dir/units"
        for u in "$@"; do
                if [ "$(basename "$u")" = masked.service ]; then
                        ln -s /dev/null "$dir/units/masked.service"
                        continue
                fi
                cp "$u" "$dir/units/"
                wanted=$(sed -n 's/^WantedBy=//p' "$u")
                [ -n "$wanted" ] || continue
                mkdir -p "$dir/units/$wanted.wants"
                ln -s "/etc/systemd/system/$(basename "$u")" "$dir/units/$wanted.wants/$(basename "$u")"
        done
}

nspawn_bus() { echo "unix:path=$_nspawn_dir/dbus/system_bus_socket"; }

# The container's PID 1 as the host sees it. systemd drops private-socket peers whose PID it cannot
# see, so a program that uses /run/systemd/private joins this PID namespace, as it shares PID 1's
# on a node.
nspawn_leader() { cut -d' ' -f1 "/proc/$_nspawn_pid/task/$_nspawn_pid/children"; }

# Wait until the manager says running (or degraded: a test unit may fail on purpose).
_nspawn_wait_running() {
        local s i
        for i in $(seq 150); do
                s=$(busctl --address="$(nspawn_bus)" get-property org.freedesktop.systemd1 /org/freedesktop/systemd1 \
                        org.freedesktop.systemd1.Manager SystemState 2>/dev/null)
                case "$s" in *running* | *degraded*) return 0 ;; esac
                kill -0 "$_nspawn_pid" 2>/dev/null || break
                sleep 0.1
        done
        echo "the container did not boot (SystemState: ${s:-no answer}); nspawn said:"
        tail -n 20 "$_nspawn_dir/nspawn.log"
        return 1
}

nspawn_boot() {
        _nspawn_rootfs=$1 _nspawn_dir=$2; shift 2
        mkdir -p "$_nspawn_dir/dbus" "$_nspawn_dir/systemd"
        _nspawn_install_units "$_nspawn_dir" "$@" || return 1
        _nspawn_cgroup_create || { echo "cannot create the test cgroup"; return 1; }
        (
                for h in systemd unified; do
                        [ -d "/sys/fs/cgroup/$h/$_nspawn_cg" ] && echo "$BASHPID" > "/sys/fs/cgroup/$h/$_nspawn_cg/cgroup.procs"
                done
                # NSPAWN_AS_NODE=1: no seccomp filter and every capability from nspawn itself, as a
                # node's own PID 1 has, so that a unit's own sandbox is the only one (test-orphan-units
                # runs a full reset under node-reset.service's); the e2e-k8s nodes boot the same way.
                # Still inside private mount, PID, network and cgroup namespaces.
                as_node=()
                [ "${NSPAWN_AS_NODE:-0}" = 1 ] && export SYSTEMD_SECCOMP=0 && as_node=(--capability=all)
                exec systemd-nspawn --quiet --boot --register=no --keep-unit "${as_node[@]}" \
                        --private-network --console=passive --machine="nr-test-$$" \
                        --directory="$_nspawn_rootfs" \
                        --bind="$_nspawn_dir/dbus:/run/dbus" \
                        --bind="$_nspawn_dir/systemd:/run/systemd" \
                        --bind="$_nspawn_dir/units:/etc/systemd/system"
        ) < /dev/null > "$_nspawn_dir/nspawn.log" 2>&1 &
        _nspawn_pid=$!
        _nspawn_wait_running
}

nspawn_poweroff() {
        local i
        [ -n "$_nspawn_pid" ] || return 0
        # nspawn turns SIGTERM into the container's orderly poweroff.
        kill -TERM "$_nspawn_pid" 2>/dev/null
        for i in $(seq 100); do
                kill -0 "$_nspawn_pid" 2>/dev/null || break
                sleep 0.1
        done
        kill -KILL "$_nspawn_pid" 2>/dev/null
        wait "$_nspawn_pid" 2>/dev/null
        _nspawn_pid=
        _nspawn_cgroup_remove
}

# Unit state through the container's bus: "not-loaded" when systemd has no such unit in memory.
unit_property() { # UNIT PROPERTY
        local path
        path=$(busctl --address="$(nspawn_bus)" call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
                org.freedesktop.systemd1.Manager GetUnit s "$1" 2>/dev/null | sed -n 's/^o "\(.*\)"$/\1/p')
        [ -n "$path" ] || { echo not-loaded; return; }
        busctl --address="$(nspawn_bus)" get-property org.freedesktop.systemd1 "$path" \
                org.freedesktop.systemd1.Unit "$2" | sed 's/^[a-z]* //; s/"//g'
}

unit_file_state() { # UNIT: "enabled", "disabled", "masked", ... or "absent"
        busctl --address="$(nspawn_bus)" call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
                org.freedesktop.systemd1.Manager GetUnitFileState s "$1" 2>/dev/null | sed -n 's/^s "\(.*\)"$/\1/p' |
                grep . || echo absent
}

manager_call() { # METHOD [SIGNATURE ARGS...]
        busctl --address="$(nspawn_bus)" call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
                org.freedesktop.systemd1.Manager "$@"
}
