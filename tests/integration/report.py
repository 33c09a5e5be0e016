#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Query a node-reset JSON report for the shell tests: report.py FILE EXPR, where EXPR is a Python
# expression over `r` (the report) and the helpers below; prints the value, exits 1 when falsy.
import json
import sys


def actions(r, phase=None, kind=None, result=None):
    out = []
    for p in r.get("phases") or []:
        for a in p["actions"]:
            if phase and a["phase"] != phase:
                continue
            if kind and a["kind"] != kind:
                continue
            if result and a["result"] != result:
                continue
            out.append(a)
    return out


def targets(r, **kw):
    return sorted(a["target"] for a in actions(r, **kw))


def main():
    with open(sys.argv[1]) as f:
        r = json.load(f)
    v = eval(sys.argv[2], {"r": r, "actions": actions, "targets": targets, "len": len, "all": all, "any": any, "sorted": sorted})
    print(v)
    sys.exit(0 if v else 1)


main()
