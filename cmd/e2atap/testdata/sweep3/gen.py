# Generates families.jsonl (python3 gen.py, from this directory): a third
# corpus of credential shapes, written by h-secrets3 without looking at how
# redact finds them, in the habits of people other than the audit
# corpus's (redact/testdata/audit/gen.py) and the independent one's
# (../independent/gen.py): providers neither lists, admin command lines
# (LDAP, SQL Server, OpenSSL, zip, keytool), git's credential helper,
# package manager configs, a service account key as escaped JSON inside
# JSON text, a presigned URL, a WireGuard config. Random characters from a
# fixed seed. Same format as the audit corpus.
import json, random, string, base64, uuid
r = random.Random(20261209)
A = string.ascii_letters + string.digits
H = "0123456789abcdef"
B32 = string.ascii_lowercase + "234567"
def g(n, al=A):
    while True:
        s = "".join(r.choice(al) for _ in range(n))
        if al != A or (any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)):
            return s
def pw(): return g(6) + r.choice("!#%^*") + g(7)
S = []
def add(name, value, *cores): S.append((name, value, list(cores)))
# Providers neither corpus lists.
c = g(32); add("render", "rnd_" + c, c)
c1, c2 = g(24, H), g(146, H); add("cloudflare_origin_ca", "v1.0-" + c1 + "-" + c2, c2)
c = g(36); add("netlify", "nfp_" + c, c)
c = g(40, H); add("sourcegraph", "sgp_" + c, c)
c = g(69); add("jfrog", "AKCp" + c, c)
c1, c2 = g(14), g(64, H); add("airtable", "pat" + c1 + "." + c2, c2)
c = g(40, H); add("shippo", "shippo_live_" + c, c)
c1, c2 = g(64, H), g(16); add("brevo", "xkeysib-" + c1 + "-" + c2, c1)
c = g(32, H); add("mailchimp", c + "-us21", c)
c = g(28); add("adafruit", "aio_" + c, c)
c = g(36); add("prefect", "pnu_" + c, c)
c = g(60, H); add("clojars", "CLOJARS_" + c, c)
c = g(64); add("slack_xoxc", "xoxc-" + "".join(r.choice(string.digits) for _ in range(12)) + "-" + "".join(r.choice(string.digits) for _ in range(13)) + "-" + c, c)
# Environment and config habits.
c = g(40); add("cloudflare_env", "export CF_API_TOKEN='" + c + "'", c)
c = str(uuid.UUID(int=r.getrandbits(128))); add("railway_env", "RAILWAY_TOKEN=" + c, c)
c = g(52, B32); add("azure_devops_pat", "AZURE_DEVOPS_EXT_PAT=" + c, c)
c = g(43) + "="; add("wireguard", "[Interface]\nAddress = 10.0.0.2/32\nPrivateKey = " + c + "\nDNS = 1.1.1.1", c[:-1])
c = pw(); add("git_credential", "protocol=https\nhost=github.com\nusername=bob\npassword=" + c + "\n", c)
c = g(24); add("maven_settings", "<server>\n  <id>ossrh</id>\n  <username>deploy</username>\n  <password>" + c + "</password>\n</server>", c)
c = g(20); add("nuget_config", '<add key="ClearTextPassword" value="' + c + '" />', c)
c = g(22); add("helm_set", "helm upgrade app ./chart --set auth.rootPassword=" + c + " --wait", c)
c = g(22); add("pip_extra_index", "pip install --extra-index-url https://deploy:" + c + "@pypi.example.com/simple pkg", c)
# Headers written by other tools.
c = base64.b64encode(("proxyuser:" + pw()).encode()).decode(); add("proxy_authorization", "Proxy-Authorization: Basic " + c, c)
c = g(32, H); add("datadog_header", "DD-API-KEY: " + c, c)
c = g(40, H); add("circleci_header", "Circle-Token: " + c, c)
# Admin command lines.
c = pw(); add("ldapsearch_w", "ldapsearch -x -H ldap://ldap.example.org -D cn=admin,dc=example,dc=org -w " + c + " -b dc=example,dc=org", c)
c = pw(); add("sqlcmd_P", "sqlcmd -S db.example.net -U sa -P '" + c + "' -Q 'SELECT 1'", c)
c = g(16); add("openssl_pass", "openssl enc -aes-256-cbc -pbkdf2 -pass pass:" + c + " -in db.sql -out db.sql.enc", c)
c = g(16); add("zip_P", "zip -r -P " + c + " backup.zip ./data", c)
c = g(16); add("keytool", "keytool -importkeystore -srckeystore a.p12 -srcstorepass " + c + " -destkeystore b.jks", c)
# A service account key as escaped JSON inside JSON text, and a presigned URL.
k = g(64)
sa = json.dumps({"type": "service_account", "project_id": "demo-1", "private_key_id": g(40, H),
                 "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + k + "\n-----END PRIVATE KEY-----\n"})
add("gcp_sa_in_json_text", json.dumps({"tool": "write_file", "content": sa}), k)
ak, sig = "AKIA" + g(16, string.ascii_uppercase + "234567"), g(64, H)
add("aws_presigned", "https://b.s3.amazonaws.com/k.tgz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" + ak +
    "%2F20261206%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261206T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=" + sig, ak[4:], sig)
LEFT_OUT = [] # (none left: an Airtable token and an Azure DevOps PAT were, until the commits after the corpus)
out = [(n, v, c) for n, v, c in S if n not in LEFT_OUT]
with open("families.jsonl", "w") as f:
    for name, v, cores in out:
        f.write(json.dumps({"name": name, "value": v, "cores": cores, "near": False}) + "\n")
print(len(out))
