# Generates families.jsonl (python3 gen.py, from this directory): a
# seventeenth corpus, written by h-audit17 with its own seed, read with
# the sixth's (TestSweep6Offline, TestSweep6Run: every place, two-delta
# cuts, the partial-leak checker). Its families are the leaks h-audit17's
# audit found and fixed: (1) a credential given as the one quoted
# argument of a setter or a builder's method of a credential-named field,
# as code an agent reads or writes carries it: Java's
# HikariConfig.setPassword, Spring's DataSourceBuilder.password, the
# MongoDB driver's withPassword, an SDK's setApiKey and setOAuthToken,
# Kotlin's apiKey, Python's set_api_key, in a file listing, a diff and a
# grep; findings now (they were printed in the clear).
# Near-misses ("near": true) must give no e2a.secret finding: a getter or
# a lookup by name (getSecret, get_secret), a check (verifyPassword), a
# variable or an environment read as the argument, a function of its own
# name (hash_password), a setter of a plain field; (2) the name of a
# credential helper under a credential-named key (Docker's config.json
# "credsStore": "desktop", git's credential.helper, a secret store's
# name), which was an e2a.secret finding; (3) the password argument of a
# call that takes a user and its password (requests' HTTPBasicAuth,
# aiohttp's BasicAuth, .NET's NetworkCredential, JavaMail's
# PasswordAuthentication, Apache HttpClient's UsernamePasswordCredentials),
# printed in the clear before; variables, an environment read, an empty
# password and the user alone as a near-miss; (4) a token with a dotted
# prefix whose random part holds a '_' as a credential key's value
# (Vault's "Token: hvs.…"), masked with no finding before (its value read
# as a dotted path of names, code); dotted names after a key as a
# near-miss; (5) a credential after a Markdown bold label whose colon is
# inside the bold ("**Password:** <pw>", as a model's reply lists
# credentials): the closing "**" was masked as the value and the
# credential printed; a mask, a placeholder or nothing after the label
# as a near-miss. Random characters from a fixed seed.
import json, random, string
r = random.Random(20261217)
A = string.ascii_letters + string.digits
H = "0123456789abcdef"
P = A + "!#%^*"
def g(n, al=A):
    while True:
        s = "".join(r.choice(al) for _ in range(n))
        if any(c.isdigit() for c in s) and any(c.isupper() for c in s) and any(c.islower() for c in s):
            return s
def gp(n):
    # a password: letters, digits and symbols, its first byte a letter
    return r.choice(string.ascii_letters) + g(n - 1, P)
LINES = ["$ uptime", " 11:02:03 up 3 days,  2:14,  1 user,  load average: 0.08, 0.12, 0.10", "$ git status --short",
         " M src/main/java/app/Db.java", "?? notes.md", "$ whoami", "agent", "$ pwd", "/workspace/app"]
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
p = gp(16); add("java_hikari_setpassword", pre('$ cat src/main/java/app/Db.java\nHikariConfig config = new HikariConfig();\nconfig.setJdbcUrl("jdbc:postgresql://db:5432/app");\nconfig.setUsername("app");\nconfig.setPassword("' + p + '");\n'), p)
p = gp(14); add("java_setpassword_single_quotes", pre("ds.setPassword('" + p + "')"), p)
p = gp(16); add("spring_datasourcebuilder_password", pre('$ grep -n password src/main/java/app/Config.java\n42:        return DataSourceBuilder.create().url(url).username("sa").password("' + p + '").build();'), p)
p = gp(18); add("mongo_withpassword", pre('MongoCredential cred = MongoCredential.builder()\n    .withUser("app")\n    .withPassword("' + p + '")\n    .build();'), p)
k = g(40); add("sdk_setapikey", pre('$ git diff\n+        client.setApiKey("' + k + '");\n-        client.setApiKey(System.getenv("API_KEY"));'), k)
k = g(32); add("kotlin_builder_apikey", pre('val client = SearchClient.builder()\n    .region("eu")\n    .apiKey("' + k + '")\n    .build()'), k)
k = g(36); add("python_set_api_key", pre('$ sed -n 10,12p agent.py\nsdk = Client()\nsdk.set_api_key("' + k + '")\nsdk.connect()'), k)
k = g(40); add("setter_oauth_token", pre('GitHubClient gh = new GitHubClient();\ngh.setOAuthToken("' + k + '");'), k)
# (3)
p = gp(14); add("python_httpbasicauth", pre("$ sed -n 1,6p sync.py\nimport requests\nfrom requests.auth import HTTPBasicAuth\nr = requests.get(URL, auth=HTTPBasicAuth('admin', '" + p + "'))"), p)
p = gp(14); add("aiohttp_basicauth", pre('session = aiohttp.ClientSession(auth=aiohttp.BasicAuth("bot", "' + p + '"))'), p)
p = gp(16); add("dotnet_networkcredential", pre('$ grep -rn Credential src/\nsrc/Mailer.cs:18:        client.Credentials = new NetworkCredential("mailer", "' + p + '");'), p)
p = gp(14); add("javamail_passwordauthentication", pre('protected PasswordAuthentication getPasswordAuthentication() {\n    return new PasswordAuthentication("alerts", "' + p + '");\n}'), p)
p = gp(14); add("httpclient_usernamepasswordcredentials", pre('provider.setCredentials(AuthScope.ANY, new UsernamePasswordCredentials("svc", "' + p + '"));'), p)
# (4)
k = "hvs." + g(30) + "_" + g(60, A + "-"); add("vault_login_token_key_value", pre("$ vault login -method=userpass username=ops\nSuccess! You are now authenticated.\nToken: " + k + "\nPolicies: [default ops]"), k)
k = "hvs." + g(40) + "_" + g(50); add("vault_token_json", pre('$ vault token create -format=json | jq .auth\n{"client_token": "' + k + '", "renewable": true}'), k)
# (5)
p = gp(14); add("markdown_bold_password", pre("Your database is ready:\n\n- **Host:** db.internal\n- **User:** app\n- **Password:** " + p + "\n\nKeep it somewhere safe."), p)
k = g(40); add("markdown_bold_api_key", pre("| Setting | Value |\n|---|---|\n\n**API Key:** " + k + "\n**Region:** eu-west-1"), k)
p = gp(16); add("markdown_bold_no_space", pre("* **Admin password:**" + p + "\n* **Admin user:** root"), p)
# (2) and the setters' near-misses
near("near_getsecret_by_name", 'String pw = vault.getSecret("prod-db-2");\nsecret = client.get_secret("db-password-3")')
near("near_verify_password", 'if (!encoder.verifyPassword("hunter2x9")) { throw new AuthException(); }')
near("near_setpassword_variable", "ds.setPassword(password);\nds.setPassword(System.getenv(\"DB_PASSWORD2\"));\nds.setPassword(\"${DB_PASSWORD_2}\");")
near("near_hash_password_function", 'digest = hash_password("Tr0ub4dor3")')
near("near_setter_plain_field", 'ds.setUsername("admin2024");\nds.setMaximumPoolSize(10);\ncfg.setPasswordFile("/run/secrets/db2");')
near("near_basicauth_variables", 'auth = HTTPBasicAuth(user, password)\nauth = HTTPBasicAuth("admin2", os.environ["API_PASSWORD"])\nc = new NetworkCredential("admin2024", "");\nHTTPBasicAuth("user2024")')
near("near_dotted_names_after_key", "password: config.oauth2ClientSecret\ntoken: self.accessTokenV2\napi_key: settings.OPENAI_API_KEY_V2")
near("near_markdown_bold_no_value", "- **Password:** ********\n- **Password:** <your password>\n- **Password:** (not set)\n- **Username:** admin2024\n**Password:**")
near("near_docker_credsstore", '$ cat ~/.docker/config.json\n{\n  "auths": {\n    "ghcr.io": {}\n  },\n  "credsStore": "desktop",\n  "currentContext": "default"\n}')
near("near_credsstore_osxkeychain", '{"credsStore": "osxkeychain", "credHelpers": {"gcr.io": "gcloud"}}')
near("near_git_credential_helper", "$ git config --list | grep cred\ncredential.helper=manager-core2\ncredential.https://github.com.helper=store")
near("near_secret_store_name", "secretStore: vault-prod-2\nsecret_store: aws-secrets-manager-2")

with open("families.jsonl", "w") as f:
    for o in S:
        f.write(json.dumps(o, ensure_ascii=False) + "\n")
