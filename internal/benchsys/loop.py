"""The Python baseline of make bench-system: json.loads every line and
check the same stream invariants as the Go loop (sequence, final, status)."""
import json
import sys

streams = {}
records = problems = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        try:
            r = json.loads(line)
        except ValueError:
            problems += 1
            continue
        records += 1
        kind, rid, seq = r.get("response_kind"), r.get("request_id"), r.get("sequence")
        if kind is None or rid is None or not isinstance(seq, int) or seq < 0:
            continue
        st = streams.get(rid)
        if st is None:
            st = streams[rid] = [-1, False]
        if st[1]:
            problems += 1
        if seq != st[0] + 1:
            problems += 1
        st[0] = seq
        if r.get("is_final"):
            st[1] = True
            if r.get("status") not in ("succeeded", "failed", "cancelled"):
                problems += 1
            del streams[rid]
problems += len(streams)
print(f"{records} records, {problems} problems")
