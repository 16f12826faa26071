# Generates families.jsonl (python3 gen.py, from this directory): a
# fifteenth corpus, written by h-secrets17 with its own seed, read with
# the sixth's (TestSweep6Offline, TestSweep6Run: every place, two-delta
# cuts, the partial-leak checker). Its families are the leaks h-secrets17
# fixed: (1) "pwd", a password's short name, in prose ("my pwd is <pw>",
# "the PWD was <pw>", URL-encoded) and before a CJK copula, also an
# English password word before one ("password是<pw>"); (2) a two-word
# label ending in "Key" before a full-width colon or a copula and a
# colon ("API Key为：<v>", "Secret Key：<v>"); (3) a known vendor glued
# to "key" ("stripekey", "OPENAIKEY"); (4) an Oracle connect string under
# "-u" ("sqlplus -u scott/<pw>@db:1521", read as curl's user:password);
# (5) usermod's and useradd's -p URL-encoded, with escapes in the value,
# cut across two deltas.
# Values carry the lines real tools print before them, so that the
# audit's split at half the value falls before the name of the secret.
# Near-misses ("near": true) must give no e2a.secret finding: "pwd" and
# its path (the shell's command), stack traces whose file names hold a
# credential word ("passwd.go:123"), words that end in "key" (monkey,
# turnkey, hotkey, whiskey, passkey), "Primary Key：" and "Public Key：",
# an env dump's PWD=<path>.
# Random characters from a fixed seed.
import json, random, string
r = random.Random(20261217)
A = string.ascii_letters + string.digits
H = "0123456789abcdef"
def g(n, al=A):
    while True:
        s = "".join(r.choice(al) for _ in range(n))
        if al == H and any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s
        if al == A and any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s):
            return s
LINES = ["$ uptime", " 11:02:03 up 3 days,  2:14,  1 user,  load average: 0.08, 0.12, 0.10", "$ df -h /srv",
         "Filesystem      Size  Used Avail Use% Mounted on", "/dev/nvme0n1p1   99G   41G   54G  44% /srv",
         "$ whoami", "agent", "$ ls", "README.md  go.mod  main.go"]
def pre(v, sep="\n"):
    out = ""
    k = 0
    while len(out) <= len(v) + 8:
        out += LINES[k % len(LINES)] + sep
        k += 1
    return out + v
S = []
def add(name, value, *cores, accept=None, cut_accept=None, nocut=None):
    S.append({"name": name, "value": value, "cores": list(cores), "near": False, **({"accept": accept} if accept else {}),
              **({"cut_accept": cut_accept} if cut_accept else {}), **({"nocut": nocut} if nocut else {})})
def near(name, value, accept=None):
    S.append({"name": name, "value": value, "cores": [], "near": True, **({"accept": accept} if accept else {})})

# (1)
k = g(16); add("prose_my_pwd_is", pre("The login failed twice. For the record, my pwd is " + k + " and the user is ops."), k)
k = g(14); add("prose_pwd_was_upper", pre("Note: the PWD was " + k + " before the reset."), k)
k = g(16); add("prose_pwd_urlencoded", pre("GET /search?q=the+pwd+is+" + k + "&lang=en HTTP/1.1"), k)
k = g(16); add("cjk_pwd_copula", pre("我的pwd是" + k + "，请保密。"), k)
k = g(16); add("cjk_password_copula", pre("服务器的password为" + k + "。"), k)
add("prose_pwd_word", pre("ok, the pwd is correcthorsebattery."), "correcthorsebattery",
    accept="a word with no digit after \"pwd is\": masked as high_entropy, no finding (as after \"password is\")")
# (2)
k = g(28); add("cjk_api_key_copula_colon", pre("已创建新的凭据。API Key为：" + k + "\n请妥善保存。"), k)
k = g(32); add("cjk_secret_key_colon", pre("Access Key ID：LTAIexample\nSecret Key：" + k), k)
k = g(40, H); add("cjk_private_key_is_colon", pre("您的Private Key是：" + k), k)
k = g(24); add("cjk_api_key_fullwidth_spaced", pre("配置完成\nAPI KEY： " + k + "\n"), k)
# (3)
k = g(40, H); add("env_stripekey_glued", pre("$ env | sort\nHOME=/home/agent\nstripekey=" + k + "\nTERM=xterm"), k)
k = g(48, H); add("json_openaikey_glued", pre('$ cat ~/.tool.json\n{"OPENAIKEY": "' + k + '", "model": "gpt-4o"}'), k)
k = g(64, H); add("yaml_serpapikey_glued", pre("$ cat search.yaml\nengine: google\nserpapikey: " + k + "\n"), k)
# (4)
k = g(14); add("sqlplus_u_connect_port", pre("$ sqlplus -u scott/" + k + "@db.internal:1521/ORCL @report.sql"), k)
# (5) usermod's -p URL-encoded, its value holding escapes of its own, cut
# across two deltas (a tail after "%25" in the value was not kept).
k = g(7) + "%25" + g(7) + "%2F" + g(7); add("usermod_p_pct27_escaped_value", pre("GET /api/exec?cmd=sudo+usermod+-p+%27" + k + "%27+deploy HTTP/1.1"), k)
k = g(8) + "%2B" + g(8) + "%3D"; add("useradd_p_pct22_escaped_value", pre("POST /run body: cmd=useradd+-m+-p+%22" + k + "%22+bob&dry=0"), k)

near("near_pwd_path", "$ pwd\n/workspace/app2\nthe pwd is /home/agent/src2 and the cwd is ~/tmp3")
near("near_pwd_cjk_path", "当前pwd是/srv/app2，日志在./logs3")
near("near_pwd_windows", "PS> the pwd is C:\\Users\\agent2 now")
near("near_go_stack_trace", "panic: runtime error\ngoroutine 7 [running]:\ngithub.com/e2atap/e2atap/redact.find(...)\n\t/src/redact/passwd.go:123 +0x1c\n\t/src/redact/secret_key.go:88 +0x2f")
near("near_py_traceback", "Traceback (most recent call last):\n  File \"/app/auth/password.py\", line 12\napi_key.py:42: in test_login\n/app/passwd.js:88:12")
near("near_words_ending_in_key", "monkey=" + g(40, H) + "\nturnkey: " + g(40, H) + "\nhotkey=" + g(40, H) + "\nwhiskey=" + g(40, H) + "\npasskey=" + g(40, H))
near("near_primary_public_key_cjk", "Primary Key：id12345\nPublic Key：ssh-ed25519 AAAAC3NzaC1lZDI1NTE5\nSort Key为：created_at")
near("near_curl_user_with_slash", "curl -s -u ops/eu@corp https://api.example.com/v1/health")
near("near_env_pwd_path", "$ env | sort\nHOME=/home/agent\nOLDPWD=/home/agent\nPWD=/workspace/app2\nSHLVL=1\n$ docker inspect app --format '{{json .Config.Env}}'\n[\"PWD=/srv/app3\",\"PATH=/usr/bin\"]")

with open("families.jsonl", "w") as f:
    for o in S:
        f.write(json.dumps(o, ensure_ascii=False) + "\n")
