package redact

import (
	"strings"
	"testing"
)

// s17Case is a text and what Find does with it: the secret it masks (""
// for a near-miss, which stays as it is) and whether it is a credential
// (a finding of rule e2a.secret) or only masked.
type s17Case struct {
	s, secret string
	cred      bool
}

// checkS17 holds each case to its promise: the secret masked (by
// Masker.Text, whose output a second pass leaves as it is), a credential
// where cred is set (and the pre-check passes the text), none otherwise;
// a near-miss unchanged.
func checkS17(t *testing.T, cases []s17Case) {
	t.Helper()
	m := New([]byte("s17-key"))
	for _, c := range cases {
		out := m.Text(c.s)
		if again := m.Text(out); again != out {
			t.Errorf("%q: not idempotent: %q -> %q", c.s, out, again)
		}
		_, cred := firstCredential([]byte(c.s))
		if c.secret == "" {
			if out != c.s || cred {
				t.Errorf("near-miss %q: masked %q (credential %v)", c.s, out, cred)
			}
			continue
		}
		if strings.Contains(out, c.secret) || !strings.Contains(out, "******") {
			t.Errorf("%q: secret left: %q", c.s, out)
		}
		if cred != c.cred {
			t.Errorf("%q: credential %v, want %v", c.s, cred, c.cred)
		}
		if cred && (!MayHoldCredentialText(c.s) || !MayHoldCredential(c.s)) {
			t.Errorf("%q: a credential the pre-check turns away", c.s)
		}
	}
}

// TestProsePwd: "pwd", a password's short name, in prose as "password"
// is: a value with a digit masked (a credential where it reads as a
// generated one), a word of 8 letters or more ending the sentence
// masked, no finding; after a CJK copula too. A path after "pwd" is the
// working directory (the shell's pwd prints it): not masked.
func TestProsePwd(t *testing.T) {
	checkS17(t, []s17Case{
		{"my pwd is hunter2", "hunter2", false},
		{"my pwd is Xk9fL2mQpZ", "Xk9fL2mQpZ", true},
		{"The PWD was s3cr3t-Pass!", "s3cr3t-Pass", true},
		{"my pwd is correcthorse.", "correcthorse", false},
		{"ok, the pwd is 'tr0ub4dor&3'", "tr0ub4dor&3", true},
		{"the+pwd+is+hunter22&x=1", "hunter22", false},
		{"我的pwd是Xk9fL2mQpZ", "Xk9fL2mQpZ", true},
		{"pwd为hunter22", "hunter22", false},
		{"password是hunter22。", "hunter22", false},
		{"passphrase为correcthorse", "correcthorse", false},
		{"我的password是Xk9fL2mQpZ", "Xk9fL2mQpZ", true},
		// Near-misses: paths, the command, words.
		{"pwd is /home/agent2", "", false},
		{"the pwd is ~/src/app2", "", false},
		{"pwd is ./build2", "", false},
		{`pwd is C:\work2`, "", false},
		{"$ pwd\n/workspace/app2\n", "", false},
		{"pwd is $HOME/x2", "", false},
		{"pwd是/home/x2", "", false},
		{"the pwd is unknown.", "", false},
		{"pwd hunter2", "", false},
		{"cwd is /home/x2", "", false},
		{"password是什么", "", false},
		{"mypassword是hunter22", "", false},
	})
}

// TestCJKSeparatorSpacedKey: a label of two words whose last is "key"
// ("API Key", "Secret Key", spacedKey's) before a full-width colon, a
// copula and a colon, as before an ASCII ':'. "Primary Key", "Public
// Key", "Sort Key" name no secret.
func TestCJKSeparatorSpacedKey(t *testing.T) {
	checkS17(t, []s17Case{
		{"API Key为：sk9fL2mQpZaB1c", "sk9fL2mQpZaB1c", true},
		{"API Key：hunter22", "hunter22", true},
		{"Secret Key：hunter22", "hunter22", true},
		{"SECRET KEY： hunter22", "hunter22", true},
		{"Private Key是：hunter22", "hunter22", true},
		{"Access Key＝hunter22", "hunter22", true},
		{"配置 API Key为：“Xk9fL2mQpZaB1c”", "Xk9fL2mQpZaB1c", true},
		{"Primary Key：id12345", "", false},
		{"Public Key：ssh-ed25519", "", false},
		{"Sort Key为：ts12345", "", false},
		{"monkey：hunter22", "", false},
		{"API Key是hunter22", "", false},
	})
}

// TestOracleUserOfCurlFlag: an Oracle connect string given under "-u"
// ("sqlplus -u user/<pw>@db:…") was read as curl's -u user:password
// first (its "password" the bytes after the ':'), and the connect
// string's password only by a second pass, which finds no pair past the
// mask: Find(Find(x)) != Find(x). Both passes read the connect string.
func TestOracleUserOfCurlFlag(t *testing.T) {
	checkS17(t, []s17Case{
		{"sqlplus -u 0/0@0\xc3\x15:\xeb", "0/0@", true},
		{"sqlplus -u scott/tiger9@db:1521", "tiger9", true},
		{"curl -u admin:hunter22 https://x", "hunter22", true},
		{"curl -u ops/eu@corp:hunter22 https://x", "hunter22", true},
	})
}

// TestSourceLocationNoPair: a source file's name and line ("passwd.go:123",
// a stack trace's) is no key:value pair, though the name holds a
// credential word; the pair with a value that is no line number stays.
func TestSourceLocationNoPair(t *testing.T) {
	checkS17(t, []s17Case{
		{"passwd:hunter2", "hunter2", true},
		{"passwd.go:hunter22", "hunter22", true},
		{"passwd.txt:12345678", "12345678", true},
		{"db.password:12345678", "12345678", true},
		{"password.go:1234x5678", "1234x5678", true},
		{"goroutine 7 [running]:\n\t/src/redact/passwd.go:123 +0x1c", "", false},
		{"redact/passwd.go:123", "", false},
		{"at Object.<anonymous> (/app/passwd.js:88:12)", "", false},
		{"/app/secret_key.rs:12:5: error[E0308]", "", false},
		{"api_key.py:42: in test_login", "", false},
		{"src/main/java/Password.java:57)", "", false},
		{"source: /var/log/agent/pwd.jsonl:1", "", false},
		{`"source":"passwords.log:4211"`, "", false},
	})
}

// TestVendorGluedKey: a known vendor glued to "key" (no separator, no
// case change: "stripekey", "OPENAIKEY") is that vendor's key, as
// STRIPE_KEY is; words that end in "key" are not ("monkey", "turnkey",
// "hotkey", "whiskey", "passkey": a WebAuthn passkey's id is public).
func TestVendorGluedKey(t *testing.T) {
	const h40 = "5f1d3c9a7e2b4f6a8c0d1e3f5a7b9c2d4e6f8a0b"
	checkS17(t, []s17Case{
		{"stripekey=" + h40, h40, true},
		{"OPENAIKEY: " + h40, h40, true},
		{`{"serpapikey": "` + h40 + `"}`, h40, true},
		{"export DEEPGRAMKEY=" + h40, h40, true},
		{"apikey=" + h40, h40, true},
		{"monkey=" + h40, "", false},
		{"turnkey: " + h40, "", false},
		{`{"hotkey": "` + h40 + `"}`, "", false},
		{"whiskey=" + h40, "", false},
		{"passkey=" + h40, "", false},
		{"acmekey=" + h40, "", false},
	})
}

// TestProseWordTail: a tail that ends inside a word after "password is "
// or "pwd was " may start a credential (MayStartCredential): the live
// view (observe --records) keeps it and masks the next delta, whose rest
// of the word ("…the pwd is correc" | "thorsebattery.") it showed, as
// Straddle masks the joined value; also in quotes. A word after another
// copula or key, or after two quotes, is not kept.
func TestProseWordTail(t *testing.T) {
	const v = "ok, the %s is correcthorsebattery."
	for _, key := range []string{"pwd", "password", "passwd", "PWD", "Password", "pwd'"} {
		s := strings.Replace(v, "%s", key, 1)
		if key == "pwd'" {
			s = "ok, the pwd is 'correcthorsebattery'" // quoted
		}
		if key == "passwd" {
			s = strings.Replace(s, " is ", " was ", 1)
		}
		for c := strings.Index(s, "correct") + 1; c < len(s)-4; c++ {
			if !MayStartCredential(s[:c]) {
				t.Errorf("%q | %q: MayStartCredential false", s[:c], s[c:])
			}
			if _, m, ok := Straddle(nil, []byte(s[:c]), []byte(s[c:])); !ok || m.End <= c {
				t.Errorf("%q | %q: no straddle (%v)", s[:c], s[c:], m)
			}
		}
	}
	for _, tail := range []string{"ok, the answer is correc", "the pwdx is correc", "the passphrase is correc", "the password is \"\"correc"} {
		if MayStartCredential(tail) {
			t.Errorf("%q: MayStartCredential true", tail)
		}
	}
}

// TestEscapedCopulaAfterASCIIKey: JSON text held in a string, written by
// Python's json.dumps (ensure_ascii), spells "api_key为：<v>" as
// "api_key\u4e3a\uff1a<v>": an ASCII credential key before an escaped
// copula and colon, and an English password word before an escaped
// copula, are read as in UTF-8.
func TestEscapedCopulaAfterASCIIKey(t *testing.T) {
	checkS17(t, []s17Case{
		{`{"msg": "api_key\u4e3a\uff1aXk9fL2mQpZaB1cW5"}`, "Xk9fL2mQpZaB1cW5", true},
		{`{"msg": "API Key\u4e3a\uff1a Xk9fL2mQpZaB1cW4"}`, "Xk9fL2mQpZaB1cW4", true},
		{`{"msg": "Secret Key\u662f: hunter22"}`, "hunter22", true},
		{`{"msg": "password\u662fXk9fL2mQpZaB1cW6"}`, "Xk9fL2mQpZaB1cW6", true},
		{`{"msg": "\u6211\u7684pwd\u662fhunter22"}`, "hunter22", false},
		{`{"msg": "\\"api_key\\u4e3a\\uff1aXk9fL2mQpZaB1cW5\\""}`, "Xk9fL2mQpZaB1cW5", true},
		// Near-misses.
		{`{"msg": "version\u4e3a\uff1a2.3.1"}`, "", false},
		{`{"msg": "api_key\u662f\u4ec0\u4e48"}`, "", false},
		{`{"msg": "pwd\u662f/home/agent2"}`, "", false},
		{`{"msg": "Primary Key\u4e3a\uff1aid12345"}`, "", false},
	})
}

// TestEscapedFullWidthAfterASCIIKey: "API Key\uff1a<v>", "api_key\uff1d<v>"
// (ensure_ascii's "API Key：<v>"): a credential key before an escaped
// full-width separator, revealed at the '1' of its escape.
func TestEscapedFullWidthAfterASCIIKey(t *testing.T) {
	checkS17(t, []s17Case{
		{`{"msg": "API Key\uff1aXk9fL2mQpZaB1cW3"}`, "Xk9fL2mQpZaB1cW3", true},
		{`{"msg": "api_key\uFF1D hunter22"}`, "hunter22", true},
		{`{"msg": "Secret Key \uff1a\"hunter22\""}`, "hunter22", true},
		{`{"msg": "password\\uff1ahunter22"}`, "hunter22", true},
		{`{"msg": "version\uff1a2.3.1", "ts\uff1a": "2026\uff1a01"}`, "", false},
		{`{"msg": "Primary Key\uff1aid12345"}`, "", false},
		{`{"msg": "\uff1a12345678 \\uff1d"}`, "", false},
	})
}

// TestEscCJKTailStart: a delta that ends inside a CJK label or its
// separator spelled as escapes (ensure_ascii JSON text held in a string:
// "\u5bc6\u78" | "01\uff1a<pw>") may start a credential
// (MayStartCredential), so that the split secret is judged on the two
// deltas joined (validate's split finding; the live view masks both). A
// tail in other escaped text is not kept.
func TestEscCJKTailStart(t *testing.T) {
	for _, s := range []string{
		`{"m": "\u6570\u636e\u5e93\u5bc6\u7801\uff1aXk9fL2mQpZaB"}`,
		`{"m": "\u4ee4\u724c\u4e3a Xk9fL2mQpZaB"}`,
		`{"m": "\u30d1\u30b9\u30ef\u30fc\u30c9\u306fXk9fL2mQpZaB"}`,
		`{"m": "\u5BC6\u78BC\uFF1DXk9fL2mQpZaB"}`,
	} {
		v := strings.Index(s, "Xk9f")
		for c := strings.Index(s, `\u`) + 1; c < v; c++ {
			_, m, ok := Straddle(nil, []byte(s[:c]), []byte(s[c:]))
			if !ok || m.End <= c {
				continue // the label whole in the second part
			}
			if !MayStartCredential(s[:c]) {
				t.Errorf("%q | %q: MayStartCredential false", s[:c], s[c:])
			}
		}
	}
	for _, tail := range []string{`{"m": "\u4f60\u597d\u4e16\u754c `, `C:\\Users\\agent`, `{"m": "\u4e16\u75`} {
		if MayStartCredential(tail) {
			t.Errorf("%q: MayStartCredential true", tail)
		}
	}
}

// TestUsermodEncodedTail: usermod's "-p" URL-encoded with a value that
// holds escapes of its own ("%27VerN%25eRiCon%2FRiDow%27"), streamed in
// two deltas: a tail that ends after an escape in the value, inside an
// escape, before the quote's escape or after the command's name may
// start the credential (MayStartCredential keeps it; Straddle joins it).
// Other encoded text is not kept.
func TestUsermodEncodedTail(t *testing.T) {
	for _, s := range []string{
		"GET /api/exec?cmd=sudo+usermod+-p+%27VerN%25eRiCon%2FRiDow%27+deploy HTTP/1.1",
		"q=useradd+-m+-p+%22Ab%2Bcd%25ef%3Dgh%22+bob&x=1",
	} {
		// (A cut inside the command's name is not seen: tail.go.)
		for c := strings.Index(s, "user") + 7; c < len(s); c++ {
			_, m, ok := Straddle(nil, []byte(s[:c]), []byte(s[c:]))
			if !ok || m.End <= c {
				continue
			}
			if !MayStartCredential(s[:c]) {
				t.Errorf("%q | %q: MayStartCredential false", s[:c], s[c:])
			}
		}
	}
	for _, tail := range []string{"GET /x?q=usermods", "GET /x?q=50%25+off", "x=1%2"} {
		if MayStartCredential(tail) {
			t.Errorf("%q: MayStartCredential true", tail)
		}
	}
}

// TestPWDPathNoPair: the shell's PWD (every env dump: "PWD=/workspace/app",
// docker inspect's Env, "export PWD=…") names the working directory: a
// path after the key "PWD" is no credential. A value that is no path,
// and a path after another password key (DB_PWD), stay masked.
func TestPWDPathNoPair(t *testing.T) {
	checkS17(t, []s17Case{
		{"PWD=hunter22", "hunter22", true},
		{"pwd: Xk9fL2mQpZ", "Xk9fL2mQpZ", true},
		{"DB_PWD=/x/y2", "/x/y2", true},
		{`{"pwd": "hunter22"}`, "hunter22", true},
		{"$ env | sort\nHOME=/home/agent\nPWD=/workspace/app\nSHLVL=1", "", false},
		{"export PWD=/home/agent2", "", false},
		{`["PATH=/usr/bin","PWD=/srv/app","TERM=xterm"]`, "", false},
		{"pwd: ~/src", "", false},
		{`{\"PWD\": \"C:\\work\"}`, "", false},
		{"OLDPWD=/home/agent PWD=$HOME/app", "", false},
	})
}
