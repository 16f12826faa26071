# Generates families.jsonl (python3 gen.py, from this directory): a sixth
# corpus, written by h-secrets6 with its own seed, held to the partial-leak
# checker as the fifth (internal/secretaudit.Partial: no run of 10
# characters of a secret part in any output). It holds the ways producers
# print a credential that the earlier generators lack: (1) the debug and
# repr forms of languages (Java toString, Go %v/%+v/%#v, Python repr and
# kwargs, Ruby hashes, PHP arrays, Rust Debug, C# anonymous objects, Kotlin
# data classes, Elixir maps, JavaScript console.log); (2) markup and wire
# forms (XML elements and attributes, HTML form fields, form bodies,
# protobuf text format, SOAP WS-Security); (3) SQL (IDENTIFIED BY, PASSWORD
# '…', CREATE USER … WITH PASSWORD, connection strings of ODBC/ADO.NET/JDBC
# with their key=value pairs); (4) command lines (mysql -p<pw>, redis-cli
# -a, Redis AUTH and requirepass, sshpass -p, openssl -passin pass:,
# docker login -p, helm --password, kubectl --token=, ldapsearch -w, psql's
# PGPASSWORD in a URI, mongosh -p, rabbitmqctl, htdigest, net use); (5)
# HTTP: Digest and NTLM authorization, Proxy-Authorization, presigned URL
# signatures (X-Amz-Signature, Azure SAS sig=); (6) service-account JSON
# (private_key, client_secret, refresh_token); (7) the leaks the fifth
# sweep left out (a Twitch IRC PASS oauth:, Windows' net use, an AWS key
# id and secret escaped in JSON text then URL-encoded). Each also has
# near-misses ("near": true) that must give no e2a.secret finding: ids,
# hashes, and code that names a credential without holding one. Random
# characters from a fixed seed.
import json, random, string, base64, uuid
from urllib.parse import quote
r = random.Random(20261208)
A = string.ascii_letters + string.digits
L = string.ascii_lowercase + string.digits
H = "0123456789abcdef"
def g(n, al=A):
    while True:
        s = "".join(r.choice(al) for _ in range(n))
        if al != A or (any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)):
            return s
def pw(): return g(7) + r.choice("!#%^*") + g(6)
def uid(): return str(uuid.UUID(int=r.getrandbits(128), version=4))
S = []
def add(name, value, *cores, accept=None, enc=False, cut_accept=None, nocut=None):
    # enc: the cores are in value encoded (URL-encoded, escaped); the
    # checker looks for every form of them.
    assert enc or all(c in value for c in cores), name
    # cut_accept: why a cut across two deltas is masked but no split
    # finding; nocut: why the family is cut at no offset (a leak left).
    S.append({"name": name, "value": value, "cores": list(cores), "near": False, **({"accept": accept} if accept else {}),
              **({"cut_accept": cut_accept} if cut_accept else {}), **({"nocut": nocut} if nocut else {})})
def near(name, value):
    S.append({"name": name, "value": value, "cores": [], "near": True})
def uesc(c): return "\\u%04x" % ord(c)

# 1. Debug and repr forms of languages.
p = pw(); add("java_tostring", "DataSourceConfig{url=jdbc:postgresql://db:5432/app, username=app, password=" + p + ", poolSize=10}", p)
p = pw(); add("java_map_tostring", "props: {user=svc, password=" + p + ", timeout=30}", p)
p = pw(); add("go_plus_v", "config: {Host:db.internal Port:5432 User:app Password:" + p + " SSLMode:require}", p)
p = pw(); add("go_sharp_v", 'main.DBConfig{Host:"db.internal", User:"app", Password:"' + p + '", Port:5432}', p)
c = g(40); add("go_plus_v_token", "&{BaseURL:https://api.example.com APIToken:" + c + " Timeout:30s}", c)
p = pw(); add("python_repr_dict", "{'host': 'db', 'user': 'app', 'password': '" + p + "', 'port': 5432}", p)
p = pw(); add("python_kwargs", "psycopg2.connect(host='db', user='app', password='" + p + "', dbname='orders')", p)
c = g(40); add("python_repr_object", "Settings(api_key='" + c + "', region='eu-west-1')", c)
p = pw(); add("ruby_hash_rocket", '{:adapter => "postgresql", :username => "app", :password => "' + p + '"}', p)
p = pw(); add("ruby_hash_symbol", '{adapter: "mysql2", username: "app", password: "' + p + '", host: "db"}', p)
p = pw(); add("php_array", "'mysql' => ['driver' => 'mysql', 'username' => 'forge', 'password' => '" + p + "', 'charset' => 'utf8mb4'],", p)
p = pw(); add("php_var_dump", '["password"]=>\n  string(14) "' + p + '"', p)
p = pw(); add("rust_debug", 'DbConfig { host: "db.internal", user: "app", password: "' + p + '", port: 5432 }', p)
p = pw(); add("rust_debug_pretty", 'Credentials {\n    username: "svc",\n    password: "' + p + '",\n}', p)
p = pw(); add("csharp_anonymous", "{ UserName = svc, Password = " + p + ", Domain = CORP }", p)
p = pw(); add("kotlin_data_class", "LoginRequest(username=admin, password=" + p + ")", p)
p = pw(); add("elixir_map", '%{username: "app", password: "' + p + '", hostname: "db"}', p)
c = g(40); add("js_console_log", "{ clientId: 'web', clientSecret: '" + c + "', scope: 'openid' }", c)
c = g(32); add("java_properties_secret", "spring.datasource.password=" + c, c)
# 2. Markup and wire forms.
p = pw(); add("xml_element", "<datasource><user>app</user><password>" + p + "</password></datasource>", p)
p = pw(); add("xml_attribute", '<add name="db" user="app" password="' + p + '" />', p)
p = pw(); add("xml_maven_settings", "<server>\n  <id>nexus</id>\n  <username>ci</username>\n  <password>" + p + "</password>\n</server>", p)
p = pw(); add("html_input_value", '<input type="password" name="password" value="' + p + '">', p)
p = pw(); add("form_body", "username=alice&password=" + quote(p, safe="") + "&remember=1", p, enc=True)
c = g(40); add("form_body_client_secret", "grant_type=client_credentials&client_id=web&client_secret=" + c, c)
c = g(48); add("form_body_refresh_token", "grant_type=refresh_token&refresh_token=" + c + "&client_id=cli", c)
p = pw(); add("protobuf_text", 'database {\n  user: "app"\n  password: "' + p + '"\n}', p)
c = g(40); add("protobuf_text_token", 'auth { bearer_token: "' + c + '" }', c)
p = pw(); add("soap_wsse", '<wsse:UsernameToken><wsse:Username>svc</wsse:Username><wsse:Password Type="PasswordText">' + p + "</wsse:Password></wsse:UsernameToken>", p)
# 3. SQL.
p = pw(); add("sql_identified_by", "CREATE USER 'app'@'%' IDENTIFIED BY '" + p + "';", p)
p = pw(); add("sql_alter_identified", "ALTER USER app IDENTIFIED BY \"" + p + "\";", p)
p = pw(); add("sql_with_password", "CREATE ROLE app WITH LOGIN PASSWORD '" + p + "';", p)
p = pw(); add("sql_alter_role_password", "ALTER ROLE reporting PASSWORD '" + p + "' VALID UNTIL 'infinity';", p)
p = pw(); add("sql_mssql_login", "CREATE LOGIN etl WITH PASSWORD = '" + p + "', CHECK_POLICY = OFF;", p)
p = pw(); add("odbc_connstr", "Driver={ODBC Driver 18 for SQL Server};Server=tcp:db,1433;Uid=etl;Pwd=" + p + ";Encrypt=yes;", p)
p = pw(); add("adonet_connstr", "Server=db;Database=orders;User Id=app;Password=" + p + ";TrustServerCertificate=True", p)
p = pw(); add("jdbc_params", "jdbc:mysql://db:3306/orders?user=app&password=" + p + "&useSSL=true", p)
# 4. Command lines.
p = g(14); add("mysql_p_glued", "mysql -h db -u root -p" + p + " orders", p)
p = g(14); add("mysqldump_password", "mysqldump --user=root --password=" + p + " orders > dump.sql", p)
p = g(16); add("redis_cli_a", "redis-cli -h cache -p 6379 -a " + p + " --no-auth-warning ping", p)
p = g(16); add("redis_auth", "AUTH default " + p, p)
p = g(16); add("redis_requirepass", "requirepass " + p, p)
p = g(16); add("redis_config_set", "CONFIG SET requirepass \"" + p + "\"", p)
p = pw(); add("sshpass", "sshpass -p '" + p + "' ssh deploy@web-01 uptime", p)
p = pw(); add("openssl_passin", "openssl rsa -in key.pem -passin pass:" + p + " -out key.dec", p)
p = pw(); add("docker_login_p", "docker login -u ci -p " + p + " registry.example.com", p)
p = pw(); add("docker_login_password", "docker login --username ci --password '" + p + "' ghcr.io", p)
p = pw(); add("helm_password", "helm repo add internal https://charts.example.com --username ci --password " + p, p)
c = g(40); add("kubectl_token", "kubectl --server=https://k8s:6443 --token=" + c + " get pods", c)
p = pw(); add("ldapsearch_w", "ldapsearch -x -H ldap://ldap -D 'cn=admin,dc=example,dc=com' -w '" + p + "' -b dc=example,dc=com", p)
p = pw(); add("mongosh_p", "mongosh --host mongo --username admin --password '" + p + "' --authenticationDatabase admin", p)
p = pw(); add("rabbitmqctl", "rabbitmqctl add_user svc '" + p + "'", p)
p = g(14); add("psql_uri_flag", "psql \"postgresql://app:" + p + "@db:5432/orders?sslmode=require\"", p)
p = pw(); add("curl_data_password", "curl -X POST https://api.example.com/login -d 'username=admin&password=" + quote(p, safe="") + "'", p, enc=True)
p = g(14); add("net_use_positional", "net use \\\\fs01\\share " + p + " /user:CORP\\svc_backup", p)
p = g(14); add("net_use_user_first", "net use Z: \\\\fs01\\data /user:svc " + p + " /persistent:no", p)
# 5. HTTP.
# (HTTP Digest is left out: its response is a hash of the password with
# the server's nonce, no credential to reuse, and "Authorization: Digest
# …" is an authorization value, a finding by RULES.md.)
c = base64.b64encode(b"NTLMSSP\x00\x03\x00\x00\x00" + bytes(r.getrandbits(8) for _ in range(60))).decode(); add("http_ntlm", "Authorization: NTLM " + c, c[16:60])
c = base64.b64encode(("proxyuser:" + pw()).encode()).decode(); add("proxy_authorization", "Proxy-Authorization: Basic " + c, c[14:].rstrip("="))
c = g(64, H); add("aws_presigned", "https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20261208%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261208T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=" + c, c)
sig = base64.b64encode(bytes(r.getrandbits(8) for _ in range(32))).decode()
add("azure_sas", "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-09T00:00:00Z&spr=https&sig=" + quote(sig, safe=""), sig.rstrip("="), enc=True)
# 6. Service-account and OAuth JSON.
body = base64.b64encode(bytes(r.getrandbits(8) for _ in range(600))).decode(); ls = [body[i:i + 64] for i in range(0, len(body), 64)]
key = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(ls) + "\n-----END PRIVATE KEY-----\n"
add("sa_private_key_json", json.dumps({"type": "service_account", "project_id": "p", "private_key_id": g(40, H), "private_key": key, "client_email": "svc@p.iam.gserviceaccount.com"}), ls[2], ls[5],
    nocut="left: cut a third into its third line, the record log shows the next delta's base64 lines (its BEGIN header is past the 256 bytes of tail kept)")
c = "GOCSPX-" + g(28, A + "-_"); add("oauth_client_json", json.dumps({"installed": {"client_id": "1234-abc.apps.googleusercontent.com", "client_secret": c, "redirect_uris": ["http://localhost"]}}), c[7:])
c = "1//" + g(100, A + "-_"); add("google_refresh_token_json", json.dumps({"type": "authorized_user", "client_id": "x.apps.googleusercontent.com", "refresh_token": c}), c[3:40], c[60:100])
c = g(43, A + "-_"); add("oauth_token_response", json.dumps({"access_token": "ya29." + g(60, A + "-_"), "expires_in": 3599, "refresh_token": c, "token_type": "Bearer"}), c)
# 7. Left out by the fifth sweep.
c = g(30, string.ascii_lowercase + string.digits); add("twitch_irc_pass", "PASS oauth:" + c + "\r\nNICK bot", c)
c = g(30, string.ascii_lowercase + string.digits); add("twitch_irc_log", "< PASS oauth:" + c, c)
ak = "AKIA" + g(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"); sk = g(40, A + "/+")
add("aws_key_escaped_twice_url_encoded", "q=" + quote(json.dumps(json.dumps({"aws_access_key_id": ak, "aws_secret_access_key": sk})), safe=""), ak[4:], sk, enc=True)
add("aws_key_uescaped_all_url_encoded", "q=" + quote("aws key " + "".join(uesc(c) for c in ak), safe=""), ak[4:], enc=True,
    cut_accept="masked, no split finding: a cut inside its escapes leaves neither delta a whole escape to decode")
add("aws_key_uescaped_twice_url_encoded", "q=" + quote("aws key \\" + uesc("A") + ak[1:], safe=""), ak[4:], enc=True,
    cut_accept="masked, no split finding: as above")
add("aws_key_json_escaped_url_encoded", "state=" + quote('{\\"AccessKeyId\\":\\"' + ak + '\\",\\"SecretAccessKey\\":\\"' + sk + '\\"}', safe=""), ak[4:], sk, enc=True)

# Near-misses: no e2a.secret finding.
near("java_tostring_masked", "DataSourceConfig{url=jdbc:postgresql://db:5432/app, username=app, password=****, poolSize=10}")
near("go_plus_v_empty", "config: {Host:db.internal User:app Password: PasswordFile:/run/secrets/db}")
near("python_repr_none", "{'host': 'db', 'password': None, 'token': None}")
near("rust_debug_redacted", 'DbConfig { host: "db", password: "[REDACTED]", port: 5432 }')
near("php_env_lookup", "'password' => env('DB_PASSWORD', ''),")
near("xml_password_placeholder", "<password>${env.NEXUS_PASSWORD}</password>")
near("html_password_field", '<input type="password" name="password" autocomplete="current-password">')
near("form_body_no_password", "username=alice&remember=1&next=%2Fhome")
near("sql_password_function", "SELECT id FROM users WHERE password_hash = crypt($1, password_hash);")
near("sql_identified_externally", "CREATE USER ops IDENTIFIED EXTERNALLY;")
near("mysql_p_prompt", "mysql -h db -u root -p orders")
near("redis_cli_no_auth", "redis-cli -h cache -p 6379 ping")
near("docker_login_stdin", "cat pw.txt | docker login -u ci --password-stdin registry.example.com")
near("openssl_passin_env", "openssl rsa -in key.pem -passin env:KEY_PASS -out key.dec")
near("kubectl_token_file", "kubectl --token-file=/var/run/secrets/token get pods")
near("ldapsearch_W", "ldapsearch -x -W -D 'cn=admin,dc=example,dc=com' -b dc=example,dc=com")
near("digest_challenge", 'WWW-Authenticate: Digest realm="api", qop="auth", nonce="' + g(32, H) + '", opaque="' + g(32, H) + '"')
near("ntlm_negotiate", "WWW-Authenticate: NTLM")
near("sha256_object", "x-amz-content-sha256: " + g(64, H))
near("sa_public_json", json.dumps({"type": "service_account", "private_key_id": "", "client_email": "svc@p.iam.gserviceaccount.com"}))
near("uuid_session", "session " + uid() + " closed")
near("git_commit", "Merge " + g(40, H) + " into " + g(40, H))
near("go_struct_names", "type Config struct { Password string `json:\"password\"`; Token string }")
near("twitch_irc_nick", "NICK justinfan12345\r\nJOIN #channel")
near("net_use_list", "net use \\\\fs01\\share /delete")
# Near-misses of the seventh sweep's fixes (h-secrets7).
near("sql_password_column", "ALTER TABLE users ADD COLUMN password VARCHAR(255) NOT NULL;")
near("sql_identified_by_hash", "CREATE USER 'app'@'%' IDENTIFIED BY PASSWORD '*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9';")
near("redis_auth_prose", "Use AUTH to authenticate; Redis replies to AUTH with OK.")
near("redis_auth_reply", "AUTH failed: WRONGPASS invalid username-password pair or user is disabled.")
near("rabbitmqctl_list", "rabbitmqctl list_users")
near("php_var_dump_user", '["username"]=>\n  string(5) "alice"')
near("php_var_dump_null", '["password"]=>\n  NULL')
near("go_plus_v_empty_token", "&{BaseURL:https://api.example.com APIToken: Timeout:30s}")
near("wsse_username_type", '<wsse:Username Type="PasswordText">svc01</wsse:Username>')
near("wsse_nonce_type", '<wsse:Nonce EncodingType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary">' + g(24, H) + '</wsse:Nonce>')
# An API token as the user of a user:password argument (the lead, stop
# 23): the password's match went past the token and left it shown.
p = "ghp_" + g(36); add("curl_user_token", "curl -u " + p + ":x-oauth-basic https://api.github.com/user", p[4:])
p = "sk_live_" + g(24); add("curl_user_stripe", "curl https://api.stripe.com/v1/charges -u " + p + ": -d amount=2000", p[8:])
p = "ghp_" + g(36); add("httpie_user_token", "http -a " + p + ":x GET https://api.github.com/user", p[4:])
near("curl_user_plain", "curl -u alice: https://example.com/api")

# Left out (still shown or a false finding, listed here; the next sweep's
# work): Windows' net use URL-encoded (plain and in JSON text it is masked and a finding:
# redact.netUse). A service account's JSON whose PEM key is cut across
# two deltas more than 256 bytes after its BEGIN line: the record log
# shows the second delta's base64 lines (no BEGIN in the kept tail; the
# second delta alone is no PEM block). (h-secrets7 fixed a SOAP
# WS-Security <wsse:Password Type=…> element, PHP var_dump's
# ["password"]=> string(n) "…", SQL's
# IDENTIFIED BY and PASSWORD '…' URL-encoded, Redis's AUTH, requirepass
# and CONFIG SET, rabbitmqctl add_user, Go's %+v of an empty field, and
# the tails that end in a password flag: "sshpass -p '", "-passin pass:".)
LEFT_OUT = ["net_use_positional", "net_use_user_first", "sa_private_key_json"]
S = [o for o in S if o["name"] not in LEFT_OUT]
with open("families.jsonl", "w") as f:
    for o in S:
        f.write(json.dumps(o) + "\n")
print(len([o for o in S if not o["near"]]), "families,", len([o for o in S if o["near"]]), "near-misses")
