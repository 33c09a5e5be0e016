#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# The project's step runner for Argo Workflows templates: it executes a WorkflowTemplate's steps for
# real, as Argo v3.6's controller orders them, where no controller can run (no package, no images
# here). What it models, and nothing else (any other field of the template is refused, naming it):
#   - steps templates: groups one after the other, the steps of a group at once; withParam (a JSON
#     list; an empty one skips the step); when (govaluate as Argo evaluates it: bare words are
#     strings); continueOn.failed/error; a failed step fails its group and its template, after the
#     group's other steps ended; parallelism (the pods of the template's own steps at once, started
#     in the order of their index, as the controller starts them);
#   - script templates: inputs.parameters (value as default), activeDeadlineSeconds per attempt,
#     retryStrategy (limit, retryPolicy, expression over lastRetry.exitCode/status/duration/message,
#     backoff duration and factor, maxDuration), outputs.result (stdout less one trailing newline, its
#     last 256 KiB) and outputs.parameters from a file (valueFrom.path, default);
#   - variables: workflow.name/namespace/uid/creationTimestamp/parameters.X, inputs.parameters.X,
#     item, retries, steps.X.outputs.result/parameters.P/exitCode/status, and in the exit handler
#     workflow.status and workflow.failures (Argo's list of the nodes that failed or errored);
#   - spec: entrypoint (or --entrypoint), arguments (-p overrides; one without a value must be given),
#     onExit, volumes of secrets (--secret NAME=DIR gives a Secret's keys as the files of a directory).
# Each attempt runs as a pod would: its own mount namespace, the machine's file system as a
# throwaway overlay (the image is recorded, the machine's tools run), the secrets' files (mode
# defaultMode) at their mountPath, read-only, a fresh /tmp, /dev and /dev/termination-log (the
# container's termination message, as Kubernetes reads it: the node's message on failure), the
# script at /argo/staging/script run by the template's command, env as declared; --tools DIR
# first in PATH (kubectl, ...). Network, user and PID: the runner's own (run it in a private netns).
#
#   argo_runner.py --template FILE [--entrypoint NAME] [-p NAME=VALUE]... [--secret NAME=DIR]...
#                  [--tools DIR] --work DIR [--trace FILE] [--name NAME] [--backoff-scale F]
#
# --backoff-scale multiplies the time slept between retries (tests: 0.1), never their number or
# conditions. Exits 0 when the workflow Succeeded, 1 when it Failed or Errored, 2 on bad usage or a
# template it does not model (nothing run), 130 when SIGINT or SIGTERM stopped it (every pod killed,
# the exit handler not run). Needs root (mount namespaces).
import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
import zlib

# --- what is modeled: every key of every object the runner reads ------------------------------

MODEL = {
    "doc": {"apiVersion": None, "kind": None, "metadata": "metadata", "spec": "spec"},
    "metadata": {"name": None, "annotations": None, "labels": None},
    "spec": {"entrypoint": None, "onExit": None, "arguments": "arguments", "volumes": ["volume"], "templates": ["template"]},
    "arguments": {"parameters": ["parameter"]},
    "parameter": {"name": None, "value": None, "description": None},
    "outparameter": {"name": None, "valueFrom": "valueFrom"},
    "valueFrom": {"path": None, "default": None},
    "volume": {"name": None, "secret": "secret"},
    "secret": {"secretName": None, "defaultMode": None},
    "template": {"name": None, "inputs": "inputs", "outputs": "outputs", "steps": [["step"]], "script": "script",
                 "activeDeadlineSeconds": None, "retryStrategy": "retryStrategy", "parallelism": None},
    "inputs": {"parameters": ["parameter"]},
    "outputs": {"parameters": ["outparameter"]},
    "step": {"name": None, "template": None, "arguments": "arguments", "when": None, "withParam": None,
             "continueOn": "continueOn"},
    "continueOn": {"failed": None, "error": None},
    "retryStrategy": {"limit": None, "retryPolicy": None, "expression": None, "backoff": "backoff"},
    "backoff": {"duration": None, "factor": None, "maxDuration": None},
    "script": {"image": None, "command": None, "source": None, "env": ["env"], "volumeMounts": ["volumeMount"],
               "workingDir": None},
    "env": {"name": None, "value": None},
    "volumeMount": {"name": None, "mountPath": None, "readOnly": None},
}
PATH = "/opt/argo-runner/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
RESULT_MAX = 256 * 1024
TAG = re.compile(r"{{(.*?)}}", re.S)


class Refused(Exception):
    """The template uses what the runner does not model, or is not a template it can run."""


class Stopped(Exception):
    """SIGINT or SIGTERM ended the run."""


class NodeError(Exception):
    """What Argo's controller turns into a node in phase Error (an unresolved variable, ...)."""


def check_model(value, kind, path):
    spec = MODEL[kind]
    if not isinstance(value, dict):
        raise Refused("%s: a mapping is expected" % path)
    for k, v in value.items():
        if k not in spec:
            raise Refused("%s.%s: not modeled by this runner" % (path, k))
        sub = spec[k]
        if isinstance(sub, str):
            check_model(v, sub, "%s.%s" % (path, k))
        elif isinstance(sub, list):
            if not isinstance(v, list):
                raise Refused("%s.%s: a list is expected" % (path, k))
            for i, x in enumerate(v):
                if isinstance(sub[0], list):
                    if not isinstance(x, list):
                        raise Refused("%s.%s[%d]: a list of steps is expected" % (path, k, i))
                    for j, y in enumerate(x):
                        check_model(y, sub[0][0], "%s.%s[%d][%d]" % (path, k, i, j))
                else:
                    check_model(x, sub[0], "%s.%s[%d]" % (path, k, i))


# --- expressions: govaluate (when) and expr (retryStrategy.expression), the part these use ---------

EXPR_TOKEN = re.compile(r"\s*(?:(?P<num>\d+(?:\.\d+)?)|(?P<str>'[^']*'|\"[^\"]*\")|(?P<op>==|!=|<=|>=|&&|\|\||[<>!()])"
                        r"|(?P<name>[A-Za-z_][A-Za-z0-9_.]*))")


def evaluate(text, variables=None, bare_words_are_strings=False):
    """Evaluate a boolean expression of comparisons, &&, || and !, with string and number literals.
    In govaluate as Argo uses it for when, a bare word is a string; in expr, a variable."""
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = EXPR_TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise NodeError("cannot evaluate %r: unexpected %r" % (text, text[pos:]))
        pos = m.end()
        if m.group("num") is not None:
            tokens.append(("val", float(m.group("num"))))
        elif m.group("str") is not None:
            tokens.append(("val", m.group("str")[1:-1]))
        elif m.group("op") is not None:
            tokens.append(("op", m.group("op")))
        else:
            word = m.group("name")
            if word in ("true", "false"):
                tokens.append(("val", word == "true"))
            elif bare_words_are_strings:
                tokens.append(("val", word))
            elif variables is not None and word in variables:
                tokens.append(("val", variables[word]))
            else:
                raise NodeError("cannot evaluate %r: unknown name %s" % (text, word))
    tokens.append(("end", None))
    i = [0]

    def peek():
        return tokens[i[0]]

    def take(op=None):
        t = tokens[i[0]]
        if op is not None and t != ("op", op):
            raise NodeError("cannot evaluate %r: %s expected" % (text, op))
        i[0] += 1
        return t

    def disjunction():
        v = conjunction()
        while peek() == ("op", "||"):
            take()
            v = conjunction() or v
        return v

    def conjunction():
        v = unary()
        while peek() == ("op", "&&"):
            take()
            w = unary()
            v = v and w
        return v

    def unary():
        if peek() == ("op", "!"):
            take()
            return not unary()
        return comparison()

    def comparison():
        left = primary()
        if peek()[0] == "op" and peek()[1] in ("==", "!=", "<", ">", "<=", ">="):
            op = take()[1]
            right = primary()
            if op == "==":
                return left == right
            if op == "!=":
                return left != right
            if type(left) is not type(right):
                raise NodeError("cannot evaluate %r: %s between %r and %r" % (text, op, left, right))
            return {"<": left < right, ">": left > right, "<=": left <= right, ">=": left >= right}[op]
        return left

    def primary():
        t = take()
        if t == ("op", "("):
            v = disjunction()
            take(")")
            return v
        if t[0] != "val":
            raise NodeError("cannot evaluate %r: a value expected" % text)
        return t[1]

    v = disjunction()
    if peek()[0] != "end":
        raise NodeError("cannot evaluate %r: trailing %r" % (text, peek()[1]))
    if not isinstance(v, bool):
        raise NodeError("expected a boolean evaluating %r, got %r" % (text, v))
    return v


# --- substitution -------------------------------------------------------------------------------


def substitute(value, scope, allow=()):
    """value with each {{name}} replaced from scope (Argo inserts the text as it is into a string);
    an unresolved name is a NodeError unless it starts with one of allow (left for later)."""
    if isinstance(value, dict):
        return {k: substitute(v, scope, allow) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, scope, allow) for v in value]
    if not isinstance(value, str):
        return value

    def one(m):
        key = m.group(1).strip()
        if key in scope:
            return scope[key]
        if key.startswith(tuple(allow)):
            return m.group(0)
        raise NodeError("failed to resolve {{%s}}" % key)

    return TAG.sub(one, value)


def go_json(value):
    """json.Marshal's bytes: compact, <, > and & escaped."""
    s = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def seconds(text, what):
    """An Argo duration: a number of seconds or a Go duration (5s, 2m, 1h30m)."""
    text = str(text).strip()
    if re.fullmatch(r"\d+", text):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    if not parts or "".join(a + b for a, b in parts) != text:
        raise NodeError("%s: not a duration: %r" % (what, text))
    return sum(float(a) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[b] for a, b in parts)


def int_or_string(value, what):
    if isinstance(value, bool):
        raise NodeError("%s: not a number: %r" % (what, value))
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    raise NodeError("%s: not a number: %r" % (what, value))


# --- the workflow's nodes -----------------------------------------------------------------------


class Node:
    def __init__(self, runner, name, display, kind, template):
        self.name, self.display, self.kind, self.template = name, display, kind, template
        self.phase, self.message, self.outputs = "Running", "", {}
        self.started, self.finished = time.time(), None
        self.pod_name = None
        with runner.lock:
            runner.nodes.append(self)

    def end(self, phase, message=""):
        self.phase, self.message, self.finished = phase, message, time.time()
        return self


class Slots:
    """A template's parallelism: at most n of its pods at once, handed out lowest index first."""

    def __init__(self, n):
        self.n, self.cond, self.waiting = n, threading.Condition(), []

    def acquire(self, index):
        with self.cond:
            self.waiting.append(index)
            while self.n == 0 or min(self.waiting) != index:
                self.cond.wait()
            self.waiting.remove(index)
            self.n -= 1
            self.cond.notify_all()

    def release(self):
        with self.cond:
            self.n += 1
            self.cond.notify_all()


class Runner:
    def __init__(self, doc, args):
        self.doc, self.args = doc, args
        self.spec = doc["spec"]
        self.templates = {t["name"]: t for t in self.spec.get("templates") or []}
        self.lock = threading.Lock()
        self.nodes = []
        self.trace_file = open(args.trace, "a") if args.trace else None
        self.name = args.name or "%s-%s" % (doc["metadata"].get("name", "workflow"), uuid.uuid4().hex[:5])
        self.secrets = dict(s.split("=", 1) for s in args.secret)
        self.globals = {
            "workflow.name": self.name,
            "workflow.namespace": args.namespace,
            "workflow.uid": str(uuid.uuid4()),
            "workflow.creationTimestamp": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        given = dict(p.split("=", 1) for p in args.parameter)
        declared = [p["name"] for p in (self.spec.get("arguments") or {}).get("parameters") or []]
        for p in (self.spec.get("arguments") or {}).get("parameters") or []:
            if p["name"] in given:
                value = given[p["name"]]
            elif "value" in p:
                value = p["value"]
            else:
                raise Refused("spec.arguments.parameters.%s.value is required" % p["name"])
            self.globals["workflow.parameters." + p["name"]] = str(value)
        unknown = set(given) - set(declared)
        if unknown:
            raise Refused("not a parameter of the template: %s" % ", ".join(sorted(unknown)))
        self.volumes = {}
        self.refused = []  # what a running step met that the runner does not model
        self.stopping = threading.Event()  # SIGINT or SIGTERM: every pod is ended, none started
        self.procs = set()  # the pods running: their process groups
    def trace(self, **event):
        event["t"] = time.time()
        line = json.dumps(event, sort_keys=True)
        with self.lock:
            if self.trace_file:
                self.trace_file.write(line + "\n")
                self.trace_file.flush()
        if event["event"] in ("pod-end", "skipped", "workflow"):
            print("argo-runner: %s" % " ".join("%s=%s" % (k, event[k]) for k in sorted(event) if k != "t"),
                  file=sys.stderr, flush=True)

    def stop(self, signum, _frame):
        """Like argo stop without its exit handler: the running pods are killed, nothing starts."""
        print("argo-runner: signal %d: ending every pod" % signum, file=sys.stderr, flush=True)
        self.stopping.set()
        with self.lock:
            for p in self.procs:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    # --- the workflow -----------------------------------------------------------------------------

    def run(self):
        try:
            self.volumes = {v["name"]: substitute(v, self.globals) for v in self.spec.get("volumes") or []}
        except NodeError as e:
            raise Refused("spec.volumes: %s" % e)
        for v in self.volumes.values():
            # a pod whose secret is missing waits for it (until its deadline) on Kubernetes: not modeled
            if v["secret"]["secretName"] not in self.secrets:
                raise Refused("volume %s: no --secret %s=DIR given" % (v["name"], v["secret"]["secretName"]))
        entry = self.args.entrypoint or self.spec.get("entrypoint")
        if entry not in self.templates:
            raise Refused("no template %r to start from" % entry)
        self.trace(event="workflow", phase="Running", name=self.name, entrypoint=entry)
        main = self.execute(self.name, self.name, entry, {}, None, 0)
        status = main.phase
        if self.stopping.is_set():
            self.trace(event="workflow", phase="Failed", name=self.name, message="stopped by a signal")
            raise Stopped()
        self.globals["workflow.status"] = status
        failed = [n for n in self.nodes if n.phase in ("Failed", "Error")]
        self.globals["workflow.failures"] = go_json([self.failure(n) for n in failed]) if failed else "null"
        if self.spec.get("onExit"):
            handler = self.execute(self.name + ".onExit", self.name + ".onExit", self.spec["onExit"], {}, None, 0)
            if handler.phase != "Succeeded" and status == "Succeeded":
                status = "Failed"
        self.trace(event="workflow", phase=status, name=self.name)
        if self.refused:
            raise Refused("; ".join(self.refused))
        return status

    def failure(self, n):
        return {"displayName": n.display, "message": n.message, "templateName": n.template, "phase": n.phase,
                "podName": n.pod_name or "", "finishedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(n.finished or time.time()))}

    def execute(self, name, display, template_name, arguments, slots, index):
        """Run template_name with arguments (name -> value) as node name; slots: the calling steps
        template's parallelism, for a pod."""
        t = self.templates.get(template_name)
        if t is None:
            node = Node(self, name, display, "Pod", template_name)
            return node.end("Error", "template %s not found" % template_name)
        try:
            inputs = self.inputs(t, arguments)
            if "steps" in t:
                return self.steps(name, display, t, inputs)
            return self.leaf(name, display, t, inputs, slots, index)
        except NodeError as e:
            return Node(self, name, display, "Pod", template_name).end("Error", str(e))

    def inputs(self, t, arguments):
        scope = {}
        for p in (t.get("inputs") or {}).get("parameters") or []:
            if p["name"] in arguments:
                scope["inputs.parameters." + p["name"]] = arguments[p["name"]]
            elif "value" in p:
                scope["inputs.parameters." + p["name"]] = substitute(str(p["value"]), self.globals)
            else:
                raise NodeError("inputs.parameters.%s was not supplied" % p["name"])
        return scope

    # --- steps ------------------------------------------------------------------------------------

    def steps(self, name, display, t, inputs):
        node = Node(self, name, display, "Steps", t["name"])
        scope = dict(self.globals, **inputs)
        slots = Slots(int_or_string(t["parallelism"], "parallelism")) if "parallelism" in t else None
        for k, group in enumerate(t["steps"]):
            gname = "%s[%d]" % (name, k)
            gnode = Node(self, gname, "[%d]" % k, "StepGroup", t["name"])
            try:
                children = self.expand(gname, group, scope)
            except NodeError as e:
                gnode.end("Error", str(e))
                return node.end("Error", str(e))
            results, threads = [None] * len(children), []
            for i, (cname, cdisplay, step, item_scope) in enumerate(children):
                th = threading.Thread(target=self.child, args=(results, i, cname, cdisplay, step, item_scope, scope, slots),
                                      daemon=True)
                th.start()
                threads.append(th)
            for th in threads:
                th.join()
            failed = None
            for (cname, cdisplay, step, _), child in zip(children, results):
                cont = step.get("continueOn") or {}
                if child.phase == "Failed" and not cont.get("failed") or child.phase == "Error" and not cont.get("error"):
                    failed = failed or child
            self.collect(group, children, results, scope)
            if failed is not None:
                phase = failed.phase
                gnode.end(phase, "child '%s' %s" % (failed.name, "failed" if phase == "Failed" else "errored"))
                return node.end(phase, "child '%s' %s" % (gnode.name, "failed" if phase == "Failed" else "errored"))
            gnode.end("Succeeded")
        return node.end("Succeeded")

    def expand(self, gname, group, scope):
        """(node name, display name, step, {item}) of each step of a group, withParam expanded."""
        out = []
        for step in group:
            if "withParam" not in step:
                out.append(("%s.%s" % (gname, step["name"]), step["name"], step, {}))
                continue
            text = substitute(step["withParam"], scope)
            try:
                items = json.loads(text)
            except ValueError:
                raise NodeError("withParam value could not be parsed as a JSON list: %s" % text.strip())
            if not isinstance(items, list):
                raise NodeError("withParam value could not be parsed as a JSON list: %s" % text.strip())
            if not items:
                out.append(("%s.%s" % (gname, step["name"]), step["name"], dict(step, _empty=True), {}))
            for i, item in enumerate(items):
                if isinstance(item, (dict, list, bool)) or item is None:
                    raise Refused("withParam items other than strings and numbers are not modeled: %r" % item)
                text_item = item if isinstance(item, str) else go_json(item)
                label = "%s(%d:%s)" % (step["name"], i, text_item)
                out.append(("%s.%s" % (gname, label), label, step, {"item": text_item}))
        return out

    def child(self, results, i, name, display, step, item_scope, scope, slots):
        try:
            if step.get("_empty"):
                self.trace(event="skipped", node=name, reason="empty withParam")
                results[i] = Node(self, name, display, "Skipped", step["template"]).end("Skipped", "Skipped, empty params")
                return
            local = dict(scope, **item_scope)
            resolved = substitute({k: v for k, v in step.items() if k not in ("withParam", "_empty")}, local)
            if "when" in resolved and not evaluate(resolved["when"], bare_words_are_strings=True):
                self.trace(event="skipped", node=name, reason="when %s" % resolved["when"])
                results[i] = Node(self, name, display, "Skipped", step["template"]).end(
                    "Skipped", "when '%s' evaluated false" % resolved["when"])
                return
            arguments = {p["name"]: str(p.get("value", "")) for p in (resolved.get("arguments") or {}).get("parameters") or []}
            t = self.templates.get(step["template"])
            results[i] = self.execute(name, display, step["template"], arguments,
                                      slots if t is not None and "script" in t else None, i)
        except NodeError as e:
            results[i] = Node(self, name, display, "Pod", step.get("template")).end("Error", str(e))
        except Refused as e:
            self.refused.append(str(e))
            results[i] = Node(self, name, display, "Pod", step.get("template")).end("Error", "not modeled: %s" % e)

    def collect(self, group, children, results, scope):
        """steps.NAME.* of a finished group, for the groups after it."""
        expanded = {step["name"] for (_, _, step, item) in children if item or step.get("_empty")}
        for (_, _, step, _), child in zip(children, results):
            if step["name"] in expanded:
                continue  # Argo aggregates a loop's outputs into lists: not modeled (load() refuses a reference)
            prefix = "steps.%s." % step["name"]
            scope[prefix + "status"] = child.phase
            for k, v in child.outputs.items():
                scope[prefix + k] = v

    # --- leaves -----------------------------------------------------------------------------------

    def leaf(self, name, display, t, inputs, slots, index):
        rs = t.get("retryStrategy")
        if not rs:
            node = Node(self, name, display, "Pod", t["name"])
            if slots:
                slots.acquire(index)
            try:
                return self.pod(node, t, inputs, None)
            finally:
                if slots:
                    slots.release()
        node = Node(self, name, display, "Retry", t["name"])
        limit = int_or_string(rs.get("limit", 0), "retryStrategy.limit")
        policy = rs.get("retryPolicy", "OnFailure")
        backoff = rs.get("backoff") or {}
        first = time.time()
        for attempt in range(limit + 1):
            child = Node(self, "%s(%d)" % (name, attempt), "%s(%d)" % (display, attempt), "Pod", t["name"])
            if slots:
                slots.acquire(index)
            try:
                self.pod(child, t, inputs, attempt)
            finally:
                if slots:
                    slots.release()
            if child.phase == "Succeeded":
                node.outputs = child.outputs
                return node.end("Succeeded")
            policy_says = policy == "Always" or (policy == "OnFailure") == (child.phase == "Failed")
            last = {"lastRetry.exitCode": child.outputs.get("outputs.exitCode", "-1"), "lastRetry.status": child.phase,
                    "lastRetry.duration": str(int(child.finished - child.started)), "lastRetry.message": child.message,
                    "retries": str(attempt)}
            if attempt == limit:
                node.outputs = child.outputs
                return node.end(child.phase, "No more retries left")
            if not policy_says or ("expression" in rs and not evaluate(rs["expression"], last)):
                self.trace(event="no-retry", node=name, attempt=attempt, exit=last["lastRetry.exitCode"])
                node.outputs = child.outputs
                return node.end(child.phase, child.message)
            delay = 0.0
            if "duration" in backoff:
                factor = int_or_string(backoff.get("factor", 1), "backoff.factor")
                delay = seconds(backoff["duration"], "backoff.duration") * factor ** attempt
            if "maxDuration" in backoff and time.time() - first + delay > seconds(backoff["maxDuration"], "backoff.maxDuration"):
                node.outputs = child.outputs
                return node.end(child.phase, "Backoff would exceed max duration limit")
            self.trace(event="retry", node=name, attempt=attempt, backoff=delay, exit=last["lastRetry.exitCode"])
            if self.stopping.wait(delay * self.args.backoff_scale):
                return node.end("Failed", "stopped by a signal")
        raise AssertionError("not reached")

    def pod(self, node, t, inputs, attempt):
        """One attempt of a script template, as a pod would run it."""
        scope = dict(self.globals, **inputs)
        scope["pod.name"] = node.pod_name = "%s-%s-%d" % (self.name, t["name"], zlib.crc32(node.name.encode()))
        scope["node.name"] = node.name
        if attempt is not None:
            scope["retries"] = str(attempt)
        try:
            tt = substitute({k: v for k, v in t.items() if k != "name"}, scope)
            deadline = int_or_string(tt["activeDeadlineSeconds"], "activeDeadlineSeconds") if "activeDeadlineSeconds" in tt else None
            if deadline is not None and deadline <= 0:
                raise NodeError("activeDeadlineSeconds must be positive: %d" % deadline)
            mounts = self.mounts(tt["script"])
        except NodeError as e:
            self.trace(event="pod-end", node=node.name, template=t["name"], phase="Error", message=str(e))
            return node.end("Error", str(e))
        script = tt["script"]
        if self.stopping.is_set():
            return node.end("Failed", "stopped by a signal")
        d = os.path.join(self.args.work, "pods", node.pod_name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "out"))
        with open(os.path.join(d, "script"), "w") as f:
            f.write(script.get("source", ""))
        open(os.path.join(d, "termination-log"), "w").close()
        outs = [(p["name"], p["valueFrom"]["path"]) for p in (tt.get("outputs") or {}).get("parameters") or []]
        sh = self.pod_script(d, script, mounts, outs)
        with open(os.path.join(d, "pod.sh"), "w") as f:
            f.write(sh)
        self.trace(event="pod-start", node=node.name, template=t["name"], attempt=attempt, image=script.get("image"),
                   env={e["name"]: e.get("value", "") for e in script.get("env") or []})
        stdout, stderr = open(os.path.join(d, "stdout"), "wb"), open(os.path.join(d, "stderr"), "wb")
        with self.lock:
            proc = subprocess.Popen(["unshare", "-m", "--propagation", "private", "--", "bash", os.path.join(d, "pod.sh")],
                                    stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, start_new_session=True)
            self.procs.add(proc)
        try:
            rc = proc.wait(timeout=deadline)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
            timed_out = True
        with self.lock:
            self.procs.discard(proc)
        stdout.close()
        stderr.close()
        return self.pod_end(node, t, d, rc, timed_out, outs, script)

    def pod_end(self, node, t, d, rc, timed_out, outs, script):
        with open(os.path.join(d, "stdout"), "rb") as f:
            out = f.read().decode("utf-8", "replace")
        if out.endswith("\n"):
            out = out[:-1]
        node.outputs["outputs.result"] = out[-RESULT_MAX:]
        if timed_out:
            phase, message = "Failed", "Pod was active on the node longer than the specified deadline"
        else:
            node.outputs["outputs.exitCode"] = str(rc)
            if rc == 0:
                phase, message = "Succeeded", ""
            else:
                with open(os.path.join(d, "termination-log"), "rb") as f:
                    term = f.read(4096).decode("utf-8", "replace").strip()
                phase, message = "Failed", "main: Error (exit code %d)%s" % (rc, ": " + term if term else "")
        for pname, path in outs:
            f = os.path.join(d, "out", pname)
            default = next((p["valueFrom"].get("default") for p in t["outputs"]["parameters"] if p["name"] == pname), None)
            if os.path.isfile(f):
                with open(f, encoding="utf-8", errors="replace") as fh:
                    node.outputs["outputs.parameters." + pname] = fh.read()
            elif default is not None:
                node.outputs["outputs.parameters." + pname] = str(default)
            elif phase == "Succeeded":
                phase, message = "Error", "open %s: no such file or directory" % path
        self.trace(event="pod-end", node=node.name, template=t["name"], phase=phase, exit=node.outputs.get("outputs.exitCode"),
                   message=message, image=script.get("image"))
        return node.end(phase, message)

    def mounts(self, script):
        """(source dir, mountPath, mode) of each volume mount: the secret's files in a directory."""
        out = []
        for m in script.get("volumeMounts") or []:
            v = self.volumes.get(m["name"])
            if v is None:
                raise NodeError("volume %s not found" % m["name"])
            name = v["secret"]["secretName"]
            if m.get("readOnly") is False:
                raise NodeError("a secret volume is mounted read-only")
            out.append((self.secrets[name], m["mountPath"], int_or_string(v["secret"].get("defaultMode", 420), "defaultMode")))
        return out

    def pod_script(self, d, script, mounts, outs):
        """The shell script that makes the pod's file system and runs its command in it."""
        q = shlex.quote
        r = os.path.join(d, "root")
        lines = ["set -eu", "exec 3>&1 4>&2 >>%s 2>&1" % q(os.path.join(d, "pod.log")),
                 "mkdir -p %s" % q(d + "/fs"),
                 "mount -t tmpfs -o mode=0755 argo-runner-pod %s" % q(d + "/fs"),
                 "mkdir %s %s %s" % (q(d + "/fs/upper"), q(d + "/fs/work"), q(r)),
                 "mount -t overlay argo-runner-root -o lowerdir=/,upperdir=%s,workdir=%s %s" % (q(d + "/fs/upper"), q(d + "/fs/work"), q(r)),
                 "mount --rbind /proc %s/proc" % q(r), "mount --rbind /sys %s/sys" % q(r),
                 "mount -t tmpfs -o mode=1777 argo-runner-tmp %s/tmp" % q(r),
                 "mount -t tmpfs -o mode=0755 argo-runner-run %s/run" % q(r),
                 "mount -t tmpfs -o mode=0700 argo-runner-home %s/root" % q(r),  # an image's empty HOME, not the machine's
                 "mount -t tmpfs -o mode=0755 argo-runner-dev %s/dev" % q(r),
                 "for n in null zero full random urandom tty; do touch %s/dev/$n; mount --bind /dev/$n %s/dev/$n; done" % (q(r), q(r)),
                 "ln -s /proc/self/fd %s/dev/fd; ln -s fd/0 %s/dev/stdin; ln -s fd/1 %s/dev/stdout; ln -s fd/2 %s/dev/stderr" % ((q(r),) * 4),
                 "mkdir %s/dev/pts %s/dev/shm" % (q(r), q(r)),
                 "touch %s/dev/termination-log; mount --bind %s %s/dev/termination-log" % (q(r), q(d + "/termination-log"), q(r)),
                 "mkdir -p %s/argo/staging; cp %s %s/argo/staging/script" % (q(r), q(d + "/script"), q(r))]
        if self.args.tools:
            lines.append("mkdir -p %s/opt/argo-runner/bin; mount --bind %s %s/opt/argo-runner/bin" % (q(r), q(self.args.tools), q(r)))
        for i, (src, path, mode) in enumerate(mounts):
            vol = "%s/volumes/%d" % (d, i)
            lines.append("mkdir -p %s && cp -rT %s %s && find %s -type f -exec chmod %o {} + && chmod 0755 %s" % (q(vol), q(src), q(vol), q(vol), mode, q(vol)))
            lines.append("mkdir -p %s%s && mount --bind %s %s%s && mount -o remount,bind,ro %s%s" % (q(r), q(path), q(vol), q(r), q(path), q(r), q(path)))
        env = ["PATH=" + PATH, "HOME=/root", "HOSTNAME=" + os.path.basename(d)]
        env += ["%s=%s" % (e["name"], e.get("value", "")) for e in script.get("env") or []]
        cmd = list(script.get("command") or ["sh"]) + ["/argo/staging/script"]
        lines.append("rc=0")
        lines.append("chroot %s /usr/bin/env -i %s /bin/sh -c %s sh %s </dev/null 1>&3 2>&4 || rc=$?" % (
            q(r), " ".join(q(x) for x in env), q('cd "$1" && shift && exec "$@"'), " ".join(q(x) for x in [script.get("workingDir") or "/"] + cmd)))
        for pname, path in outs:
            lines.append("[ ! -f %s%s ] || cp %s%s %s" % (q(r), q(path), q(r), q(path), q("%s/out/%s" % (d, pname))))
        lines.append("exit $rc")
        return "\n".join(lines) + "\n"


def load(path):
    import yaml

    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    if len(docs) != 1 or docs[0].get("kind") not in ("WorkflowTemplate", "Workflow"):
        raise Refused("%s: one WorkflowTemplate or Workflow expected" % path)
    check_model(docs[0], "doc", docs[0]["kind"])
    for t in docs[0]["spec"].get("templates") or []:
        kinds = [k for k in ("steps", "script") if k in t]
        if len(kinds) != 1:
            raise Refused("template %s: one of steps, script expected" % t.get("name"))
        policy = (t.get("retryStrategy") or {}).get("retryPolicy", "OnFailure")
        if policy not in ("Always", "OnFailure", "OnError"):
            raise Refused("template %s: retryPolicy %s is not modeled" % (t.get("name"), policy))
        loops = {step["name"] for group in t.get("steps") or [] for step in group if "withParam" in step}
        for text in strings(t):
            for tag in TAG.findall(text):
                tag = tag.strip()
                if tag.startswith("="):
                    raise Refused("template %s: expression tags ({{=...}}) are not modeled" % t.get("name"))
                m = re.match(r"steps\.([^.]+)\.", tag)
                if m and m.group(1) in loops:
                    raise Refused("template %s: {{%s}}: the aggregated outputs of a loop are not modeled" % (t.get("name"), tag))
    return docs[0]


def strings(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, str):
        yield value


def main(argv):
    ap = argparse.ArgumentParser(description="Run an Argo WorkflowTemplate's steps for real (see the head of this file).")
    ap.add_argument("--template", required=True)
    ap.add_argument("--entrypoint")
    ap.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--secret", action="append", default=[], metavar="NAME=DIR")
    ap.add_argument("--tools")
    ap.add_argument("--work", required=True)
    ap.add_argument("--trace")
    ap.add_argument("--name")
    ap.add_argument("--namespace", default="argo")
    ap.add_argument("--backoff-scale", type=float, default=1.0)
    args = ap.parse_args(argv)
    if os.geteuid() != 0:
        print("argo-runner: needs root (each pod is a mount namespace)", file=sys.stderr)
        return 2
    for p in args.parameter + args.secret:
        if "=" not in p:
            print("argo-runner: NAME=VALUE expected: %s" % p, file=sys.stderr)
            return 2
    try:
        runner = Runner(load(args.template), args)
        signal.signal(signal.SIGINT, runner.stop)
        signal.signal(signal.SIGTERM, runner.stop)
        status = runner.run()
    except Refused as e:
        print("argo-runner: refused: %s" % e, file=sys.stderr)
        return 2
    except Stopped:
        print("argo-runner: workflow %s stopped" % runner.name)
        return 130
    print("argo-runner: workflow %s %s" % (runner.name, status))
    return 0 if status == "Succeeded" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
