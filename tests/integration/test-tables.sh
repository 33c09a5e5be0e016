#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An installer's or a CNI's facts live in their tables (agent/config/installers.[ch], cnis.[ch]): this
# test reads agent/'s sources and fails on a string literal elsewhere that spells a path of a table's
# (or lies beneath one), a relative path the tables place beneath a data directory ("%s/server/db/etcd"),
# or a CNI's link name or chain prefix. Comments are not read; a path is compared component by
# component ("/etc/kubernetes-x" is not "/etc/kubernetes"). The built-in profiles' texts
# (manifests/) are the other place an installer's paths are written: they are not agent/ sources.
# Reads files only: no namespace needed.
. "$(dirname "$0")/lib.sh"
require_cmd python3
cd "$TOP" || exit 1

python3 - <<'PY'
import fnmatch, glob, re, sys

TABLES = {"agent/config/installers.c", "agent/config/installers.h", "agent/config/cnis.c", "agent/config/cnis.h"}
# Files that may spell one, and why (keep this short).
ALLOW = {
    # The runtimes' own compiled-in default for their CNI configuration directory (containerd's CRI
    # conf_dir, CRI-O's network_dir), the same words as cnis.h's CNI_CONF_DIR: agent/os/ lies below
    # agent/config/ and may not include the table (test-layers.sh).
    "agent/os/runtime-info.c",
}

LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')

def strip_comments(text):
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            out.append("\n" * text.count("\n", i, j))
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = j if j >= 0 else n
        elif text[i] == '"':
            m = LITERAL.match(text, i)
            out.append(m.group(0) if m else text[i])
            i = m.end() if m else i + 1
        elif text[i] == "'":
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)

def source(path):
    text = strip_comments(open(path, encoding="utf-8").read())
    return re.sub(r'(?m)^[ \t]*#[ \t]*include[^\n]*', "", text)

def literals(path):
    text = source(path)
    for m in LITERAL.finditer(text):
        yield text.count("\n", 0, m.start()) + 1, m.group(1)

# What the tables spell: absolute paths (a glob is matched as one), paths beneath a data directory
# (relative, two components or more), and cnis.c's link names ({ what, NULL, name } marks) and chain
# prefixes.
absolute, relative, names = set(), set(), set()
for t in sorted(TABLES):
    for _, s in literals(t):
        if s.startswith("/") and s.count("/") >= 2:
            absolute.add(s.rstrip("/"))
        elif re.fullmatch(r"[A-Za-z0-9_.*+-]+(/[A-Za-z0-9_.*+-]+)+", s):
            relative.add(s)
cnis = source("agent/config/cnis.c")
for m in re.finditer(r'\{\s*"[^"]*",\s*NULL,\s*((?:"[^"]*"\s*)+)\}', cnis):
    names.add("".join(LITERAL.findall(m.group(1))))
for m in re.finditer(r'\.chain_prefixes\s*=\s*\{([^}]*)\}', cnis):
    names.update(LITERAL.findall(m.group(1)))

def spells(s):
    if s.startswith("/"):
        for a in absolute:
            if any(c in a for c in "*?["):
                if fnmatch.fnmatchcase(s, a) or fnmatch.fnmatchcase(s, a + "/*"):
                    return a
            elif s == a or s.startswith(a + "/"):
                return a
    for r in relative:
        if s == r or s.endswith("/" + r) or ("/" + r + "/") in s or s.startswith(r + "/"):
            return r
    return s if s in names else None

bad = 0
for f in sorted(glob.glob("agent/**/*.[ch]", recursive=True)):
    if f in TABLES or f in ALLOW:
        continue
    for line, s in literals(f):
        hit = spells(s)
        if hit:
            print(f"FAIL: {f}:{line}: \"{s}\" spells the tables' {hit!r}: read it from agent/config/installers.h or cnis.h")
            bad += 1
print(f"{len(absolute)} absolute paths, {len(relative)} data-dir paths, {len(names)} names in the tables")
if bad:
    print(f"{bad} literal(s) outside the tables")
    sys.exit(1)
print("ok: no installer's or CNI's path spelled outside the tables")
PY
