#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The cgroups phase's "cgroup kubepods" rows on real cgroup file systems. The test makes a
# throwaway child cgroup in every mounted hierarchy of the host, moves itself into it, and enters a
# cgroup namespace rooted there with a private mount namespace whose /sys/fs/cgroup is mounted anew:
# node-reset sees that child as the top of every hierarchy and can reach nothing above it. Inside,
# kubelet's cgroupfs layout (kubepods/QOS/pod<UID>/<container>) with a "container" process in one
# hierarchy, and a sibling cgroup that is not Kubernetes'. The tree goes deepest first once its process
# is gone (killed by the same run's "process" line); a cgroup that still holds a process is left
# and named; the sibling stays; a second run changes nothing; status finds no residue. Under --root
# only "--phases cgroups" acts on them: the processes phase and a run without --phases leave them.
. "$(dirname "$0")/lib.sh"

# The host side: make the child cgroups, run the test inside them, remove what is left.
if [ -z "${NR_IN_CG:-}" ]; then
        require_root
        require_cmd unshare
        unshare --help 2>&1 | grep -q -- '--cgroup' || skip "unshare has no --cgroup (cgroup namespaces)"
        [ -e /proc/self/ns/cgroup ] || skip "the kernel has no cgroup namespaces"
        name="nr-test-cg.$$"
        mapfile -t hier < <(awk '$9 == "cgroup" || $9 == "cgroup2" { print $5 }' /proc/self/mountinfo | sort -u)
        [ "${#hier[@]}" -gt 0 ] || skip "no cgroup hierarchy is mounted"
        made=()
        for h in "${hier[@]}"; do
                mkdir "$h/$name" 2>/dev/null && made+=("$h/$name")
        done
        [ "${#made[@]}" -gt 0 ] || skip "cannot make a child cgroup in any hierarchy"
        # In a child shell, which joins the child cgroups first: the host's own cgroups stay as they
        # were. The test's processes end with it; then only empty directories of ours are left.
        # A hierarchy it cannot join (a cpuset without CPUs) is left out: its namespace root would be
        # the host's.
        NR_IN_CG="${made[*]}" bash -c '
                joined=()
                for d in $NR_IN_CG; do
                        for f in cpuset.cpus cpuset.mems; do
                                [ -f "$d/$f" ] && cat "${d%/*}/$f" > "$d/$f" 2>/dev/null
                        done
                        echo $$ > "$d/cgroup.procs" 2>/dev/null && joined+=("$d")
                done
                [ "${#joined[@]}" -gt 0 ] || { echo "SKIP: cannot join a child cgroup"; exit 77; }
                NR_IN_CG="${joined[*]}" NR_IN_NS=1 exec unshare -C -m -n --propagation private -- "$BASH" "$0" "$@"' "$0" "$@"
        rc=$?
        # A process the test left (it was interrupted) is in our child cgroups only: end it by PID.
        for d in "${made[@]}"; do find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null; done | sort -u |
                while read -r p; do kill -9 "$p" 2>/dev/null; done
        sleep 0.2
        for d in "${made[@]}"; do
                find "$d" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
                rmdir "$d" 2>/dev/null || echo "note: cannot remove $d (still busy)"
        done
        exit "$rc"
fi

# Inside new cgroup, mount and network namespaces: mount every hierarchy again so that
# /sys/fs/cgroup shows the namespace's root, then the usual private /run and work directory.
# What each hierarchy is (file system type and super block options, after mountinfo's "-"), read
# before anything is mounted over /sys/fs/cgroup (on a cgroup2-only machine that is the hierarchy).
declare -A fs_of
for d in $NR_IN_CG; do
        h=${d%/*}
        fs_of[$h]=$(awk -v mp="$h" '$5 == mp { for (i = 7; i <= NF; i++) if ($i == "-") { print $(i + 1) " " $(i + 3); exit } }' \
                /proc/self/mountinfo)
done
mount -t tmpfs -o mode=0755 nr-cgroup /sys/fs/cgroup || { echo "FAIL: cannot mount tmpfs on /sys/fs/cgroup"; exit 1; }
mounted=()
for d in $NR_IN_CG; do
        h=${d%/*}
        opts=${fs_of[$h]}
        fstype=${opts%% *}
        super=${opts#* }
        mkdir -p "$h"
        if [ "$fstype" = cgroup2 ]; then
                mount -t cgroup2 none "$h" || continue
        else
                # v1: the controllers (or name=) from the super block options, less rw/ro.
                o=$(tr ',' '\n' <<< "$super" | grep -vx -e rw -e ro | paste -sd,)
                mount -t cgroup -o "$o" none "$h" || continue
        fi
        mounted+=("$h")
done
[ "${#mounted[@]}" -gt 0 ] || { echo "FAIL: cannot mount a cgroup hierarchy in the cgroup namespace"; exit 1; }
unset NR_IN_CG
in_private_ns "$@"
REPORT="$TOP/tests/integration/report.py"
jq_() { "$REPORT" "$@" > /dev/null; }

# The root of each hierarchy here is the throwaway child: nothing above it is visible.
for h in "${mounted[@]}"; do
        [ -e "$h/nr-test-cg.$PPID" ] && fail "$h shows the host's cgroups, not the namespace's"
done

pod=pod6f1e0a5c-1d2e-4b8a-9e21-0c5d8a1f2b3c
for h in "${mounted[@]}"; do
        mkdir -p "$h/kubepods/burstable/$pod/c0ffee" "$h/kubepods/besteffort/podaa/beef" "$h/kubepods/$pod" \
                "$h/system.slice/keep-me"
done
first=${mounted[0]}
# A "container" in the first hierarchy's deepest cgroup: a copy of sleep run chrooted in the node's
# tree ($WORK/root, whose /usr is an overlay of the host's), so that a process line can name it as
# the node sees it. The test itself stays in the namespace's root.
t=$WORK/root
mkdir -p "$t/usr" "$WORK/ov/up" "$WORK/ov/work"
mount -t overlay nr-ov -o "lowerdir=/usr,upperdir=$WORK/ov/up,workdir=$WORK/ov/work" "$t/usr" ||
        { echo "FAIL: cannot mount an overlay of /usr"; exit 1; }
for l in bin sbin lib lib64; do [ -e "/usr/$l" ] && ln -s "usr/$l" "$t/$l"; done
cp "$(command -v sleep)" "$t/usr/local/bin/kube-workload"
sh -c "echo \$\$ > '$first/kubepods/burstable/$pod/c0ffee/cgroup.procs' && exec chroot '$t' /usr/local/bin/kube-workload 300" &
cpid=$!
for _ in $(seq 50); do grep -qx "$cpid" "$first/kubepods/burstable/$pod/c0ffee/cgroup.procs" && break; sleep 0.1; done
assert "the container process is in its cgroup" grep -qx "$cpid" "$first/kubepods/burstable/$pod/c0ffee/cgroup.procs"

run() { # run NAME MANIFEST-TEXT ARGS...: node-reset's processes phase, JSON into $WORK/NAME.json
        local n=$1 m=$2
        shift 2
        printf '%s\n' "$m" > "$WORK/$n.conf"
        "$NODE_RESET" --root "$WORK/root" --manifest "$WORK/$n.conf" --phases processes,cgroups -o json "$@" \
                > "$WORK/$n.json" 2> "$WORK/$n.err"
}

# A glob or a path is refused with file:line.
printf 'cgroup kube*\n' > "$WORK/bad.conf"
"$NODE_RESET" --root "$WORK/root" --manifest "$WORK/bad.conf" --phases cgroups plan > /dev/null 2> "$WORK/bad.err"
assert "a glob is refused with file:line" grep -q "bad.conf:1: .*cgroup name without '/' or a glob" "$WORK/bad.err"

# 0. Under --root the node is the tree: cgroups have no file-system root, so the processes phase (the
# tree's processes) leaves them, and so does a run without --phases; only naming the cgroups phase
# acts on them.
printf 'cgroup kubepods\n' > "$WORK/tree.conf"
"$NODE_RESET" --root "$WORK/root" --manifest "$WORK/tree.conf" --phases processes -o json run --yes \
        > "$WORK/tree1.json" 2> "$WORK/tree1.err"
assert "--root --phases processes: no cgroup row" jq_ "$WORK/tree1.json" "actions(r, kind='cgroup') == []"
"$NODE_RESET" --root "$WORK/root" --manifest "$WORK/tree.conf" -o json run --yes > "$WORK/tree2.json" 2> "$WORK/tree2.err"
assert "--root without --phases: no cgroups phase" jq_ "$WORK/tree2.json" "actions(r, kind='cgroup') == []"
for h in "${mounted[@]}"; do
        assert "$h/kubepods survives both" test -d "$h/kubepods/besteffort/podaa/beef"
done

# 1. Only the cgroup line: the busy cgroup is left and named, everything else of the tree goes.
run plan1 "cgroup kubepods" plan
n=${#mounted[@]}
assert "the plan has one cgroup row per hierarchy" jq_ "$WORK/plan1.json" \
        "len(actions(r, kind='cgroup')) == $n and all(a['detail'].endswith('remove deepest first') or
          a['detail'].endswith('once the processes above are gone') for a in actions(r, kind='cgroup'))"
assert "the plan counts the cgroups and the process of the first hierarchy" jq_ "$WORK/plan1.json" \
        "[a['detail'] for a in actions(r, kind='cgroup') if a['target'] == '$first/kubepods'][0].startswith(
          '8 cgroups, 1 process (PID $cpid first)')" ||
        jq -r '.phases[].actions[] | .target + ": " + .detail' "$WORK/plan1.json"
assert "the dry run removed nothing" test -d "$first/kubepods/besteffort/podaa/beef"
run run1 "cgroup kubepods" run --yes
rc=$?
assert "a busy cgroup fails the run (exit 2 or 1)" test "$rc" -ne 0
assert "the first hierarchy's row failed and names the process" jq_ "$WORK/run1.json" \
        "([(a['result'], a['message']) for a in actions(r, kind='cgroup') if a['target'] == '$first/kubepods'] ==
          [('failed', 'still holds 1 process (PID $cpid first): left')])"
assert "the other hierarchies' trees are gone" jq_ "$WORK/run1.json" \
        "all(a['result'] == 'changed' for a in actions(r, kind='cgroup') if a['target'] != '$first/kubepods')"
for h in "${mounted[@]:1}"; do
        assert "$h/kubepods is gone" test ! -e "$h/kubepods"
done
assert "the busy cgroup and its parents stay" test -d "$first/kubepods/burstable/$pod/c0ffee"
assert "its emptied siblings went" test ! -e "$first/kubepods/besteffort"
assert "the container process was not touched" kill -0 "$cpid"

# 2. With the process line: the same run kills the process first, then the tree goes.
run run2 "process /usr/local/bin/kube-workload
cgroup kubepods" run --yes
rc=$?
assert "a run that kills the process first exits 0" test "$rc" -eq 0
assert "the kill row comes before the cgroup row" jq_ "$WORK/run2.json" \
        "[(a['kind'], a['result']) for a in actions(r) if a['phase'] in ('processes', 'cgroups')] == [('kill', 'changed'), ('cgroup', 'changed')]"
assert "the first hierarchy's tree is gone" test ! -e "$first/kubepods"
kill -9 "$cpid" 2> /dev/null && fail "the process line did not kill the container process"
wait "$cpid" 2> /dev/null
for h in "${mounted[@]}"; do
        assert "$h/system.slice/keep-me stays" test -d "$h/system.slice/keep-me"
done

# 3. Again: nothing to do, one absent row; status agrees.
run run3 "cgroup kubepods" run --yes
assert "a second run changes nothing" jq_ "$WORK/run3.json" \
        "([(a['target'], a['result'], a['detail']) for a in actions(r, kind='cgroup')] ==
          [('kubepods', 'unchanged', 'no mounted cgroup hierarchy holds it')])"
run status "cgroup kubepods" status
assert "status: no residue" jq_ "$WORK/status.json" "r['residue'] == []"

# 4. A hierarchy replaced by a tmpfs is not a cgroup file system: nothing there is acted on.
umount "$first" && mount -t tmpfs nr-fake "$first" && mkdir -p "$first/kubepods/x"
"$NODE_RESET" --root "$WORK/root" --manifest "$WORK/run3.conf" --phases cgroups -o json plan > "$WORK/plan5.json"
assert "a tmpfs at a hierarchy's place holds no cgroup row" jq_ "$WORK/plan5.json" \
        "'$first/kubepods' not in [a['target'] for a in actions(r, kind='cgroup')]"
assert "its directory was not removed" test -d "$first/kubepods/x"

finish
