#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Query a node-reset JSON report for the shell tests: report.py FILE EXPR, where EXPR is a Python
# expression over `r` (the report) and the helpers below; prints the value, exits 1 when falsy.
import base64
import importlib.util
import json
import os
import sys

# Every report a test reads is also checked against docs/report.schema.json.
_spec = importlib.util.spec_from_file_location(
    "validate_json", os.path.join(os.path.dirname(os.path.abspath(__file__)), "validate-json.py"))
validate_json = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(validate_json)


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


def raw(obj, key):
    """The exact bytes of a string member: from KEY_b64 when its bytes are not valid UTF-8."""
    if key + "_b64" in obj:
        return base64.b64decode(obj[key + "_b64"])
    return obj[key].encode()


def targets(r, **kw):
    return sorted(a["target"] for a in actions(r, **kw))


def main():
    with open(sys.argv[1]) as f:
        r = json.load(f)
    errs = [e for rep in validate_json.reports_in(r) for e in validate_json.errors(rep)]
    if errs:
        print("%s does not match docs/report.schema.json:\n  %s" % (sys.argv[1], "\n  ".join(errs)), file=sys.stderr)
        sys.exit(2)
    v = eval(sys.argv[2], {"r": r, "actions": actions, "targets": targets, "raw": raw, "len": len, "all": all, "any": any, "sorted": sorted})
    print(v)
    sys.exit(0 if v else 1)


main()
