# Generates families.jsonl (python3 gen.py, from this directory): a ninth
# corpus, written by h-secrets9 with its own seed, read with the sixth's
# (TestSweep6Offline, TestSweep6Run: every place, two-delta cuts, the
# partial-leak checker). What the earlier sweeps (audit, 3-8) cover was
# listed first; these are producers they lack: (1) what tools print when
# asked to show their state (a rich/IPython traceback's locals, a
# dataclass's repr, kubectl get secret -o yaml, Helm values, a GitHub Actions log's env, curl -v, an HTTP/2 frame
# dump, git credential fill, docker inspect, Terraform state, a HAR
# entry, a notebook's output cell); (2) config files (.git-credentials,
# .pgpass, .my.cnf, TOML, INI with spaces, docker-compose env); (3)
# Windows and PowerShell (cmdkey /pass:, $env:, Invoke-RestMethod
# -Headers); (4) encodings (a value percent-encoded twice, JSON in a JSON
# string in a JSON string); (5) the command lines h-secrets9 fixed (7z
# -p, aws configure set, ngrok config add-authtoken), (6) a YAML block
# scalar's later lines and (7) GitHub Actions' ::add-mask::.
# Left out, each a leak left (redact's TestSweep9* hold their plain and
# JSON-text forms): URL-encoded
# (a query's state=…), gh secret set --body, auth=HTTPBasicAuth(…),
# session.auth = (…), expect's send and pexpect's sendline after the
# prompt, actuator/env's and Terraform output -json's {"value": …},
# ODBC's Pwd={…}, ADO.NET's Password="a"";b" and SQL*Plus's "SQL> conn
# u/<pw>@db" are printed; cut
# across two deltas, the first five, Terraform's output and a JSON key
# spelled with \u
# escapes ({"pass\u0077ord": "<pw>"}) are printed. Near-misses cut across
# two deltas that are findings: "auth=HTTP" | "BasicAuth(user, password)"
# and expect "password:" / send "$pass\r".
# Near-misses ("near": true) must give no e2a.secret finding: hashes of
# lockfiles and go.sum, commit SHAs, UUIDs, digests, placeholders and
# masks. Random characters from a fixed seed.
import json, random, string, base64, urllib.parse
r = random.Random(20261207)
A = string.ascii_letters + string.digits
def g(n, al=A):
    while True:
        s = "".join(r.choice(al) for _ in range(n))
        if al != A or (any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)):
            return s
def pw(): return g(7) + r.choice("!#%^*") + g(6)
S = []
def add(name, value, *cores, accept=None, cut_accept=None, nocut=None):
    S.append({"name": name, "value": value, "cores": list(cores), "near": False, **({"accept": accept} if accept else {}),
              **({"cut_accept": cut_accept} if cut_accept else {}), **({"nocut": nocut} if nocut else {})})
def near(name, value, accept=None):
    S.append({"name": name, "value": value, "cores": [], "near": True, **({"accept": accept} if accept else {})})

# (1) tools showing their state
p = pw(); add("rich_traceback_locals", "│ ╭───── locals ─────╮\n│ │   host = 'db'     │\n│ │ db_password = '" + p + "' │\n│ ╰──────────────────╯", p)
p = pw(); add("ipython_traceback_call", "----> 12 conn = psycopg2.connect(host='db', user='app', password='" + p + "')\n", p)
t = g(40); add("dataclass_repr", "Settings(host='db.internal', port=5432, api_key='" + t + "', debug=False)", t)
t = g(32); add("repr_nested_dict", "{'auth': {'type': 'oauth', 'client_secret': '" + t + "'}, 'retries': 3}", t)
b = base64.b64encode(pw().encode()).decode(); add("kubectl_secret_yaml", "apiVersion: v1\ndata:\n  password: " + b + "\n  username: YWRtaW4=\nkind: Secret\n", b)
p = pw(); add("helm_values", "postgresql:\n  auth:\n    username: app\n    password: " + p + "\n    database: app\n", p)
k = g(40); add("gha_log_env", "Run ./deploy.sh\n  ./deploy.sh\n  shell: /usr/bin/bash -e {0}\n  env:\n    AWS_REGION: eu-west-1\n    AWS_SECRET_ACCESS_KEY: " + k + "\n", k)
t = g(48); add("curl_v_authorization", "> GET /v1/items HTTP/2\n> Host: api.example.com\n> authorization: Bearer " + t + "\n> user-agent: curl/8.5.0\n", t)
t = g(32); add("curl_v_cookie", "> GET / HTTP/1.1\n> Host: app.example.com\n> Cookie: csrftoken=abc; sessionid=" + t + "\n>\n", t)
u = base64.b64encode(("svc:" + pw()).encode()).decode(); add("http2_frame_dump", "[HEADERS] stream=1\n  :method: GET\n  :path: /metrics\n  :authority: prom.internal\n  authorization: Basic " + u + "\n", u)
p = pw(); add("git_credential_fill", "protocol=https\nhost=github.com\nusername=bob\npassword=" + p + "\n", p)
t = g(32); add("docker_inspect_env", '"Env": [\n    "PATH=/usr/local/sbin:/usr/local/bin",\n    "POSTGRES_PASSWORD=' + t + '",\n    "PGDATA=/var/lib/postgresql/data"\n],', t)
p = pw(); add("terraform_state", '{"mode":"managed","type":"aws_db_instance","name":"main","instances":[{"attributes":{"username":"app","password":"' + p + '","port":5432}}]}', p)
t = g(36); add("har_header_entry", '{"headers":[{"name":"Accept","value":"*/*"},{"name":"X-Api-Key","value":"' + t + '"}]}', t)
t = g(32); add("notebook_output", '{"cell_type":"code","outputs":[{"name":"stdout","output_type":"stream","text":["API_KEY = \'' + t + '\'\\n"]}]}', t)
# (2) config files
p = pw(); add("git_credentials_file", "https://bob:" + p + "@github.com\n", p)
p = pw(); add("pgpass_line", "db.example.com:5432:app:bob:" + p, p)
p = pw(); add("my_cnf", "[client]\nuser = root\npassword = " + p + "\nhost = 127.0.0.1\n", p)
p = pw(); add("toml_inline_table", 'db = { user = "app", password = "' + p + '", host = "db" }', p)
p = pw(); add("ini_spaces", "[database]\nPassword    =    " + p + "\n", p)
p = pw(); add("compose_env_list", "services:\n  db:\n    environment:\n      - POSTGRES_USER=app\n      - POSTGRES_PASSWORD=" + p + "\n", p)
t = g(40); add("heroku_config_set", "heroku config:set STRIPE_API_KEY=" + t + " -a shop", t)
t = g(40); add("git_remote_oauth2", "git remote set-url origin https://oauth2:" + t + "@gitlab.example.com/org/repo.git", t)
# (3) Windows and PowerShell
p = pw(); add("cmdkey_pass", "cmdkey /generic:TERMSRV/app01 /user:CORP\\svc /pass:" + p, p)
p = pw(); add("powershell_env", '$env:DB_PASSWORD = "' + p + '"', p)
t = g(40); add("invoke_restmethod_headers", 'Invoke-RestMethod -Uri $u -Headers @{ Authorization = "Bearer ' + t + '" }', t)
p = pw(); add("powershell_pscredential_plain", "$cred = [pscredential]::new('svc', (ConvertTo-SecureString '" + p + "' -AsPlainText -Force))", p)
# (4) encodings
p = pw(); add("percent_encoded_twice", "next=%2Flogin%3Fuser%3Dbob%26password%3D" + urllib.parse.quote(urllib.parse.quote(p, safe=""), safe=""), urllib.parse.quote(urllib.parse.quote(p, safe=""), safe="")[:9])
p = pw(); add("json_in_json_in_json", json.dumps({"config": json.dumps({"db": json.dumps({"password": p})})}), p)
# (5) the command lines fixed here
p = pw(); add("sevenzip_p", "7z a -p" + p + " -mhe=on backup.7z data/", p)
k = g(40); add("aws_configure_set", "aws configure set aws_secret_access_key " + k + " --profile ci", k)
t = g(2, "0123456789") + g(25) + "_" + g(20); add("ngrok_add_authtoken", "ngrok config add-authtoken " + t, t)
# (6) a shape fixed here: a YAML block's later lines
l2 = g(48); add("helm_values_tls_key_block", "tls:\n  private_key: |\n    MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n    " + l2 + "\n    " + g(48) + "\n  enabled: true\n", l2)
# (7) a shape fixed here: GitHub Actions' ::add-mask::
t = g(32); add("gha_add_mask", "::add-mask::" + t + "\n::group::deploy", t)

# near-misses
near("near_npm_integrity", '"integrity": "sha512-' + base64.b64encode(bytes(r.getrandbits(8) for _ in range(64))).decode() + '"')
near("near_go_sum", "golang.org/x/text v0.14.0 h1:" + base64.b64encode(bytes(r.getrandbits(8) for _ in range(32))).decode() + "\n")
near("near_commit_sha", "commit " + g(40, "0123456789abcdef") + "\nAuthor: Bob <bob@example.com>")
near("near_uuid", "request_id: " + "-".join(g(n, "0123456789abcdef") for n in (8, 4, 4, 4, 12)))
near("near_image_digest", "postgres@sha256:" + g(64, "0123456789abcdef"))
near("near_password_redacted", "password: <redacted>")
near("near_password_var", "password=${DB_PASSWORD}")
near("near_password_stars", "password: ****")
near("near_actuator_masked", '{"spring.datasource.password":{"value":"******","origin":"System Environment Property"}}')
near("near_gha_masked", "  env:\n    API_KEY: ***\n")
near("near_sqlexception", "java.sql.SQLException: Access denied for user 'bob'@'10.0.0.5' (using password: YES)")
near("near_kubectl_get_secret", "NAME       TYPE     DATA   AGE\ndb-creds   Opaque   2      5d")
near("near_bearer_var", 'curl -H "Authorization: Bearer $TOKEN" https://api.example.com')
near("near_cmdkey_list", "cmdkey /list")
near("near_gh_secret_var", 'gh secret set DEPLOY_KEY --body "$DEPLOY_KEY"')
near("near_aws_configure_region", "aws configure set region eu-west-1")
near("near_tf_output_plain", '{"db_host": {"sensitive": false, "type": "string", "value": "db.internal"}}')
near("near_add_mask_var", "::add-mask::$TOKEN")
near("near_sqlplus_sysdba", "SQL> connect / as sysdba")
near("near_schema_password_object", '{"password": {"type": "string", "minLength": 12}}')
near("near_odbc_driver_braces", "Driver={ODBC Driver 18 for SQL Server};Server=db;Trusted_Connection=yes")

with open("families.jsonl", "w") as f:
    for o in S:
        f.write(json.dumps(o, ensure_ascii=False) + "\n")
