#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A loopback HTTPS stand-in for a Kubernetes API server and a status store, for test-orphan.sh.
# It only ever listens on 127.0.0.1 (inside the test's private network namespace).
#
#   https-server.py serve PORT CERT KEY CLIENT_CA RECORD_DIR NODE...
#       GET /api/v1/nodes/NAME: 500 when NAME is "broken"; 401 without a client certificate;
#       403 unless the certificate's CN is system:node:NAME; 404 unless NAME is one of NODE...;
#       else 200 with a Node object whose Ready condition is True until a PATCH changed it. The
#       CN "kubernetes-admin" (an admin.conf) may GET and DELETE any node; DELETE by a node is 403,
#       as the node authorizer says; PATCH /api/v1/nodes/NAME/status by system:node:NAME merges its
#       conditions by type (a strategic merge patch) and is recorded. POST PATH: records {"path", "headers", "body"} as
#       RECORD_DIR/NNN.json and answers 200; a PATH starting with /flaky answers 503 on every
#       odd-numbered request to it first.
#       RECORD_DIR/silence, while it exists, holds "close|hang N..." and makes the Nth connections
#       (counted from when its content last changed, the first is 1) get no answer: "close" closes
#       each after the TLS handshake, "hang" reads the request and never replies.
#   https-server.py blackhole PORT RECORD_DIR
#       A listening socket whose accept queue is full: a SYN to it is dropped, so a connect hangs
#       until the client's own timeout, as with a black-holed address.
# Both create RECORD_DIR/ready-PORT once listening, then run until killed.
import http.server
import json
import os
import re
import socket
import ssl
import sys
import threading
import time

flaky_count = 0
record_lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-apiserver"

    def handle(self):
        how = self.server.silence()
        if how == "close":
            self.log_message("silent: closed without an answer")
            return
        if how == "hang":
            self.log_message("silent: hanging without an answer")
            self.rfile.readline()
            time.sleep(3600)
            return
        super().handle()

    def log_message(self, fmt, *args):
        sys.stderr.write("https-server: " + (fmt % args) + "\n")

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def status(self, code, reason, message):
        self.reply(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                          "message": message, "reason": reason, "code": code})

    def client_cn(self):
        cert = self.connection.getpeercert()
        if not cert:
            return None
        for rdn in cert.get("subject", ()):
            for key, value in rdn:
                if key == "commonName":
                    return value
        return ""

    def node_request(self, verb, suffix=""):
        """The node a request is for, or None once an error was answered."""
        m = re.fullmatch(r"/api/v1/nodes/([^/?]+)" + suffix, self.path)
        if not m:
            self.status(404, "NotFound", "the server could not find the requested resource")
            return None
        node = m.group(1)
        if node == "broken":
            self.status(500, "InternalError", "etcdserver: request timed out")
            return None
        cn = self.client_cn()
        if cn is None:
            self.status(401, "Unauthorized", "Unauthorized")
            return None
        admin = cn == "kubernetes-admin" and verb in ("get", "delete")
        if not admin and (cn != "system:node:" + node or verb == "delete"):
            self.status(403, "Forbidden", f'nodes "{node}" is forbidden: User "{cn}" cannot {verb} resource "nodes"')
            return None
        if node not in self.server.nodes:
            self.status(404, "NotFound", f'nodes "{node}" not found')
            return None
        return node

    def do_GET(self):
        node = self.node_request("get")
        if node is None:
            return
        ready = self.server.ready.get(node, "True")
        self.reply(200, {"kind": "Node", "apiVersion": "v1", "metadata": {"name": node},
                         "status": {"conditions": [{"type": "MemoryPressure", "status": "False"},
                                                   {"type": "Ready", "status": ready}]}})

    def do_DELETE(self):
        node = self.node_request("delete")
        if node is None:
            return
        self.server.nodes.discard(node)
        self.record("")
        self.reply(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})

    def do_PATCH(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode("utf-8", "replace")
        node = self.node_request("patch", "/status")
        if node is None:
            return
        for c in json.loads(body).get("status", {}).get("conditions", []):
            if c.get("type") == "Ready":
                self.server.ready[node] = c.get("status")
        self.record(body)
        self.reply(200, {"kind": "Node", "apiVersion": "v1", "metadata": {"name": node}})

    def record(self, body):
        with record_lock:
            n = len([f for f in os.listdir(self.server.record_dir) if f.endswith(".json")])
            path = os.path.join(self.server.record_dir, "%03d.json" % n)
            with open(path + ".tmp", "w") as f:
                json.dump({"method": self.command, "path": self.path, "headers": dict(self.headers.items()),
                           "body": body}, f)
            os.rename(path + ".tmp", path)

    def do_POST(self):
        global flaky_count
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode("utf-8", "replace")
        if self.path.startswith("/flaky"):
            flaky_count += 1
            if flaky_count % 2 == 1:
                return self.status(503, "ServiceUnavailable", "try again")
        self.record(body)
        self.reply(200, {"received": True})


class Silence:
    """RECORD_DIR/silence: which connections get no answer, and how."""

    def __init__(self, record_dir):
        self.path = os.path.join(record_dir, "silence")
        self.lock = threading.Lock()
        self.spec = None
        self.count = 0

    def __call__(self):
        try:
            with open(self.path) as f:
                spec = f.read().split()
        except FileNotFoundError:
            spec = None
        with self.lock:
            if spec != self.spec:
                self.spec, self.count = spec, 0
            self.count += 1
            if spec and str(self.count) in spec[1:]:
                return spec[0]
        return None


def serve(port, cert, key, client_ca, record_dir, nodes):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    # As kube-apiserver: a client certificate is asked for, not required.
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.load_verify_locations(client_ca)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    httpd.daemon_threads = True
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    httpd.nodes = set(nodes)
    httpd.ready = {}
    httpd.record_dir = record_dir
    httpd.silence = Silence(record_dir)
    ready(record_dir, port)
    httpd.serve_forever()


def blackhole(port, record_dir):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(0)
    # Fill the accept queue (a backlog of 0 holds one connection); it is never accepted.
    fillers = []
    for _ in range(2):
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.setblocking(False)
        c.connect_ex(("127.0.0.1", port))
        fillers.append(c)
    time.sleep(0.5)
    ready(record_dir, port)
    while True:
        time.sleep(3600)


def ready(record_dir, port):
    with open(os.path.join(record_dir, "ready-%d" % port), "w") as f:
        f.write("%d\n" % port)


def main():
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7:])
    elif sys.argv[1] == "blackhole":
        blackhole(int(sys.argv[2]), sys.argv[3])
    else:
        sys.exit("usage: https-server.py serve|blackhole ...")


main()
