#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A semantic lint of Argo Workflows documents: what the schema cannot see and Argo's controller
# finds only when the workflow runs (or never). Each finding is FILE:LINE: TEMPLATE: message.
#   - every template a step, a task, the entrypoint or an exit handler names exists;
#   - {{steps.X...}} names a step of an earlier step group of the same template, {{tasks.X...}} a
#     task the referring task depends on (directly or not), and what follows exists: a result only
#     from a container or a script, an output parameter the producing template declares, the
#     aggregate list only of a step that loops; {{item}} only in a step or task that loops;
#   - {{inputs.parameters.P}} is declared by the template, {{workflow.parameters.P}} by the
#     workflow's arguments; a call passes every input that has no value and none it does not take;
#   - {{workflow.status}} and {{workflow.failures}} only in templates that run in exit handlers
#     only (not reachable from the entrypoint, nor from a template nothing calls);
#   - no steps or dag template carries activeDeadlineSeconds (Argo takes it on leaves only).
# Expression tags ({{=...}}) are checked for the names they use in the same way. Then this project's
# rules, stricter than Argo, which --argo-only leaves out (Argo's own examples do not keep them):
#   - every leaf (container, script, resource, containerSet) is bounded by activeDeadlineSeconds (a
#     positive number, or one parameter);
#   - {{workflow.parameters.P}} is declared by the workflow's arguments (Argo takes one given only
#     at submission), and a call passes no argument the template does not take (Argo drops it: a
#     misspelt argument leaves the input at its default).
#
#   argo_lint.py [--argo-only] FILE...      exit 0 clean, 1 findings, 2 usage, 77 no PyYAML
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import argo_schema  # noqa: E402 (load_documents, line_of)

LEAVES = ("container", "script", "resource", "containerSet")
RESULTS = ("container", "script", "containerSet", "data", "http", "plugin")  # templates with an outputs.result
KINDS_WITH_SPEC = ("Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate")
TAG = re.compile(r"{{(.*?)}}", re.S)
NAME = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"
# dotted references inside an expression tag, with ['x'] indices written as .x
EXPR_REF = re.compile(r"\b(?:steps|tasks|inputs|outputs|workflow|item)\b(?:\.[A-Za-z0-9_-]+|\[['\"][^'\"]+['\"]\])*")
WORKFLOW_VARS = ("name", "namespace", "uid", "serviceAccountName", "duration", "priority", "mainEntrypoint",
                 "creationTimestamp", "scheduledTime", "parameters", "annotations", "labels", "outputs", "status",
                 "failures")


def spec_of(doc):
    if doc.get("kind") == "CronWorkflow":
        return (doc.get("spec") or {}).get("workflowSpec") or {}
    return doc.get("spec") or {}


class Lint:
    def __init__(self, path, doc, node, strict=True):
        self.path, self.doc, self.node, self.strict = path, doc, node, strict
        self.spec = spec_of(doc)
        self.spec_path = ["spec", "workflowSpec"] if doc.get("kind") == "CronWorkflow" else ["spec"]
        self.templates = {t.get("name"): t for t in self.spec.get("templates") or [] if isinstance(t, dict)}
        self.findings = []
        args = (self.spec.get("arguments") or {}).get("parameters") or []
        self.workflow_params = {p.get("name") for p in args if isinstance(p, dict)}

    def finding(self, path, template, msg):
        line = argo_schema.line_of(self.node, self.spec_path + list(path))
        self.findings.append("%s:%d: %s%s" % (self.path, line, "%s: " % template if template else "", msg))

    # --- which templates run where ----------------------------------------------------------------

    def calls(self, t):
        """(path, step or task, called template name) of each call in t."""
        out = []
        for k, group in enumerate(t.get("steps") or []):
            for j, step in enumerate(group if isinstance(group, list) else []):
                out.append((["steps", k, j], step, step.get("template")))
        for j, task in enumerate((t.get("dag") or {}).get("tasks") or []):
            out.append((["dag", "tasks", j], task, task.get("template")))
        for cpath, step, _ in list(out):
            for h, hook in (step.get("hooks") or {}).items():
                if isinstance(hook, dict) and "template" in hook:
                    out.append((cpath + ["hooks", h], hook, hook.get("template")))
        return out

    def reachable(self, roots):
        seen, todo = set(), [r for r in roots if r in self.templates]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for _, step, called in self.calls(self.templates[name]):
                for n in (called, step.get("onExit")):
                    if n in self.templates:
                        todo.append(n)
        return seen

    def exit_roots(self):
        roots = [self.spec.get("onExit")]
        for t in self.templates.values():
            for _, step, _ in self.calls(t):
                roots.append(step.get("onExit"))
                roots.extend(h.get("template") for h in (step.get("hooks") or {}).values() if isinstance(h, dict))
        roots.extend(h.get("template") for h in (self.spec.get("hooks") or {}).values() if isinstance(h, dict))
        return [r for r in roots if r]

    def main_roots(self, exit_roots):
        """The entrypoint, and every template nothing calls (a WorkflowTemplate may be submitted
        with any of them as its entrypoint) but the exit handlers."""
        called = {c for t in self.templates.values() for _, step, c in self.calls(t)}
        called |= {step.get("onExit") for t in self.templates.values() for _, step, _ in self.calls(t)}
        return [self.spec.get("entrypoint")] + [n for n in self.templates if n not in called and n not in exit_roots]

    # --- the checks ---------------------------------------------------------------------------------

    def run(self):
        seen = set()
        for i, t in enumerate(self.spec.get("templates") or []):
            if t.get("name") in seen:
                self.finding(["templates", i, "name"], t.get("name"), "a second template of this name")
            seen.add(t.get("name"))
        for key in ("entrypoint", "onExit"):
            name = self.spec.get(key)
            if key == "entrypoint" and self.spec.get("workflowTemplateRef"):
                continue  # a template of the referenced WorkflowTemplate
            if name and name not in self.templates:
                self.finding([key], None, "%s names no template: %s" % (key, name))
        exit_roots = self.exit_roots()
        self.in_exit = self.reachable(exit_roots)
        self.in_main = self.reachable(self.main_roots(exit_roots))
        for i, t in enumerate(self.spec.get("templates") or []):
            self.template(["templates", i], t)
        for key, value in self.spec.items():
            if key != "templates":
                self.refs_in([key], value, None, key == "metrics")
        return self.findings

    def template(self, path, t):
        name = t.get("name")
        leaf = next((k for k in LEAVES if k in t), None)
        if self.strict:
            ads = t.get("activeDeadlineSeconds")
            if leaf and ads is None:
                self.finding(path + ["name"], name, "a %s template without activeDeadlineSeconds: nothing bounds it" % leaf)
            elif leaf:
                self.deadline(path + ["activeDeadlineSeconds"], name, t, ads)
        if not leaf and ("steps" in t or "dag" in t) and "activeDeadlineSeconds" in t:
            self.finding(path + ["activeDeadlineSeconds"], name, "activeDeadlineSeconds is taken on leaf templates only")
        for cpath, step, called in self.calls(t):
            self.call(path + cpath, name, step, called)
        self.refs_in(path, t, t, False)

    def deadline(self, path, name, t, ads):
        if isinstance(ads, bool) or (isinstance(ads, int) and ads <= 0):
            self.finding(path, name, "activeDeadlineSeconds must be a positive number of seconds: %r" % ads)
        elif isinstance(ads, str) and not re.fullmatch(r"[1-9][0-9]*", ads):
            m = re.fullmatch(r"{{\s*(inputs|workflow)\.parameters\.(%s)\s*}}" % NAME, ads)
            if not m:
                self.finding(path, name, "activeDeadlineSeconds must be a number or one parameter: %r" % ads)

    def call(self, path, name, step, called):
        if step.get("templateRef") or step.get("inline"):
            return  # in another document, or inline (checked where it is)
        if called not in self.templates:
            self.finding(path + ["template"], name, "step %s calls no template: %s" % (step.get("name"), called))
            return
        if step.get("onExit") and step.get("onExit") not in self.templates:
            self.finding(path + ["onExit"], name, "step %s: onExit names no template: %s" % (step.get("name"), step.get("onExit")))
        inputs = (self.templates[called].get("inputs") or {}).get("parameters") or []
        declared = {p.get("name"): p for p in inputs}
        given = [p.get("name") for p in (step.get("arguments") or {}).get("parameters") or []]
        for g in given if self.strict else []:
            if g not in declared:
                self.finding(path + ["arguments"], name, "step %s passes %s, which %s does not take" % (step.get("name"), g, called))
        for n, p in declared.items():
            if n not in given and "value" not in p and "default" not in p and "valueFrom" not in p:
                self.finding(path, name, "step %s does not pass %s, which %s needs" % (step.get("name"), n, called))

    # --- references -------------------------------------------------------------------------------

    def refs_in(self, path, value, t, metrics):
        """Check every {{...}} in value (t: the template it is in, None for the spec's other fields)."""
        if isinstance(value, dict):
            for k, v in value.items():
                self.refs_in(path + [k], v, t, metrics or k == "metrics")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                self.refs_in(path + [i], v, t, metrics)
        elif isinstance(value, str):
            if t is not None and path[-1] == "source" and "script" in path:
                return  # a script's text: shell, Python, ...; Argo substitutes into it, not checked here
            ctx = self.context_of(path, t) if t is not None else None
            for tag in TAG.findall(value):
                self.tag(path, tag.strip(), t, ctx, metrics)

    def context_of(self, path, t):
        """('steps', group, step) or ('tasks', index, task) for a path inside a step or task of t."""
        rel = path[2:]  # below templates[i]
        if len(rel) >= 3 and rel[0] == "steps" and isinstance(rel[1], int) and isinstance(rel[2], int):
            return ("steps", rel[1], t["steps"][rel[1]][rel[2]])
        if len(rel) >= 3 and rel[0] == "dag" and rel[1] == "tasks" and isinstance(rel[2], int):
            return ("tasks", rel[2], t["dag"]["tasks"][rel[2]])
        return None

    def tag(self, path, tag, t, ctx, metrics):
        if tag.startswith("="):
            for ref in EXPR_REF.findall(tag[1:]):
                ref = re.sub(r"\[['\"]([^'\"]+)['\"]\]", r".\1", ref)
                self.reference(path, ref, t, ctx, metrics, expression=True)
            return
        self.reference(path, tag, t, ctx, metrics, expression=False)

    def reference(self, path, ref, t, ctx, metrics, expression):
        name = t.get("name") if t else None
        parts = ref.split(".")
        root = parts[0]
        if root == "workflow":
            self.workflow_ref(path, name, parts, metrics)
        elif root == "inputs":
            if t is None:
                self.finding(path, name, "{{%s}} outside a template" % ref)
            elif len(parts) >= 3 and parts[1] in ("parameters", "artifacts"):
                declared = {p.get("name") for p in (t.get("inputs") or {}).get(parts[1]) or []}
                if parts[2] not in declared:
                    self.finding(path, name, "{{%s}}: the template declares no input %s %s" % (ref, parts[1][:-1], parts[2]))
            elif not (len(parts) == 2 and parts[1] == "parameters"):
                self.finding(path, name, "unknown variable {{%s}}" % ref)
        elif root == "outputs" and t is not None and parts[1:] == ["result"]:
            pass  # the template's own result (in its outputs or metrics)
        elif root == "outputs":
            if t is None or len(parts) < 3 or parts[1] not in ("parameters", "artifacts"):
                self.finding(path, name, "unknown variable {{%s}}" % ref)
            elif parts[2] not in {p.get("name") for p in (t.get("outputs") or {}).get(parts[1]) or []}:
                self.finding(path, name, "{{%s}}: the template declares no output %s" % (ref, parts[2]))
        elif root in ("steps", "tasks"):
            self.node_ref(path, name, t, ctx, parts, ref)
        elif root == "item":
            if not ctx or not any(k in ctx[2] for k in ("withItems", "withParam", "withSequence")):
                self.finding(path, name, "{{%s}} in a step or task that does not loop (withItems, withParam, withSequence)" % ref)
        elif root in ("pod", "node") and parts[1:] == ["name"]:
            pass
        elif root == "retries" and len(parts) == 1:
            if t is None or "retryStrategy" not in t:
                self.finding(path, name, "{{retries}} in a template without retryStrategy")
        elif metrics and root in ("status", "duration", "exitCode", "resourcesDuration"):
            pass
        elif not expression:
            self.finding(path, name, "unknown variable {{%s}}" % ref)

    def workflow_ref(self, path, name, parts, metrics):
        ref = ".".join(parts)
        if len(parts) < 2 or parts[1] not in WORKFLOW_VARS:
            self.finding(path, name, "unknown variable {{%s}}" % ref)
        elif self.strict and parts[1] == "parameters" and len(parts) >= 3 and parts[2] not in self.workflow_params:
            self.finding(path, name, "{{%s}}: the workflow's arguments declare no parameter %s" % (ref, parts[2]))
        elif parts[1] in ("status", "failures") and not (metrics and name is None) and \
                (name not in self.in_exit or name in self.in_main):
            self.finding(path, name, "{{%s}} is set for exit handlers only, and this runs outside them" % ref)

    def node_ref(self, path, name, t, ctx, parts, ref):
        kind = parts[0]
        if len(parts) < 2:
            self.finding(path, name, "unknown variable {{%s}}" % ref)
            return
        if len(parts) == 2 and parts[1] == "name":
            return  # {{steps.name}}, {{tasks.name}}: the current one's
        target = parts[1]
        if t is None:
            self.finding(path, name, "{{%s}} outside a template" % ref)
            return
        producer = self.producer(path, name, t, ctx, kind, target, ref)
        if producer is None:
            return
        rest = parts[2:]
        called = self.templates.get(producer.get("template"))
        loops = any(k in producer for k in ("withItems", "withParam", "withSequence"))
        if rest[:2] == ["outputs", "result"] and called is not None and not any(k in called for k in RESULTS):
            self.finding(path, name, "{{%s}}: %s runs template %s, which has no result" % (ref, target, called.get("name")))
        elif rest[:2] == ["outputs", "parameters"] and len(rest) == 2 and not loops:
            self.finding(path, name, "{{%s}}: the list of every item's outputs exists only for a step that loops" % ref)
        elif rest[:2] == ["outputs", "parameters"] and len(rest) >= 3 and called is not None:
            out = {p.get("name") for p in (called.get("outputs") or {}).get("parameters") or []}
            if rest[2] not in out:
                self.finding(path, name, "{{%s}}: template %s declares no output parameter %s" % (ref, called.get("name"), rest[2]))

    def producer(self, path, name, t, ctx, kind, target, ref):
        """The step or task {{kind.target...}} names, if the referring place may see it."""
        if kind == "steps":
            if ctx is not None and ctx[2].get("name") == target and "hooks" in path:
                return ctx[2]  # a step's own exit hook sees the step's outputs
            groups = t.get("steps") or []
            before = len(groups) if ctx is None else ctx[1]  # the template's outputs see every group
            for k, group in enumerate(groups):
                for step in group if isinstance(group, list) else []:
                    if step.get("name") == target:
                        if k >= before:
                            self.finding(path, name, "{{%s}}: step %s runs in group %d, not before this one (group %d)" %
                                         (ref, target, k, before))
                            return None
                        return step
            self.finding(path, name, "{{%s}}: no step %s in this template" % (ref, target))
            return None
        tasks = {x.get("name"): x for x in (t.get("dag") or {}).get("tasks") or []}
        if target not in tasks:
            self.finding(path, name, "{{%s}}: no task %s in this template" % (ref, target))
            return None
        if ctx is not None and target not in self.ancestors(tasks, ctx[2].get("name")):
            self.finding(path, name, "{{%s}}: task %s does not depend on %s" % (ref, ctx[2].get("name"), target))
            return None
        return tasks[target]

    def ancestors(self, tasks, name):
        seen, todo = set(), [name]
        while todo:
            task = tasks.get(todo.pop()) or {}
            deps = list(task.get("dependencies") or [])
            deps += re.findall(r"[A-Za-z0-9_-]+", re.sub(r"\.(Succeeded|Failed|Errored|Skipped|Omitted|Daemoned|AnySucceeded|AllFailed)\b", "", task.get("depends") or ""))
            for d in deps:
                if d in tasks and d not in seen:
                    seen.add(d)
                    todo.append(d)
        return seen


def lint_file(path, strict=True):
    try:
        docs = argo_schema.load_documents(path)
    except Exception as e:  # yaml.YAMLError, OSError, UnicodeDecodeError
        return ["%s: %s" % (path, e)]
    out = []
    for data, node in docs:
        if isinstance(data, dict) and data.get("kind") in KINDS_WITH_SPEC + ("CronWorkflow",):
            out.extend(Lint(path, data, node, strict).run())
    return out


def main(argv):
    strict = "--argo-only" not in argv
    files = [a for a in argv if a != "--argo-only"]
    if not files or any(f.startswith("-") for f in files):
        print("usage: argo_lint.py [--argo-only] FILE...", file=sys.stderr)
        return 2
    try:
        import yaml  # noqa: F401
    except ImportError:
        print("SKIP: python3-yaml is not installed")
        return 77
    bad = 0
    for f in files:
        findings = lint_file(f, strict)
        for x in findings:
            print(x)
        bad |= bool(findings)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
