"""A minimal Gateway for the run tests: connects with python3-websockets'
defaults, reads every message until the server closes, and writes them to
OUT_FILE one a line (text only). Prints the negotiated extensions.

usage: gateway.py URL OUT_FILE
"""
import asyncio
import json
import sys

import websockets


async def main(url, out):
    got = []
    async with websockets.connect(url, origin="http://127.0.0.1:19001", max_size=8 * 1024 * 1024) as ws:
        try:
            async for m in ws:
                got.append(m)
        except websockets.ConnectionClosed:
            pass
        exts = [e.name for e in ws.extensions]
    with open(out, "w", encoding="utf-8") as f:
        for m in got:
            f.write(m + "\n")
    print(json.dumps({"extensions": exts, "received": len(got)}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
