"""Echo server for the tap/ws tests: the reference AgentServer's library
(python3-websockets) with its defaults, permessage-deflate included.

Prints "PORT <n>" once listening on 127.0.0.1, then echoes every message
(text as text, binary as binary) until killed. The first frame is the
reference's connection.ack.

usage: py_server.py [HANDSHAKE_COST_MS]
With HANDSHAKE_COST_MS, every opening handshake blocks the event loop for
that long (CPU work of a loaded AgentServer: authentication, session
set-up), so that a burst of connections queues up as on a busy server.
A handshake for the path /forbidden is refused with 403.
"""
import asyncio
import http
import sys
import time

import websockets

ACK = '{"type":"event","event":"connection.ack","payload":{"status":"ready"}}'


async def handler(ws, path=None):
    try:
        await ws.send(ACK)
        async for message in ws:
            await ws.send(message)
    except websockets.ConnectionClosed:
        pass


def process_request(cost):
    def check(path, headers):
        if cost:
            time.sleep(cost)  # blocks the loop, as CPU work does
        if path == "/forbidden":  # the AgentServer refusing a handshake
            return (http.HTTPStatus.FORBIDDEN, [("X-Agent-Reason", "origin not allowed")], b"forbidden by the agent server\n")
        return None
    return check


async def main():
    cost = float(sys.argv[1]) / 1000 if len(sys.argv) > 1 else 0
    async with websockets.serve(handler, "127.0.0.1", 0, max_size=8 * 1024 * 1024,
                                process_request=process_request(cost)) as server:
        port = server.sockets[0].getsockname()[1]
        print("PORT", port, flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
