#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Docker Engine API stand-ins on a unix socket, for what the real dockerd 20.10 of test-docker.sh
# cannot be made to do (tests/integration/test-docker.sh):
#
#   fake-docker.py min144 SOCKET RECORD   Docker 29 as it answers: GET /version (unversioned) says API
#       1.52, MinAPIVersion 1.44; any /v1.N/ below 1.44 is HTTP 400 with Docker's own words ("client
#       version 1.24 is too old..."); at /v1.44/ the container list holds one container of kubelet's
#       (dockershim's labels and name) and DELETE removes it. Each request line goes to RECORD.
#   fake-docker.py hang SOCKET RECORD     accepts, reads the request, never answers
#   fake-docker.py garbage SOCKET RECORD  answers bytes that are no HTTP, then closes
#
# It creates SOCKET, writes "ready" to RECORD once listening, and runs until killed.
import json
import os
import re
import socket
import sys
import threading

mode, path, record = sys.argv[1], sys.argv[2], sys.argv[3]
KUBELETS = {
    "Id": "5b7c9e0a1d2f3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4",
    "Names": ["/k8s_app_web_default_0a1b-web_0"],
    "State": "running",
    "Labels": {"io.kubernetes.docker.type": "container", "io.kubernetes.pod.uid": "0a1b-web",
               "io.kubernetes.pod.name": "web", "io.kubernetes.pod.namespace": "default",
               "io.kubernetes.container.name": "app"},
}
containers = [KUBELETS]
lock = threading.Lock()


def note(line):
    with lock, open(record, "a") as f:
        f.write(line + "\n")


def reply(conn, status, body):
    data = json.dumps(body).encode() if body is not None else b""
    head = "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nApi-Version: 1.52\r\n" \
           "Connection: close\r\n\r\n" % (status, len(data))
    conn.sendall(head.encode() + data)


def min144(conn, method, target):
    m = re.match(r"^/v(\d+)\.(\d+)(/.*)$", target)
    if target == "/version" or target == "/_ping":
        return reply(conn, "200 OK", {"Version": "29.0.0", "ApiVersion": "1.52", "MinAPIVersion": "1.44",
                                      "Os": "linux"})
    if not m:
        return reply(conn, "404 Not Found", {"message": "page not found"})
    version, rest = (int(m.group(1)), int(m.group(2))), m.group(3)
    if version < (1, 44):
        return reply(conn, "400 Bad Request",
                     {"message": "client version %d.%d is too old. Minimum supported API version is 1.44, please "
                                 "upgrade your client to a newer version" % version})
    if method == "GET" and rest.startswith("/containers/json"):
        return reply(conn, "200 OK", containers)
    c = re.match(r"^/containers/([0-9a-f]+)(/json)?(\?.*)?$", rest)
    if c:
        found = [x for x in containers if x["Id"] == c.group(1)]
        if not found:
            return reply(conn, "404 Not Found", {"message": "No such container: " + c.group(1)})
        if method == "DELETE":
            containers.remove(found[0])
            return reply(conn, "204 No Content", None)
        return reply(conn, "200 OK", found[0])
    return reply(conn, "404 Not Found", {"message": "page not found"})


def serve(conn):
    with conn:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        line = data.split(b"\r\n", 1)[0].decode(errors="replace")
        note(line)
        if mode == "hang":
            threading.Event().wait()
        if mode == "garbage":
            conn.sendall(b"\x00\xff\x13garbage from a socket that is no Docker\r\n\r\n\x7f")
            return
        method, target = line.split(" ")[0:2]
        min144(conn, method, target)


s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
if os.path.exists(path):
    os.unlink(path)
s.bind(path)
s.listen(16)
note("ready")
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
