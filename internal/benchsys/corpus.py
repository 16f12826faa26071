"""Rewrites an `e2atap gen` capture the way a Python producer would write
it: deltas in Chinese, json.dumps with the reference's key order (dict
insertion order), ensure_ascii on or off, and optionally a share of the
streams whose request_id needs a JSON escape. A fifth argument adds what
other producers put in records: "ext", a gateway's extension fields at the
top level (keys the reference never sends); "nested", a tool call's
arguments nested five levels deep in every body.

usage: corpus.py IN OUT ensure_ascii(0|1) escaped_percent [ext|nested]
"""
import json
import sys
import zlib

src, dst, ascii_, pct = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
extra = sys.argv[5] if len(sys.argv) > 5 else ""
ZH = "你好，这是一个流式回答的片段。模型正在思考并生成内容。"


def escaped(rid):
    return pct > 0 and zlib.crc32(rid.encode()) % 100 < pct


with open(src, "rb") as f, open(dst, "w", encoding="utf-8") as out:
    for n, line in enumerate(f):
        r = json.loads(line)
        rid = r.get("request_id")
        if isinstance(rid, str) and rid and escaped(rid):
            # A quote and a non-ASCII letter: escaped by any JSON writer
            # (the quote) or by ensure_ascii (the letter).
            new = rid + '/"é"'
            r["request_id"] = new
            if r.get("response_id") == rid:
                r["response_id"] = new
        body = r.get("body")
        if isinstance(body, dict) and isinstance(body.get("delta"), str):
            body["delta"] = ZH[n % 7:n % 7 + 12]
        if extra == "ext":
            r["x_gateway"] = {"region": "cn-north-1", "hop": n % 3, "node": "gw-%d" % (n % 5)}
            r["x_tenant"] = "tenant-%d" % (n % 11)
            r["x_priority"] = n % 4
            r["x_route"] = {"cluster": "agents-a", "weight": 100, "canary": False}
            r["x_received_ms"] = 1774785600000 + n
        elif extra == "nested" and isinstance(body, dict):
            args = {"path": "/srv/app/main.py", "line": n % 400, "dry_run": False}
            for depth in range(5):
                args = {"step_%d" % depth: args, "items": [{"id": j, "op": "edit"} for j in range(2)]}
            body["tool_args"] = args
        out.write(json.dumps(r, ensure_ascii=ascii_) + "\n")
