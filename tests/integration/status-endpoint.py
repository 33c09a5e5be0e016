#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A cluster's status endpoint for the fleet tests (test-ansible-fleet.sh, make e2e-k8s, the fleet lab
# of tests/lab/): every POST or PUT of a JSON object is appended to FILE as one JSON line, with
# _method and _path, in the order received; 204 to each. Many senders at once (a fleet's nodes
# posting their reports) are served by threads, each line written whole under a lock, and wait in a
# long listen queue rather than being refused. GET PATH answers the last body posted to PATH, as it
# was posted (404 while there is none): what a workflow that waits for the nodes' reports reads
# (examples/argo, delete-pull). status-endpoint.py FILE ADDRESS PORT [READY-FILE]
import http.server
import json
import sys
import threading

lock = threading.Lock()
last = {}  # path -> the last body posted there


class Status(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.loads(raw)
        line = json.dumps(dict(body, _method=self.command, _path=self.path)) + "\n"
        with lock, open(sys.argv[1], "a") as f:
            f.write(line)
            last[self.path] = raw
        self.send_response(204)
        self.end_headers()

    do_PUT = do_POST

    def do_GET(self):
        with lock:
            raw = last.get(self.path)
        if raw is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 1024
    daemon_threads = True


server = Server((sys.argv[2], int(sys.argv[3])), Status)
if len(sys.argv) > 4:
    open(sys.argv[4], "w").close()
server.serve_forever()
