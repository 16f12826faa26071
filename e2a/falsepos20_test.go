package e2a

import (
	"strings"
	"testing"
	"time"
)

// TestSecretRealTextNoFalseFinding holds forms of real text an agent
// relays (files read from Go modules, Node's and Debian's docs, man
// pages, ChangeLogs, Kubernetes's OpenAPI examples) that Find masks as a
// credential's but that hold none: none is an e2a.secret finding. Each
// is a real line's shape, and each came first among the false findings
// of its kind on a corpus of 100 MB of such text.
func TestSecretRealTextNoFalseFinding(t *testing.T) {
	for _, s := range []string{
		// A reference: JSON Schema's and OpenAPI's $ref, XML's ref=, Go's Ref field.
		`"schema": {"$ref": "#/components/schemas/Error"}`,
		`{\"allOf\":[{\"$ref\":\"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time\"}]}`,
		"schema:\n  $ref: '#/definitions/rpcStatus'\n",
		`<sumof ref="mylist1"><field/></sumof>`,
		"tombstones.Stone{Ref: ref, Intervals: iv}",
		`"image": {"imageRef": "imageRefValue"}`,
		"agent_ref=coder-7",
		// A ChangeLog's file names.
		"\t* src/passwd.c: Likewise when new password is encrypted.\n",
		"\t* man/chgpasswd.8.xml: Likewise.\n",
		"\t* man/hu/passwd.5: Fix formatting typo.\n",
		// "basic" before a word in prose.
		"  2. Basic Permissions.\n\n  All rights granted",
		"you should have at least a basic smoke-test command",
		"Fixed a basic readability/style error in the code",
		"a pretty basic package.json file.",
		// A URL's placeholder user:password, a redactor's mark.
		`\fIhttp://user:pass@server:port/\fR`,
		"git clone https://username:password@host/repo.git",
		"nats://REDACTED:REDACTED@nats:4222",
		// HTML's accesskey attribute, a keyboard shortcut.
		`<a accesskey="p" href="QuickStart.html">Prev</a>`,
		// Kubernetes's OpenAPI examples: a field's name and "Value".
		`"gmsaCredentialSpec": "gmsaCredentialSpecValue",`,
		// A union type in Node's API docs.
		"* `passphrase`: {string | Buffer} The passphrase to use",
		"  * `privateKey`: {string | Buffer | KeyObject}\n",
		"* `options`: {Object}\n  * `privateKey`: {KeyObject}\n",
		// A key after a JSON escape's letter ("\tref:" in JSON text).
		`{"result": "&memSeries{\n\t\tlset:      lset,\n\t\tref:       id,\n"}`,
		// "identified by" a name in backticks, in prose.
		"Removes the directory identified by `path`.",
		// Code that reads a header or a cookie.
		"\tauthorization := r.Header.Get(\"Authorization\")",
		"\t\tAuthorization:     in.Authorization,\n",
		"xcb_get_input_focus_cookie_t cookie = xcb_get_input_focus_unchecked(c);",
		"  const cookies = headers.getSetCookie()\n",
		"    cookie.secure = true\n",
		"            bad_cookie = False\n",
		// Go's composite literals and ":=", a template literal in JavaScript.
		"\t\tAuthorization: &Authorization{\n\t\t\tType: \"Bearer\",\n",
		"\t\tAuthorization: &Authorization{Credentials: c.BearerToken},\n",
		"\t\tAuthorization: TPM2BData{\n\t\t\tBuffer: hmac,\n",
		"\tfor _, ref := range refs {\n",
		"    headers.authorization = `Bearer ${auth.token}`\n",
	} {
		if st, end, kind, ok := FindCredential([]byte(s)); ok {
			t.Errorf("%q: finding %s %q, want none", s, kind, s[st:end])
		}
	}
}

// TestSecretRealTextTrueFormsFound: the same shapes with a credential in
// them are still findings.
func TestSecretRealTextTrueFormsFound(t *testing.T) {
	const ghp = "ghp_CRPSabcdefghijklmnopqrstuvwxyz0123456789"
	for _, c := range []struct{ s, kind, value string }{
		{"secret_ref: " + ghp, "", ""}, // a token is found whatever its key
		{`{"$ref": "` + ghp + `"}`, "", ""},
		{"db.password: Kq9zPm2xLw", "key_value", "Kq9zPm2xLw"},
		{"password=hunter2", "key_value", "hunter2"},
		{"Authorization: Basic dXNlcjpwYXNzd29yZA==", "", ""},
		{"curl -H 'Basic MToxMjM0NTY3'", "basic", "MToxMjM0NTY3"},
		{"send Basic dXNlcjpwYXNzd29yZA.", "basic", "dXNlcjpwYXNzd29yZA."},
		{"Basic dXNlcjpwYXNzd29yZA", "basic", "dXNlcjpwYXNzd29yZA"},
		{"Basic Kq9zPm2xLw7vQe4RtY8uIo", "basic", "Kq9zPm2xLw7vQe4RtY8uIo"}, // a raw key: reads as one
		{"https://user:Kq9zPm2xLw@host/x", "url_userinfo", "user:Kq9zPm2xLw"},
		{"https://admin:pass@host/x", "url_userinfo", "admin:pass"},
		{"https://user:s3cr3t!@host/x", "url_userinfo", "user:s3cr3t!"},
		{`<a accesskey="Kq9zPm2xLw">`, "key_value", "Kq9zPm2xLw"},
		{`"password": "gmsaValue"`, "key_value", "gmsaValue"},
		{"passphrase: correct | horse", "key_value", ""},
		{"* src/passwd.c: password=hunter2", "key_value", ""},
		{`{"result": "x\n\tpassword: Kq9zPm2xLw\n"}`, "key_value", "Kq9zPm2xLw"},
		{"CREATE USER bob IDENTIFIED BY 'Kq9zPm2xLw';", "key_value", "Kq9zPm2xLw"},
		{"create user scott identified by tiger;", "key_value", "tiger"},
		{"privateKey: {Kq9z+Pm2xLw/7vQe4RtY8uIo}", "", ""},
		{"Authorization: Bearer Kq9zPm2xLw7vQe4RtY8uIo", "", ""},
		{"Authorization: token Kq9zPm2xLw7vQe4RtY8uIo", "", ""},
		{"Cookie: sid=31d4d96e407aad42; lang=en", "cookie", ""},
		{"Cookie: Kq9zPm2xLw7vQe4RtY8uIo", "cookie", ""},
		{"Authorization: `Bearer Kq9zPm2xLw7vQe4RtY8uIo`", "", ""},
		{"Authorization: Kq9zPm2x{Lw7vQe4RtY8uIo", "", ""},
		{"\ttoken := \"" + ghp + "\"\n", "", ""},
		{"\tpassword := \"Kq9zPm2xLw\"\n", "", ""},
	} {
		st, end, kind, ok := FindCredential([]byte(c.s))
		if !ok {
			t.Errorf("%q: no finding, want one", c.s)
			continue
		}
		if c.kind != "" && (kind != c.kind || c.value != "" && c.s[st:end] != c.value) {
			t.Errorf("%q: finding %s %q, want %s %q", c.s, kind, c.s[st:end], c.kind, c.value)
		}
	}
}

// TestSecretNestedRefPairsLinear: a value whose key names no credential
// is searched for a token once, not once per key inside it. "x_ref="
// repeated is one pair holding the next: judged again at each level, 96
// KB took about 9 s; scanned once, a few milliseconds. The bound is far
// from both.
func TestSecretNestedRefPairsLinear(t *testing.T) {
	s := []byte(strings.Repeat("x_ref=", 16000))
	start := time.Now()
	FindCredential(s)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("FindCredential of %d bytes of nested ref pairs took %v", len(s), d)
	}
}
