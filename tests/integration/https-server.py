#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A loopback HTTPS stand-in for a Kubernetes API server and a status store, for test-orphan.sh.
# It only ever listens on 127.0.0.1 (inside the test's private network namespace).
#
#   https-server.py serve PORT CERT KEY CLIENT_CA RECORD_DIR NODE...
#       GET /api/v1/nodes/NAME: 500 when NAME is "broken"; 401 without a client certificate;
#       403 unless the certificate's CN is system:node:NAME; 404 unless NAME is one of NODE...;
#       else 200 with a Node object. POST PATH: records {"path", "headers", "body"} as
#       RECORD_DIR/NNN.json and answers 200; a PATH starting with /flaky answers 503 on every
#       odd-numbered request to it first.
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

    def do_GET(self):
        m = re.fullmatch(r"/api/v1/nodes/([^/?]+)", self.path)
        if not m:
            return self.status(404, "NotFound", "the server could not find the requested resource")
        node = m.group(1)
        if node == "broken":
            return self.status(500, "InternalError", "etcdserver: request timed out")
        cn = self.client_cn()
        if cn is None:
            return self.status(401, "Unauthorized", "Unauthorized")
        if cn != "system:node:" + node:
            return self.status(403, "Forbidden", f'nodes "{node}" is forbidden: User "{cn}" cannot get resource "nodes"')
        if node not in self.server.nodes:
            return self.status(404, "NotFound", f'nodes "{node}" not found')
        self.reply(200, {"kind": "Node", "apiVersion": "v1", "metadata": {"name": node}})

    def do_POST(self):
        global flaky_count
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode("utf-8", "replace")
        if self.path.startswith("/flaky"):
            flaky_count += 1
            if flaky_count % 2 == 1:
                return self.status(503, "ServiceUnavailable", "try again")
        with record_lock:
            n = len([f for f in os.listdir(self.server.record_dir) if f.endswith(".json")])
            path = os.path.join(self.server.record_dir, "%03d.json" % n)
            with open(path + ".tmp", "w") as f:
                json.dump({"path": self.path, "headers": dict(self.headers.items()), "body": body}, f)
            os.rename(path + ".tmp", path)
        self.reply(200, {"received": True})


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
    httpd.record_dir = record_dir
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
