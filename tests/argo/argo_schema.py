#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Validate Argo Workflows documents against Argo's own JSON Schema (api/jsonschema/schema.json of the
# pinned version), corrected at load time to what Argo's controller accepts:
#   - io.k8s.apimachinery.pkg.util.intstr.IntOrString is typed string only in the schema, while the
#     controller takes an integer too (activeDeadlineSeconds: 300, retryStrategy.limit: 3;
#     argo-workflows#6060): it becomes "string or integer";
#   - no definition sets additionalProperties, so a typo (activeDeadlineSecond:) passes the schema and
#     is dropped by the controller: a definition that lists its properties refuses any other.
# Each document is checked against the definition of its kind. Errors name the file, the line and the
# path in the document.
#
#   argo_schema.py [--argo-dir DIR] FILE...     exit 0 valid, 1 invalid, 2 usage, 77 no schema/module
#   argo_schema.py --examples [--argo-dir DIR]  every example document of the pinned Argo, one line each
#
# DIR is the directory holding v3.6.5/schema.json: --argo-dir, else $NR_ARGO_DIR (only there when
# either is given), else shared/argo in a parent directory of this repository, else /work/shared/argo.
import json
import os
import sys

ARGO_VERSION = "v3.6.5"
KINDS = ("Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow", "WorkflowEventBinding")
DEFINITION = "io.argoproj.workflow.v1alpha1."
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
# Argo's own examples that disagree with this version's own schema (../shared/argo/README.md):
# memoize-simple.yaml's memoize.cache.configMap has no "key" (required here); webhdfs-input-output-
# artifacts.yaml uses "overwrite", a field added to the schema after v3.6.5.
EXAMPLES_REJECTED_BY_SCHEMA = ("memoize-simple.yaml", "webhdfs-input-output-artifacts.yaml")


def find_argo_dir(explicit=None):
    """The directory holding ARGO_VERSION/schema.json, or None."""
    if explicit or os.environ.get("NR_ARGO_DIR"):  # said where: only there
        c = explicit or os.environ["NR_ARGO_DIR"]
        return os.path.abspath(c) if os.path.isfile(os.path.join(c, ARGO_VERSION, "schema.json")) else None
    candidates = []
    d = os.path.dirname(os.path.abspath(__file__))
    while True:
        candidates.append(os.path.join(d, "shared", "argo"))
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    candidates.append("/work/shared/argo")
    for c in candidates:
        if os.path.isfile(os.path.join(c, ARGO_VERSION, "schema.json")):
            return os.path.abspath(c)
    return None


def corrected_schema(schema):
    """Argo's schema with the two corrections above, as a new object."""
    schema = json.loads(json.dumps(schema))
    defs = schema["definitions"]
    for name, d in defs.items():
        if name == INT_OR_STRING:
            defs[name] = {"description": d.get("description", ""), "type": ["string", "integer"]}
        elif "properties" in d and "additionalProperties" not in d and not d.get("x-kubernetes-preserve-unknown-fields"):
            d["additionalProperties"] = False
    return schema


class Validator:
    def __init__(self, argo_dir):
        import jsonschema  # python3-jsonschema (Draft 2020-12 since 4.0)

        with open(os.path.join(argo_dir, ARGO_VERSION, "schema.json")) as f:
            self.schema = corrected_schema(json.load(f))
        self.validators = {}
        for kind in KINDS:
            s = dict(self.schema)
            del s["oneOf"]
            s["$ref"] = "#/definitions/" + DEFINITION + kind
            self.validators[kind] = jsonschema.Draft202012Validator(s)

    def errors(self, doc):
        """[(path, message)] of one document; [] when valid."""
        if not isinstance(doc, dict):
            return [((), "a document must be a mapping")]
        kind = doc.get("kind")
        if kind not in self.validators:
            return [(("kind",), "kind %r is not one of %s" % (kind, ", ".join(KINDS)))]
        out = []
        for e in self.validators[kind].iter_errors(doc):
            out.extend(leaf_errors(e))
        return sorted(set(out), key=lambda x: (tuple(map(str, x[0])), x[1]))


def leaf_errors(e):
    """The most specific errors under e: a oneOf/anyOf failure is explained by its branches, a field
    that is not allowed is named at its own path."""
    if e.context:
        best = [c for c in e.context if not c.context] or list(e.context)
        return [x for c in best for x in leaf_errors(c)]
    if e.validator == "additionalProperties" and isinstance(e.instance, dict):
        known = e.schema.get("properties") or {}
        return [(tuple(e.absolute_path) + (k,), "%s is not a field of this object" % k)
                for k in e.instance if k not in known]
    return [(tuple(e.absolute_path), e.message)]


# --- YAML with line numbers ---------------------------------------------------------------------------


def load_documents(path):
    """[(data, node)] of each non-empty YAML document in path: the data as yaml.safe_load gives it
    and the composed node, for line numbers."""
    import yaml

    with open(path, encoding="utf-8") as f:
        text = f.read()
    nodes = [n for n in yaml.compose_all(text, Loader=yaml.SafeLoader) if n is not None]
    datas = [d for d in yaml.safe_load_all(text) if d is not None]
    return list(zip(datas, nodes))


def line_of(node, path):
    """The 1-based line of the element at path (keys and indices) beneath node, or of the deepest
    ancestor that exists."""
    import yaml

    line = node.start_mark.line + 1
    for p in path:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == p:
                    node = v
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(p, int) and p < len(node.value):
            node = node.value[p]
        else:
            return line
        line = node.start_mark.line + 1
    return line


def format_path(path):
    return "".join("[%d]" % p if isinstance(p, int) else ("." if i else "") + str(p) for i, p in enumerate(path)) or "(top)"


def check_file(validator, path):
    """Error lines 'FILE:LINE: PATH: message' of every document in path."""
    out = []
    try:
        docs = load_documents(path)
    except Exception as e:  # yaml.YAMLError, OSError, UnicodeDecodeError
        return ["%s: %s" % (path, e)]
    if not docs:
        return ["%s: no document" % path]
    for data, node in docs:
        for p, msg in validator.errors(data):
            out.append("%s:%d: %s: %s" % (path, line_of(node, p), format_path(p), msg))
    return out


def examples(argo_dir):
    """Every example file of the pinned Argo, sorted."""
    root = os.path.join(argo_dir, ARGO_VERSION, "examples")
    out = []
    for d, _, files in os.walk(root):
        out.extend(os.path.join(d, f) for f in files if f.endswith((".yaml", ".yml")))
    return sorted(out)


def check_examples(validator, argo_dir):
    """Validate every document of one of the five kinds in Argo's examples. Prints one line per
    rejected document; returns (documents, the file name of each rejected one, unexpected lines)."""
    n, rejected, unexpected = 0, [], []
    for path in examples(argo_dir):
        rel = os.path.relpath(path, os.path.join(argo_dir, ARGO_VERSION, "examples"))
        for data, node in load_documents(path):
            if not isinstance(data, dict) or data.get("kind") not in KINDS:
                continue
            n += 1
            errs = validator.errors(data)
            if not errs:
                continue
            rejected.append(os.path.basename(path))
            for p, msg in errs:
                line = "%s:%d: %s: %s" % (rel, line_of(node, p), format_path(p), msg)
                if os.path.basename(path) not in EXAMPLES_REJECTED_BY_SCHEMA:
                    unexpected.append(line)
                print(("expected (README): " if os.path.basename(path) in EXAMPLES_REJECTED_BY_SCHEMA else "REJECTED: ") + line)
    return n, rejected, unexpected


def main(argv):
    args, files, argo_dir, want_examples = list(argv), [], None, False
    while args:
        a = args.pop(0)
        if a == "--argo-dir" and args:
            argo_dir = args.pop(0)
        elif a == "--examples":
            want_examples = True
        elif a.startswith("-"):
            print("usage: argo_schema.py [--argo-dir DIR] [--examples] [FILE...]", file=sys.stderr)
            return 2
        else:
            files.append(a)
    found = find_argo_dir(argo_dir)
    if not found:
        print("SKIP: Argo's schema (%s/schema.json) not found: set NR_ARGO_DIR or put it in ../shared/argo" % ARGO_VERSION)
        return 77
    try:
        v = Validator(found)
    except ImportError as e:
        print("SKIP: %s (python3-jsonschema, python3-yaml)" % e)
        return 77
    bad = 0
    if want_examples:
        n, rejected, unexpected = check_examples(v, found)
        missing = set(EXAMPLES_REJECTED_BY_SCHEMA) - set(rejected)
        print("argo examples: %d documents of the five kinds, %d accepted, rejected: %s" %
               (n, n - len(rejected), " ".join(sorted(rejected)) or "none"))
        if unexpected or missing:
            bad = 1
            for m in sorted(missing):
                print("NOT REJECTED: %s (the README says this version's schema refuses it)" % m)
    for f in files:
        errs = check_file(v, f)
        for e in errs:
            print(e)
        if errs:
            bad = 1
        else:
            print("%s: valid against Argo %s's schema" % (f, ARGO_VERSION))
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
