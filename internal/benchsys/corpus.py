"""Rewrites an `e2atap gen` capture the way a Python producer would write
it: deltas in Chinese, json.dumps with the reference's key order (dict
insertion order), ensure_ascii on or off, and optionally a share of the
streams whose request_id needs a JSON escape. A fifth argument adds what
other producers put in records: "ext", a gateway's extension fields at the
top level (keys the reference never sends); "nested", a tool call's
arguments nested five levels deep in every body. And what agents stream
as deltas besides prose: "code", a code block (quotes, backslashes, new
lines, a file path); "toolres", a tool's result as JSON text (paths,
sizes, SHA-256 hashes, timestamps); "b64", an image as a base64 data URL;
"img", an image's bare base64 (as Anthropic's and Gemini's image blocks);
"logs", log lines (timestamps, UUIDs, key=value pairs). Each is cheap to
check for a credential only if the secret rule's pre-checks turn away
what merely looks like one.

usage: corpus.py IN OUT ensure_ascii(0|1) escaped_percent [ext|nested|code|toolres|b64|img|logs]
"""
import base64
import hashlib
import json
import sys
import uuid
import zlib

src, dst, ascii_, pct = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
extra = sys.argv[5] if len(sys.argv) > 5 else ""
ZH = "你好，这是一个流式回答的片段。模型正在思考并生成内容。"


CODE = 'def f(x):\n\tif x == "a\\\\b":\n\t\treturn {"k": "v", "path": "C:\\\\tmp"}\n\treturn None\n'


def delta_of(kind, n):
    """The delta of record n for a delta kind; deterministic in n."""
    h = hashlib.sha256(b"%d" % n).hexdigest()
    if kind == "code":
        return CODE * (2 + n % 5)
    if kind == "toolres":
        files = [{"path": "/srv/app/mod%d.py" % (n % 97 + i), "size": (n * 7919 + i) % 99999,
                  "sha256": hashlib.sha256(b"%d-%d" % (n, i)).hexdigest(),
                  "modified": "2026-03-29T12:00:%02d+00:00" % ((n + i) % 60)} for i in range(3)]
        return json.dumps({"files": files, "total_tokens": 1234 + n % 100, "status": "ok"})
    if kind == "b64":
        raw = b"".join(hashlib.sha256(b"%d-%d" % (n, i)).digest() for i in range(19))[:600]
        return "data:image/png;base64," + base64.b64encode(raw).decode()
    if kind == "img":
        raw = b"".join(hashlib.sha256(b"%d-%d" % (n, i)).digest() for i in range(19))[:592]
        return base64.b64encode(b"\x89PNG\r\n\x1a\n" + raw).decode()
    if kind == "logs":
        return "".join("2026-03-29 12:00:%02d,%03d INFO [worker-%d] request_id=%s user=u-%d latency_ms=%d status=200 path=/v1/chat\n"
                       % (i, n % 1000, i, uuid.UUID(h[:32]), n % 99, (n * 31 + i) % 999) for i in range(4))
    return None


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
            body["delta"] = delta_of(extra, n) or ZH[n % 7:n % 7 + 12]
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
