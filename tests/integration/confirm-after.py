#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Answer node-reset's confirmation as a person at a terminal does, with something done while the
# prompt waits: confirm-after.py HOOK -- COMMAND... runs COMMAND with a pseudo-terminal as its standard
# input (its stdout and stderr are this script's), waits for "Type 'yes'" on its stderr, runs HOOK
# (a shell command), then types "yes". Exits with COMMAND's status; 3 when the prompt never came.
import os
import subprocess
import sys

hook = sys.argv[1]
command = sys.argv[sys.argv.index("--") + 1:]
master, slave = os.openpty()
p = subprocess.Popen(command, stdin=slave, stderr=subprocess.PIPE)
os.close(slave)
seen = b""
while b"Type 'yes'" not in seen:
    chunk = p.stderr.read1(4096)
    if not chunk:
        sys.stderr.buffer.write(seen)
        sys.exit(p.wait() or 3)
    seen += chunk
sys.stderr.buffer.write(seen)
sys.stderr.flush()
subprocess.run(["sh", "-c", hook], check=False)
os.write(master, b"yes\n")
for chunk in iter(lambda: p.stderr.read1(4096), b""):
    sys.stderr.buffer.write(chunk)
sys.exit(p.wait())
