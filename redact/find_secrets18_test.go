package redact

import (
	"strings"
	"testing"
)

// mask18 is every match Find reports in s, as MaskText masks them,
// with "#" for each: what a text looks like in every output.
func mask18(s string) string {
	var b strings.Builder
	from := 0
	for from < len(s) {
		m, ok := Find(s, from)
		if !ok {
			break
		}
		b.WriteString(s[from:m.Start])
		b.WriteString("#")
		from = m.End
	}
	b.WriteString(s[from:])
	return b.String()
}

// TestSecrets18Masked: the shapes h-secrets18 fixed, each printed whole
// before (or, for the placeholders, masked in part): the value is
// masked, as a credential, and the pre-check passes the text.
func TestSecrets18Masked(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// (1) a password's label beyond ASCII, in UTF-8 and escaped
		{"contraseña: Xq7vLm2pR9tz", "contraseña: #"},
		{"Su contraseña: Xq7vLm2pR9tz", "Su contraseña: #"},
		{"пароль: Xq7vLm2pR9tz", "пароль: #"},
		{"Пароль: hunter2x", "Пароль: #"},
		{"ваш пароль: Xq7vLm2pR9tz", "ваш пароль: #"},
		{`{"пароль": "Xq7vLm2pR9tz"}`, `{"пароль": "#"}`},
		{"hasło=Xq7vLm2pR9tz", "hasło=#"},
		{"Lösenord: Xq7vLm2pR9tz", "Lösenord: #"},
		{"şifre: Xq7vLm2pR9tz", "şifre: #"},
		{"ŞİFRE: Xq7vLm2pR9tz", "ŞİFRE: #"},
		{"Jelszó: Xq7vLm2pR9tz", "Jelszó: #"},
		{"mot de passe : Xq7vLm2pR9tz", "mot de passe : #"},
		{"Mot de passe: Xq7vLm2pR9tz", "Mot de passe: #"},
		{`contrase\u00f1a: Xq7vLm2pR9tz`, `contrase\u00f1a: #`},
		{`{"\u043f\u0430\u0440\u043e\u043b\u044c": "Xq7vLm2pR9tz"}`, `{"\u043f\u0430\u0440\u043e\u043b\u044c": "#"}`},
		{`has\u0142o: Xq7vLm2pR9tz`, `has\u0142o: #`},
		{`\u015fifre: Xq7vLm2pR9tz`, `\u015fifre: #`},
		// (3) WordPress's keys and salts
		{"define('AUTH_KEY', 'p$Xz!9w`Kq[4h)L_8#mN|tR2@vB^yE&c');", "define('AUTH_KEY', '#');"},
		{"define( 'SECURE_AUTH_SALT', 'Jd8(2q&Bv!z]Lw.P%kT~r^0xM+yGc}sN' );", "define( 'SECURE_AUTH_SALT', '#' );"},
		{"define('LOGGED_IN_KEY',    'a<b>c d9e`f g!h?JkL;2mn,op');", "define('LOGGED_IN_KEY',    '#');"},
		{"define('NONCE_SALT', 'O-x`:1 Rf+]nQ,z|w8>K h%T.6?sE3^Uj~LpWq5!c(Yv');", "define('NONCE_SALT', '#');"},
		// in JSON text held in a string ('<' escaped as \u003c by Go's encoder)
		{`x\ndefine('AUTH_KEY', ',73vpNtgcm7i,6\u003e6B#5K_p*BD4@#]Y0,iZY');`, `x\ndefine('AUTH_KEY', '#');`},
		{`x\ndefine(\"LOGGED_IN_KEY\", \"OJeI!b\u003c(ftLv\u0026\u003c8ej.D0~v%k(a[a|1X\");`, `x\ndefine(\"LOGGED_IN_KEY\", \"#\");`},
		// (4) a builder's token and client secret, withCredentials
		{`  c = Client.builder().token("Xq7vLm2pR9tzK3wA").build()`, `  c = Client.builder().token("#").build()`},
		{`  c = Client.builder().clientSecret('Xq7vLm2pR9tzK3wA').build()`, `  c = Client.builder().clientSecret('#').build()`},
		{`  client.withCredentials("admin", "Xq7vLm2pR9tz").connect()`, `  client.withCredentials("admin", "#").connect()`},
	} {
		if got := mask18(c.in); got != c.want {
			t.Errorf("%q masked %q, want %q", c.in, got, c.want)
		}
		m, ok := Find(c.in, 0)
		if !ok || !m.Kind.Credential() {
			t.Errorf("Find(%q): %v %v, want a credential", c.in, m.Kind, ok)
		}
		if !MayHoldCredentialText(c.in) {
			t.Errorf("MayHoldCredentialText(%q) = false: the pre-check turns away a text Find masks", c.in)
		}
	}
	for _, k := range []string{"contraseña", "DB_ПАРОЛЬ", "Hasło", `contrase\u00f1a`} {
		if c := ClassifyKey(k); c != KeyCredential {
			t.Errorf("ClassifyKey(%q) = %v, want credential", k, c)
		}
	}
}

// TestSecrets18Plain: near-misses, and the over-masks h-secrets18 fixed
// (a placeholder, Terraform's "(sensitive value)", a hash method), stay
// as they are.
func TestSecrets18Plain(t *testing.T) {
	for _, s := range []string{
		"паролька: Xq7vLm2pR9tz", "испароль: Xq7vLm2pR9tz", "contraseñas: Xq7vLm2pR9tz", "impasse : Xq7vLm2pR9tz",
		"de passe : Xq7vLm2pR9tz", "contraseña: <tu contraseña>", "Mot de passe : ********", "Nueva contraseña: ",
		"password=${DB_PASSWORD}", "password: ${DB_PASSWORD} more", `"password": "${DB_PASSWORD}"`,
		"      - POSTGRES_PASSWORD=${POSTGRES_PASSWORD}", "пароль: ${DB_PASS}",
		"db_password = (sensitive value)", "  + password = (sensitive)", "  ~ api_token = (known after apply)",
		"pwd=sha-512", "password_scheme: bcrypt",
		"define('NONCE_KEY',        'put your unique phrase here');", "define('WP_DEBUG', 'x<b>c d9e`f g!h?JkL;2mn,op');",
		`  o = Opts.builder().withSecret("db-secret-2").build()`, `  x = withCredentials(user, password)`,
	} {
		if got := mask18(s); got != s {
			t.Errorf("%q masked %q, want it plain", s, got)
		}
	}
	if c := ClassifyKey("contraseñas"); c == KeyCredential {
		t.Errorf("ClassifyKey(contraseñas) = credential, want plain")
	}
}

// TestSecrets18Encoded: a label beyond ASCII URL-encoded (a form's
// field, the record log's encoded place) is read as in UTF-8.
func TestSecrets18Encoded(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"q=Contrase%C3%B1a%3A+Xq7vLm2pR9tz", "q=Contrase%C3%B1a%3A+#"},
		{"q=%0A%D0%BF%D0%B0%D1%80%D0%BE%D0%BB%D1%8C%3A+Xq7vLm2pR9tz", "q=%0A%D0%BF%D0%B0%D1%80%D0%BE%D0%BB%D1%8C%3A+#"},
		{"q=Mot+de+passe+%3A+Xq7vLm2pR9tz", "q=Mot+de+passe+%3A+#"},
		{"q=%22contrase%5Cu00f1a%22%3A+%22Xq7vLm2pR9tz%22", "q=%22contrase%5Cu00f1a%22%3A+%22#%22"},
		{"q=%22%5Cu043f%5Cu0430%5Cu0440%5Cu043e%5Cu043b%5Cu044c%3A+Xq7vLm2pR9tz", "q=%22%5Cu043f%5Cu0430%5Cu0440%5Cu043e%5Cu043b%5Cu044c%3A+#"},
	} {
		if got := mask18(c.in); got != c.want {
			t.Errorf("%q masked %q, want %q", c.in, got, c.want)
		}
		if !MayHoldCredentialText(c.in) {
			t.Errorf("MayHoldCredentialText(%q) = false", c.in)
		}
	}
}

// TestSecrets18PrecheckMemo: the pre-check remembers plain keys; a key
// run that ends a foreign label ("passe", "senord", "FRE") seen alone
// first must not hide the label seen after.
func TestSecrets18PrecheckMemo(t *testing.T) {
	for _, c := range [][2]string{
		{"de passe : Xq7vLm2pR9tz", "mot de passe : Xq7vLm2pR9tz"},
		{"senord: Xq7vLm2pR9tz", "lösenord: Xq7vLm2pR9tz"},
		{"FRE: Xq7vLm2pR9tz", "ŞİFRE: Xq7vLm2pR9tz"},
		{"ifre: Xq7vLm2pR9tz", "şifre: Xq7vLm2pR9tz"},
	} {
		MayHoldCredentialText(c[0])
		if !MayHoldCredentialText(c[1]) {
			t.Errorf("MayHoldCredentialText(%q) = false after %q", c[1], c[0])
		}
	}
}

// TestSecrets18LoneBackslash: a tail that ends in a lone backslash after
// a word ("\\n" of JSON text cut in two, a Windows path) may start no
// escaped CJK label, and the live view masked the delta's last word for
// it; after a quote, white space or another escape one may start.
func TestSecrets18LoneBackslash(t *testing.T) {
	for _, s := range []string{`{"log": "build finished\`, `copied to \\server\share\`, `line one\`} {
		if MayStartCredential(s) {
			t.Errorf("MayStartCredential(%q) = true, want false", s)
		}
	}
	for _, s := range []string{`{"data": {"\`, `{"note": "\u6570\u636e\u5e93\`, `line one\n\`, `{"a": 1, "b": \`,
		`{"note": "API Key\`, `{"note": "api_key\`, `{"note": "the password\`} {
		if !MayStartCredential(s) {
			t.Errorf("MayStartCredential(%q) = false, want true: an escaped label may follow", s)
		}
	}
}

// TestSecrets18ShadowWhole: a word of an /etc/shadow hash that reads as
// random was masked alone, the rest of the hash printed around the mask;
// the whole hash field is masked (no finding: a hash is no credential).
func TestSecrets18ShadowWhole(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"root:$6$Kq7v.Lm2$Xq7vLm2pR9tz.Kq7vLm2/pR9tz0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789ab:19000:0:99999:7:::", "root:#:19000:0:99999:7:::"},
		{"bob:$y$j9T$F5Jx5fEx.1$X3DX6M94c7o.9agCG9G3/17fhZg9SqC5i5rdRhAtQ7x8Kd2PqLmN4vB:19000:0:99999:7:::", "bob:#:19000:0:99999:7:::"},
	} {
		if got := mask18(c.in); got != c.want {
			t.Errorf("%q masked %q, want %q", c.in, got, c.want)
		}
	}
	// A random word after a path's '/' is masked alone, as before.
	if got := mask18("see /srv/cache/pR9tz0123456789abcdefABCDEF0123456789ab for it"); got != "see /srv/cache/# for it" {
		t.Errorf("masked %q", got)
	}
}

// TestSecrets18MarkdownSplit: "**Password**: <pw>" cut before its colon
// or inside its marks ("**Password" | "**: <pw>"): the tail is kept
// (MayStartCredential) and Straddle finds the value in the head, as the
// record log and the split check (validate) read two deltas.
func TestSecrets18MarkdownSplit(t *testing.T) {
	const text = "Your login:\n- **Username**: admin\n- **Password**: Xq7vLm2pR9tz\n"
	v := strings.Index(text, "Xq7v")
	for _, cut := range []string{"**Password**", "**Password*", "**Password", "**Password**:"} {
		k := strings.Index(text, cut) + len(cut)
		tail, head := text[:k], text[k:]
		if !MayStartCredential(tail) {
			t.Errorf("MayStartCredential(…%q) = false", cut)
		}
		_, m, ok := Straddle(nil, []byte(tail), []byte(head))
		if !ok || m.Start != v || m.End != v+len("Xq7vLm2pR9tz") || !m.Kind.Credential() {
			t.Errorf("Straddle(…%q | %q) = %v %v, want the password", cut, head, m, ok)
		}
	}
}

// TestSecrets18Prose: a password in prose after "password for <who>:"
// and after "changed/set/reset/updated to", and the password after
// "Credentials: <user> / " (the user was masked, the password printed),
// masked as credentials; twice masked as once.
func TestSecrets18Prose(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"password for admin: Xq7vLm2pR9tz", "password for admin: #"},
		{"The password for the admin user: Xq7vLm2pR9tz", "The password for the admin user: #"},
		{"Password changed to Xq7vLm2pR9tz", "Password changed to #"},
		{"Your password has been changed to Xq7vLm2pR9tz", "Your password has been changed to #"},
		{"Password successfully reset to Xq7vLm2pR9tz", "Password successfully reset to #"},
		{"root password updated to Xq7vLm2pR9tz", "root password updated to #"},
		{"Credentials: admin / Xq7vLm2pR9tz", "Credentials: admin / #"},
		{"credentials: admin / P@ss!w0rd#2024.", "credentials: admin / #."},
		// in JSON text held in a string, and URL-encoded
		{`ok\nPassword changed to Xq7vLm2pR9tz\nDone.`, `ok\nPassword changed to #\nDone.`},
		{`ok\nCredentials: admin \/ Xq7vLm2pR9tz\n`, `ok\nCredentials: admin \/ #\n`},
		{"q=Credentials%3A+admin+%2F+Xq7vLm2pR9tz%0Abye", "q=Credentials%3A+admin+%2F+#%0Abye"},
	} {
		if got := mask18(c.in); got != c.want {
			t.Errorf("%q masked %q, want %q", c.in, got, c.want)
		}
		m, ok := Find(c.in, 0)
		if !ok || !m.Kind.Credential() {
			t.Errorf("Find(%q): %v %v, want a credential", c.in, m.Kind, ok)
		}
		if !MayHoldCredentialText(c.in) {
			t.Errorf("MayHoldCredentialText(%q) = false", c.in)
		}
		once := MaskText(c.in)
		if twice := MaskText(once); twice != once {
			t.Errorf("%q: masked twice %q, once %q", c.in, twice, once)
		}
	}
	for _, s := range []string{"password for admin: see below 2", "Password changed to 12 characters", "password length set to 16",
		"the password was changed to meet the policy 3", "timeout set to 30s", "ratio for admin: 12345678"} {
		if got := mask18(s); got != s {
			t.Errorf("%q masked %q, want it plain", s, got)
		}
	}
}

// TestSecrets18Audit: from h-secrets18's audit. An Amazon Resource Name
// of Secrets Manager ("arn:aws:secretsmanager:…:secret:<name>") was
// masked, and an e2a.secret finding, from "secretsmanager:" read as a
// credential's key: a resource's name is none (a key after it in the
// same word as "arn:aws" is none either). A JWT under an unknown tool's
// key (SUPABASE_SERVICE_ROLE_KEY=eyJ…) was masked as high entropy, no
// credential: it keeps the JWT's kind.
func TestSecrets18Audit(t *testing.T) {
	for _, s := range []string{
		"arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf",
		`"ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:app-2Xk9"`,
		"arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:ci-token-Zx81",
	} {
		if got := mask18(s); got != s {
			t.Errorf("%q masked %q, want it plain", s, got)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"secretsmanager: Xq7vLm2pR9tzKq7v", "secretsmanager: #"},
		{"arn=arn:aws:iam::123456789012:user/ci password: Xq7vLm2pR9tz", "arn=arn:aws:iam::123456789012:user/ci password: #"},
	} {
		if got := mask18(c.in); got != c.want {
			t.Errorf("%q masked %q, want %q", c.in, got, c.want)
		}
	}
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"
	if m, ok := Find("SUPABASE_SERVICE_ROLE_KEY="+jwt, 0); !ok || m.Kind != KindJWT {
		t.Errorf("SUPABASE_SERVICE_ROLE_KEY=<jwt>: %v %v, want a JWT", m.Kind, ok)
	}
}
