# Generates families.jsonl (python3 gen.py, from this directory): fake credentials of the
# documented shapes (random characters, fixed seed). name, value (as
# planted), cores (what must never show), near (true: a near-miss that must
# stay unmasked).
import json, random, base64, string
r = random.Random(20261202)
A = string.ascii_letters + string.digits
U = string.ascii_uppercase + string.digits
H = "0123456789abcdef"
B64 = A + "+/"
W = A + "_-"
def g(n, al=A):
    # at least one upper, lower, digit for alnum-ish alphabets
    while True:
        s = "".join(r.choice(al) for _ in range(n))
        if al in (A, W, B64) and not (any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)):
            continue
        return s
def d(n): return "".join(r.choice(string.digits) for _ in range(n))
out = []
def add(name, value, *cores, near=False, accept=""):
    o = {"name": name, "value": value, "cores": list(cores) or [value], "near": near}
    if accept:
        o["accept"] = accept
    out.append(o)
def tok(name, prefix, body):
    add(name, prefix + body, body)

# GitHub
for p in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]:
    tok("github_" + p[:3], p, g(36))
b1, b2 = g(22), g(59)
add("github_pat_fine", "github_pat_11" + b1 + "_" + b2, b1, b2)
# GitLab
tok("gitlab_glpat", "glpat-", g(20, W))
b = g(27, W); add("gitlab_glpat_routable", "glpat-" + b + ".01.1" + g(8, H), b)
tok("gitlab_gldt", "gldt-", g(20, W))
tok("gitlab_glrt", "glrt-", g(20, W))
b = g(27, W); add("gitlab_glrt_t1", "glrt-t1_" + b, b)
tok("gitlab_glptt", "glptt-", g(40, H))
tok("gitlab_runner_reg", "GR1348941", g(20, W))
tok("gitlab_glft", "glft-", g(20, W))
tok("gitlab_glsoat", "glsoat-", g(20, W))
tok("gitlab_gloas", "gloas-", g(64, H))
tok("gitlab_glcbt", "glcbt-", g(20, W))
tok("gitlab_glimt", "glimt-", g(25, W))
tok("gitlab_glagent", "glagent-", g(50, W))
# Slack
b = g(24); add("slack_xoxb", "xoxb-" + d(11) + "-" + d(13) + "-" + b, b)
b = g(32, H); add("slack_xoxp", "xoxp-" + d(11) + "-" + d(11) + "-" + d(13) + "-" + b, b)
b = g(32, H); add("slack_xoxa", "xoxa-2-" + d(11) + "-" + d(11) + "-" + d(13) + "-" + b, b)
b = g(32, H); add("slack_xoxs", "xoxs-" + d(11) + "-" + d(11) + "-" + d(13) + "-" + b, b)
b = g(140); add("slack_xoxe_refresh", "xoxe-1-" + b, b)
b = g(140); add("slack_xoxe_xoxp", "xoxe.xoxp-1-" + b, b)
b = g(64, H); add("slack_xapp", "xapp-1-A0" + g(9, U) + "-" + d(13) + "-" + b, b)
b = g(24); add("slack_webhook", "https://hooks.slack.com/services/T0" + g(8, U) + "/B0" + g(8, U) + "/" + b, b)
# Stripe
tok("stripe_sk_live", "sk_live_", g(99))
tok("stripe_rk_live", "rk_live_", g(99))
tok("stripe_whsec", "whsec_", g(32))
tok("stripe_sk_test", "sk_test_", g(24))
# OpenAI / Anthropic / xAI
b1, b2 = g(74, W), g(74, W); add("openai_proj", "sk-proj-" + b1 + "T3BlbkFJ" + b2, b1, b2)
b1, b2 = g(74, W), g(74, W); add("openai_svcacct", "sk-svcacct-" + b1 + "T3BlbkFJ" + b2, b1, b2)
b1, b2 = g(20), g(20); add("openai_legacy", "sk-" + b1 + "T3BlbkFJ" + b2, b1, b2)
b1, b2 = g(74, W), g(74, W); add("openai_admin", "sk-admin-" + b1 + "T3BlbkFJ" + b2, b1, b2)
b = g(93, W); add("anthropic_api03", "sk-ant-api03-" + b + "AA", b)
b = g(93, W); add("anthropic_admin01", "sk-ant-admin01-" + b + "AA", b)
tok("xai", "xai-", g(80))
# Google
tok("google_aiza", "AIza", g(35, W))
tok("google_ya29", "ya29.", g(150, W))
b = g(28, W); add("google_gocspx", "GOCSPX-" + b, b)
b = g(100, W); add("google_refresh", "1//0g" + b, b)
pk = "\n".join(g(64, B64) for _ in range(4))
add("google_sa_json", '{"type":"service_account","project_id":"demo-1","private_key_id":"' + g(40, H) + '","private_key":"-----BEGIN PRIVATE KEY-----\\n' + pk.replace("\n", "\\n") + '\\n-----END PRIVATE KEY-----\\n","client_email":"svc@demo-1.iam.gserviceaccount.com"}', *pk.split("\n"))
# AWS
tok("aws_akia", "AKIA", g(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))
tok("aws_asia", "ASIA", g(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))
s = g(40, B64); add("aws_secret_kv", "aws_secret_access_key = " + s, s)
s = g(40, B64); add("aws_secret_env", "AWS_SECRET_ACCESS_KEY=" + s, s)
s = g(40, B64); add("aws_secret_json", '{"AccessKeyId":"ASIA' + g(16, U) + '","SecretAccessKey":"' + s + '"}', s)
s = g(64, H); add("aws_sig", "https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA" + g(16, U) + "%2F20261202%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261202T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=" + s, s)
s = g(300, B64); add("aws_sec_token", "X-Amz-Security-Token=" + s.replace("+", "%2B").replace("/", "%2F"), s[:40].replace("+", "%2B").replace("/", "%2F"), s[-40:].replace("+", "%2B").replace("/", "%2F"))
s = g(300, B64); add("aws_sec_token_header", "X-Amz-Security-Token: " + s, s)
# Azure
s = g(86, B64) + "=="; add("azure_storage_conn", "DefaultEndpointsProtocol=https;AccountName=demoacct;AccountKey=" + s + ";EndpointSuffix=core.windows.net", s)
s = g(43, B64) + "="; add("azure_sas_sig", "https://demoacct.blob.core.windows.net/c/b?sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2026-12-03T00:00:00Z&spr=https&sig=" + s.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"), s.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")[:40])
s = g(43, B64) + "="; add("azure_servicebus", "Endpoint=sb://demo.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=" + s, s)
s = g(43, B64) + "="; add("azure_sas_header", "Authorization: SharedAccessSignature sr=demo.servicebus.windows.net&sig=" + s.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D") + "&se=1796000000&skn=send", s.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")[:40])
s = g(3) + "8Q~" + g(34, A + "_~.-"); add("azure_client_secret", "AZURE_CLIENT_SECRET=" + s, s)
s = g(3) + "8Q~" + g(34, A + "_-"); add("azure_client_secret_bare", s, s)
# SendGrid, Twilio, Mailgun
b1, b2 = g(22, W), g(43, W); add("sendgrid", "SG." + b1 + "." + b2, b1, b2)
tok("twilio_sk", "SK", g(32, H))
a, t = g(32, H), g(32, H); add("twilio_ac_token", "TWILIO_ACCOUNT_SID=AC" + a + " TWILIO_AUTH_TOKEN=" + t, t)
a, t = g(32, H), g(32, H); add("twilio_ac_url", "https://AC" + a + ":" + t + "@api.twilio.com/2010-04-01/Accounts", t)
tok("mailgun", "key-", g(32, H))
# Package registries and others
tok("npm", "npm_", g(36))
b = g(150, W); add("pypi", "pypi-AgEIcHlwaS5vcmc" + b, b)
tok("huggingface", "hf_", g(34, string.ascii_letters))
tok("docker", "dckr_pat_", g(27, W))
tok("shopify_shpat", "shpat_", g(32, H))
tok("shopify_shpss", "shpss_", g(32, H))
tok("digitalocean", "dop_v1_", g(64, H))
gj = base64.b64encode(json.dumps({"o": d(6), "n": "stack-" + d(6) + "-hm-read", "k": g(24), "m": {"r": "us"}}, separators=(",", ":")).encode()).decode()
add("grafana_glc", "glc_" + gj, gj[-40:])
a, h = g(32), g(8, H); add("grafana_glsa", "glsa_" + a + "_" + h, a)
b = g(32, H); add("databricks", "dapi" + b, b)
b = g(32, H); add("databricks_suffix", "dapi" + b + "-2", b)
tok("vault_hvs", "hvs.", g(90, W))
tok("vault_hvs_old", "hvs.", g(24))
tok("vault_hvb", "hvb.", g(138, W))
b = g(180, W); add("atlassian", "ATATT3xFfGF0" + b + "=" + g(8, H).upper(), b)
b = g(33, W); add("telegram", d(10) + ":AA" + b, b)
uid = base64.b64encode(d(18).encode()).decode().rstrip("=")
b = g(38, W); add("discord", uid + "." + g(6, W) + "." + b, b)
# PEM
for kind in ["RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK"]:
    lines = [g(64, B64) for _ in range(3)]
    add("pem_" + kind.split()[0].lower() + ("_block" if "BLOCK" in kind else ""), "-----BEGIN " + kind + "-----\n" + ("Version: GnuPG v2\n\n" if "PGP" in kind else "") + "\n".join(lines) + "\n-----END " + kind + "-----", *lines)
# JWT / JWE
h = base64.urlsafe_b64encode(b'{"alg":"RS256","typ":"JWT"}').decode().rstrip("=")
p = base64.urlsafe_b64encode(json.dumps({"sub": d(10), "iat": 1796000000, "scope": "admin"}).encode()).decode().rstrip("=")
sg = g(86, W)
add("jwt", h + "." + p + "." + sg, p, sg)
he = base64.urlsafe_b64encode(b'{"alg":"RSA-OAEP","enc":"A256GCM"}').decode().rstrip("=")
k, iv, ct, tg = g(342, W), g(16, W), g(60, W), g(22, W)
add("jwe", he + "." + k + "." + iv + "." + ct + "." + tg, k[:40], ct)
# Headers
b = base64.b64encode(("svc-user:" + g(20)).encode()).decode(); add("basic_header", "Authorization: Basic " + b, b)
b = g(40); add("bearer_bare", "Bearer " + b, b)
b = base64.b64encode(("deploy:" + g(20)).encode()).decode(); add("basic_bare", "Basic " + b, b)
b = g(40); add("bearer_header", "Authorization: Bearer " + b, b)
b = g(40); add("bearer_lower", "authorization: bearer " + b, b)
b = g(32); add("token_scheme", "Authorization: token " + b, b)
b1, b2 = g(32), g(40); add("cookie_multi", "Cookie: theme=dark; sessionid=" + b1 + "; csrftoken=" + b2, b1, b2)
b = g(40); add("set_cookie_host", "Set-Cookie: __Host-session=" + b + "; Path=/; Secure; HttpOnly; SameSite=Lax", b)
b = g(40); add("x_api_key", "x-api-key: " + b, b)
b = g(40); add("x_api_key_caps", "X-API-Key: " + b, b)
b = g(32, H); add("api_key_header", "api-key: " + b, b)
b = g(32, H); add("ocp_apim", "Ocp-Apim-Subscription-Key: " + b, b)
b = g(20, W); add("private_token_hdr", "PRIVATE-TOKEN: " + b, b)
b = g(40); add("x_auth_token", "X-Auth-Token: " + b, b)
b = g(95, W); add("x_vault_token", "X-Vault-Token: hvs." + b, b)
# DSNs
for name, pre, post in [("dsn_postgres", "postgres://app:", "@db.internal:5432/app?sslmode=require"),
                        ("dsn_postgresql", "postgresql://app:", "@db.internal/app"),
                        ("dsn_mysql", "mysql://root:", "@127.0.0.1:3306/shop"),
                        ("dsn_mongo_srv", "mongodb+srv://admin:", "@cluster0.ab1cd.mongodb.net/?retryWrites=true&w=majority"),
                        ("dsn_redis_nouser", "redis://:", "@cache.internal:6379/0"),
                        ("dsn_rediss", "rediss://default:", "@cache.internal:6380"),
                        ("dsn_amqp", "amqp://guest:", "@mq.internal:5672/vhost"),
                        ("dsn_amqps", "amqps://svc:", "@mq.example.com/"),
                        ("dsn_ftp", "ftp://deploy:", "@files.example.com/pub")]:
    p = g(18); add(name, pre + p + post, p)
p = g(18); add("dsn_jdbc", "jdbc:postgresql://db.internal:5432/app?user=app&password=" + p, p)
p = g(18); add("dsn_odbc", "Server=tcp:db.example.net,1433;Database=app;User ID=sa;Password=" + p + ";Encrypt=True", p)
p = g(18); add("dsn_mongo_pct", "mongodb://user%40corp:" + p + "@mongo.internal:27017/admin", p)
# Query strings
for name, key in [("qs_access_token", "?access_token="), ("qs_token", "&token="), ("qs_sig", "&sig="), ("qs_key", "&key="),
                  ("qs_client_secret", "&client_secret="), ("qs_refresh_token", "&refresh_token="), ("qs_apikey", "?apikey="),
                  ("qs_signature", "&signature="), ("qs_api_key_dash", "?api-key="), ("qs_auth", "&auth="), ("qs_password", "&password=")]:
    v = g(32); add(name, "https://api.example.com/v1/items?page=2" + key.replace("?", "&") + v + "&lang=en", v)
v = g(32); add("qs_form_body", "grant_type=client_credentials&client_id=app-1&client_secret=" + v, v)
# k=v, env, YAML, TOML
v = g(20); add("env_password", "PASSWORD=" + v, v)
v = g(40); add("env_export_api_token", "export API_TOKEN=" + v, v)
v = g(40); add("env_export_quoted", 'export GITHUB_TOKEN="' + v + '"', v)
v = g(24); add("env_db_pass", "DB_PASS=" + v, v)
v = g(24); add("env_db_pw", "DB_PW=" + v, v)
v = g(64, H); add("env_secret_key_base", "SECRET_KEY_BASE=" + v, v)
v = g(40); add("json_secret", '"secret": "' + v + '"', v)
v = g(40); add("json_apikey_camel", '{"apiKey":"' + v + '"}', v)
v = g(40); add("json_client_secret", '{"client_secret": "' + v + '"}', v)
v = g(20); add("yaml_password", "password: " + v, v)
v = g(20); add("yaml_nested", "database:\n  host: db\n  password: " + v + "\n  port: 5432", v)
v = g(32); add("toml_token", 'token = "' + v + '"', v)
v = g(32); add("ini_passwd", "passwd=" + v, v)
v = g(32); add("kv_auth_token", "auth_token=" + v, v)
v = g(32); add("kv_session_key", "session_key: " + v, v)
v = g(32); add("kv_private_key_b64", "PRIVATE_KEY=" + v, v)
v = g(32); add("kv_webhook_secret", "WEBHOOK_SECRET=" + v, v)
v = g(32); add("kv_signing_key", "signing_key=" + v, v)
v = g(32); add("kv_credentials_json", '{"credentials":"' + v + '"}', v)
v = g(32); add("kv_pass_word_space", "Password : " + v, v)
v = g(32); add("kv_mysql_pwd", "MYSQL_PWD=" + v, v)
v = g(32); add("kv_npm_authtoken", "//registry.npmjs.org/:_authToken=" + v, v)
v = g(32); add("kv_passphrase", "passphrase=" + v, v)
# Command lines and code
v = g(24); add("cli_password_space", "mysqladmin --user root --password " + v + " status", v)
v = g(40); add("cli_token_space", "gh auth login --with-token --token " + v, v)
v = g(32); add("cli_api_key_quoted", 'tool --api-key "' + v + '" --verbose', v)
v = g(20); add("curl_u", "curl -u admin:" + v + " https://api.example.com/v1", v)
v = g(20); add("ruby_hash", ':password => "' + v + '"', v)
v = g(20); add("php_array", "'password' => '" + v + "',", v)
v = g(20); add("go_assign", 'password := "' + v + '"', v)
v = g(20); add("npmrc_auth", "_auth=" + base64.b64encode(("u:" + v).encode()).decode(), base64.b64encode(("u:" + v).encode()).decode())
tok("postman", "PMAK-", g(24, H) + "-" + g(34, H))
tok("pulumi", "pul-", g(40, H))
tok("newrelic", "NRAK-", g(27, U))
tok("supabase", "sbp_", g(40, H))
b = "AAAAAAAAAAAAAAAAAAAAA" + g(20) + "%3D" + g(50); add("twitter_bearer", b, b[21:])
# Near-misses: must stay unmasked
for v in ["550e8400-e29b-41d4-a716-446655440000", "sha256:" + g(64, H), "sha256=" + g(64, H), '"sha256": "' + g(64, H) + '"',
          "commit " + g(40, H), "req-000007-f3a6b2c1", "request_id=" + g(32, H), "trace_id=" + g(32, H), "span_id=" + g(16, H),
          "2026-12-02T00:06:25.123456Z", "1796000000123", "v1.29.3", "go1.24.1", "v0.0.0-20260101000000-" + g(12, H),
          "gpt-4o-2024-08-06", "claude-sonnet-4-5-20250929", "the quick brown fox jumps over the lazy dog", "token_count=1234",
          '"max_tokens": 512', "password_policy=strong", "the Bearer authentication scheme", "Basic authentication is disabled",
          "https://example.com/docs/api?page=2&lang=en", "task-1234", "scikit-learn==1.5.0", "msg_01XFDUDYJgAACzvnptvVoYEL",
          "chatcmpl-" + "AbCdEfGhIjKlMnOpQrStUvWx", "cus_NffrFeUfNV2Hib", "pod/api-7f9c8d6b5-x2kqz", "/var/lib/e2atap/positions.json",
          "sha512-" + base64.b64encode(bytes(r.randrange(256) for _ in range(64))).decode(), "color: #ff00aa;",
          "key=value", "token=", "secret_name=db-password", "auth_method=oauth", "127.0.0.1:8080",
          "ETag: \"33a64df551425fcc55e4d42a148795d9f25f89d4\"", "Content-MD5: " + base64.b64encode(bytes(16)).decode(),
          "X-Request-Id: " + g(32, H), "AKIAIOSFODNN7", "pk_live_" + g(24), "01HZX3Y8K9QW2E7R5T6Y4U3I2O",
          "e2atap validate --output json --shards 1 capture.jsonl", "--token-count 5", "--password-file /etc/app/pw",
          "docker run -u 1000 alpine", "curl -u alice https://example.com", "git log --author alice --since yesterday",
          "x := 5", "a => b", "ls -la /tmp", "model-v2 --key-path /etc/keys"]:
    accept = ""
    if v.startswith("sha512-") or v.startswith("pk_live_"):
        accept = "a random token of 32+ characters is masked as high_entropy (not a credential)"
    elif v == "token=":
        accept = "a credential key with no value takes the next word as its value"
    elif v.startswith("secret_name="):
        accept = "as a JSON key, db-password names the value after it"
    add("near", v, v, near=True, accept=accept)
# Providers added by h-secrets2 (their own seed, so that the values above
# stay as they were).
r = random.Random(20261206)
tok("sentry_user", "sntryu_", g(64, H))
b = base64.b64encode(b'{"iat":1687336543.698648,"url":null,"org":"acme"}').decode(); c = g(43)
add("sentry_org", "sntrys_" + b + "_" + c, c)
tok("langsmith_pt", "lsv2_pt_", g(32, H) + "_" + g(10, H))
tok("langsmith_sk", "lsv2_sk_", g(32, H) + "_" + g(10, H))
tok("neon", "napi_", g(64, string.ascii_lowercase + string.digits))
tok("alibaba_ak", "LTAI", g(20))
tok("tencent_secret_id", "AKID", g(32))
# Credentials with no separator a key=value check sees, a bare key=, a
# value named by the pair before it (h-secrets2).
v = g(14); add("cli_mysql_glued", "mysql -uroot -p" + v + " prod", v)
v = g(14); add("cli_sshpass", "sshpass -p '" + v + "' ssh root@db", v)
v = g(14); add("cli_docker_login", "docker login -u bot -p " + v + " registry.example.com", v)
v = g(14); add("cli_redis_a", "redis-cli -h cache -a " + v + " ping", v)
v = g(14); add("prose_password_is", "the password is " + v, v)
v = g(16); add("netrc", "machine api.example.com login alice password " + v, v)
v = g(20); add("kv_bare_key", "key=" + v, v)
v = g(24); add("xml_password", "<password>" + v + "</password>", v)
v = g(24); add("appsettings", '<add key="ApiKey" value="' + v + '"/>', v)
v = g(20); add("k8s_env", "env:\n- name: DB_PASSWORD\n  value: " + v + "\n", v)
v = g(24); add("wpa_psk", 'network={\n  ssid="home"\n  psk="' + v + '"\n}', v)
for v in ["mysql -u root -p prod", "docker run -p 8080:80 nginx", "gcc -pthread -o x x.c", "git commit -a -m fix",
          "the password is 8 characters long", "reset your password in 24 hours", "password policy v2 requires 12 characters",
          '<add key="Theme" value="dark"/>', "- name: LOG_LEVEL\n  value: debug", "<maxTokens>1024</maxTokens>", "the key=user_id_12345678"]:
    add("near", v, v, near=True)
# Providers whose tokens were masked as high_entropy but no e2a.secret (their
# own seed, so that the values above stay as they were).
r = random.Random(20261207)
L = string.ascii_lowercase + string.digits
tok("notion_secret", "secret_", g(43))
tok("notion_ntn", "ntn_", d(11) + g(35))
tok("figma", "figd_", g(40, W))
tok("pinecone", "pcsk_", g(6) + "_" + g(63))
tok("contentful", "CFPAT-", g(43, W))
tok("tailscale_auth", "tskey-auth-", "k" + g(11) + "CNTRL-" + g(33))
tok("planetscale_token", "pscale_tkn_", g(43, W))
tok("planetscale_pw", "pscale_pw_", g(43, W))
tok("heroku_hrku", "HRKU-", "AA" + g(58, W))
for v in ["secret_name", "figd_logo.png", "pcsk_test", "tskey-auth-", "pscale_connect",
          "HRKU-team", "CFPAT-docs", "ntn_workspace_notes"]:
    add("near", v, v, near=True)
# Tokens with a dotted or short glued prefix (redact's dottedToken): masked
# as high_entropy but no e2a.secret (Dynatrace's, all capitals, not even
# masked) until h-secrets3; their own seed.
r = random.Random(20261208)
b = g(43); add("doppler_personal", "dp.pt." + b, b)
b = g(40); add("doppler_service", "dp.st.prd." + b, b)
b = g(40); add("doppler_service_config", "dp.st.dev_eu-1." + b, b)
b = g(130, W); add("dropbox", "sl." + b, b)
b1, b2 = g(24, U), g(64, U); add("dynatrace", "dt0c01." + b1 + "." + b2, b2)
b = g(67); add("terraform_cloud", g(14) + ".atlasv1." + b, b)
tok("bitbucket_app_password", "ATBB", g(32))
tok("okta_ssws", "00", g(40, W).replace("---", "-x-"))
tok("meta_access_token", "EAACEdEose0cBA", g(160))
tok("square_eaaa", "EAAA", g(60, W))
b = g(134, W); add("fcm_server_key", "AAAA" + g(7, W) + ":APA91b" + b, b)
for v in ["dp.st.dev", "dp.pt.example", "sl.example.com/v2/docs_and_more_pages_2024_edition_final_version", "dt0c01.ABC",
          "app.atlasv1.example", "ATBBRoutingTableVersion2024ForTheWorld", "00f067aa0ba902b74bf92f3577b34da6a3ce929d0e",
          "00112233-4455-6677-8899-aabbccddeeff", "APA91b", "EAAccessTokenManagerFactoryForTheWorld2024InstanceProviderBuilderConfigurationHandler"]:
    add("near", v, v, near=True)
with open("families.jsonl", "w") as f:
    for o in out:
        f.write(json.dumps(o) + "\n")
print(len(out), sum(1 for o in out if not o["near"]))
