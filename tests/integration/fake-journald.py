#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A stand-in for journald's native socket, for tests in a private mount namespace (a tmpfs on /run):
# fake-journald.py OUT binds /run/systemd/journal/socket and appends each entry to OUT as one JSON
# object per line ({"FIELD": "value", ...}), until killed. Only the native protocol: KEY=VALUE lines
# and binary fields (KEY\n, 64-bit little-endian length, bytes, \n).
import json
import os
import socket
import struct
import sys

SOCK = "/run/systemd/journal/socket"


def parse(data):
    entry, i = {}, 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            i = nl + 1
        else:
            k = line
            (n,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            v = data[nl + 9:nl + 9 + n]
            i = nl + 9 + n + 1
        entry[k.decode()] = v.decode("utf-8", "backslashreplace")
    return entry


def main():
    os.makedirs(os.path.dirname(SOCK), exist_ok=True)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(SOCK)
    with open(sys.argv[1], "a") as out:
        print("ready", file=out, flush=True)
        while True:
            data = s.recv(1 << 20)
            print(json.dumps(parse(data)), file=out, flush=True)


main()
