#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every source and header of the modules (agent/, netreset/, cri/, etcd/, grpc/, dlib/, lib/,
# include/) holds one object a reader can take in (issue 44): at most 700 lines, and it says what it
# is in its first two lines (the SPDX line, then a comment). A file past the bound is split along its
# objects, each file named for the one it holds (pods.c into pods-batch.c, pods-prepare.c, ...);
# there is no list of exceptions. And no shell function is defined twice among the test files that
# are sourced into one shell. Reads files only.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1

MAX_LINES=700
SPDX="/* SPDX-License-Identifier: LGPL-2.1-or-later */"

files=$(find agent netreset cri etcd grpc dlib lib include -name '*.[ch]' | LC_ALL=C sort)
assert "the modules have sources" test -n "$files"
long=$(printf '%s\n' "$files" | xargs wc -l | awk -v max="$MAX_LINES" '$2 != "total" && $1 > max { print $2, $1 }')
bare=$(printf '%s\n' "$files" | xargs awk -v spdx="$SPDX" '
        FNR == 1 && $0 != spdx { print FILENAME; nextfile }
        FNR == 2 { if ($0 !~ /^\/\* /) print FILENAME; nextfile }')
while read -r f n; do
        [ -z "$f" ] || echo "FAIL: $f: $n lines, more than $MAX_LINES: split it along the objects it holds"
done <<< "$long"
while read -r f; do
        [ -z "$f" ] || echo "FAIL: $f: does not open with the SPDX line and a comment saying what it holds"
done <<< "$bare"
# Shell files sourced into one shell (tests/e2e-k8s/run.sh sources its scenario files; the fleet
# tests source tests/lab/lab.sh beside tests/integration/lib.sh): a function defined twice is
# silently replaced by the later file's (e2e-k8s's side-by-side pods bench once ran fleet.sh's drain
# comparison so).
twice=$(for group in "tests/e2e-k8s/*.sh" "tests/lab/lab.sh tests/integration/lib.sh"; do
        # shellcheck disable=SC2086 # the group's globs and names, split on purpose
        grep -HoE '^[A-Za-z_][A-Za-z0-9_]*\(\) *\{' $group | sed 's/().*//' |
                awk -F: '{ n[$2]++; f[$2] = f[$2] " " $1 } END { for (k in n) if (n[k] > 1) print k ":" f[k] }'
done)
while read -r l; do
        [ -z "$l" ] || echo "FAIL: defined twice in files sourced together: $l"
done <<< "$twice"
assert "no shell function defined twice among the files sourced together" test -z "$twice"
assert "no source or header over $MAX_LINES lines" test -z "$long"
assert "every source and header opens with the SPDX line and what it holds" test -z "$bare"
finish
