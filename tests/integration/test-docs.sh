#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The man pages are the operator's one reference (issue 35), and the package carries only what an
# operator reads:
#   - node-reset.conf(5) renders without a groff or man warning (test-man.sh checks node-reset(8));
#   - node-reset(8) against the program's tables ("help -o json"), both ways: OPTIONS has a tagged
#     entry per option (with its short form; =DURATION for each duration option), its "Phase
#     options" exactly the phases' options; COMMANDS an entry per command, each listing exactly the
#     options the command takes; SYNOPSIS a line per command; PHASES names the phases in order;
#   - docs/HACKING.md's fuzz table names exactly tests/fuzz/fuzz-*.c, its e2e-k8s bullets exactly the
#     scenarios of tests/e2e-k8s/run.sh's case (whose header names each too), its default list
#     run.sh's;
#   - every directive of the manifest parser's table (read from the source, checked complete
#     against the DirectiveType enum) and "include" is an entry of node-reset.conf(5)'s FORMAT;
#   - what "make install" and the Debian package's lists (debian/node-reset.docs, .examples) put
#     down, and the built .deb's contents when test-deb.sh left one in $O/deb, are the binary, the
#     man pages, the units, the catalog, the manifests and schema, the completion and the operator's
#     docs and examples, and nothing else: no test, header, library or contributor document.
# Reads files, runs --help and "make install" into a temporary DESTDIR: no namespace needed.
. "$(dirname "$0")/lib.sh"
require_cmd groff man python3 make
[ -x "$NODE_RESET" ] || skip "build $NODE_RESET first"
PAGE8=$TOP/docs/node-reset.8
PAGE5=$TOP/docs/node-reset.conf.5
T=$(mktemp -d /tmp/nr-docs.XXXXXX)
trap 'rm -rf "$T"' EXIT

# --- node-reset.conf(5) renders cleanly ------------------------------------------------------------
groff -ww -z -man -t "$PAGE5" 2> "$T/groff.err"
assert "node-reset.conf(5): groff -ww -z, no warning" test ! -s "$T/groff.err"
cat "$T/groff.err"
LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$PAGE5" > /dev/null 2> "$T/man.err"
assert "node-reset.conf(5): man --warnings, no warning" test ! -s "$T/man.err"
cat "$T/man.err"

# One paragraph a line (no line is near 10,000 columns), so that nothing is hyphenated or broken.
render() { LC_ALL=C.UTF-8 MANWIDTH=10000 man -l "$1" 2> /dev/null | sed 's/.\x08//g'; }
render "$PAGE8" > "$T/page8.txt"
render "$PAGE5" > "$T/page5.txt"
"$NODE_RESET" --help > "$T/help.txt"
assert "--help exits 0" test $? -eq 0
"$NODE_RESET" help -o json > "$T/tables.json"
assert "help -o json exits 0" test $? -eq 0

# --- The program's commands, options and phases in node-reset(8), against the tables -------------
# The tables are the program's own ("help -o json": the verb table, each verb's options, the phase
# table); each list of the page is checked against them both ways, so that a new option, command or
# phase fails here until the page names it, and a name the program dropped fails too.
python3 - "$T/tables.json" "$T/page8.txt" "$T/help.txt" > "$T/cli.out" <<'PY'
import json, re, sys
tables = json.load(open(sys.argv[1], encoding="utf-8"))
page = open(sys.argv[2], encoding="utf-8").read().split("\n")
help_text = open(sys.argv[3], encoding="utf-8").read()

def section(name, sub=None):  # a section's (or a subsection's) lines, its heading excluded
    out, inside, inside_sub = [], False, sub is None
    for line in page:
        if re.match(r"^[A-Z][A-Z ]+$", line):
            inside = line.strip() == name
        elif inside and re.match(r"^   \S", line):
            inside_sub = sub is None or line.strip() == sub
        elif inside and inside_sub:
            out.append(line)
    return out

def report(ok, what):
    print(("ok " if ok else "FAIL ") + what)

def both_ways(what, documented, known):
    for x in sorted(known - documented):
        report(False, "%s: the page lacks %s" % (what, x))
    for x in sorted(documented - known):
        report(False, "%s: the page names %s, which the program does not have" % (what, x))
    report(documented == known, "%s: the page and the tables agree (%d)" % (what, len(known)))

options = {o["name"]: o for o in tables["options"]}
commands = {c["name"]: c for c in tables["commands"]}
by_short = {o["short"]: o["name"] for o in tables["options"] if o["short"]}
report(len(options) > 40 and len(commands) >= 10, "the tables list options and commands")

# OPTIONS: a tagged entry per option, with its short form; DURATION where the option takes one.
tags, metavars = {}, {}
for line in section("OPTIONS"):
    m = re.match(r"^ {7}(?:-([A-Za-z]), )?--([a-z][a-z0-9-]+)(?:\[?=([A-Z]+))?", line)
    if m:
        tags[m.group(2)] = m.group(1)
        metavars[m.group(2)] = m.group(3)
both_ways("OPTIONS", set(tags), set(options))
for name, o in sorted(options.items()):
    if o["short"] and name in tags:
        report(tags[name] == o["short"], "OPTIONS gives --%s its short form -%s" % (name, o["short"]))
both_ways("OPTIONS, the options taking a DURATION", {n for n, m in metavars.items() if m == "DURATION"},
          {n for n, o in options.items() if o["metavar"] == "DURATION"})
report("SECONDS" not in metavars.values(), "OPTIONS: no option takes SECONDS (a DURATION is seconds too)")
phase_tags = set()
for line in section("OPTIONS", "Phase options"):
    m = re.match(r"^ {7}--([a-z][a-z0-9-]+)", line)
    if m:
        phase_tags.add(m.group(1))
both_ways("OPTIONS, Phase options", phase_tags, {n for n, o in options.items() if o["phase"]})

# COMMANDS: an entry per command, and its "Options:" list, the options it takes.
entries, listed, current = [], {}, None
for line in section("COMMANDS"):
    m = re.match(r"^ {7}([a-z][a-z -]*?)(?: [A-Z.\[\]]+|\s{2,}|$)", line)
    if m and not line.startswith("        "):
        current = m.group(1).strip()
        entries.append(current)
    m = re.match(r"^ {14}Options: (.*)\.$", line)
    if m and current:
        words = set()
        for w in re.split(r", | and ", m.group(1)):
            if w == "the phase options":
                words |= {n for n, o in options.items() if o["phase"]}
            else:
                words.add(by_short.get(w[1:], w[2:]) if not w.startswith("--") else w[2:])
        listed[current] = words
both_ways("COMMANDS", set(entries), set(commands))
for name, c in sorted(commands.items()):
    report(name in listed, "COMMANDS: '%s' lists its options" % name)
    both_ways("COMMANDS, the options of '%s'" % name, listed.get(name, set()), set(c["options"]))

# SYNOPSIS: a line per command.
synopsis = {m.group(1) for l in section("SYNOPSIS") for m in [re.match(r"^ {7}node-reset ([a-z][a-z -]*?)(?: \[|$)", l)] if m}
both_ways("SYNOPSIS", synopsis, set(commands))

# A table's words an option takes (--profile's profiles, --with-runtime's runtimes, --output's
# formats): its OPTIONS entry names each.
entry, entries_text = None, {}
for line in section("OPTIONS"):
    m = re.match(r"^ {7}(?:-[A-Za-z], )?--([a-z][a-z0-9-]+)", line)
    if m:
        entry = m.group(1)
    elif entry:
        entries_text[entry] = entries_text.get(entry, "") + " " + line
for name, o in sorted(options.items()):
    if o["complete"] == "word" and o["values"]:
        missing = [v for v in o["values"] if not re.search(r"(?<![\w-])" + re.escape(v) + r"(?![\w-])", entries_text.get(name, "") + " " + next((l for l in section("OPTIONS") if "--" + name in l), ""))]
        report(not missing, "OPTIONS: --%s names every word it takes%s" % (name, " (not: %s)" % ", ".join(missing) if missing else ""))

# PHASES: its first paragraph names the phases in their order, as --help does.
phases = tables["phases"]
first = next((l for l in section("PHASES") if l.strip()), "")
named = []
for w in re.findall(r"[a-z][a-z-]*", first):
    if w in phases and w not in named:
        named.append(w)
report(named == phases, "PHASES names every phase in the table's order (%s)" % ", ".join(named))
m = re.search(r"^Phases, in order: (.*?)\.$", help_text, re.S | re.M)
report(m is not None and [p.strip() for p in m.group(1).replace("\n", " ").split(",")] == phases,
       "--help lists the phases of the table, in order")
PY
while read -r verdict what; do
        assert "$what" test "$verdict" = ok
done < "$T/cli.out"
assert "the options check ran" grep -q 'OPTIONS: the page and the tables agree' "$T/cli.out"

# --- The contributor docs against the tree: HACKING.md's fuzz table and e2e-k8s scenarios ------------
HACKING=$TOP/docs/HACKING.md
(cd "$TOP/tests/fuzz" && ls fuzz-*.c | sed 's/\.c$//' | sort) > "$T/fuzz.tree"
grep -oE '^\| `fuzz-[a-z0-9-]+` \|' "$HACKING" | grep -oE 'fuzz-[a-z0-9-]+' | sort > "$T/fuzz.doc"
assert "HACKING.md's fuzz table names every tests/fuzz/fuzz-*.c, and nothing else ($(wc -l < "$T/fuzz.tree") targets)" \
        cmp -s "$T/fuzz.tree" "$T/fuzz.doc"
diff "$T/fuzz.tree" "$T/fuzz.doc" | sed -n 's/^< /  not in HACKING.md: /p; s/^> /  not in tests\/fuzz: /p'
RUN_SH=$TOP/tests/e2e-k8s/run.sh
# The scenarios are run.sh's case, the "name) scenario_..." lines.
sed -nE 's/^ +([a-z0-9-]+)\) scenario_[a-z_]+ ;;$/\1/p' "$RUN_SH" | sort > "$T/scenarios.tree"
sed -n '/^## Real Kubernetes/,/^## /p' "$HACKING" | grep -oE '\*\*[a-z0-9-]+\*\*' | tr -d '*' | sort -u > "$T/scenarios.doc"
assert "HACKING.md's e2e-k8s bullets name every scenario of run.sh's case, and nothing else ($(wc -l < "$T/scenarios.tree"))" \
        test "$(wc -l < "$T/scenarios.tree")" -ge 8 -a "$(cat "$T/scenarios.tree")" = "$(cat "$T/scenarios.doc")"
diff "$T/scenarios.tree" "$T/scenarios.doc" | sed -n 's/^< /  not in HACKING.md: /p; s/^> /  not in run.sh: /p'
while read -r sc; do
        assert "run.sh's header comment names the scenario $sc" \
                eval "sed -n '1,/^set -u/p' \"\$RUN_SH\" | grep -qE '\"$sc\"|^#   $sc '"
done < "$T/scenarios.tree"
default=$(sed -nE 's/.*E2E_K8S_SCENARIOS:-([a-z0-9 -]+)\}.*/\1/p' "$RUN_SH" | head -n1)
assert "run.sh has a default scenario list" test -n "$default"
assert "HACKING.md gives run.sh's default list ($default)" grep -qF "(default \`$default\`" "$HACKING"
assert "run.sh's header gives its default list" grep -qF "\"$default\"" "$RUN_SH"

# --- The manifest's directives in node-reset.conf(5) ---------------------------------------------
# The parser's table: "[DIRECTIVE_REMOVE] = { "remove", ..." rows, wherever the parser keeps them;
# complete when it has a row for each DirectiveType value. "include" is read before the table.
grep -rhoE '\[DIRECTIVE_[A-Z0-9_]+\] *= *\{ *"[a-z][a-z0-9-]*"' "$TOP/agent" | sed -E 's/.*"(.*)"/\1/' |
        sort -u > "$T/directives"
n_enum=$(grep -rlE 'typedef enum DirectiveType' "$TOP/agent" --include='*.h' | head -n1 |
        xargs sed -n '/typedef enum DirectiveType/,/}/p' | grep -cE '^\s*DIRECTIVE_[A-Z0-9_]+')
assert "the parser's table has a row per DirectiveType value ($(wc -l < "$T/directives") rows, $n_enum values)" \
        test "$(wc -l < "$T/directives")" -eq "$n_enum" -a "$n_enum" -gt 20
assert "the parser reads 'include' itself" grep -rqE 'streq\(words\[0\], "include"\)' "$TOP/agent"
echo include >> "$T/directives"
sed -n '/^FORMAT$/,/^[A-Z][A-Z ]*$/p' "$T/page5.txt" | sed '1d;$d' > "$T/format.txt"
while read -r d; do
        assert "node-reset.conf(5) FORMAT has an entry for '$d'" grep -qE "^ {7}$d( |\$)" "$T/format.txt"
done < "$T/directives"
assert "node-reset(8) points to node-reset.conf(5) for the manifest" grep -q 'node-reset.conf(5)' "$T/page8.txt"

# --- What is installed: only what an operator uses --------------------------------------------------
# PREFIX=/usr paths, as the package has them (a man page gzipped or not, units in /lib or /usr/lib).
cat > "$T/allowed" <<'EOF'
^/usr/sbin/node-reset$
^/usr/share/man/man8/node-reset\.8(\.gz)?$
^/usr/share/man/man5/node-reset\.conf\.5(\.gz)?$
^(/usr)?/lib/systemd/system/node-reset[a-z-]*\.(service|timer|socket)$
^/usr/lib/systemd/catalog/node-reset\.catalog$
^/usr/share/node-reset/report\.schema\.json$
^/usr/share/node-reset/manifests/(profiles/)?[a-z0-9-]+\.conf$
^/usr/share/bash-completion/completions/node-reset$
^/usr/share/zsh/vendor-completions/_node-reset$
^/usr/share/fish/vendor_completions.d/node-reset\.fish$
^/usr/share/doc/node-reset/(README\.md|rescue\.md|copyright|changelog(\.Debian)?)(\.gz)?$
^/usr/share/doc/node-reset/examples/ansible/([a-z_]+/)*[A-Za-z0-9_.-]+\.(yml|md|py)(\.gz)?$
^/usr/share/doc/node-reset/examples/ansible/\.ansible-lint-ignore$
^/usr/share/doc/node-reset/examples/config/(README\.md|manifest\.conf|node-reset\.env|report-headers)(\.gz)?$
^/usr/share/doc/node-reset/examples/argo/(steps/)?[A-Za-z-]+\.(yaml|sh|md)(\.gz)?$
^/usr/share/lintian/overrides/node-reset$
EOF
check_operator_only() { # WHAT FILE-LIST: every file is one an operator uses, and the must-haves are there
        local what=$1 list=$2 f
        assert "$what: lists files" test -s "$list"
        grep -vEf "$T/allowed" "$list" > "$T/extra"
        assert "$what: nothing but what an operator uses" test ! -s "$T/extra"
        sed 's/^/  not for operators: /' "$T/extra"
        assert "$what: no header, library, object or test program" \
                eval '! grep -E "\.(h|a|o)$|/tests?/|/test-|fuzz|bench" "$list"'
        assert "$what: no contributor document" eval '! grep -E "HACKING|ARCHITECTURE|BENCHMARKS|STYLE" "$list"'
        for f in /usr/sbin/node-reset /usr/share/man/man8/node-reset.8 /usr/share/man/man5/node-reset.conf.5 \
                /usr/share/node-reset/report.schema.json /usr/share/node-reset/manifests/default.conf; do
                assert "$what: has $f" grep -qE "^${f//./\\.}(\\.gz)?\$" "$list"
        done
        for f in "$TOP"/units/*; do
                assert "$what: has the unit $(basename "$f")" grep -qE "/lib/systemd/system/$(basename "$f")\$" "$list"
        done
}

(cd "$TOP" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s O="$O" install DESTDIR="$T/inst" PREFIX=/usr) \
        > "$T/install.log" 2>&1
assert "make install DESTDIR PREFIX=/usr succeeds" test $? -eq 0
cat "$T/install.log"
(cd "$T/inst" && find . -type f | sed 's|^\.||' | sort) > "$T/installed"
# What dh_installdocs and dh_installexamples add from debian/'s lists.
: > "$T/package-docs"
while read -r f; do
        [ -n "$f" ] || continue
        assert "debian/node-reset.docs: $f exists" test -f "$TOP/$f"
        echo "/usr/share/doc/node-reset/$(basename "$f")" >> "$T/package-docs"
done < "$TOP/debian/node-reset.docs"
while read -r d; do
        [ -n "$d" ] || continue
        (cd "$TOP/$(dirname "$d")" && find "$(basename "$d")" -type f) |
                sed 's|^|/usr/share/doc/node-reset/examples/|' >> "$T/package-docs"
done < "$TOP/debian/node-reset.examples"
assert "the package's README is the operator's" grep -qx /usr/share/doc/node-reset/README.md "$T/package-docs"
sort -u "$T/installed" "$T/package-docs" > "$T/package-lists"
check_operator_only "make install + debian lists" "$T/package-lists"

deb=$(ls -t "$O"/deb/node-reset_*.deb 2> /dev/null | head -n1)
if [ -n "$deb" ] && command -v dpkg-deb > /dev/null; then
        dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's|^\./|/|' | grep -v '/$' | sort > "$T/deb"
        check_operator_only "$(basename "$deb")" "$T/deb"
else
        echo "no .deb in $O/deb (test-deb.sh leaves one): checked the install lists only"
fi
finish
