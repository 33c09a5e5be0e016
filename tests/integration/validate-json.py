#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Validate node-reset JSON reports against docs/report.schema.json (JSON Schema draft 2020-12):
# validate-json.py [--open] FILE... exits 0 when each holds one valid report, 1 (each error printed)
# when not, 77 when python3-jsonschema is missing. report.py calls validate() on every report it
# reads.
# The schema as published lets members it does not name through (a consumer of an older schema
# must not break on a newer report); the project's own tests validate closed: every object the
# schema marks "x-closed" gets additionalProperties false, so the agent cannot write a member the
# schema does not document. --open validates as a consumer would.
import json
import os
import sys

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "report.schema.json")
_validators = {}


def closed(node):
    """The schema with every "x-closed" object closed to the members it names."""
    if isinstance(node, dict):
        out = {k: closed(v) for k, v in node.items()}
        if out.get("x-closed") is True:
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [closed(v) for v in node]
    return node


def validator(open_schema=False):
    if open_schema not in _validators:
        import jsonschema
        with open(SCHEMA) as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        _validators[open_schema] = jsonschema.Draft202012Validator(schema if open_schema else closed(schema))
    return _validators[open_schema]


def errors(obj, open_schema=False):
    """The schema violations of a report, as lines; [] when it is valid."""
    v = validator(open_schema)
    return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(top)", e.message)
            for e in sorted(v.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))]


def reports_in(obj):
    """A report, or the report inside a --report-url POST body ({"status", "report", ...})."""
    if isinstance(obj, dict) and obj.get("tool") == "node-reset":
        yield obj
    elif isinstance(obj, dict) and isinstance(obj.get("report"), dict):
        yield obj["report"]


def main():
    try:
        validator()
    except ImportError:
        print("SKIP: python3-jsonschema is not installed", file=sys.stderr)
        return 77
    args = sys.argv[1:]
    open_schema = bool(args) and args[0] == "--open"
    bad = 0
    for path in args[open_schema:]:
        with open(path, "rb") as f:
            obj = json.loads(f.read().decode("utf-8"))
        reports = list(reports_in(obj))
        errs = [e for r in reports for e in errors(r, open_schema)] if reports else ["not a node-reset report"]
        for e in errs:
            print("%s: %s" % (path, e), file=sys.stderr)
        bad += bool(errs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
