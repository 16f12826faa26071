# Generates families.jsonl (python3 gen.py, from this directory): a
# thirteenth corpus, written by h-secrets14 with its own seed, read with
# the sixth's (TestSweep6Offline, TestSweep6Run: every place, two-delta
# cuts, the partial-leak checker). Its families are the leaks h-secrets14
# found and fixed: (1) a command line's password flag URL-encoded with
# "%20" for a space (mysql -p<pw>, sshpass -p, docker login -p,
# htpasswd -b, redis-cli -a; redis-cli --pass as it is), values with no
# digit; (2) passwords given to the commands that set or hash one
# (echo -e '<pw>\n<pw>' | passwd, printf … | sudo passwd, echo <pw> |
# passwd --stdin, usermod/useradd -p '<crypt hash>', openssl passwd,
# mkpasswd), expect's send after a prompt on the same line, and Argo CD's
# initial password printed on the line after its command; (3) a Twilio
# auth token right after its account SID in a client's constructor; (4)
# "the password for <e-mail> is <pw>" with the address URL-encoded, and
# CJK labels URL-encoded (密码, パスワード, 비밀번호) before a value; (6) the
# audit's: mongosh -p, az keyvault secret set --value, kubectl
# --from-literal=pass=<word>. Near-misses
# ("near": true) must give no e2a.secret finding: code after a
# credential key's "=" or ":=" (the over-mask fixed here), ports and
# flags of other tools, variables, placeholders, errors.
# Random characters from a fixed seed.
import json, random, string, urllib.parse
r = random.Random(20261214)
A = string.ascii_letters + string.digits
H = "0123456789abcdef"
def g(n, al=A):
    while True:
        s = "".join(r.choice(al) for _ in range(n))
        if al != A or (any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)):
            return s
def words(n=3):
    # a password of capitalised syllables, no digit ("HunterTwoBlue")
    return "".join(r.choice(["Hun", "Ter", "Two", "Blu", "Sun", "Ny", "Mea", "Dow", "Ri", "Ver", "Sto", "Ne", "Fal", "Con"]) for _ in range(n * 2))
def pw(): return g(7) + r.choice("!#%^*") + g(6)
LINES = ["$ uptime", " 11:02:03 up 3 days,  2:14,  1 user,  load average: 0.08, 0.12, 0.10", "$ df -h /srv",
         "Filesystem      Size  Used Avail Use% Mounted on", "/dev/nvme0n1p1   99G   41G   54G  44% /srv",
         "$ systemctl is-active nginx", "active", "$ whoami", "deploy", "$ cat /etc/os-release | head -n 2",
         'PRETTY_NAME="Ubuntu 24.04.1 LTS"', 'NAME="Ubuntu"']
def pre(v, sep="\n"):
    # Lines a tool printed before v, as many as make the audit's split at
    # half of the value fall before v (TestSweep6Run: a delta that starts
    # inside a value whose phrase is in the delta before is printed by
    # observe --records).
    out = ""
    k = 0
    while len(out) <= len(v) + 8:
        out += LINES[k % len(LINES)] + sep
        k += 1
    return out + v
def prelog(v):
    # Access-log lines before a request line v.
    out = ""
    while len(out) <= len(v) + 8:
        out += '10.0.3.%d - - [07/Dec/2026:08:00:%02d +0000] "GET /healthz HTTP/1.1" 200 2 "-" "kube-probe/1.30"\n' % (r.randrange(2, 250), r.randrange(60))
    return out + v
S = []
def add(name, value, *cores, accept=None, cut_accept=None, nocut=None):
    S.append({"name": name, "value": value, "cores": list(cores), "near": False, **({"accept": accept} if accept else {}),
              **({"cut_accept": cut_accept} if cut_accept else {}), **({"nocut": nocut} if nocut else {})})
def near(name, value, accept=None):
    S.append({"name": name, "value": value, "cores": [], "near": True, **({"accept": accept} if accept else {})})

# (1)
p = words(); add("mysql_p_pct20", "GET /api/exec?cmd=mysql%20-u%20root%20-p" + p + "%20-h%20db.internal%20orders HTTP/1.1", p)
p = words(); add("sshpass_pct20", prelog("GET /api/exec?cmd=sshpass%20-p%20" + p + "%20ssh%20deploy%40web1%20uptime HTTP/1.1"), p)
p = words(); add("docker_login_pct20", "POST /hooks/run body=cmd%3Ddocker%20login%20-u%20ci-bot%20-p%20" + p + "%20ghcr.io", p)
p = words(); add("htpasswd_pct20", prelog("GET /api/exec?cmd=htpasswd%20-b%20%2Fetc%2Fnginx%2F.htpasswd%20admin%20" + p + " HTTP/1.1"), p)
p = words(); add("redis_cli_pct20", prelog("GET /api/exec?cmd=redis-cli%20-h%20cache%20-a%20" + p + "%20ping HTTP/1.1"), p)
p = pw(); add("redis_cli_pass_long", "$ redis-cli -h cache.internal -p 6379 --pass " + p + " info keyspace\n# Keyspace\ndb0:keys=12,expires=0", p)
# (2)
p = words(); add("passwd_echo_e", "$ echo -e '" + p + "\\n" + p + "' | passwd deploy\nNew password: Retype new password: passwd: password updated successfully\n", p)
p = pw(); add("passwd_printf_sudo", pre('printf "' + p + '\\n' + p + '\\n" | sudo passwd app'), p)
p = words(); add("passwd_stdin", pre("echo " + p + " | passwd --stdin deploy\nChanging password for user deploy.\npasswd: all authentication tokens updated successfully.\n"), p)
h = "$6$" + g(8) + "$" + g(86, A + "./"); add("usermod_crypt_hash", "sudo usermod -p '" + h + "' deploy", h)
h = "$y$j9T$" + g(22, A + "./") + "$" + g(43, A + "./"); add("useradd_crypt_hash", "useradd -m -s /bin/bash -p \"" + h + "\" ci", h)
p = words(); add("openssl_passwd", "$ openssl passwd -6 -salt " + g(8) + " " + p + "\n$6$...", p)
p = pw(); add("mkpasswd_sha512", "mkpasswd -m sha-512 '" + p + "'", p)
p = pw(); add("expect_password_oneline", pre("expect -c 'spawn ssh deploy@web1; expect \"password:\"; send \"" + p + "\\r\"; interact'"), p)
x = g(16); add("argocd_initial_password", "$ argocd admin initial-password -n argocd\n" + x + "\n\n This password must be only used for first time login. We strongly recommend you update the password using `argocd account update-password`.\n", x)
x = g(16); add("argocd_initial_secret_b64d", pre("$ kubectl -n argocd get secret argocd-initial-admin-secret -o jsonpath=\"{.data.password}\" | base64 -d; echo\n" + x + "\n"), x)
# (3)
t = g(32, H); add("twilio_client_py", pre("from twilio.rest import Client\n\nclient = Client('AC" + g(32, H) + "', '" + t + "')\nmessage = client.messages.create(to='+15558675310', from_='+15017122661', body='hi')"), t)
t = g(32, H); add("twilio_client_node", pre('const client = require("twilio")("AC' + g(32, H) + '", "' + t + '");'), t)
# (4)
# ("the+password+for+ops%40example.com+is+<pw>" is left to redact's
# TestSweep14EncodedLabels: URL-encoded again in a place's "state=", its
# "%2B" spaces are read as no separator, a leak this corpus would show.)
p = pw(); q = urllib.parse.quote(p, safe="")
add("cjk_pct_zh", "GET /notes?text=%E6%95%B0%E6%8D%AE%E5%BA%93%E5%AF%86%E7%A0%81%3A" + q + "&page=1 HTTP/1.1", q)
p = g(14); add("cjk_pct_ja", prelog("POST /memo body=%E3%83%91%E3%82%B9%E3%83%AF%E3%83%BC%E3%83%89%EF%BC%9A" + p + "%0A"), p)
p = g(14); add("cjk_pct_ko", prelog("GET /q?s=%EB%B9%84%EB%B0%80%EB%B2%88%ED%98%B8%3D" + p + "&x=1 HTTP/1.1"), p)
# (5) expect's send after a glob prompt ("*assword*") is masked, no
# finding (redact's TestSweep14ExpectGlob): URL-encoded in a place's
# "state=" it is not read, so it is not a family here.
# (6) the fresh-eyes audit's leaks: MongoDB's shells' -p (after a quoted
# URL, redact's TestSweep14Audit: in JSON text held in a string the
# quoted URL ends the walk back to the command), az keyvault secret set --value, kubectl's --from-literal
# with a bare "pass" key and a value that reads as a word (appended last:
# the values above keep their seed's draws)
p = words(); add("mongosh_u_p", pre("$ mongosh --host db.internal --port 27017 -u admin -p " + p + " --authenticationDatabase admin"), p)
p = words(); add("az_keyvault_secret_value", pre("az keyvault secret set --vault-name kv-prod --name db-password --value " + p + " --output none"), p)
p = words(); add("kubectl_from_literal_pass", pre("kubectl -n prod create secret generic db --from-literal=user=app --from-literal=pass=" + p), p)

near("near_creds_static_call", 'creds := credentials.NewStaticCredentials(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), "")')
near("near_getpass_call", 'password = getpass.getpass("Password: ")')
near("near_token_await", "const token = await fetchToken(client);")
near("near_secret_environ", 'secret = os.environ["APP_SECRET"]')
near("near_docker_run_pct20", "GET /api/exec?cmd=docker%20run%20-p%208080%3A80%20nginx HTTP/1.1")
near("near_ssh_port_pct20", "GET /api/exec?cmd=ssh%20-p%2022%20deploy%40web1 HTTP/1.1")
near("near_mkdir_p_pct20", "GET /api/exec?cmd=mkdir%20-p%20build%20%26%26%20cp%20-p%20a%20b HTTP/1.1")
near("near_sshpass_var_pct20", "GET /api/exec?cmd=sshpass%20-p%20%24SSH_PASS%20ssh%20host HTTP/1.1")
near("near_mysql_prompt_pct20", "GET /api/exec?cmd=mysql%20-u%20root%20-p%20orders HTTP/1.1")
near("near_redis_pass_var", "redis-cli --pass $REDIS_PASSWORD info")
near("near_passwd_var", "echo $NEW_PW | passwd --stdin deploy")
near("near_passwd_printf_fmt", "printf '%s\\n%s\\n' \"$PW\" \"$PW\" | passwd deploy")
near("near_usermod_var", "usermod -p \"$HASH\" deploy")
near("near_usermod_lock", "usermod -L deploy && usermod -p '!' deploy")
near("near_openssl_stdin", "openssl passwd -6 -stdin < pw.txt")
near("near_argocd_error", "$ argocd admin initial-password -n argocd\nFATA[0000] secrets \"argocd-initial-admin-secret\" not found")
near("near_cjk_pct_crypto", "GET /wiki?t=%E5%AF%86%E7%A0%81%E5%AD%A6%3A" + g(12) + " HTTP/1.1")
near("near_mongodump_port", "mongodump -p 27017 --out /srv/dump")
near("near_keyvault_value_var", "az keyvault secret set --vault-name kv --name db --value $DB_PASSWORD")
near("near_from_literal_var", "kubectl create secret generic db --from-literal=pass=$DB_PASS")
near("near_password_for_email_expired", "GET /search?q=the+password+for+ops%40example.com+is+expired HTTP/1.1")

near("near_pct20_prose_expired", "GET /notes?text=the%20password%20is%20expired HTTP/1.1")
near("near_pct20_build_is", "GET /notes?text=the%20build%20is%20" + g(14) + " HTTP/1.1")
near("near_mkpasswd_prose", "run mkpasswd with the --method flag to pick a hash")
near("near_openssl_passwd_stdin_noflag", "openssl passwd < pw.txt")
near("near_expect_glob_var", "expect \"*assword*\"\nsend \"$pw\\r\"")
near("near_expect_brace_cr", "expect { \"*assword*\" { send \"\\r\" } }")
near("near_mongosh_quoted_port", "mongosh \"mongodb://db.internal\" -p 27017")
near("near_api_key_call", "api_key=load_key(cfg)")

# h-secrets15's (appended: the values above keep their seed's draws):
# (7) prose URL-encoded with "%20" for a space and '+'-encoded prose
# encoded again ("%2B"); (8) openssl passwd and mkpasswd with no flag
# before the password, usermod -p in encoded quotes; (9) expect's send
# after a glob prompt (a finding now), also in its brace form; (10)
# mongosh -p after a quoted URL (in JSON text, and JSON text held in a
# string, as the places put it); (11) a password that only looks like a
# call after a credential key ("Summer(2024").
p = g(14); add("pct20_prose", prelog("GET /notes?text=the%20password%20is%20" + p + "&lang=en HTTP/1.1"), p)
p = g(24); add("pct20_api_key", prelog("POST /memo body=api%20key%3A%20" + p + "%0A"), p)
p = g(14); add("pct2b_state_prose", prelog("GET /cb?state=q%3Dthe%2Bpassword%2Bis%2B" + p + "&code=4f2a HTTP/1.1"), p)
p = words(); add("openssl_passwd_noflag", pre("$ openssl passwd '" + p + "'\n$1$" + g(8) + "$" + g(22, A + "./")), p)
p = words(); add("mkpasswd_noflag", pre("mkpasswd " + p), p)
p = words(); add("usermod_p_pct27", prelog("GET /api/exec?cmd=sudo+usermod+-p+%27" + p + "%27+deploy HTTP/1.1"), p)
p = pw(); add("expect_glob", pre("spawn passwd deploy\nexpect \"*assword*\"\nsend \"" + p + "\\r\"\nexpect eof"), p)
p = pw(); add("expect_brace", pre("spawn ssh deploy@web1\nexpect {\n    \"*assword*\" { send \"" + p + "\\r\"; exp_continue }\n    eof\n}"), p)
p = words(); add("mongosh_quoted_url", pre("$ mongosh \"mongodb://db.internal:27017/app\" -u admin -p " + p + " --quiet"), p)
p = words(2) + "(" + str(r.randrange(1990, 2030)); add("password_call_like", pre("export DB_PASSWORD=" + p + "\n"), p)

with open("families.jsonl", "w") as f:
    for o in S:
        f.write(json.dumps(o, ensure_ascii=False) + "\n")
