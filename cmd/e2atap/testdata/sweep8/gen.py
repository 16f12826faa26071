# Generates families.jsonl (python3 gen.py, from this directory): an eighth
# corpus, written by h-secrets8 with its own seed, read with the sixth's
# (TestSweep6Offline, TestSweep6Run: every place, two-delta cuts, the
# partial-leak checker). What the earlier sweeps (audit, 3-7) cover was
# listed first; these are producers they lack: (1) config files and env of
# tools (Azure storage AccountKey=…;, kubeconfig client-key-data, Docker's
# config.json "auth", .netrc, .npmrc _authToken, pip.conf index-url,
# Java's -Djavax.net.ssl.*Password=, Spring's spring.datasource.password,
# Ansible's ansible_become_pass, Terraform's TF_VAR_*_password, RabbitMQ,
# Grafana, MinIO env, rclone's pass, Go's MySQL DSN); (2) tokens in new
# places (Vault hvs. in prose, GitLab PRIVATE-TOKEN, Slack xoxb in prose,
# hf_ on a command line, sk-ant- in x-api-key, SendGrid SG., npm_, pypi-,
# a JWT in Cookie and Set-Cookie); (3) command lines (keytool, openssl
# -passout, htpasswd -b, sqlplus, kubectl --from-literal, docker run -e,
# helm --set, vault kv put, psql's conninfo, ssh-keygen -N, az login -p,
# PowerShell's ConvertTo-SecureString); (4) the leaks this sweep fixed: a
# value holding ',', ';' or '&' (PGPASSWORD=…,…, --password=…&…), net
# use's DOMAIN\user starting with a JSON escape's letter, a PEM key
# streamed past the carry's tail. Near-misses ("near": true) must give no
# e2a.secret finding. Random characters from a fixed seed.
import json, random, string, base64
r = random.Random(20261209)
A = string.ascii_letters + string.digits
H = "0123456789abcdef"
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

# (1) config files and env
k = base64.b64encode(bytes(r.getrandbits(8) for _ in range(64))).decode()
add("azure_storage_accountkey", "DefaultEndpointsProtocol=https;AccountName=stacct01;AccountKey=" + k + ";EndpointSuffix=core.windows.net", k)
ckd = base64.b64encode(("-----BEGIN RSA PRIVATE KEY-----\n" + g(200) + "\n-----END RSA PRIVATE KEY-----\n").encode()).decode()
add("kubeconfig_client_key_data", "users:\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJU\n    client-key-data: " + ckd + "\n", ckd[40:120])
au = base64.b64encode(("ci-bot:" + pw()).encode()).decode()
add("docker_config_auth", '{"auths": {"registry.example.com": {"auth": "' + au + '"}}}', au)
p = pw(); add("netrc_multiline", "machine api.example.com\n  login deploy\n  password " + p + "\n", p)
t = g(36); add("npmrc_authtoken_scope", "//registry.npmjs.org/:_authToken=" + t, t)
p = pw(); add("pip_conf_index_url", "[global]\nindex-url = https://builder:" + p + "@pypi.example.com/simple", p)
p = pw(); add("java_keystore_password", "java -Djavax.net.ssl.keyStorePassword=" + p + " -Djavax.net.ssl.keyStore=/etc/ks.jks -jar app.jar", p)
p = pw(); add("java_truststore_password", 'JAVA_OPTS="-Xmx2g -Djavax.net.ssl.trustStorePassword=' + p + '"', p)
p = pw(); add("spring_datasource_password", "spring.datasource.url=jdbc:postgresql://db:5432/app\nspring.datasource.password=" + p, p)
p = pw(); add("ansible_become_pass", "[web]\nweb1 ansible_host=10.0.0.5 ansible_user=deploy ansible_become_pass=" + p, p)
p = pw(); add("tf_var_password", "export TF_VAR_db_password=" + p, p)
p = pw(); add("rabbitmq_default_pass", "RABBITMQ_DEFAULT_PASS=" + p, p)
p = pw(); add("grafana_admin_env", "GF_SECURITY_ADMIN_PASSWORD=" + p, p)
p = pw(); add("mongo_initdb_root_password", "MONGO_INITDB_ROOT_PASSWORD=" + p, p)
t = g(32); add("rclone_pass", "[remote]\ntype = sftp\nhost = files\nuser = bob\npass = " + t, t)
p = pw(); add("client_dict_pass", '{"host": "files", "user": "bob", "pass": "' + p + '"}', p)
p = pw(); add("go_mysql_dsn", 'db, err := sql.Open("mysql", "app:' + p + '@tcp(db:3306)/orders?parseTime=true")', p)
# (2) tokens in new places
t = "hvs." + g(24); add("vault_hvs_prose", "Use the token " + t + " to log in", t[4:])
t = "glpat-" + g(20); add("gitlab_private_token_header", "PRIVATE-TOKEN: " + t, t[6:])
t = "xoxb-" + g(12, "0123456789") + "-" + g(12, "0123456789") + "-" + g(24); add("slack_xoxb_prose", "bot token is " + t, t[5:])
t = "hf_" + g(34); add("hf_token_cli", "huggingface-cli login --token " + t, t[3:])
t = "sk-ant-api03-" + g(93) + "AA"; add("anthropic_x_api_key", "x-api-key: " + t, t[13:60])
t = "SG." + g(22) + "." + g(43); add("sendgrid_env_quoted", "SENDGRID_API_KEY='" + t + "'", t[3:25])
t = "npm_" + g(36); add("npm_token_env", "NPM_TOKEN=" + t, t[4:])
t = "pypi-AgEIcHlwaS5vcmc" + g(60); add("pypi_twine_p", "twine upload -u __token__ -p " + t + " dist/*", t[20:])
def b64u(b): return base64.urlsafe_b64encode(b).decode().rstrip("=")
jwt = b64u(b'{"alg":"HS256","typ":"JWT"}') + "." + b64u(b'{"sub":"u1","exp":1900000000}') + "." + g(43)
add("jwt_in_cookie", "Cookie: theme=dark; access_token=" + jwt + "; lang=en", jwt.split(".")[2])
add("jwt_in_set_cookie", "Set-Cookie: id_token=" + jwt + "; Path=/; HttpOnly; Secure", jwt.split(".")[2])
# (3) command lines
p = pw(); add("keytool_storepass", "keytool -list -keystore ks.jks -storepass " + p, p)
p = pw(); add("openssl_passout", "openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:" + p, p)
p = pw(); add("htpasswd_b", "htpasswd -b -c /etc/nginx/.htpasswd admin " + p, p)
p = pw(); add("sqlplus_ezconnect", "sqlplus system/" + p + "@//db:1521/ORCL", p)
p = pw(); add("kubectl_from_literal", "kubectl create secret generic db --from-literal=password=" + p, p)
p = pw(); add("docker_run_env", "docker run -e POSTGRES_PASSWORD=" + p + " postgres:16", p)
p = pw(); add("helm_set_password", "helm install db bitnami/postgresql --set auth.postgresPassword=" + p, p)
p = pw(); add("vault_kv_put", "vault kv put secret/db password=" + p, p)
p = pw(); add("psql_conninfo", 'psql "host=db user=app password=' + p + ' dbname=app"', p)
p = pw(); add("ssh_keygen_N", "ssh-keygen -t ed25519 -N '" + p + "' -f ~/.ssh/id_ed25519", p)
p = pw(); add("az_login_service_principal", "az login --service-principal -u 1b2c3d4e-0000-1111-2222-333344445555 -p " + p + " --tenant contoso.onmicrosoft.com", p)
p = pw(); add("powershell_securestring", "$pw = ConvertTo-SecureString '" + p + "' -AsPlainText -Force", p)
p = pw(); add("powershell_securestring_string", '$c = New-Object PSCredential("svc", (ConvertTo-SecureString -String "' + p + '" -AsPlainText -Force))', p)
# (4) the leaks fixed here
NOSPLIT = "masked, no split finding: cut inside the key or before the flag's value, as the same line without a ',' is"
a, b = g(5), g(11); add("pgpassword_comma", "export PGPASSWORD=" + a + "," + b + " && psql -h db", b, cut_accept=NOSPLIT)
a, b = g(5), g(11); add("flag_password_ampersand", "mysql --password=" + a + "&" + b + " -h db", b)
a, b = g(5), g(11); add("password_semicolon", "password=" + a + ";" + b, b)
a, b = g(5), g(11); add("sshpass_comma", "sshpass -p " + a + "," + b + " ssh deploy@host", b, cut_accept=NOSPLIT)
p = pw(); add("net_use_domain_user_b", "net use Z: \\\\fs01\\share /user:CORP\\bob " + p + " /persistent:no", p)
raw = bytes(r.getrandbits(8) for _ in range(1200))
b64 = base64.b64encode(raw).decode()
lines = [b64[i:i + 64] for i in range(0, len(b64), 64)]
add("pem_key_long", "-----BEGIN PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END PRIVATE KEY-----", *lines[::4])

# near-misses
near("near_list_empty_password", "user=app,password=,host=db")
near("near_form_empty_password", "login?user=bob&password=&next=/home")
near("near_cert_block", "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUe\n-----END CERTIFICATE-----")
near("near_public_key", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----")
near("near_k8s_secret_ref", "valueFrom:\n  secretKeyRef:\n    name: db\n    key: password")
near("near_tf_var_name", 'variable "db_password" { sensitive = true }')
near("near_hvs_word", "the hvs.prefix marks service tokens")
near("near_sg_word", "SG.example is a placeholder")
near("near_pass_results", '{"pass": 12, "fail": 0, "skip": 3}')
near("near_pass_bool", "pass: true")
near("near_securestring_var", "$pw = ConvertTo-SecureString $plain -AsPlainText -Force")
near("near_securestring_prose", "use ConvertTo-SecureString to convert it")
near("near_ssh_keygen_empty", "ssh-keygen -t ed25519 -N '' -f key")
near("near_az_upload", "az storage blob upload -c data -f report.pdf -n report.pdf")
near("near_sql_open_var", 'sql.Open("mysql", dsn)')
near("near_git_ssh", "git@github.com:org/repo.git")
near("near_net_use_prompt", "net use Z: \\\\fs01\\share /user:CORP\\bob *")

with open("families.jsonl", "w") as f:
    for o in S:
        f.write(json.dumps(o) + "\n")
