#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A TLS front (ALPN h2) for the etcd test's hostile servers: tls-proxy.py CERT KEY HOST PORT MODE [SOCKET]
#   relay     terminate TLS and relay the bytes both ways to the unix SOCKET (grpc-hostile behind it)
#   garbage   complete the handshake, then send random bytes instead of HTTP/2 frames, never the end
#   silent    accept TCP and never answer, not even the TLS handshake
import asyncio
import os
import socket
import ssl
import sys


async def pipe(r, w):
    try:
        while True:
            d = await r.read(65536)
            if not d:
                break
            w.write(d)
            await w.drain()
    except Exception:
        pass
    finally:
        w.close()


async def main():
    cert, key, host, port, mode = sys.argv[1:6]
    sock = sys.argv[6] if len(sys.argv) > 6 else None
    if mode == "silent":
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, int(port)))
        s.listen(64)
        held = []
        while True:
            c, _ = await asyncio.get_running_loop().sock_accept(s)
            held.append(c)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["h2"])

    async def handle(cr, cw):
        if mode == "garbage":
            try:
                while True:
                    cw.write(os.urandom(16384))
                    await cw.drain()
            except Exception:
                return
        ur, uw = await asyncio.open_unix_connection(sock)
        await asyncio.gather(pipe(cr, uw), pipe(ur, cw))

    srv = await asyncio.start_server(handle, host, int(port), ssl=ctx)
    async with srv:
        await srv.serve_forever()


asyncio.run(main())
