#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# What may answer at a kubeconfig's server URL besides kube-apiserver 1.20, for test-drain-answers.sh.
# Plain HTTP on 127.0.0.1 (inside the test's private network namespace).
#
#   kube-impostor.py html PORT RECORD   a dashboard's or a default backend's pages: every GET is 200
#       text/html, every other method 404 text/plain ("404 page not found"), as an ingress answers.
#   kube-impostor.py v121 PORT RECORD   kube-apiserver 1.21's discovery as it is: the policy group
#       prefers policy/v1 (PodDisruptionBudget went GA) while /api/v1's pods/eviction names
#       policy/v1beta1, the only Eviction version it takes; an Eviction of another version is 400,
#       with the words 1.21 says. Node w1 (GET, PATCH), one pod of a ReplicaSet on it, which an
#       accepted Eviction removes.
# Each request line goes to RECORD; "ready" once listening. Runs until killed.
import http.server
import json
import sys

mode, port, record = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pods = [{"metadata": {"name": "web-1", "namespace": "default", "uid": "u-web-1",
                      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                                           "uid": "u-rs", "controller": True}]},
         "spec": {"nodeName": "w1"}, "status": {"phase": "Running"}}]
unschedulable = False


def note(line):
    with open(record, "a") as f:
        f.write(line + "\n")


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, body, ctype="application/json"):
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def handle_any(self):
        note("%s %s" % (self.command, self.path))
        data = self.body()
        if mode == "html":
            if self.command == "GET":
                return self.send(200, "<!doctype html><html><head><title>Kubernetes Dashboard</title></head>"
                                      "<body><kd-root></kd-root></body></html>", "text/html; charset=utf-8")
            return self.send(404, "404 page not found\n", "text/plain; charset=utf-8")
        return self.v121(data)

    def v121(self, data):
        global unschedulable
        path = self.path.split("?")[0]
        if path == "/api/v1":
            return self.send(200, {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                {"name": "pods", "namespaced": True, "kind": "Pod", "verbs": ["get", "list"]},
                {"name": "pods/eviction", "namespaced": True, "group": "policy", "version": "v1beta1",
                 "kind": "Eviction", "verbs": ["create"]}]})
        if path == "/apis/policy":
            return self.send(200, {"kind": "APIGroup", "apiVersion": "v1", "name": "policy",
                                   "versions": [{"groupVersion": "policy/v1", "version": "v1"},
                                                {"groupVersion": "policy/v1beta1", "version": "v1beta1"}],
                                   "preferredVersion": {"groupVersion": "policy/v1", "version": "v1"}})
        if path == "/api/v1/nodes/w1":
            if self.command == "PATCH":
                unschedulable = True
            return self.send(200, {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "w1"},
                                   "spec": {"unschedulable": unschedulable}})
        if path.startswith("/api/v1/nodes/"):
            name = path.rsplit("/", 1)[1]
            return self.send(404, status(404, "NotFound", 'nodes "%s" not found' % name))
        if path == "/api/v1/pods":
            return self.send(200, {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": pods})
        if path.endswith("/eviction") and self.command == "POST":
            ev = json.loads(data or b"{}")
            if ev.get("apiVersion") != "policy/v1beta1":
                return self.send(400, status(400, "BadRequest", 'no kind "Eviction" is registered for version "%s"'
                                             % ev.get("apiVersion")))
            name = ev.get("metadata", {}).get("name")
            pods[:] = [p for p in pods if p["metadata"]["name"] != name]
            return self.send(201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                   "code": 201})
        return self.send(404, "404 page not found\n", "text/plain; charset=utf-8")

    do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = handle_any


server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
note("ready")
server.serve_forever()
