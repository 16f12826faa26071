package redact

import (
	"net/url"
	"strings"
	"testing"
)

// sweep7Form is a text that holds secret: found as a credential, passed
// by the pre-checks (the decoded text and the raw JSON), masked with no
// run of 10 bytes of its secret left; tail says that the text before the
// secret is kept as a stream's tail (MayStartCredential).
type sweep7Form struct {
	s, secret string
	tail      bool
}

// checkSweep7 holds each form to sweep7Form's promises, also URL-encoded
// (a form's value) when encoded is set, and each near-miss to no
// credential. Failures print the forms with their secret masked.
func checkSweep7(t *testing.T, forms []sweep7Form, encoded bool, nears []string) {
	t.Helper()
	for _, c := range forms {
		ss := []string{c.s}
		if encoded {
			ss = append(ss, "state="+url.QueryEscape(c.s)+"&x=1")
		}
		for _, s := range ss {
			secret := c.secret
			if !strings.Contains(s, secret) {
				secret = url.QueryEscape(c.secret)
			}
			if k, ok := credentialKind(s); !ok {
				t.Errorf("no credential (%v): %s", k, mask6(s, secret))
			}
			if !MayHoldCredentialText(s) || !MayHoldCredential(s) {
				t.Errorf("a pre-check passes over it: %s", mask6(s, secret))
			}
			out := MaskText(s)
			for k := 0; k+10 <= len(secret); k++ {
				if strings.Contains(out, secret[k:k+10]) {
					t.Errorf("masked, still shows a run of its secret: %s", mask6(out, secret))
					break
				}
			}
			if i := strings.Index(s, secret); c.tail && !MayStartCredential(s[:i]) {
				t.Errorf("the tail before its secret is not kept: %s", mask6(s[:i], secret))
			}
		}
	}
	for _, s := range nears {
		if k, ok := credentialKind(s); ok {
			t.Errorf("a credential (%v): %s", k, s)
		}
	}
}

// TestFindSQLPasswords: SQL's IDENTIFIED BY '…' (CREATE/ALTER USER,
// GRANT; Oracle's unquoted one; WITH <plugin> BY) and PASSWORD '…'
// (PostgreSQL's CREATE/ALTER ROLE), plain, in JSON text and URL-encoded.
func TestFindSQLPasswords(t *testing.T) {
	const pw = "Zq9xKp2!LmN4vB"
	checkSweep7(t, []sweep7Form{
		{"CREATE USER 'app'@'%' IDENTIFIED BY '" + pw + "';", pw, true},
		{`ALTER USER app IDENTIFIED BY "` + pw + `";`, pw, true},
		{"alter user scott identified by " + pw + ";", pw, true},
		{"CREATE USER 'app'@'localhost' IDENTIFIED WITH mysql_native_password BY '" + pw + "';", pw, true},
		{`{"sql":"ALTER USER app IDENTIFIED BY \"` + pw + `\";"}`, pw, true},
		{"CREATE ROLE app WITH LOGIN PASSWORD '" + pw + "';", pw, true},
		{"ALTER ROLE reporting PASSWORD '" + pw + "' VALID UNTIL 'infinity';", pw, true},
	}, true, []string{
		"CREATE USER ops IDENTIFIED EXTERNALLY;",
		"CREATE USER 'app'@'%' IDENTIFIED BY PASSWORD '*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9';",
		"ALTER USER app IDENTIFIED BY ?;",
		"CREATE USER app IDENTIFIED BY RANDOM PASSWORD;",
		"SELECT id FROM users WHERE password_hash = crypt($1, password_hash);",
		"ALTER TABLE users ADD COLUMN password VARCHAR(255) NOT NULL;",
		"the rows are ordered by created_at, grouped by user",
		"CREATE ROLE app WITH LOGIN PASSWORD NULL;",
	})
}

// TestFindRedisRabbitPasswords: Redis's AUTH [<user>] <pw>, requirepass
// <pw> (redis.conf, CONFIG SET) and rabbitmqctl add_user/change_password
// <user> <pw>, plain, in JSON text and URL-encoded; AUTH in prose or as a
// reply is none.
func TestFindRedisRabbitPasswords(t *testing.T) {
	const pw = "Zq9xKp2LmN4vBw7T"
	checkSweep7(t, []sweep7Form{
		{"AUTH default " + pw, pw, true},
		{"AUTH " + pw, pw, true},
		{"127.0.0.1:6379> AUTH app " + pw + "\nOK", pw, true},
		{`{"cmd":"AUTH default ` + pw + `"}`, pw, true},
		{"requirepass " + pw, pw, true},
		{"# redis.conf\nrequirepass " + pw + " \nmaxmemory 2gb", pw, true},
		{`CONFIG SET requirepass "` + pw + `"`, pw, true},
		{"rabbitmqctl add_user svc '" + pw + "'", pw, true},
		{"sudo rabbitmqctl change_password svc " + pw, pw, true},
		{`{"cmd":"rabbitmqctl add_user svc \"` + pw + `\""}`, pw, true},
	}, true, []string{
		"Use AUTH to authenticate to the server.",
		"AUTH failed: WRONGPASS invalid username-password pair",
		"AUTH <password>",
		"AUTH $REDIS_PASSWORD",
		"The AUTH command takes one or two arguments",
		"-ERR AUTH called without any password configured",
		"requirepass foobared",
		"rabbitmqctl add_user svc",
		"call AUTH first.",
		"Redis replies to AUTH with OK.",
		"rabbitmqctl list_users",
		"the add_user handler checks the password",
	})
}

// TestGoEmptyField: Go's %+v of a struct with an empty credential field
// ("Password: PasswordFile:/run/…") is no credential (the next field was
// taken as its value); a field with a value stays one.
func TestGoEmptyField(t *testing.T) {
	const pw = "hunter2XyZ9q"
	checkSweep7(t, []sweep7Form{
		{"config: {Host:db.internal User:app Password:" + pw + " PasswordFile:/run/secrets/db}", pw, false},
		{"{Password:" + pw + " PasswordFile:/run/secrets/db}", pw, false},
		{"Password: " + pw, pw, false},
	}, false, []string{
		"config: {Host:db.internal User:app Password: PasswordFile:/run/secrets/db}",
		"&{BaseURL:https://api.example.com APIToken: Timeout:30s}",
		"{Host:db User:app Password: Token: Port:5432}",
	})
}

// TestPHPVarDump: PHP's var_dump of an array entry under a credential
// name, its value on the next line ("[\"password\"]=>\n  string(14)
// \"…\""), also in JSON text; a non-secret entry is none.
func TestPHPVarDump(t *testing.T) {
	const pw = "Zq9xKp2!LmN4vB"
	checkSweep7(t, []sweep7Form{
		{"[\"password\"]=>\n  string(14) \"" + pw + "\"", pw, false},
		{"[\"password\"] =>\n  string(14) \"" + pw + "\"", pw, false},
		{"array(2) {\n  [\"user\"]=>\n  string(3) \"app\"\n  [\"password\"]=>\n  string(14) \"" + pw + "\"\n}", pw, false},
	}, true, nil)
	checkSweep7(t, []sweep7Form{
		{`{"out":"[\"api_key\"]=>\n  string(14) \"` + pw + `\"\n"}`, pw, false},
	}, false, []string{
		"[\"username\"]=>\n  string(5) \"alice\"",
		"[\"password_min_length\"]=>\n  int(12)",
		"[\"password\"]=>\n  NULL",
		"[\"password\"]=>\n  string(0) \"\"",
	})
}

// TestStmtTailKept: a stream's tail that ends in a password flag or
// keyword, or in the password's first characters after one, or in a
// keyword cut in two, is kept (MayStartCredential): the next delta alone
// shows the password with nothing to name it.
func TestStmtTailKept(t *testing.T) {
	for _, s := range []string{"sshpass -p '", "sshpass -p 'T6ja", "openssl rsa -in k.pem -passin pass:", "openssl rsa -in k.pem -passin ", "openssl rsa -passin pass:T6j",
		"mysql -h db -u root -p", "AUTH ", "AUTH default ", "AUTH default T6j", "rabbitmqctl add_user svc '", "rabbitmq",
		"[\"password\"]=>\n  strin", "[\"password\"]=>\n  string(14) ", "[\"password\"]=>\n", "ALTER USER app IDENTIFI", "ALTER USER app IDENTIFIED BY \"", "ALTER+ROLE+reporting+PASSWORD+%27", "requirepass ", "require"} {
		if !MayStartCredential(s) {
			t.Errorf("not kept: %q", s)
		}
	}
}

// TestXMLElementAttributes: an XML element of a credential name with a
// namespace prefix and attributes (SOAP WS-Security's <wsse:Password
// Type="…#PasswordText">), plain, in JSON text and URL-encoded; an element
// of another name with the same attributes, or an empty one, is none.
func TestXMLElementAttributes(t *testing.T) {
	const pw = "Zq9xKp2!LmN4vB"
	const typ = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText"
	checkSweep7(t, []sweep7Form{
		{`<wsse:UsernameToken><wsse:Username>svc</wsse:Username><wsse:Password Type="PasswordText">` + pw + `</wsse:Password></wsse:UsernameToken>`, pw, false},
		{`<wsse:Password Type="` + typ + `">` + pw + `</wsse:Password>`, pw, false},
		{`<ns2:password encrypted="false">` + pw + `</ns2:password>`, pw, false},
		{`{"body":"<wsse:Password Type=\"PasswordText\">` + pw + `</wsse:Password>"}`, pw, false},
	}, true, []string{
		`<wsse:Username Type="PasswordText">svc01</wsse:Username>`,
		`<wsse:Nonce EncodingType="` + typ + `">1234567890</wsse:Nonce>`,
		`<wsse:Password Type="PasswordText"/>1234567 items`,
		`<a href="https://example.com/login">2 password resets</a>`,
	})
}
