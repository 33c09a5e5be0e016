#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Validate node-reset JSON reports against docs/report.schema.json (JSON Schema draft 2020-12):
# validate-json.py FILE... exits 0 when each holds one valid report, 1 (each error printed) when
# not, 77 when python3-jsonschema is missing. report.py calls validate() on every report it reads.
import json
import os
import sys

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "report.schema.json")
_validator = None


def validator():
    global _validator
    if _validator is None:
        import jsonschema
        with open(SCHEMA) as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        _validator = jsonschema.Draft202012Validator(schema)
    return _validator


def errors(obj):
    """The schema violations of a report, as lines; [] when it is valid."""
    return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(top)", e.message)
            for e in sorted(validator().iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))]


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
    bad = 0
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            obj = json.loads(f.read().decode("utf-8"))
        reports = list(reports_in(obj))
        errs = [e for r in reports for e in errors(r)] if reports else ["not a node-reset report"]
        for e in errs:
            print("%s: %s" % (path, e), file=sys.stderr)
        bad += bool(errs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
