#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# docs/node-reset.8 renders cleanly (issue 16): no groff or man warning, no words glued together by
# an alternating-font macro (".BR X ). Next words" renders "X).Nextwords"), no "word ," from a
# ".B word ," that should be ".BR word ,"; the OUTPUT section names the schema file, and SEE ALSO
# cites no page that does not exist (kubeadm has none). Reads files only: no namespace needed.
. "$(dirname "$0")/lib.sh"
require_cmd groff python3
PAGE=$TOP/docs/node-reset.8
OUT=$(mktemp -d /tmp/nr-man.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

groff -ww -z -man -t "$PAGE" 2> "$OUT/groff.err"
assert "groff -ww -z: no warning" test ! -s "$OUT/groff.err"
[ -s "$OUT/groff.err" ] && cat "$OUT/groff.err"
if command -v man > /dev/null; then
        LC_ALL=C.UTF-8 MANWIDTH=100 man --warnings -l "$PAGE" > "$OUT/page.txt" 2> "$OUT/man.err"
        assert "man --warnings: no warning" test ! -s "$OUT/man.err"
        [ -s "$OUT/man.err" ] && cat "$OUT/man.err"
else
        LC_ALL=C.UTF-8 groff -man -Tutf8 -rLL=100n "$PAGE" > "$OUT/page.txt" 2> /dev/null
fi
sed -i 's/.\x08//g' "$OUT/page.txt"

# An alternating-font macro (.BR .RB .IR .RI .BI .IB) joins its arguments without spaces: three
# plain words in a row among them are a sentence glued together (".BI unix:// PATH" is meant).
python3 - "$PAGE" > "$OUT/glued.txt" <<'PY'
import re, shlex, sys
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    m = re.match(r"\.(BR|RB|IR|RI|BI|IB)\s+(.*)", line)
    if not m:
        continue
    try:
        args = shlex.split(m.group(2).replace("\\", "\\\\"), posix=True)
    except ValueError:
        continue
    for a, b, c in zip(args, args[1:], args[2:]):
        if all(re.fullmatch(r"[A-Za-z][A-Za-z'-]*", w) for w in (a, b, c)):
            print("%d: %s" % (n, line.rstrip()))
            break
PY
assert "no words glued by an alternating-font macro" test ! -s "$OUT/glued.txt"
cat "$OUT/glued.txt"
assert "the rendered page has no glued sentence (').Next')" eval '! grep -nE "[a-z)]\.[A-Z][a-z]+[a-z]{3}" "$OUT/page.txt"'
assert "the rendered page has no 'word ,'" eval '! grep -nE "[A-Za-z] ,( |$)" "$OUT/page.txt"'
assert "OUTPUT names the JSON Schema file" grep -q "report.schema.json" "$OUT/page.txt"
assert "OUTPUT no longer sends the reader to the README for the schema" eval '! grep -q "see the README for the schema" "$OUT/page.txt"'
assert "SEE ALSO cites no kubeadm(1)" eval '! grep -q "kubeadm(1)" "$OUT/page.txt"'
finish
