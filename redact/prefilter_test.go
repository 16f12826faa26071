package redact

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

// credentialExamples holds, for every Kind, texts whose first credential
// (as FindCredential in package e2a takes it: the first match of Find
// that is a credential) is of that kind, in the shapes records carry them:
// alone, in prose, after a key, after personal data, JSON-escaped.
var credentialExamples = map[Kind][]string{
	KindBearer:        {"Bearer abc123def456", "use bearer " + jwtTok, "Bearer: x", "x@example.com Bearer abc123def456"},
	KindBasic:         {"use Basic " + basicCred, "(BASIC " + basicCred + ")"},
	KindAuthorization: {"Authorization: Basic " + basicCred, `"Authorization": "Token abcdef"`, `{\"authorization\":\"x y\"}`},
	KindJWT:           {jwtTok, "jwt:" + jwtTok, "eyJa.b.c"},
	KindSK: {openai, "a1-" + openai, "key_" + anthropic, "idsk-" + openai, "(sk-12345678)",
		// base64 of "sk-proj-CRPSb64inner0123456789", alone and in prose,
		// standard and URL-safe, and a run too long to be decoded whole.
		"c2stcHJvai1DUlBTYjY0aW5uZXIwMTIzNDU2Nzg5", "header: c2stcHJvai1DUlBTYjY0aW5uZXIwMTIzNDU2Nzg5 sent",
		"c2stcHJvai1DUlBTYjY0aW5uZXIwMTIzNDU2Nzg5-_"},
	KindGitHub:     {ghp, "run1_" + ghp, gho, ghs, ghu, ghr, "pat:" + ghPAT},
	KindGitLab:     {glpat, "build7-" + glpat, "x" + glpat},
	KindAWS:        {awsID, "x1" + awsID, "id" + awsSTS, "ABIAIOSFODNN7EXAMPLE", "ACCAIOSFODNN7EXAMPLE", "0ABIA0000000000000000", "7" + awsID, awsID + "1", "x1" + awsID + "Z9"},
	KindSlack:      {slackBot, "t=" + slackUser, "app " + slackApp, "xoxa-1234567890", "xoxr-1234567890", "xoxs-1234567890", "xoxo-1234567890"},
	KindStripe:     {stripeSK, stripeTK, stripeRK, "rk_test_4eC39HqLyjWDarjtT1zdp7dc"},
	KindGoogle:     {googleKey, "maps?key=" + googleKey},
	KindPrivateKey: {"Private-Lines: 1\nAAAAB3NzaC1yc2EAAAADAQABAAAB", pemKey, "here " + pemKey + " there", strings.ReplaceAll(pemKey, "\n", `\n`)},
	KindCookie:     {"Cookie: sid=31d4d96e407aad42; lang=en", "Set-Cookie: id=a3fWa; Secure", "cookies=a"},
	KindKeyValue: {"6379> auth Kqz9pwmvt", "wandb login a1b2c3d4e5f6", "set -gx API_KEY Kqz9pwmvt", `server.login(u, "Kqz9pwmvt")`,
		"xfreerdp /p:Kqzpwmvt", "echo 'bob:Kqz9pwmvt' | chpasswd", "mongosh -p Kqz9pwmvt", "mongo -p A0", "q=6379%3E+auth+Kqz9pwmvt", "q=echo+Kqz9pwmvt+%7C+sudo+-S+id",
		"数据库密码：Zq7mK2pLx9Vw", "访问令牌为 t0kZ9pQm3Lx8", "비밀번호: Zq7mK2pL", "password：Zq7mK2pL", "auth+Kqz9pwmvt}=AbCdEfGhIjKlMnOpQrStUv", "password=hunter2", "q=password%3Dhunter2%26x", "token%3Dabc", `{\\\"api_key\\\":\\\"v\\\"}`, "api_key: AbC123", "pwd = 'x y'", `{\"password\":\"p@ss w0rd\"}`, "token=abc",
		"/cb#access_token=tok-123&state=1", "aws_secret_access_key=" + "wJalrXUtnFEMI", "AccountKey=Zm9v==", "api_key_ref=vault://k",
		"x@b.secretary_sig=v", "my.passphrase: v", "client_secret='v'", "auth=v", "sig=v", "credentials: v", "CSRFToken=v",
		"1private_key: hunter2verysecret", "x9password=v", "oauth2token=v", "2fa_secret9: v"},
	KindVendorToken: {sendgrid, "key " + sendgrid, npmTok, pypiTok, hfTok, twilioSK, twilioAC, discordTok, telegramTok,
		"bot" + telegramTok, databricks, doToken, shopify, squareTok, mailgun, glrunner, "x=" + twilioAC + ";"},
	KindURLUserinfo: {"nats://u:PASSWORD@host:4222", `"https:\/\/bob:pw@h.example\/x"`, "redis://:pw@h", "brokers u:PASSWORD@h1:9092", ":pw@kafka-1:9092", `{"b":":pw@h:9092"}`, "x :pw@h:6379"},
}

// TestMayHoldCredentialTextKinds is the pre-check's contract: every
// credential Find reports passes it, for every credential Kind. A Kind
// added to redact without an example here fails the test.
func TestMayHoldCredentialTextKinds(t *testing.T) {
	for k := KindNone + 1; k < NumKinds; k++ {
		if !k.Credential() {
			continue
		}
		ex := credentialExamples[k]
		if len(ex) == 0 {
			t.Errorf("credential kind %v has no example: add one to credentialExamples", k)
		}
		for _, s := range ex {
			if got, ok := firstCredential([]byte(s)); !ok || got.Kind != k {
				t.Errorf("example %q of %v: Find's first credential is %v (%v)", s, k, got.Kind, ok)
				continue
			}
			if !MayHoldCredentialText(s) || !MayHoldCredentialText([]byte(s)) {
				t.Errorf("MayHoldCredentialText(%q) = false, Find reports %v", s, k)
			}
			if !MayHoldCredential(s) {
				t.Errorf("MayHoldCredential(%q) = false, Find reports %v", s, k)
			}
			// and where the text is a JSON string of a record
			raw := `{"k": "` + strings.ReplaceAll(s, `"`, `\"`) + `"}`
			if _, ok := firstCredential([]byte(raw)); ok && !MayHoldCredential(raw) {
				t.Errorf("MayHoldCredential(%s) = false, Find reports a credential", raw)
			}
		}
	}
}

// TestMayHoldCredentialTextSkips: what records are made of (timestamps,
// ids, dotted names, prose, personal data) is turned away without the
// detector, which is what makes rule e2a.secret cheap.
func TestMayHoldCredentialTextSkips(t *testing.T) {
	for _, s := range []string{"", "1.0", "e2a", "req-000007-f3a6", "sess-5", "u-1", "in_progress", "e2a.chunk",
		"2026-03-29T12:00:00.001000+00:00", "2026-03-29T12:00:17Z", "chat.send", "hello",
		"jiuwenswarm.common.e2a.gateway_normalize:e2a_response_from_agent_chunk", "legacy_agent_response_chunk",
		"123e4567-e89b-12d3-a456-426614174000", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"mail alice.liu@example.com, call 13912345678, id 11010519491231002X",
		"The agent streams model output token by token; each chunk is a JSON line.",
		"task-12345678 and risk-assessment", "the Bearer authentication scheme", "sk-1234567", "AKIA", "AKIAIOSFODNN7EXAM", "ACCAUNTING", "ASIA-PACIFIC",
		"T12:00", "v2key9",
		// Keys that only hold a special word (credentialKeyIn): a tool's
		// file path, a pattern, a count of tokens, code quoting them.
		`{"k": "v", "path": "C:\\tmp"}`, `{"file_path": "/srv/app/main.py"}`, "pattern: *.go", "max_tokens: 1024",
		"keyboard: qwerty", "author: bob", "passage: x", "monkey = 1", "tokens: 42", "user: alice", "mailbox: inbox",
		"ref_count: 3", "bypass: true", "signal: SIGTERM", "patch: diff", "compat=1",
		"\u4f60\u597d\uff0c\u8fd9\u662f\u4e00\u4e2a\u56de\u7b54"} {
		if MayHoldCredentialText(s) {
			t.Errorf("MayHoldCredentialText(%q) = true", s)
		}
		if _, ok := firstCredential([]byte(s)); ok {
			t.Errorf("%q holds a credential", s)
		}
	}
}

// TestMayHoldCredentialTextURLs: at a URL's "://" the pre-check runs
// what sep takes there (a webhook's path, the userinfo), so a URL with
// neither (a link in markdown, the request of a stack trace) is passed
// over, and one with either is not.
func TestMayHoldCredentialTextURLs(t *testing.T) {
	const teams = "contoso.webhook.office.com/webhookb2/3f2a1b4c-1111-4222-8333-944455556666@7e3f795e-69df-4f5a-bcc9-aaa8b34ebd4e/IncomingWebhook/0123456789abcdef0123456789abcdef/x"
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"See [the docs](https://docs.example.com/guide/7#setup) and run it.", false},
		{`url="https://api.example.com/v1/items/12?page=3", timeout=30`, false},
		{`"https:\/\/docs.example.com\/guide"`, false},
		{"https://hooks.slack.com/status", false},
		{"https://bob:pw@h.example/x", true},
		{"https://user@example.com/x", true},
		{`"https:\/\/bob:pw@h.example\/x"`, true},
		{"see https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", true},
		{`https:\/\/discord.com\/api\/webhooks\/123456789012345678\/abcdefgh`, true},
		{"https://" + teams, true},
	} {
		if got := MayHoldCredentialText(c.s); got != c.want {
			t.Errorf("MayHoldCredentialText(%q) = %v, want %v", c.s, got, c.want)
		}
		if _, ok := firstCredential([]byte(c.s)); ok != c.want {
			t.Errorf("%q: Find reports a credential: %v", c.s, ok)
		}
	}
}

// TestHexRunRest holds the pre-check's shortcut over the rest of a run of
// hex digits and '-' (hexRunRest) to Find: random texts made of such runs
// (UUIDs, hashes, in both cases) with the shapes that could start inside
// one glued before, in and after them (AWS's all-hex "ACCA", the 21 'A's
// of an X token, PEM's "-----BEGIN", flags, schemes, Google's "ya29.",
// vendor prefixes with '-', prose keys), and Find's first credential in
// each passes the pre-check. (Fails when hexRunRest goes past an 'A'.)
func TestHexRunRest(t *testing.T) {
	if !hexSkip {
		t.Fatal("a vendor prefix with '-' is made of hex digits and not bare: hexRunRest is off")
	}
	rng := rand.New(rand.NewPCG(7, 11))
	hex := func(n int, digits string) string {
		b := make([]byte, n)
		for k := range b {
			b[k] = digits[rng.IntN(len(digits))]
		}
		return string(b)
	}
	const lower, upper = "0123456789abcdef", "0123456789ABCDEF"
	parts := []func() string{
		func() string {
			return hex(8, lower) + "-" + hex(4, lower) + "-" + hex(4, lower) + "-" + hex(4, lower) + "-" + hex(12, lower)
		},
		func() string { return hex(64, lower) },
		func() string { return hex(22+rng.IntN(30), upper) },
		func() string { return "ACCA" + hex(16, upper) },
		func() string { return strings.Repeat("A", 21) + hex(80, upper) },
		func() string { return "-----BEGIN" },
		func() string { return "--" }, func() string { return "-u" }, func() string { return "-" },
		func() string { return "bearer" }, func() string { return "Basic" }, func() string { return "ya29." },
		func() string { return "ico-" }, func() string { return "API-" }, func() string { return "fc-" }, func() string { return "-fc-" }, func() string { return "%3D" }, func() string { return "%253D" }, func() string { return "sk-" }, func() string { return "xoxb-" },
		func() string { return " " }, func() string { return "=" }, func() string { return ":" }, func() string { return "." },
		func() string { return "password " }, func() string { return ">" }, func() string { return "%" }, func() string { return `\` },
		func() string { return "/" }, func() string { return "+" }, func() string { return "Q~" }, func() string { return "\"" },
	}
	for range 20000 {
		var b strings.Builder
		for k := 1 + rng.IntN(6); k > 0; k-- {
			b.WriteString(parts[rng.IntN(len(parts))]())
		}
		s := b.String()
		if m, ok := firstCredential([]byte(s)); ok && !MayHoldCredentialText(s) {
			t.Fatalf("MayHoldCredentialText(%q) = false, Find reports %v at %d:%d", s, m.Kind, m.Start, m.End)
		}
	}
}

// TestDigitGluedKeysPlain: splitting key words at letter/digit
// transitions makes no ordinary key credential-named (a digit glued to a
// key word, "1private_key", is one: TestMayHoldCredentialTextKinds).
func TestDigitGluedKeysPlain(t *testing.T) {
	for _, s := range []string{"user1_id: 42", "auth2: on", "key1: 7", "sha256_key: 9f86d081", "api2Key=v", "max_tokens2=9",
		"token2_count: 3", "password2_hint: v", "at T12:00:00Z", "req-000007: done", "host kafka-1:9092", "v1.2.3: ok"} {
		if m, ok := firstCredential([]byte(s)); ok {
			t.Errorf("%q: credential %v", s, m)
		}
	}
}

// firstCredential is the first match of Find that is a credential.
func firstCredential(s []byte) (Match, bool) {
	for from := 0; from < len(s); {
		m, ok := Find(s, from)
		if !ok {
			break
		}
		if m.Kind.Credential() {
			return m, true
		}
		from = m.End
	}
	return Match{}, false
}

// TestDateTimeNoCredential holds isDateTime, the pre-check's shortcut for
// RFC 3339 date-times, to Find and to the byte loop it skips: on random
// date-times of every shape it accepts (fraction of 0 to 9 digits, Z or a
// numeric offset), Find reports no credential, and the texts it refuses
// (one byte off the layout) are the byte loop's.
func TestDateTimeNoCredential(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		return b.String()
	}
	accepted := 0
	for range 20000 {
		s := digits(4) + "-" + digits(2) + "-" + digits(2) + "T" + digits(2) + ":" + digits(2) + ":" + digits(2)
		if f := rng.IntN(11); f > 0 {
			s += "." + digits(f-1)
		}
		switch rng.IntN(3) {
		case 0:
			s += "Z"
		case 1:
			s += "+" + digits(2) + ":" + digits(2)
		default:
			s += "-" + digits(2) + ":" + digits(2)
		}
		b := []byte(s)
		if isDateTime(b) {
			accepted++
			if m, ok := firstCredential(b); ok {
				t.Fatalf("%q: isDateTime, and Find reports %v", s, m.Kind)
			}
			if mayHoldCredentialLoop(b) {
				t.Fatalf("%q: isDateTime, and the byte loop says it may hold a credential", s)
			}
		} else if !strings.Contains(s, ".Z") && !strings.Contains(s, ".+") && !strings.Contains(s, ".-") {
			t.Fatalf("%q: not isDateTime", s)
		}
		// One byte changed to any byte: isDateTime says what its byte-wise
		// reading of the layout says.
		k := rng.IntN(len(b))
		b[k] = byte(rng.IntN(256))
		if got, want := isDateTime(b), dateTimeByBytes(b); got != want {
			t.Fatalf("isDateTime(%q) = %v, byte by byte %v", b, got, want)
		}
	}
	if accepted < 15000 {
		t.Fatalf("only %d of 20000 date-times accepted", accepted)
	}
	for _, s := range []string{"2026-03-29T12:00:00", "2026-03-29T12:00:00.Z", "2026-03-29T12:00:00+00:0", "2026-03-29T12:00:00+00:00x",
		"2026-03-29T12:00:00.0000000000Z", "2026-03-29 12:00:00Z", "2026-03-29T12:00:00z", "x026-03-29T12:00:00Z"} {
		if isDateTime([]byte(s)) {
			t.Errorf("isDateTime(%q)", s)
		}
	}
}

// TestDateTimeShapes: isDateTime is its byte-wise specification on every
// fraction length (0 to 12 digits) with every ending, and with each byte
// of the fraction and the ending changed to a digit, a separator or a
// letter (isDateTime reads them eight at a time).
func TestDateTimeShapes(t *testing.T) {
	for f := -1; f <= 12; f++ {
		for _, end := range []string{"Z", "+05:30", "-00:00", "", "+0530", "+05:3", "+05:30:", "z"} {
			s := "2026-03-29T12:00:17"
			if f >= 0 {
				s += "." + strings.Repeat("7", f)
			}
			s += end
			for k := len("2026-03-29T12:00:17"); k <= len(s); k++ {
				for _, c := range []byte{0, '0', '9', '/', ':', '.', '+', '-', 'Z', 'a', 0x80} {
					b := []byte(s)
					if k < len(b) {
						b[k] = c
					}
					if got, want := isDateTime(b), dateTimeByBytes(b); got != want {
						t.Fatalf("isDateTime(%q) = %v, byte by byte %v", b, got, want)
					}
				}
			}
		}
	}
}

// FuzzIsDateTime: isDateTime is dateTimeByBytes on any text.
func FuzzIsDateTime(f *testing.F) {
	for _, s := range []string{"2026-03-29T12:00:00.001000+00:00", "2026-03-29T12:00:17Z", "2026-03-29T12:00:17.123456789-07:00", "2026-03-29T12:00:17.1234567890Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isDateTime([]byte(s)), dateTimeByBytes([]byte(s)); got != want {
			t.Fatalf("isDateTime(%q) = %v, byte by byte %v", s, got, want)
		}
	})
}

// dateTimeByBytes is isDateTime's specification, a byte at a time.
func dateTimeByBytes(b []byte) bool {
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	const layout = "dddd-dd-ddTdd:dd:dd"
	if len(b) <= len(layout) || len(b) > maxDateTime {
		return false
	}
	for i := range len(layout) {
		if layout[i] == 'd' && !digit(b[i]) || layout[i] != 'd' && b[i] != layout[i] {
			return false
		}
	}
	rest := b[len(layout):]
	if rest[0] == '.' {
		f := 1
		for f < len(rest) && digit(rest[f]) {
			f++
		}
		if f == 1 || f > 10 {
			return false
		}
		rest = rest[f:]
	}
	switch {
	case len(rest) == 1:
		return rest[0] == 'Z'
	case len(rest) == 6:
		return (rest[0] == '+' || rest[0] == '-') && digit(rest[1]) && digit(rest[2]) && rest[3] == ':' && digit(rest[4]) && digit(rest[5])
	}
	return false
}

// mayHoldCredentialLoop is MayHoldCredentialText without its date-time
// shortcut.
func mayHoldCredentialLoop(b []byte) bool {
	// A text one byte longer than any date-time, the extra byte a space
	// (which reveals nothing and is not in any run or key).
	return MayHoldCredentialText(append(append([]byte(nil), b...), strings.Repeat(" ", maxDateTime+1-len(b))...))
}

func FuzzMayHoldCredentialText(f *testing.F) {
	for _, ex := range credentialExamples {
		for _, s := range ex {
			f.Add(s)
		}
	}
	for _, s := range []string{"2026-03-29T12:00:00+00:00", "a@b.c password=x", "x_y:z", "ref=1", "Bearer", "b:" + strings.Repeat("k", 70) + "key=v",
		"db.x:5432:d:u:pw", "s/p@//h", "rman t/p@db", "ldapsearch -w pw", "dp.pt." + strings.Repeat("aB3", 11),
		"path: v", "x_pat: v", "github_path_pat=v", "mykey=v", "a.signature=v", "pathtoken: v", "xapi_key: v", "keypath: v",
		`"path": "p", "token": "t"`, "user_pass: v", "%22key%22%3A%22v%22",
		"localhost%3A5432%3Ad%3Au%3Apw", "s%2Fpw%40%2F%2Fh", "sqlplus%20u%2Fpw%40db", "k%3D%5C%22pw%5C%22", "Basic%20dXNlcjpwdw%3D%3D", "%2540",
		"6379> auth pw1xyz", "set -gx API_KEY pw1xyz", "mc alias set m http://h:9 AK pw1xyz", `s.login(u, "pw1xyz")`, "xfreerdp /p:pwxyzw",
		"echo 'u:pw1xyz' | chpasswd", "Private-Lines: 1\nAAAAB3NzaC1yc2EAAAADAQAB", "q=6379%3E+auth+pw1xyz", "q=echo+pw1xyz+%7C+sudo+-S+id",
		"STRIPE_KEY=0123456789abcdef0123456789abcdef", "dempotency_key=0123456789abcdef01234567", "1-fc-0123456789abcdef0123456789abcdef"} {
		f.Add(s)
	}
	for _, c := range secrets19Credentials {
		f.Add(c.in)
	}
	for _, s := range secrets19bForms {
		f.Add(s)
	}
	for _, s := range secrets20Forms {
		f.Add(s)
	}
	for _, s := range derSeeds(f) { // h-der20's forms
		f.Add(s)
	}
	for _, s := range []string{"Login: a / b1cdef", "x: admin / Xq7vLm2pR9tz", "routing_key=0123", "Passwort ist 1", "ña es 1",
		"data:image/png;base64," + chanceB64, "data:;x=AKIAIOSFODNN7EXAMPLE;base64,AA==", "data:image/png;base64,AIza" + strings.Repeat("x7Q", 12) + " ",
		"iVBORw0KGgo/AKIAIOSFODNN7EXAMPLE/" + strings.Repeat("Qk1", 30), "/9j/" + strings.Repeat("AKIAIOSFODNN7EXAMPLE/", 5)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := MayHoldCredentialText(s), mayHoldByLoop([]byte(s)); got != want {
			t.Fatalf("MayHoldCredentialText(%q): %v, by the loop alone %v", s, got, want)
		}
		m, ok := firstCredential([]byte(s))
		if !ok {
			return
		}
		if !MayHoldCredentialText(s) {
			t.Fatalf("MayHoldCredentialText(%q) = false, Find reports %v at %d:%d", s, m.Kind, m.Start, m.End)
		}
		if !MayHoldCredential(s) {
			t.Fatalf("MayHoldCredential(%q) = false, Find reports %v at %d:%d", s, m.Kind, m.Start, m.End)
		}
	})
}

func BenchmarkMayHoldCredentialText(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"timestamp", "2026-03-29T12:00:00.001000+00:00"},
		{"converter", "jiuwenswarm.common.e2a.gateway_normalize:e2a_response_from_agent_chunk"},
		{"id", "req-000007-f3a6"},
		{"prose4k", strings.Repeat("The agent streams model output token by token; each chunk is a JSON line. ", 56)[:4096]},
	} {
		s := []byte(c.s)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				MayHoldCredentialText(s)
			}
		})
	}
}

// FuzzDateTime holds isDateTime to its byte-wise specification and to
// Find: a text it accepts holds no credential.
func FuzzDateTime(f *testing.F) {
	for _, s := range []string{"2026-03-29T12:00:00.001000+00:00", "2026-03-29T12:00:17Z", "2026-03-29T12:00:00.123456789-07:30", "2026-03-29T12:00:00.Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		got := isDateTime(b)
		if want := dateTimeByBytes(b); got != want {
			t.Fatalf("isDateTime(%q) = %v, byte by byte %v", s, got, want)
		}
		if got {
			if m, ok := firstCredential(b); ok {
				t.Fatalf("%q: isDateTime, and Find reports %v", s, m.Kind)
			}
		}
	})
}

// TestHexFreeB64: b64Candidate passes over runs of hex digits and '-'
// only while no encoded token prefix is made of them; and a run that is
// all hex holds none of b64Table's words, which is what the shortcut
// skips (a run with one non-hex byte is still searched).
func TestHexFreeB64(t *testing.T) {
	if !hexFreeB64 {
		t.Fatal("an encoded token prefix in b64Table is made only of hex digits and '-': b64Candidate searches every run (correct, slower); check it is meant")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const hex = "0123456789abcdefABCDEF-"
	for range 2000 {
		b := make([]byte, 16+rng.IntN(100))
		for i := range b {
			b[i] = hex[rng.IntN(len(hex))]
		}
		if anyWord(b64Table, b) {
			t.Fatalf("%q: a hex run holds an encoded token prefix", b)
		}
	}
	// The search still runs where the run is not all hex: an encoded
	// "sk-proj-" inside a run of hex.
	s := []byte("0123456789abcdef" + "c2stcHJvai1DUlBTYjY0aW5uZXIwMTIzNDU2Nzg5" + "0123")
	if _, _, _, ok := b64Candidate(s, 3); !ok {
		t.Fatalf("b64Candidate(%q) passes over an encoded token prefix", s)
	}
}

// TestAllHex holds allHex, eight bytes a step, to a byte at a time, on
// texts of every length up to 40 made of hex digits and '-' with one
// byte of another kind (or none) at every place.
func TestAllHex(t *testing.T) {
	const hexDash = "0123456789abcdefABCDEF-"
	rng := rand.New(rand.NewPCG(16, 16))
	seen := [2]int{}
	for n := 0; n <= 40; n++ {
		for bad := -1; bad < n; bad++ {
			for _, c := range []byte("gG_+/xZ \x00\xff") {
				b := make([]byte, n)
				for k := range b {
					b[k] = hexDash[rng.IntN(len(hexDash))]
				}
				if bad >= 0 {
					b[bad] = c
				}
				want := true
				for _, x := range b {
					want = want && strings.IndexByte(hexDash, x) >= 0
				}
				if got := allHex(b); got != want {
					t.Fatalf("allHex(%q) = %v, want %v", b, got, want)
				}
				seen[btoi(want)]++
			}
		}
	}
	if seen[0] == 0 || seen[1] == 0 {
		t.Fatalf("answers seen %v: both are wanted", seen)
	}
}

// TestLettersInRow holds lettersInRow, keyBefore's test of a key for
// minSpecialLetters letters in a row, to the longest run of letters the
// key's walk counted: on random keys of letters, digits, '_', '-' and
// '.', for every n up to 6.
func TestLettersInRow(t *testing.T) {
	const keyBytes = "aZ0_-.kEy9"
	rng := rand.New(rand.NewPCG(17, 17))
	seen := [2]int{}
	for k := 0; k < 5000; k++ {
		b := make([]byte, rng.IntN(20))
		for x := range b {
			b[x] = keyBytes[rng.IntN(len(keyBytes))]
		}
		most, row := 0, 0
		for _, c := range b {
			if row++; !is(c, cUpper|cLower) {
				row = 0
			}
			most = max(most, row)
		}
		for n := 0; n <= 6; n++ {
			if got, want := lettersInRow(b, n), most >= n; got != want {
				t.Fatalf("lettersInRow(%q, %d) = %v, want %v", b, n, got, want)
			}
			seen[btoi(most >= n)]++
		}
	}
	if seen[0] == 0 || seen[1] == 0 {
		t.Fatalf("answers seen %v: both are wanted", seen)
	}
}

// TestMayRunRest holds mayRunRest, the pre-check's walk of the rest of a
// base64 run judged at its first digit, to the loop it stands for: on
// base64 runs (both alphabets, with and without '+', of many lengths)
// with the credential examples and the words of the checks it repeats
// (a command's, a prose key's, a digit token's shapes) glued inside them
// or around them, the answer is the loop's.
func TestMayRunRest(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 14))
	var inserts []string
	for _, ex := range credentialExamples {
		inserts = append(inserts, ex...)
	}
	inserts = append(inserts, "auth ", "6379> auth ", " passwd ", "password is ", "the API key is ", "%3D", "\\u003d", "u7801", "4/0A", "1//0", "ya29.",
		"AKIA", "AIza", "eyJ", "sk-", "ghp_", "glpat-", "xoxb-", "SG.", "AC", "SK", "bearer", "Basic ", "-----BEGIN", "+", "/", "=", ":", "@", " ", "\"", "'")
	enc := []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding}
	runs, passed := 0, 0
	for n := 0; n < 6000; n++ {
		raw := make([]byte, 12+rng.IntN(300))
		for k := range raw {
			raw[k] = byte(rng.UintN(256))
		}
		b := []byte(enc[n%2].EncodeToString(raw))
		for k := rng.IntN(4); k > 0; k-- {
			w := inserts[rng.IntN(len(inserts))]
			at := rng.IntN(len(b) + 1)
			b = append(b[:at:at], append([]byte(w), b[at:]...)...)
		}
		if n%3 == 0 {
			b = append([]byte("data:image/png;base64,"), b...)
		}
		got, want := MayHoldCredentialText(b), mayHoldByLoop(b)
		if got != want {
			t.Fatalf("MayHoldCredentialText(%q): %v, by the loop alone %v", b, got, want)
		}
		runs++
		if want {
			passed++
		}
	}
	// Both answers were seen (the texts reach the checks of a run's rest).
	if passed == 0 || passed == runs {
		t.Fatalf("%d of %d texts pass: the examples do not test both answers", passed, runs)
	}
}

// mayHoldByLoop is MayHoldCredentialText with the rest of each base64 run
// walked by its loop, not by mayRunRest. (No test of the package runs in
// parallel with another.)
func mayHoldByLoop(b []byte) bool {
	runRestOff = true
	defer func() { runRestOff = false }()
	return MayHoldCredentialText(b)
}
