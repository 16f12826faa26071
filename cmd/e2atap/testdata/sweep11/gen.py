# Generates families.jsonl (python3 gen.py, from this directory): an
# eleventh corpus, written by h-secrets11 with its own seed, read with the
# sixth's (TestSweep6Offline, TestSweep6Run: every place, two-delta cuts,
# the partial-leak checker). Its families are the leaks h-secrets11 fixed:
# (1) a password or token a command takes as a plain argument (Redis's
# lower-case auth, bindpw, wandb/cargo/vault login, nmcli, setx, fish's
# set -gx, dotnet user-secrets, mc alias set), (2) a call's password
# argument (smtplib's .login, PDO, JDBC's getConnection, Go's
# smtp.PlainAuth, PHP's define), (3) values after a ':' that no key names
# (xfreerdp /p:, netsh's Key Content, chpasswd lines, a PuTTY key's
# Private-Lines); each also URL-encoded in the audit's places. Cut across
# two deltas, those marked nocut or cut_accept are leaks left (they say
# why). Also left, in the record log: a call's password in the second of
# two deltas when another match crosses the cut before it (an e-mail
# user, "smtp.PlainAuth(\"\", \"bob@exa" | "mple.com\", \"<pw>\"…", or Go's
# "auth := smtp.PlainAuth(" masked as auth's value): the record log masks
# one match across a cut, and the second delta alone has no call before
# the password. Near-misses ("near": true) must give no e2a.secret
# finding: variables, placeholders, masks and prose. Random characters
# from a fixed seed.
import json, random, string, urllib.parse
r = random.Random(20261211)
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

# (1) command lines
p = pw(); add("redis_cli_lower_auth", "127.0.0.1:6379> auth " + p + "\nOK\n", p)
p = pw(); add("redis_cli_acl_auth", "$ redis-cli -h cache\ncache:6379> auth default " + p + "\nOK", p)
p = pw(); add("ldap_conf_bindpw", "base dc=example,dc=com\nbinddn cn=reader,dc=example,dc=com\nbindpw " + p + "\n", p)
k = g(40, "0123456789abcdef"); add("wandb_login", "wandb login " + k, k)
t = "cio" + g(32); add("cargo_login", "cargo login " + t, t)
t = "s." + g(24); add("vault_login_service_token", "vault login " + t, t)
p = pw(); add("nmcli_wifi_sec_psk", "nmcli connection modify Home wifi-sec.psk " + p, p)
p = pw(); add("nmcli_wifi_connect", "nmcli dev wifi connect HomeNet password " + p, p)
p = pw(); add("setx_secret_var", "setx DB_PASSWORD " + p + " /M", p)
t = g(40); add("fish_set_gx", "set -gx OPENAI_API_KEY " + t, t)
p = pw(); add("dotnet_user_secrets", 'dotnet user-secrets set "Smtp:Password" "' + p + '"', p)
t = g(40); add("mc_alias_set", "mc alias set minio http://minio.internal:9000 minioadmin " + t, t)
# (2) calls
p = pw(); add("smtplib_login", "server = smtplib.SMTP_SSL('smtp.example.com', 465)\nserver.login('bob@example.com', '" + p + "')\n", p)
p = pw(); add("php_new_pdo", "$pdo = new PDO('mysql:host=db;dbname=shop', 'shop', '" + p + "');", p)
p = pw(); add("jdbc_get_connection", 'Connection c = DriverManager.getConnection("jdbc:postgresql://db/app", "app", "' + p + '");', p)
p = pw(); add("go_smtp_plainauth", 'plain := smtp.PlainAuth("", cfg.User, "' + p + '", "smtp.example.com")', p)
p = pw(); add("php_define_db_password", "define( 'DB_PASSWORD', '" + p + "' );", p)
# (3) after a ':'
p = pw(); add("xfreerdp_p", "xfreerdp /v:10.0.0.5 /u:Administrator /p:" + p + " /cert:ignore", p)
p = pw(); add("netsh_key_content", "Security settings\n-----------------\n    Authentication         : WPA2-Personal\n    Key Content            : " + p + "\n", p)
p = pw(); add("chpasswd_echo", "echo 'deploy:" + p + "' | sudo chpasswd", p)
p = pw(); add("chpasswd_heredoc", "chpasswd <<EOF\nbob:" + p + "\nEOF\n", p)
l = g(64); add("putty_ppk_private_lines", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ed25519-key\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAI\n" + g(20) + "\nPrivate-Lines: 1\n" + l + "\nPrivate-MAC: " + g(64, "0123456789abcdef") + "\n", l)
# (4) URL-encoded: echo <pw> | sudo -S and SET PASSWORD FOR are not
# families of their own here (the audit's places URL-encode every family,
# and these encoded again are a leak left: redact's TestSweep11Encoded
# holds them encoded once); the places hold every family above encoded.

# near-misses
near("near_redis_auth_var", "127.0.0.1:6379> auth $REDIS_PASSWORD")
near("near_redis_auth_prose", "auth failed for user bob after 3 tries")
near("near_bindpw_var", "bindpw ${LDAP_BIND_PASSWORD}")
near("near_vault_login_method", "vault login -method=userpass username=bob")
near("near_setx_path", "setx PATH \"%PATH%;C:\\tools\\bin2\"")
near("near_fish_set_path", "set -gx PATH $HOME/.local/bin2 $PATH")
near("near_dotnet_user_secrets_list", "dotnet user-secrets list --project src/Api2")
near("near_mc_alias_vars", "mc alias set minio http://minio:9000 $MINIO_ROOT_USER $MINIO_ROOT_PASSWORD")
near("near_smtplib_var", "server.login(sender_email, password)")
near("near_pdo_vars", "$pdo = new PDO($dsn, $user, $pass);")
near("near_define_host", "define('DB_HOST', 'db2.internal');")
near("near_xfreerdp_var", "xfreerdp /u:admin /p:$RDP_PASSWORD /v:host2")
near("near_netsh_absent", "    Security key           : Absent")
near("near_chpasswd_var", "echo \"bob:$NEWPW\" | chpasswd")
near("near_sudo_s_var", "echo $SUDO_PW | sudo -S whoami")

with open("families.jsonl", "w") as f:
    for o in S:
        f.write(json.dumps(o, ensure_ascii=False) + "\n")
