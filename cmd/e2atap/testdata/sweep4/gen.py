# Generates families.jsonl (python3 gen.py, from this directory): a fourth
# corpus, written by h-secrets4. The corpora before it vary the credential
# family; this one varies how and where a family everyone knows is written:
# JSON-escaped in part ("\u0041KIA…", "\/" in a URL, "ghp\u005f…"), a
# JSON document held as an escaped string inside another (a tool result
# encoded twice), URL-encoded (a DSN with "%3A%2F%2F" and "%40", a .pgpass
# line, an Oracle connect string), the base64 of user:password after
# "Basic" in the spellings of curl, HTTP headers and JSON header maps, a
# PEM key with "\n" escapes (once or twice) or CRLF, a secret with an
# escaped quote right before or after it, an Oracle connect string cut in
# its password by the audit positions' split. Random characters from a
# fixed seed. The format of the audit corpus; "wire" (when set) is the value as
# the inside of a JSON string exactly as it is to be written on the wire
# (partial \u00XX escapes that encoding/json would not write), and "value"
# is what that decodes to.
import json, random, string, base64
from urllib.parse import quote
r = random.Random(20261206)
A = string.ascii_letters + string.digits
U = string.ascii_uppercase + "234567"
H = "0123456789abcdef"
def g(n, al=A):
    while True:
        s = "".join(r.choice(al) for _ in range(n))
        if al != A or (any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)):
            return s
def d(n): return "".join(r.choice(string.digits) for _ in range(n))
def pw(): return g(6) + r.choice("!#%^*") + g(7)
S = []
def add(name, value, *cores, wire=None):
    S.append({"name": name, "value": value, "cores": list(cores), "near": False, **({"wire": wire} if wire else {})})
def wired(name, wire, *cores):
    add(name, json.loads('"' + wire + '"'), *cores, wire=wire)
def uesc(c): return "\\u%04x" % ord(c)

# 1. Partial JSON escapes on the wire.
ak = "AKIA" + g(16, U); wired("aws_key_first_letter_escaped", "aws key " + uesc("A") + ak[1:], ak[4:])
ak = "AKIA" + g(16, U); wired("aws_key_mid_escaped", "id=AK" + uesc("I") + "A" + ak[4:12] + uesc(ak[12]) + ak[13:], ak[4:])
c = g(36); wired("github_underscore_escaped", "token ghp" + uesc("_") + c, c)
c = g(24); wired("slack_dash_escaped", "xoxb" + uesc("-") + d(11) + "-" + d(13) + "-" + c, c)
p = pw(); wired("dsn_slash_escaped", "postgres:\\/\\/app:" + p + "@db.example.com:5432\\/orders", p)
p = pw(); wired("mongodb_srv_slash_escaped", "mongodb+srv:\\/\\/svc:" + p + "@cluster0.ab1cd.mongodb.net\\/?retryWrites=true", p)
c = g(36); wired("github_escaped_quotes_around", "{\\\"token\\\":\\\"ghp_" + c + "\\\"}", c)
p = pw(); wired("password_escaped_quotes_around", "password=\\\"" + p + "\\\" user=\\\"app\\\"", p)
p = pw(); wired("password_key_escaped", "p" + uesc("a") + "ssword: " + p, p)
sk = g(40, A + "+/"); wired("aws_secret_u_equals", "aws_secret_access_key" + uesc("=") + sk, sk)
# The same spellings inside JSON text held in a string (a tool's output that
# is JSON, carried in a delta): the decoded delta holds the escapes.
for o in list(S):
    if "wire" in o:
        add(o["name"] + "_in_json_text", o["wire"], *o["cores"])
# 2. A JSON document as an escaped string inside another (a tool result
# encoded twice, then once more as the delta that carries it).
ghp, p, ak = g(36), pw(), "AKIA" + g(16, U)
inner = json.dumps({"env": {"GITHUB_TOKEN": "ghp_" + ghp, "DATABASE_URL": "postgres://app:" + p + "@db:5432/app", "AWS_ACCESS_KEY_ID": ak}})
add("tool_result_twice", json.dumps({"tool": "read_env", "result": inner}), ghp, p, ak[4:])
p = pw(); inner = json.dumps(json.dumps({"password": p, "user": "svc"}))
add("tool_result_three_times", json.dumps({"result": inner}), p)
c = g(36); add("escaped_quote_before_token", 'cfg \\"ghp_' + c + '\\" end', c)
c = g(36); add("escaped_quote_after_token", 'cfg=ghp_' + c + '\\"', c)
# 3. URL-encoded.
p = pw(); add("dsn_url_encoded", "next=" + quote("postgresql://app:" + p + "@db.example.com:5432/orders", safe=""), p)
p = g(8) + "@" + g(7); add("dsn_password_percent_40", "postgresql://app:" + quote(p, safe="") + "@db.example.com/orders", p.split("@")[0], p.split("@")[1])
p = pw(); add("pgpass_url_encoded", "line=" + quote("db.example.com:5432:orders:app:" + p, safe=""), p)
p = pw(); add("pgpass_form_encoded", "pgpass=" + quote("*:*:*:postgres:" + p, safe=""), p)
p = g(14); add("oracle_url_encoded", "dsn=" + quote("scott/" + p + "@//db.example.com:1521/ORCLPDB1", safe=""), p)
p = g(14); add("oracle_sqlplus_url_encoded", "cmd=" + quote("sqlplus system/" + p + "@ORCL", safe=""), p)
p = g(14); add("redis_url_encoded", quote("redis://:" + p + "@cache.internal:6379/0", safe=""), p)
sk = g(30, A) + "/" + g(4) + "+" + g(4); add("aws_secret_url_encoded", "q=" + quote("aws_secret_access_key=" + sk, safe=""), sk)
c = g(36); add("github_token_query_double_encoded", "u=" + quote(quote("https://x.example.com/?access_token=ghp_" + c, safe=""), safe=""), c)
# Split across two chunks inside the password (the audit positions split
# every value at its middle): the live view masks the end of the first.
p = g(14); add("oracle_ezconnect_cut_in_password", "scott/" + p + "@//db/ORCL", p)
# 4. Basic authorization.
def basic(u): return base64.b64encode((u + ":" + pw()).encode()).decode()
c = basic("deploy"); add("basic_header", "Authorization: Basic " + c, c)
c = basic("ci-bot"); add("basic_lower", "authorization: basic " + c, c)
c = basic("svc").rstrip("="); add("basic_unpadded", "Authorization: Basic " + c, c)
c = basic("admin"); add("basic_json_header_map", json.dumps({"headers": {"Authorization": "Basic " + c, "Accept": "*/*"}}), c)
c = basic("jenkins"); add("basic_curl_H", "curl -sS -H 'Authorization: Basic " + c + "' https://ci.example.com/api/json", c)
c = basic("bob"); add("basic_python_dict", "requests.get(url, headers={'Authorization': 'Basic " + c + "'})", c)
c = basic("alice"); add("basic_url_encoded", "h=" + quote("Authorization: Basic " + c, safe=""), c)
c = basic("ops"); add("basic_go_literal", 'req.Header.Set("Authorization", "Basic ' + c + '")', c)
# 5. PEM keys.
def pemkey(kind):
    body = base64.b64encode(bytes(r.getrandbits(8) for _ in range(240))).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return "-----BEGIN " + kind + "-----", lines, "-----END " + kind + "-----"
b, L, e = pemkey("RSA PRIVATE KEY"); add("pem_literal_backslash_n", "key: " + "\\n".join([b] + L + [e]), *L[1:3])
b, L, e = pemkey("PRIVATE KEY"); add("pem_crlf", "\r\n".join([b] + L + [e]) + "\r\n", *L[1:3])
b, L, e = pemkey("EC PRIVATE KEY"); add("pem_literal_crlf_escapes", "\\r\\n".join([b] + L + [e]), *L[1:3])
b, L, e = pemkey("OPENSSH PRIVATE KEY"); add("pem_double_escaped", json.dumps({"f": "\\n".join([b] + L + [e])}), *L[1:3])
b, L, e = pemkey("PRIVATE KEY"); add("pem_url_encoded", "k=" + quote("\n".join([b] + L + [e]), safe=""), *L[1:3])
# Left out (still not found): a letter or '-' spelled \u00XX in JSON text
# held in a string, that text then URL-encoded ("aws+key+%5Cu0041KIA…": the
# audit positions URL-encode every value) or split across two chunks
# ("p\u0061ssword:" | " <pw>" in the record log; "xoxb\u002d…-9571" |
# "…" in observe --records, which masks a delta's last word only when it
# sees a credential in progress): no producer escapes letters or '-'; the
# single-level and unsplit forms are in.
LEFT_OUT = ["aws_key_first_letter_escaped_in_json_text", "password_key_escaped_in_json_text", "slack_dash_escaped_in_json_text"]
out = [o for o in S if o["name"] not in LEFT_OUT]
with open("families.jsonl", "w") as f:
    for o in out:
        f.write(json.dumps(o) + "\n")
print(len(out))
