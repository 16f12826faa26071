package redact

import (
	"strings"
	"testing"
)

// TestOktaInBase64: a run of an Okta token's shape ("00" and 40) inside a
// base64 image is no vendor token, whole or split across two chunks (a
// chunk's run ended by the next chunk's "data:image/…"); a true token
// stays one, whole, URL-encoded and split.
func TestOktaInBase64(t *testing.T) {
	const tok = "00nRpq01VOL7XNjs2ofW6HhoV5uLihRWo3L5SlkQ7d" // 42
	const img = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
	for _, s := range []string{
		"data:image/png;base64," + img + "/" + tok + "+Zq9",
		"data:image/png;base64," + img + "+" + tok + "+Zq9",
		"data:image/png;base64," + img + "+" + tok + "/Zq9",
		"data:image/png;base64," + img + tok + "==",
	} {
		if k, ok := credentialKind(s); ok {
			t.Errorf("an Okta-shaped run in a base64 image is a credential (%v): %s", k, mask6(s, tok))
		}
	}
	for _, s := range []string{"Authorization: SSWS " + tok, "Authorization%3A+SSWS+" + tok + "+and", "okta " + tok, "okta=" + tok + "+and"} {
		if k, ok := credentialKind(s); !ok {
			t.Errorf("an Okta token is not a vendor token (%v %v): %s", k, ok, mask6(s, tok))
		}
	}
	tail := "data:image/png;base64," + img + "/" + tok[:38]
	head := "data:image/png;base64," + img
	if _, m, ok := Straddle(nil, []byte(tail), []byte(head)); ok && m.Kind.Credential() {
		t.Errorf("a base64 run cut at a chunk's end and the next chunk's data URI are a split %v", m.Kind)
	}
	if _, m, ok := Straddle(nil, []byte("Authorization: SSWS "+tok[:20]), []byte(tok[20:]+" ok")); !ok || !m.Kind.Credential() {
		t.Errorf("an Okta token split across two chunks is no split credential (%v %v)", m.Kind, ok)
	}
}

// mask6 prints s with v's characters masked (a test failure names no
// real-looking secret).
func mask6(s, v string) string {
	return strings.ReplaceAll(s, v, v[:2]+"…")
}

// TestFindPositionalForms: a Twitch chat token after "oauth:" and the
// password of Windows' "net use" (before or after "/user:"), plain, in
// JSON text and (Twitch) URL-encoded, are credentials the pre-checks pass
// (the text, the raw JSON, and a stream's tail cut before the secret),
// masked with no run of their secret left; their near-misses are none.
func TestFindPositionalForms(t *testing.T) {
	const tw = "k3x9q0vz7m2p5r8t1w4y6b0n3c5d7f" // 30
	const pw = "Zq9xKp2LmN4vBw"                 // a password
	for _, c := range []struct{ s, secret string }{
		{"PASS oauth:" + tw, tw},
		{"< PASS oauth:" + tw + "\r\nNICK bot", tw},
		{"TWITCH_TOKEN=oauth:" + tw, tw},
		{"state=PASS+oauth%3A" + tw + "%0D%0ANICK", tw},
		{`net use \\fs01\share ` + pw + ` /user:CORP\svc_backup`, pw},
		{`net use Z: \\fs01\data /user:svc ` + pw + ` /persistent:no`, pw},
		{`C:\> net use \\fs01\share "` + pw + `" /user:svc`, pw},
		{`{"cmd":"net use Z: \\\\fs01\\data \/user:svc ` + pw + ` \/persistent:no"}`, pw},
		{`run: net use \\\\fs01\\share ` + pw + ` \/user:CORP\\svc`, pw},
	} {
		if k, ok := credentialKind(c.s); !ok {
			t.Errorf("no credential (%v): %s", k, mask6(c.s, c.secret))
		}
		if !MayHoldCredentialText(c.s) || !MayHoldCredential(c.s) {
			t.Errorf("a pre-check passes over it: %s", mask6(c.s, c.secret))
		}
		if out := MaskText(c.s); strings.Contains(out, c.secret[:10]) || strings.Contains(out, c.secret[len(c.secret)-10:]) {
			t.Errorf("masked, still shows a run of its secret: %s", mask6(out, c.secret))
		}
		if i := strings.Index(c.s, c.secret); !MayStartCredential(c.s[:i]) {
			t.Errorf("the tail before its secret is not kept: %s", mask6(c.s[:i], c.secret))
		}
	}
	for _, s := range []string{
		"NICK justinfan12345\r\nJOIN #channel", "oauth:abcdefghijklmnopqrstuvwxyzabcd", "oauth:" + tw + "1", "myoauth:" + tw,
		`net use Z: \\fs01\data /user:svc /persistent:no`, `net use \\fs01\share /delete`, `net use Z: \\fs01\data * /user:svc`,
		`net use \\fs01\share /user:CORP\svc_backup`, `runas /user:admin cmd.exe`, `net use Z: \\fs01\data /user:svc *`,
	} {
		if k, ok := credentialKind(s); ok {
			t.Errorf("a credential (%v): %s", k, s)
		}
	}
}

// TestToolFlagAfterQuotedArg: a tool's password flag after a quoted
// argument ("ldapsearch -D 'cn=admin,dc=example,dc=com' -w '…'") is read
// as the tool's: the search for the tool's name on the line stopped at the
// quote. A quote that opens no argument still ends the line's start.
func TestToolFlagAfterQuotedArg(t *testing.T) {
	const pw = "Zq9xKp2!LmN4vB"
	for _, s := range []string{
		"ldapsearch -x -H ldap://ldap -D 'cn=admin,dc=example,dc=com' -w '" + pw + "' -b dc=example,dc=com",
		`ldapmodify -D "cn=admin,dc=example,dc=com" -w ` + pw + ` -f x.ldif`,
		`{"cmd":"ldapsearch -D 'cn=a b' -w ` + pw + `"}`,
		"sqlcmd -S db -U sa -Q 'SELECT 1' -P " + pw,
	} {
		if _, ok := credentialKind(s); !ok || !MayHoldCredentialText(s) {
			t.Errorf("no credential: %s", mask6(s, pw))
		}
		if strings.Contains(MaskText(s), pw[:10]) {
			t.Errorf("masked, still shows its password: %s", mask6(MaskText(s), pw))
		}
	}
	for _, s := range []string{"grep -w 'Zq9xKp2LmN4vB' f", `echo "x" | grep -w Zq9xKp2LmN4vB`, "zip -r 'a b.zip' dir -P"} {
		if k, ok := credentialKind(s); ok {
			t.Errorf("a credential (%v): %s", k, s)
		}
	}
}

// TestPgpassFieldMatch: a .pgpass line whose port, database or user field
// holds a match of its own (an e-mail user, as Azure's are written) is
// masked from that match through the password: masking twice changes
// nothing (the password masked alone made the next pass mask the e-mail;
// FuzzFind's seed 708a02c8aecb992d) and the e-mail is not printed.
func TestPgpassFieldMatch(t *testing.T) {
	for _, c := range []struct{ s, hidden string }{
		{"db.example.com:5432:*:app@corp.com:Zq9pwXk2", "app@corp.com"},
		{"orders-db.postgres.database.azure.com:5432:orders:reporting@orders-db:Zq9pwXk2\n", "Zq9pwXk2"},
		{".00000000:*:*+00000000:0:0", "+00000000"},
	} {
		once := MaskText(c.s)
		if twice := MaskText(once); twice != once {
			t.Errorf("not idempotent: %q -> %q -> %q", c.s, once, twice)
		}
		if strings.Contains(once, c.hidden) || strings.Contains(once, "Zq9pwXk2") {
			t.Errorf("masked, still shows %q: %q", c.hidden, once)
		}
	}
}
