#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every source file of the modules (agent/, netreset/, cri/, etcd/, grpc/, dlib/, include/, lib/) is as
# .clang-format lays it out ("make format-check"). The layout is Debian 12's clang-format 14's:
# another major version formats some constructs differently, so it is not asked. Reads files only.
. "$(dirname "$0")/lib.sh"
require_cmd clang-format make
cd "$TOP" || exit 1
v=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
[ "$v" = 14 ] || skip "clang-format ${v:-of unknown version} is not 14, the version the tree is laid out with (Debian 12's)"
out=$(make -s --no-print-directory format-check 2>&1)
rc=$?
assert "make format-check: every module source is formatted" test $rc -eq 0
[ $rc -eq 0 ] || printf '%s\n' "$out" | grep 'warning:' | cut -d: -f1,2 | sort -u | head -20
srcs=$(make -s --no-print-directory print-FORMAT_SRCS | tr ' ' '\n')
for m in agent netreset cri etcd grpc dlib include lib; do
        assert "format-check covers $m/" sh -c "printf '%s\n' \"\$1\" | grep -q '^$m/'" _ "$srcs"
done
finish
