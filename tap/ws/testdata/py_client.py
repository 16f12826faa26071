"""Client for the tap/ws tests: python3-websockets with its defaults
(permessage-deflate offered), as the reference Gateway connects.

usage: py_client.py URL MESSAGES_FILE
MESSAGES_FILE holds one message a line: "t <text>" or "b <hex>". The client
waits for connection.ack, sends each message, checks that the echo is
identical, closes with 1000 and prints one JSON line:
{"extensions": [...], "echoed": N, "ack": "..."}. Exit status 1 on a mismatch.
"""
import asyncio
import json
import sys

import websockets


async def main(url, path):
    messages = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            kind, _, body = line.partition(" ")
            messages.append(body if kind == "t" else bytes.fromhex(body))
    async with websockets.connect(url, origin="http://127.0.0.1:19001", max_size=8 * 1024 * 1024) as ws:
        ack = await ws.recv()
        echoed = 0
        for m in messages:
            await ws.send(m)
            got = await ws.recv()
            if got != m:
                print(json.dumps({"error": "echo differs", "index": echoed}), flush=True)
                sys.exit(1)
            echoed += 1
        exts = [e.name + ("" if not hasattr(e, "remote_no_context_takeover") else
                          ";remote_no_context_takeover=%s" % e.remote_no_context_takeover)
                for e in ws.extensions]
        await ws.close(1000, "done")
    print(json.dumps({"extensions": exts, "echoed": echoed, "ack": ack}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
