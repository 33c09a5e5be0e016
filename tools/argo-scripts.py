#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# The step scripts of an Argo WorkflowTemplate live in files beside it (shellcheck reads them, the
# tests run them); the template carries exactly their text. A script template's source names its
# file in a comment on the block scalar's header line, relative to the template:
#
#       source: |  # steps/plan.sh
#         #!/bin/sh
#         ...
#
#   tools/argo-scripts.py --write TEMPLATE    put each file's text into its block
#   tools/argo-scripts.py --check TEMPLATE    exit 1 when a block differs from its file (a diff is
#                                             printed), when a script template's source names no
#                                             file, or when a script holds "{{" (Argo would
#                                             substitute into it: values go in through env)
import difflib
import os
import re
import sys

HEADER = re.compile(r"^(?P<indent> *)source: \|(?P<chomp>[-+]?) +# +(?P<file>\S+\.sh)\s*$")


def blocks(lines):
    """(header index, end index, indent, file) of each source block: the block runs to the first
    line that is neither blank nor indented deeper than its key."""
    out = []
    for i, line in enumerate(lines):
        m = HEADER.match(line)
        if not m:
            continue
        if m.group("chomp"):
            raise ValueError("line %d: write 'source: |' (a script ends with one newline)" % (i + 1))
        indent = len(m.group("indent"))
        j = i + 1
        while j < len(lines) and (lines[j].strip() == "" or len(lines[j]) - len(lines[j].lstrip(" ")) > indent):
            j += 1
        # blank lines before the next key belong to the YAML, not the script
        while j > i + 1 and lines[j - 1].strip() == "":
            j -= 1
        out.append((i, j, indent, m.group("file")))
    return out


def render(path):
    """The template's text with every block replaced by its file's text, and the problems found."""
    base = os.path.dirname(os.path.abspath(path))
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    problems, out, last = [], [], 0
    for i, j, indent, name in blocks(lines):
        with open(os.path.join(base, name), encoding="utf-8") as f:
            text = f.read()
        if not text.endswith("\n") or text.endswith("\n\n"):
            problems.append("%s: must end with exactly one newline" % name)
        if "{{" in text:
            problems.append("%s: holds '{{', which Argo would substitute: pass values through env" % name)
        if "\t" in text:
            problems.append("%s: holds a tab, which a YAML block scalar does not keep as indentation" % name)
        out.extend(lines[last:i + 1])
        out.extend((" " * (indent + 2) + l) if l else "" for l in text[:-1].split("\n"))
        last = j
    out.extend(lines[last:])
    return "\n".join(out), problems


def unnamed_sources(path):
    """Script templates whose source does not come from a file (by YAML, not by text)."""
    import yaml

    with open(path, encoding="utf-8") as f:
        text = f.read()
    named = sum(1 for l in text.split("\n") if HEADER.match(l))
    docs = [d for d in yaml.safe_load_all(text) if d]
    scripts = [t["name"] for d in docs for t in (d.get("spec") or {}).get("templates") or [] if "script" in t]
    return [] if named == len(scripts) else ["%d script templates (%s), %d sources name their file" %
                                              (len(scripts), ", ".join(scripts), named)]


def same_as_files(path):
    """Each script template's source, as YAML reads it, is its file's text byte for byte."""
    import yaml

    base = os.path.dirname(os.path.abspath(path))
    with open(path, encoding="utf-8") as f:
        text = f.read()
    files = [m.group("file") for m in map(HEADER.match, text.split("\n")) if m]
    docs = [d for d in yaml.safe_load_all(text) if d]
    sources = [t["script"]["source"] for d in docs for t in (d.get("spec") or {}).get("templates") or [] if "script" in t]
    bad = []
    for name, src in zip(files, sources):
        with open(os.path.join(base, name), encoding="utf-8") as f:
            if f.read() != src:
                bad.append("%s: the template's source, as YAML reads it, is not the file's text" % name)
    return bad


def main(argv):
    if len(argv) != 2 or argv[0] not in ("--write", "--check"):
        print("usage: argo-scripts.py --write|--check TEMPLATE", file=sys.stderr)
        return 2
    mode, path = argv
    with open(path, encoding="utf-8") as f:
        current = f.read()
    try:
        wanted, problems = render(path)
    except (OSError, ValueError) as e:
        print("%s: %s" % (path, e), file=sys.stderr)
        return 1
    if mode == "--write":
        if wanted != current:
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.write(wanted)
            os.replace(path + ".tmp", path)
            print("%s: scripts written" % path)
    else:
        if wanted != current:
            sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), wanted.splitlines(True),
                                                       path, path + " (from its scripts)"))
            problems.append("%s differs from its scripts: tools/argo-scripts.py --write %s" % (path, path))
        else:
            problems.extend(unnamed_sources(path) + same_as_files(path))
    for p in problems:
        print("%s: %s" % (path, p), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
