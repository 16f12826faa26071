"""Echo server for the tap/ws tests: the reference AgentServer's library
(python3-websockets) with its defaults, permessage-deflate included.

Prints "PORT <n>" once listening on 127.0.0.1, then echoes every message
(text as text, binary as binary) until killed. The first frame is the
reference's connection.ack.
"""
import asyncio
import sys

import websockets

ACK = '{"type":"event","event":"connection.ack","payload":{"status":"ready"}}'


async def handler(ws, path=None):
    await ws.send(ACK)
    try:
        async for message in ws:
            await ws.send(message)
    except websockets.ConnectionClosed:
        pass


async def main():
    async with websockets.serve(handler, "127.0.0.1", 0, max_size=8 * 1024 * 1024) as server:
        port = server.sockets[0].getsockname()[1]
        print("PORT", port, flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
