# Generates families.jsonl (python3 gen.py, from this directory): an
# independent corpus of credential shapes that redact/testdata/audit/gen.py
# did not have (providers it does not list, connection strings, cloud keys
# in config snippets, JWTs in odd places, PEM variants, command lines,
# prose), written by h-secrets2 from the providers' documented formats,
# random characters with a fixed seed. Same format as the audit corpus.
# Left out, not detected: a keyless random token under 32 characters.
# (Since h-secrets3, TestToolShapedCredentialsOffline: a Fly.io "FlyV1
# fm2_…" token, a .pgpass line and Oracle's user/password@//db are found,
# a password in prose with no digit is masked, no finding.)
import json, random, string, base64
r = random.Random(20261206)
A = string.ascii_letters + string.digits
def g(n, al=A):
    while True:
        s = "".join(r.choice(al) for _ in range(n))
        if al != A or (any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)):
            return s
H = "0123456789abcdef"
S = []
def add(name, value, *cores): S.append((name, value, list(cores)))
# providers not in gen.py
c=g(40); add("openrouter", "sk-or-v1-"+c.lower()[:64], c.lower()[:40])
c=g(52); add("groq", "gsk_"+c, c)
c=g(48); add("perplexity", "pplx-"+c, c)
c=g(37); add("replicate", "r8_"+c, c)
c=g(36); add("linear", "lin_api_"+c, c)
c=g(43); add("notion_secret", "secret_"+c, c)
c=g(40); add("notion_ntn", "ntn_"+c, c)
c=g(64,H); add("sentry_user", "sntryu_"+c, c)
c=g(40); add("figma", "figd_"+c, c)
c1=g(32,H); add("langsmith", "lsv2_pt_"+c1+"_"+g(10,H), c1)
c=g(40); add("pinecone", "pcsk_"+g(5)+"_"+c, c)
c=g(36); add("resend", "re_"+g(8)+"_"+c, c)
c=g(40); add("neon", "napi_"+c.lower(), c.lower())
c=g(43); add("contentful", "CFPAT-"+c, c)
c=g(30); add("tailscale", "tskey-auth-k"+g(10)+"CNTRL-"+c, c)
c=g(36); add("doppler", "dp.st.dev."+c, c)
c=g(43); add("planetscale", "pscale_tkn_"+c, c)
c=g(43); add("planetscale_pw", "pscale_pw_"+c, c)
c=g(59, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"); add("age", "AGE-SECRET-KEY-1"+c, c)
c=g(16,"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"); add("alibaba_id", "LTAI"+c[:20], c)
c=g(32); add("tencent_id", "AKID"+c, c)
c=g(140); add("fcm", "AAAA"+g(7)+":APA91b"+c, c)
c=g(180); add("facebook", "EAACEdEose0cBA"+c, c)
c=g(60); add("dropbox", "sl."+c, c)
c=g(40); add("okta", "00"+c, c)
c=g(40); add("bitbucket", "ATBB"+c, c)
c=g(86); add("dynatrace", "dt0c01."+g(24,"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")+"."+c[:64], c[:64])
c=g(70); add("terraform", g(14)+".atlasv1."+c, c)
c=g(36); add("heroku_new", "HRKU-"+c, c)
c=g(60); add("square", "EAAA"+c, c)
c=g(60); add("mapbox_sk", "sk.eyJ1Ijoi"+c[:30]+"."+c[30:52], c[:30], c[30:52])
c=g(22); add("clerk", "sk_live_"+c+g(20), c)
c=g(32,H); add("deepseek", "sk-"+c, c)
c=g(40); add("cohere_kv", "COHERE_API_KEY="+c, c)
c=g(40); add("mistral_env", "MISTRAL_API_KEY="+c, c)
# kubeconfig, docker, netrc, command lines, prose
pem_b64 = "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVB" + g(40)
add("kube_client_key_data", "client-key-data: "+pem_b64, pem_b64[40:])
c=g(40); add("kube_token", "users:\n- name: admin\n  user:\n    token: "+c, c)
c=g(16); au=base64.b64encode(("robot:"+c).encode()).decode(); add("docker_auth", '{"auths":{"registry.example.com":{"auth":"'+au+'"}}}', au)
c=g(16); add("netrc", "machine api.example.com login alice password "+c, c)
c=g(14); add("sshpass_cli", "sshpass -p '"+c+"' ssh root@host", c)
c=g(14); add("mysql_p", "mysql -uroot -p"+c+" prod", c)
c=g(14); add("mysql_password_eq", "mysql --password="+c+" -h db", c)
c=g(14); add("redis_cli_a", "redis-cli -h cache -a "+c+" ping", c)
c=g(14); add("docker_login_p", "docker login -u bob -p "+c+" registry.io", c)
c=g(14); add("prose_password_is", "the password is "+c, c)
c=g(14); add("prose_pw_colon", "Your new password: "+c, c)
c=g(20); add("bare_key_eq", "key="+c, c)
# connection strings
c=g(14); add("dotnet_conn", "Server=tcp:db.example.net,1433;Initial Catalog=prod;User ID=sa;Password="+c+";Encrypt=True;", c)
c=g(14); add("dotnet_pwd", "Data Source=db;Uid=app;Pwd="+c+";", c)
c=g(14); add("jdbc_pw", "jdbc:postgresql://db:5432/prod?user=app&password="+c+"&ssl=true", c)
c=g(14); add("jdbc_mysql_colon", "jdbc:mysql://app:"+c+"@db:3306/prod", c)
c=g(14); add("sqlalchemy", "postgresql+psycopg2://app:"+c+"@db/prod", c)
c=g(14); add("mongo_srv", "mongodb+srv://app:"+c+"@cluster0.ab1cd.mongodb.net/?retryWrites=true", c)
c=g(14); add("redis_nouser", "redis://:"+c+"@cache:6379/0", c)
c=g(14); add("amqp", "amqp://guest:"+c+"@rabbit:5672/vhost", c)
c=g(32,H); add("sentry_dsn", "https://"+c+"@o4505.ingest.sentry.io/45", c)
# cloud keys in config snippets
c=g(40); add("yaml_aws", "aws:\n  access_key_id: AKIA"+g(16,"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")+"\n  secret_access_key: "+c, c)
c=g(40); add("ini_aws", "[default]\naws_secret_access_key = "+c+"\n", c)
c=g(24); add("env_quoted", 'STRIPE_SECRET="'+c+'"', c)
c=g(24); add("hcl", 'resource "x" "y" {\n  client_secret = "'+c+'"\n}', c)
c=g(24); add("toml", '[database]\npassword = "'+c+'"', c)
c=g(24); add("properties", "spring.datasource.password="+c, c)
c=g(24); add("xml", "<password>"+c+"</password>", c)
c=g(24); add("xml_attr", '<add key="ApiKey" value="'+c+'"/>', c)
c=g(20); add("k8s_env", "env:\n- name: DB_PASSWORD\n  value: "+c+"\n", c)
c=g(43); add("jwk_d", '{"kty":"EC","crv":"P-256","d":"'+c+'","x":"abc"}', c)
c=g(24); add("wpa", 'network={\n ssid="home"\n psk="'+c+'"\n}', c)
# JWT odd places
jw = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9."+base64.urlsafe_b64encode(b'{"sub":"x","n":"'+g(12).encode()+b'"}').decode().rstrip("=")+"."+g(43)
add("jwt_fragment", "https://app.example.com/cb#id_token="+jw+"&state=1", jw.split(".")[1], jw.split(".")[2])
add("jwt_cookie", "Cookie: a=1; __session="+jw, jw.split(".")[2])
add("jwt_glued", "token"+jw, jw.split(".")[2])
add("jwt_escaped_slash", jw.replace(".", "\\u002e"), jw.split(".")[2])
# PGP / pem variants
c=g(64); add("pem_pkcs8_crlf", "-----BEGIN PRIVATE KEY-----\r\nMIIEv"+c+"\r\n-----END PRIVATE KEY-----", c)
c=g(64); add("putty", "PuTTY-User-Key-File-3: ssh-rsa\nPrivate-Lines: 14\n"+c, c)
with open("families.jsonl", "w") as f:
    for name, v, cores in S:
        f.write(json.dumps({"name": name, "value": v, "cores": cores, "near": False}) + "\n")
print(len(S))
