# Generates families.jsonl (python3 gen.py, from this directory): an
# eighteenth corpus, written by h-secrets18 with its own seed, read with
# the sixth's (TestSweep6Offline, TestSweep6Run: every place, two-delta
# cuts, the partial-leak checker). Its families are the leaks h-secrets18
# fixed: (1) a password's label spelled beyond ASCII (Spanish contraseña,
# Russian пароль, Polish hasło, Swedish lösenord, Turkish şifre, Hungarian
# jelszó, in any case) and French's "mot de passe :" (a space before the
# colon), also as Python's ensure_ascii \u escapes in a tool's JSON
# text, not cut (the split check does not read such a label yet);
# (2) WordPress's keys and salts in wp-config.php's define('AUTH_KEY',
# '…'), whose values hold quotes' kin ('`', '<', '>', spaces; not cut:
# the live view shows the rest of a salt a cut leaves in the next delta,
# and a cut deep in one is no finding); (3) a builder's
# .token("…") and .clientSecret("…"), and
# withCredentials(user, password); (4) a password in prose after
# "password for <who>:" or "changed/reset to", "Credentials: <user> /
# <pw>", and a JWT under an unknown tool's key (a finding now). Each was
# printed in every output (or masked with no finding).
# Near-misses ("near": true) must give no e2a.secret finding: a word
# that holds a label (паролька, contraseñas), "impasse :", a placeholder
# after a label, a variable's reference in braces as a credential's value
# (${DB_PASSWORD}, also no mask now), Terraform's "(sensitive value)", a
# hash method's name after a password flag, WordPress's default phrase
# and another constant, .withSecret("<name>") and withCredentials of
# variables. Random characters from a fixed seed.
import json, random, string
r = random.Random(20261218)
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


def esc(s):
    return "".join(c if ord(c) < 128 else "\\u%04x" % ord(c) for c in s)
WP = A + "!@#$%^&*()-_[]{}<>~`+=,.;:/?| "
def salt(n=64):
    while True:
        v = "".join(r.choice(WP) for _ in range(n))
        if v[0] not in " <" and v[-1] != " " and any(c.isdigit() for c in v[:24]) and any(c in "`<> " for c in v):
            return v
# (1)
p = gp(14); add("spanish_contrasena_label", pre("Datos de acceso:\nUsuario: admin\nContraseña: " + p + "\n"), p, nocut="a cut a third into the value is no finding yet: the split check (MayStartCredential) does not read a label beyond ASCII")
p = gp(14); add("russian_parol_label", pre("Данные для входа:\nЛогин: admin\nпароль: " + p + "\n"), p, nocut="a cut a third into the value is no finding yet: the split check (MayStartCredential) does not read a label beyond ASCII")
p = gp(16); add("russian_parol_json_key", pre('$ cat config.json\n{"логин": "admin", "пароль": "' + p + '"}'), p, nocut="a cut a third into the value is no finding yet: the split check (MayStartCredential) does not read a label beyond ASCII")
p = gp(14); add("polish_haslo_eq", pre("$ cat .env\nUZYTKOWNIK=admin\nhasło=" + p + "\n"), p, nocut="a cut a third into the value is no finding yet: the split check (MayStartCredential) does not read a label beyond ASCII")
p = gp(14); add("swedish_losenord_label", pre("Användare: admin\nLösenord: " + p + "\n"), p, nocut="a cut a third into the value is no finding yet: the split check (MayStartCredential) does not read a label beyond ASCII")
p = gp(14); add("turkish_sifre_label", pre("kullanıcı: admin\nşifre: " + p + "\n"), p, nocut="a cut a third into the value is no finding yet: the split check (MayStartCredential) does not read a label beyond ASCII")
p = gp(14); add("hungarian_jelszo_label", pre("Felhasználó: admin\nJelszó: " + p), p, nocut="a cut a third into the value is no finding yet: the split check (MayStartCredential) does not read a label beyond ASCII")
p = gp(14); add("french_mot_de_passe_space_colon", pre("Identifiant : admin\nMot de passe : " + p + "\n"), p, nocut="a cut a third into the value is no finding yet: the split check (MayStartCredential) does not read a label beyond ASCII")
# (2)
ks = salt(); ss = salt(); add("wp_config_auth_key_salt", pre("$ sed -n 49,52p wp-config.php\ndefine('AUTH_KEY',         '" + ks + "');\ndefine('SECURE_AUTH_SALT', '" + ss + "');"), ks, ss, nocut="observe --records shows the rest of a salt a cut leaves in the next delta (punctuation, no token's shape)")
ks = salt(); add("wp_config_nonce_salt_spaced", pre("define( 'NONCE_SALT', '" + ks + "' );"), ks, nocut="a cut two thirds into a salt is no finding yet: the split check keeps no tail that far from define(")
ks = salt(); add("wp_config_logged_in_key_dq", pre('define("LOGGED_IN_KEY", "' + ks.replace('"', "x") + '");'), ks.replace('"', "x"), nocut="a cut two thirds into a salt is no finding yet: the split check keeps no tail that far from define(")
p = gp(14); add("escaped_contrasena_json_text", pre('$ python3 -c "import json; print(json.dumps(cfg))"\n' + esc('{"usuario": "admin", "contraseña": "') + p + '"}'), p, nocut="a cut a third into the value is no finding yet: the split check (MayStartCredential) does not read a label beyond ASCII")
p = gp(14); add("escaped_parol_label", pre("$ cat out.json\n" + esc('{"note": "пароль: ') + p + '"}'), p, nocut="a cut a third into the value is no finding yet: the split check (MayStartCredential) does not read a label beyond ASCII")
# (3)
k = g(32); add("builder_token", pre('    Client client = Client.builder()\n        .endpoint("https://api.example.com")\n        .token("' + k + '")\n        .build();'), k)
k = g(40); add("builder_client_secret", pre("val app = ConfidentialClientApplication.builder(CLIENT_ID)\n    .clientSecret('" + k + "')\n    .build()"), k)
p = gp(14); add("with_credentials_user_password", pre('  conn = Connection.open(url).withCredentials("svc_deploy", "' + p + '")'), p)
# (4) prose and the audit's
p = gp(14); add("prose_password_for_user_colon", pre("I created the database user for you.\nThe password for app_rw: " + p + "\nStore it in the vault."), p, nocut="a cut inside the value of prose is no finding yet, and the live view shows the rest: the split check keeps no tail after \"to\" or \"for <who>:\"")
p = gp(14); add("prose_password_changed_to", pre("$ ./rotate.sh db-prod\nPassword changed to " + p + "\nDone."), p, nocut="a cut inside the value of prose is no finding yet, and the live view shows the rest: the split check keeps no tail after \"to\" or \"for <who>:\"")
p = gp(16); add("prose_password_reset_to", pre("Your password has been reset to " + p + " - please change it after logging in."), p, nocut="a cut inside the value of prose is no finding yet, and the live view shows the rest: the split check keeps no tail after \"to\" or \"for <who>:\"")
p = gp(14); add("credentials_user_slash_password", pre("Test account created.\nCredentials: qa_user / " + p + "\n"), p)
k = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIiwiaXNzIjoic3VwYWJhc2UifQ." + g(43, A + "-_")
add("supabase_service_role_jwt_env", pre("$ cat .env.local\nNEXT_PUBLIC_SUPABASE_URL=https://xyzcompany.supabase.co\nSUPABASE_SERVICE_ROLE_KEY=" + k + "\n"), k)
near("near_secretsmanager_arn", '$ aws secretsmanager describe-secret --secret-id prod/db\n{"ARN": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-Ab12Cd", "Name": "prod/db"}')
near("near_shadow_locked", "root:*:19700:0:99999:7:::\ndaemon:!:19700::::::")
# near-misses
near("near_label_inside_word", "паролька: Xq7vLm2pR9tz2\ncontraseñas: 3 guardadas\nimpasse : Xq7vLm2pR9tz2")
near("near_label_placeholder", "Contraseña: <tu contraseña>\nпароль: ********\nMot de passe : (non défini)")
near("near_env_reference_braces", "      - POSTGRES_PASSWORD=${POSTGRES_PASSWORD}\n      - API_TOKEN=${API_TOKEN_2}\npassword: '${DB_PASSWORD}'")
near("near_terraform_sensitive", "  + resource \"aws_db_instance\" \"main\" {\n      + password = (sensitive value)\n      + api_token = (known after apply)\n    }")
near("near_hash_method", "mkpasswd --method=sha-512 --pwd=sha-512\npassword_scheme: bcrypt")
near("near_wp_default_phrase", "define('NONCE_KEY',        'put your unique phrase here');\ndefine('WP_DEBUG_LOG', 'wp-content/debug-2.log');")
near("near_withsecret_name", '  o = Opts.builder().withSecret("db-secret-2").build()\n  c = client.withCredentials(user, password)')

with open("families.jsonl", "w") as f:
    for o in S:
        f.write(json.dumps(o, ensure_ascii=False) + "\n")
