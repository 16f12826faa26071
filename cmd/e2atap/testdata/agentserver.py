"""A minimal AgentServer for the run tests: the reference's library
(python3-websockets, permessage-deflate on by default). After
connection.ack it sends every line of LINES_FILE as one text message, then
closes with 1000.

usage: agentserver.py LINES_FILE   (prints "PORT <n>" once listening)
"""
import asyncio
import sys

import websockets

ACK = '{"type":"event","event":"connection.ack","payload":{"status":"ready"}}'


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]

    async def handler(ws, path=None):
        await ws.send(ACK)
        for line in lines:
            await ws.send(line)
        await ws.close(1000, "done")

    async def serve():
        async with websockets.serve(handler, "127.0.0.1", 0, max_size=8 * 1024 * 1024) as server:
            print("PORT", server.sockets[0].getsockname()[1], flush=True)
            await asyncio.Future()

    asyncio.run(serve())


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
