package redact

import (
	"net/url"
	"strings"
	"testing"
)

// TestSweep11Commands: a password or token that a command line takes as
// a plain argument, named by the command (each was printed with no
// finding): Redis's lower-case auth, bindpw, wandb/cargo/vault login,
// nmcli's psk and password, setx and fish's set of a credential-named
// variable, dotnet user-secrets set, mc alias set's secret key.
func TestSweep11Commands(t *testing.T) {
	const pw = "Kqz9pwmvtlrbx"
	const key = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	checkSweep7(t, []sweep7Form{
		{"127.0.0.1:6379> auth " + pw, pw, false},
		{"redis-cli\n> auth default " + pw, pw, false},
		{"auth " + pw + "\r\n", pw, false},
		{"bindpw " + pw, pw, false},
		{"uri ldap://ldap.example.com\nbinddn cn=admin,dc=example,dc=com\nbindpw " + pw + "\n", pw, false},
		{"wandb login " + key, key, false},
		{"wandb login --relogin " + key, key, false},
		{"cargo login cio" + pw + "XyZaBcDeFgHiJkL", pw, false},
		{"vault login s.Abc1Def2Ghi3Jkl4Mno5Pqr6", "Abc1Def2Ghi3Jkl4Mno5Pqr6", false},
		{"nmcli con modify home wifi-sec.psk " + pw, pw, false},
		{`nmcli connection modify Home 802-11-wireless-security.psk "` + pw + `"`, pw, false},
		{"nmcli dev wifi connect HomeNet password " + pw, pw, false},
		{"setx DB_PASSWORD " + pw, pw, false},
		{`setx API_TOKEN "` + pw + `" /M`, pw, false},
		{"set -gx DB_PASSWORD " + pw, pw, false},
		{"set -Ux OPENAI_API_KEY " + pw, pw, false},
		{`dotnet user-secrets set "Stripe:SecretKey" "` + pw + `"`, pw, false},
		{"dotnet user-secrets set ConnectionStrings:Db " + pw + " --project src/Api", pw, false},
		{"mc alias set myminio http://minio:9000 AKIAEXAMPLEKEYABCDEF wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", false},
		{"mc alias set local http://127.0.0.1:9000 minioadmin " + pw, pw, false},
		{"mc config host add s3 https://s3.amazonaws.com admin " + pw, pw, false},
		{"//registry.npmjs.org/:_authToken=3f2a9c1e-4b5d-4e6f-8a7b-9c0d1e2f3a4b", "3f2a9c1e-4b5d-4e6f-8a7b-9c0d1e2f3a4b", false},
		{`npmAuthToken: "` + pw + `"`, pw, false},
		{"vault login hvs.CAESIJk3x9q0vz7m2p5r8t1w4y6b0n3c5d7fGh4KHGh2cy5abcdefgh", "CAESIJk3x9q0vz7m2p5r8t1w4y6b0n3c5d7fGh4KHGh2cy5abcdefgh", false},
		{`{"command":"set -gx DB_PASSWORD ` + pw + `"}`, pw, false},
		{`{"command":"redis-cli\n127.0.0.1:6379> auth ` + pw + `"}`, pw, false},
	}, true, []string{
		"auth failed for user bob",
		"127.0.0.1:6379> auth $REDIS_PASSWORD",
		"127.0.0.1:6379> auth <password>",
		"auth ****",
		"we use auth tokens v2 and 2FA",
		"bindpw ${LDAP_BIND_PW}",
		"the bindpw option is set in ldap.conf",
		"wandb login",
		"wandb login --relogin",
		"cargo login $CARGO_TOKEN",
		"vault login -method=userpass username=bob",
		"nmcli con modify home wifi-sec.psk $PSK",
		"setx PATH C:\\tools\\bin2",
		"setx DB_PASSWORD %DB_PASSWORD%",
		"set -gx PATH $PATH /opt/bin2",
		"set -gx TOKEN_TTL 3600",
		"dotnet user-secrets list",
		"mc alias set local http://127.0.0.1:9000 $MINIO_USER $MINIO_PASSWORD",
		"mc alias list",
		"the auth 2 step",
	})
}

// TestSweep11Calls: the password argument of a call: smtplib's .login,
// PHP's new PDO and define('DB_PASSWORD', …), JDBC's getConnection, Go's
// smtp.PlainAuth (each was printed with no finding).
func TestSweep11Calls(t *testing.T) {
	const pw = "Kqz9pwmvtlrbx"
	checkSweep7(t, []sweep7Form{
		{"server.login('bob@example.com', '" + pw + "')", pw, false},
		{`smtp.login(user, "` + pw + `")`, pw, false},
		{"$pdo = new PDO($dsn, 'app', '" + pw + "');", pw, false},
		{"$db = new PDO('mysql:host=db;dbname=app', $user, '" + pw + "');", pw, false},
		{`Connection c = DriverManager.getConnection(url, "app", "` + pw + `");`, pw, false},
		{`auth := smtp.PlainAuth("", "bob@example.com", "` + pw + `", "smtp.example.com")`, pw, false},
		{"define('DB_PASSWORD', '" + pw + "');", pw, false},
		{"define( 'AUTH_KEY', 'x;Q3|p~v@L9+Zk!b^Tq0' );", "x;Q3|p~v@L9+Zk!b^Tq0", false},
		{`$conn = mysqli_connect("db", "app", "` + pw + `", "shop");`, pw, false},
		{`{"code":"s.login(\"bob\", \"` + pw + `\")"}`, pw, false},
	}, true, []string{
		"server.login(user, password)",
		"server.login(user, os.environ['SMTP_PASSWORD'])",
		"$pdo = new PDO($dsn, $user, $pass);",
		`DriverManager.getConnection(url, "app", "${DB_PASSWORD}")`,
		`smtp.PlainAuth("", user, pass, host)`,
		"define('DB_HOST', 'db2.internal');",
		"define('WP_DEBUG', 'v2025');",
		"print(fmt(1, 'Kqz9pwmvtlrbx'))",
		`log("login", "step2")`,
	})
}

// TestSweep11Colon: the values after a ':' that no key names: xfreerdp's
// /p:, netsh's "Key Content : …", a chpasswd line's "user:password", a
// PuTTY key's Private-Lines (also with no digit: the ':' reveals them).
func TestSweep11Colon(t *testing.T) {
	const pw = "Kqz9pwmvtlrbx"
	const nd = "korvelstabumix"
	const ppk = "AAAAgQCx7k3x9q0vz7m2p5r8t1w4y6b0n3c5d7fGh4KHGh2cy5abcdefgh"
	checkSweep7(t, []sweep7Form{
		{"xfreerdp /v:10.0.0.5 /u:admin /p:" + pw + " /cert:ignore", pw, false},
		{"xfreerdp /u:admin /p:" + nd + " /v:host", nd, false},
		{"    Key Content            : " + pw, pw, false},
		{"Security settings\n    Authentication         : WPA2-Personal\n    Key Content            : " + nd + "\n", nd, false},
		{"echo 'bob:" + pw + "' | chpasswd", pw, false},
		{`echo "bob:` + nd + `" | sudo chpasswd`, nd, false},
		{"chpasswd <<EOF\nbob:" + pw + "\nEOF", pw, false},
		{`{"cmd":"echo 'deploy:` + nd + `' | sudo chpasswd -c SHA512"}`, nd, false},
		{"PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: rsa-key\nPublic-Lines: 1\nAAAAB3NzaC1yc2EAAAADAQABAAAAgQ\nPrivate-Lines: 2\n" + ppk + "\nAAAAQQDk3x9q0vz7m2p5r8t1w4y6b0n3c5d7f\nPrivate-MAC: 0123456789abcdef0123456789abcdef01234567\n", ppk, false},
	}, true, []string{
		"xfreerdp /u:admin /p:$RDP_PASSWORD /v:host",
		"xfreerdp /u:admin /v:host /cert:ignore",
		"rdp /p:korvelstabumix",
		"    Key Content            : Absent",
		"Key Content : ********",
		"echo 'bob:$PW' | chpasswd",
		"echo 'bob:x' | chpasswd",
		"time: 12:00:01 | chpasswd",
		"chpasswd < users.txt",
		"Private-Lines: 0",
		"git config user.name bob:alice",
	})
}

// TestSweep11Encoded: the forms h-secrets10 fixed, URL-encoded (a query
// string, a form body): echo <pw> | sudo -S and SET PASSWORD FOR.
func TestSweep11Encoded(t *testing.T) {
	const pw = "Kqz9pwmvtlrbx"
	checkSweep7(t, []sweep7Form{
		{"q=" + url.QueryEscape("echo "+pw+" | sudo -S whoami"), pw, false},
		{"cmd=" + url.QueryEscape("echo '"+pw+"' | sudo -S systemctl restart app") + "&x=1", pw, false},
		{"q=" + url.QueryEscape("SET PASSWORD FOR 'bob'@'%' = '"+pw+"';"), pw, false},
		{"q=" + url.QueryEscape("set password for bob@localhost = PASSWORD('"+pw+"');"), pw, false},
		{"q=" + url.QueryEscape("rar a -hp"+pw+" b.rar d"), pw, false},
		{"q=" + url.QueryEscape("7z a -p"+pw+" b.7z d"), pw, false},
	}, false, []string{
		"q=" + url.QueryEscape("echo $SUDO_PASSWORD | sudo -S apt-get update"),
		"q=" + url.QueryEscape("echo installing the unit | sudo -S tee /etc/motd"),
		"q=" + url.QueryEscape("SET PASSWORD FOR 'bob'@'%' = ?;"),
		"q=" + url.QueryEscape("SET PASSWORD FOR 'bob'@'%' = @new_pw;"),
	})
}

// TestSweep11Digitless: SQL's PASSWORD '<pw>' and Redis's requirepass
// with no digit in the value (proseValue sees a value at a digit) are
// masked, as prose passwords are: never a finding.
func TestSweep11Digitless(t *testing.T) {
	const nd = "korvelstabumix"
	for _, s := range []string{
		"CREATE ROLE app WITH LOGIN PASSWORD '" + nd + "';",
		"ALTER USER bob WITH PASSWORD '" + nd + "'",
		"alter role app password '" + nd + "' valid until 'infinity'",
		"requirepass " + nd,
		`CONFIG SET requirepass "` + nd + `"`,
		"# redis.conf\nrequirepass " + nd + "\nmaxmemory 2gb\n",
	} {
		if out := MaskText(s); strings.Contains(out, nd[:10]) {
			t.Errorf("printed: %q", out)
		}
	}
	for _, s := range []string{
		"CREATE ROLE app WITH LOGIN PASSWORD NULL;",
		"CREATE ROLE app PASSWORD '******';",
		"requirepass $REDIS_PASSWORD",
		"the requirepass directive",
		"set a password 'hunter' on it",
	} {
		if out := MaskText(s); out != s && !strings.Contains(s, "hunter") {
			t.Errorf("masked: %q", out)
		}
	}
}
