#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The build enforces the module boundaries (issue 17). Debian's pkg-config gives empty --cflags
# for most libraries, so compiling each module with only its own packages' flags cannot catch a
# module that includes another library's header; this test reads the sources instead:
#   - a library header (<curl/...>, <libmnl/...>, ...) only in a module whose *_PKGS in the
#     Makefile lists that library (dlib/ forwards to all of them);
#   - dependencies point one way: agent/ uses the libraries, netreset/ never includes agent/,
#     cri/ or etcd/; cri/ and etcd/ use grpc/ and never each other; grpc/ and dlib/ use only
#     include/; include/ is self-contained;
#   - lib/ is the compiled half of include/ (util-linux's lib/ beside include/, systemd's
#     src/basic): it uses include/ only, no library at all, and each lib/X.c is include/X.h's; a
#     function include/ defines inline is a one-liner (at most 6 lines of body: a cleanup helper,
#     a comparison), anything longer is compiled once in lib/;
#   - inside agent/, folders in layers, none including a folder above its own: the layers are the
#     one line of docs/ARCHITECTURE.md that lists them (`base/` → `os/` → ...), read from there;
#     a folder of agent/ the line does not name fails;
#   - no phase includes another phase's header (issue 44): they share through the Context and
#     agent/node/;
#   - no cycle among the project's headers, nor among its sources (a.c uses b.c when it includes b.h).
# Reads files only: no namespace needed.
. "$(dirname "$0")/lib.sh"
require_cmd python3 make
cd "$TOP" || exit 1

pkgs() { make -s --no-print-directory "print-$1"; }
python3 - "AGENT=$(pkgs AGENT_PKGS)" "NETRESET=$(pkgs NETRESET_PKGS)" "GRPC=$(pkgs GRPC_PKGS)" \
        "CRI=$(pkgs CRI_PKGS)" "ETCD=$(pkgs ETCD_PKGS)" "DLIB=$(pkgs DLIB_PKGS)" \
        "LIB=$(pkgs LIB_PKGS)" <<'PY'
import glob, re, sys

declared = {k: set(v.split()) for k, v in (a.split("=", 1) for a in sys.argv[1:])}
# A library header by its path prefix, as the packages install them on Debian 12.
owner = [("curl/", "libcurl"), ("systemd/", "libsystemd"), ("yaml.h", "yaml-0.1"),
         ("openssl/", "libcrypto"), ("libmnl/", "libmnl"), ("libnftnl/", "libnftnl"),
         ("libiptc/libip6tc.h", "libip6tc"), ("libiptc/", "libip4tc"), ("libipset/", "libipset"),
         ("bpf/", "libbpf"), ("sqlite3.h", "sqlite3")]
# Which project folders each module may include ("include" is the base's headers, "lib" its code).
may_use = {
    "agent": {"include", "agent", "netreset", "cri", "etcd", "grpc", "dlib"},
    "netreset": {"include", "netreset", "dlib"},
    "cri": {"include", "cri", "grpc", "dlib"},
    "etcd": {"include", "etcd", "grpc", "dlib"},
    "grpc": {"include", "grpc", "dlib"},
    "dlib": {"include", "dlib"},
    "lib": {"include"},
    "include": {"include"},
}
base = {p.split("/", 1)[1] for p in glob.glob("include/*.h")}
failures = 0
def fail(msg):
    global failures
    failures += 1
    print("FAIL: " + msg)

graph = {}  # file -> the project headers it includes
libs = {}   # file -> the libraries whose headers it includes itself
for module, allowed in may_use.items():
    files = glob.glob(f"{module}/**/*.[ch]", recursive=True)
    if not files:
        fail(f"{module}/ has no sources")
    pkgs = declared.get(module.upper(), set())
    for f in sorted(files):
        for n, line in enumerate(open(f, encoding="utf-8"), 1):
            m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
            if not m:
                continue
            kind, name = m.groups()
            if kind == "<":
                lib = next((p for prefix, p in owner if name.startswith(prefix)), None)
                if lib:
                    libs.setdefault(f, set()).add(lib)
                    if lib not in pkgs:
                        fail(f"{f}:{n}: <{name}> is {lib}'s, which {module.upper()}_PKGS does not list")
                continue
            target = name if "/" in name else ("include/" + name if name in base else None)
            if target is None:
                fail(f"{f}:{n}: \"{name}\" is neither a base header nor a module path")
                continue
            folder = target.split("/", 1)[0]
            if folder not in allowed:
                fail(f"{f}:{n}: {module}/ must not depend on {folder}/ (\"{name}\")")
            graph.setdefault(f, set()).add(target)

# lib/X.c implements include/X.h: a lib/ source without its header is a second base.
for f in sorted(glob.glob("lib/*.c")):
    h = "include/" + f.split("/", 1)[1][:-2] + ".h"
    if h not in graph.get(f, ()):
        fail(f"{f} does not include {h}, the header it implements")

# include/ keeps declarations and one-liners: an inline function of more than 6 lines of body
# belongs in lib/ (systemd's CODING_STYLE: inline in a header only if it is just a few lines).
for h in sorted(glob.glob("include/*.h")):
    lines = open(h, encoding="utf-8").read().split("\n")
    for n, line in enumerate(lines):
        m = re.match(r"\s*static inline [^;]*\b(\w+)\([^;]*\{\s*\\?$", line)
        if not m:
            continue
        end = next(i for i in range(n + 1, len(lines)) if re.match(r"\s*\}\s*\\?$", lines[i]))
        if end - n - 1 > 6:
            fail(f"{h}:{n + 1}: {m.group(1)}() is {end - n - 1} lines inline; compile it in lib/")

# A library header reached through a project header counts too: a module compiles it all the same.
def reach(h, seen):
    if h in seen:
        return set()
    seen.add(h)
    out = set(libs.get(h, ()))
    for t in graph.get(h, ()):
        out |= reach(t, seen)
    return out
for f in sorted(graph):
    module = f.split("/", 1)[0]
    pkgs = declared.get(module.upper(), set())
    for t in sorted(graph[f]):
        for lib in sorted(reach(t, set()) - pkgs):
            fail(f"{f}: \"{t}\" brings in {lib}'s headers, which {module.upper()}_PKGS does not list")

# Inside agent/, folders in layers, each using only its own and those below it, lowest first, as
# docs/ARCHITECTURE.md lists them in its one line of them ("`base/` → `os/` → ... → `verbs/`"):
# written once, there, where a newcomer reads why each is where it is.
arch = [l for l in open("docs/ARCHITECTURE.md", encoding="utf-8")
        if re.fullmatch(r"\s*`[a-z]+/`( → `[a-z]+/`)+\s*", l)]
if len(arch) != 1:
    fail("docs/ARCHITECTURE.md has %d lines listing agent/'s layers (`base/` → `os/` → ...), not one" % len(arch))
layers = re.findall(r"`([a-z]+)/`", arch[0]) if arch else []
if len(layers) < 5 or len(set(layers)) != len(layers):
    fail("docs/ARCHITECTURE.md's layers line lists %r" % layers)
rank = {d: i for i, d in enumerate(layers)}
for d in sorted({p.split("/")[1] for p in glob.glob("agent/*/")}):
    if d not in rank:
        fail(f"agent/{d}/ is in no layer of docs/ARCHITECTURE.md's line")
for f in sorted(graph):
    parts = f.split("/")
    if parts[0] != "agent" or len(parts) < 3 or parts[1] not in rank:
        continue
    for t in sorted(graph[f]):
        tp = t.split("/")
        if tp[0] == "agent" and len(tp) >= 3 and tp[1] in rank and rank[tp[1]] > rank[parts[1]]:
            fail(f"{f}: agent/{parts[1]}/ must not depend on agent/{tp[1]}/, a layer above it (\"{t}\")")

# Phases talk only through the engine's Context and the modules beneath them (node/, config/, os/):
# no phase includes another phase's header. A phase is a folder (agent/phases/NAME/) or a file
# (agent/phases/phase-NAME.[ch]); the table (agent/phases/phases.[ch]) is none, and every phase
# declares its planning function in the table's header. Anything else at the top of agent/phases/
# counts as a phase of its own: what several phases share belongs beneath them.
def phase_of(path):
    parts = path.split("/")
    if parts[:2] != ["agent", "phases"] or len(parts) < 3:
        return None
    if len(parts) > 3:
        return parts[2]
    name = parts[2].rsplit(".", 1)[0]
    return None if name == "phases" else name[len("phase-"):] if name.startswith("phase-") else name
for f in sorted(graph):
    pf = phase_of(f)
    for t in sorted(graph[f]):
        pt = phase_of(t)
        if pf is not None and pt is not None and pt != pf:
            fail(f"{f}: the {pf} phase must not include the {pt} phase's \"{t}\" (share it through the "
                 "Context or a module beneath the phases)")

# Source cycles: a.c depends on b.c when it includes b.h (the header of the same name). A cycle
# (the network phase's files once shared one header declaring each other's functions) means the
# files cannot be read or tested bottom up.
import os
deps = {}
for f in graph:
    if f.endswith(".c"):
        impl = lambda t: "lib/" + t[len("include/"):-2] + ".c" if t.startswith("include/") else t[:-2] + ".c"
        deps[f] = {impl(t) for t in graph[f] if t.endswith(".h") and os.path.exists(impl(t)) and impl(t) != f}
index, low, stack, on, counter = {}, {}, [], set(), [0]
sys.setrecursionlimit(10000)
def strong(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in sorted(deps.get(v, ())):
        if w not in index:
            strong(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            fail("source cycle: " + " <-> ".join(sorted(comp)))
for v in sorted(deps):
    if v not in index:
        strong(v)

# Header cycles, by depth-first search over the includes of headers (sources include none).
state = {}
def visit(h, stack):
    state[h] = 1
    for t in sorted(graph.get(h, ())):
        if state.get(t) == 1:
            fail("include cycle: " + " -> ".join(stack[stack.index(t):] + [t]))
        elif t not in state:
            visit(t, stack + [t])
    state[h] = 2
for h in sorted(graph):
    if h not in state:
        visit(h, [h])

print(f"agent/'s layers, from docs/ARCHITECTURE.md: {' < '.join(layers)}")
print(f"{sum(len(v) for v in graph.values())} project includes checked, {failures} problem(s)")
sys.exit(1 if failures else 0)
PY
assert "library headers only in their modules, dependencies one way, agent/ in layers, no header cycle" test $? -eq 0
finish
