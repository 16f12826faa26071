"""The Python baseline of make bench-system's record-log part: read every
line and write it again as compact JSON (json.loads, json.dumps), to
/dev/null. No redaction: the least a program that rewrites each record
does."""
import json
import sys

n = 0
with open(sys.argv[1], "rb") as f, open("/dev/null", "w") as out:
    for line in f:
        try:
            r = json.loads(line)
        except ValueError:
            continue
        out.write(json.dumps(r, separators=(",", ":"), ensure_ascii=False))
        out.write("\n")
        n += 1
print(f"{n} records rewritten")
