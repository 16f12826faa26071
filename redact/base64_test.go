package redact

import (
	"encoding/base64"
	"math/rand"
	"strings"
	"testing"
)

// tokenShapes are planted token shapes (each one's own bytes make it a
// credential).
var tokenShapes = map[string]Kind{
	openai: KindSK, anthropic: KindSK, ghp: KindGitHub, ghPAT: KindGitHub, glpat: KindGitLab, awsID: KindAWS,
	slackBot: KindSlack, stripeSK: KindStripe, googleKey: KindGoogle, jwtTok: KindJWT, pemKey: KindPrivateKey,
}

// TestFindBase64: a token wrapped in base64 with nothing around it is found
// as its own kind, in both alphabets, padded or not, after a few bytes
// that are not part of the encoding, inside JSON-escaped text; other
// masked data wrapped in base64 is masked as high entropy.
func TestFindBase64(t *testing.T) {
	const corpus = "c2stcHJvai1DUlBTYjY0aW5uZXIwMTIzNDU2Nzg5" // sk-proj-CRPSb64inner0123456789
	cases := []struct {
		in, want string
		kind     Kind
	}{
		{corpus, corpus, KindSK},
		{"the reply was " + corpus + ".", corpus, KindSK},
		{`{"x":"` + corpus + `"}`, corpus, KindSK},
		{"x-" + base64.StdEncoding.EncodeToString([]byte("sk-proj-AbCdEfGhIj0123456789")), "", KindSK},
		{base64.StdEncoding.EncodeToString([]byte("user: alice password=hunter2, ok")), "", KindHighEntropy},
	}
	for tok, kind := range tokenShapes {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			for _, pre := range []string{"", " ", "a:", "xy=", "key "} {
				e := enc.EncodeToString([]byte(pre + tok))
				cases = append(cases, struct {
					in, want string
					kind     Kind
				}{"v " + e + " end", "", kind})
			}
		}
	}
	for _, c := range cases {
		m, ok := Find(c.in, 0)
		if !ok || m.Kind != c.kind || c.want != "" && c.in[m.Start:m.End] != c.want {
			t.Errorf("Find(%q) = %v %q, want %v %q", c.in, m, c.in[m.Start:m.End], c.kind, c.want)
			continue
		}
		if c.kind.Credential() && !MayHoldCredential(c.in) {
			t.Errorf("MayHoldCredential(%q) is false; Find reports %v", c.in, m.Kind)
		}
		if out := New([]byte("k")).Text(c.in); strings.Contains(out, c.in[m.Start:m.End]) {
			t.Errorf("Text(%q) = %q", c.in, out)
		}
	}
}

// TestFindNoFalsePositives: ordinary text, ids, UUIDs, hex digests,
// timestamps, paths, words, base64 of ordinary text, and identifiers
// (camelCase words with a digit suffix, Go test temp dirs) are left alone.
func TestFindNoFalsePositives(t *testing.T) {
	for _, s := range []string{
		"The quick brown fox jumps over the lazy dog; 12 of 13 tests passed in 0.54s.",
		"id 123e4567-e89b-12d3-a456-426614174000 trace 4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7",
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 md5 d41d8cd98f00b204e9800998ecf8427e",
		"2026-03-29T12:00:01.123456789+08:00 1717171717171 20260329120001",
		"/tmp/TestNATSSlowConsumerGivesNoFalseFinding1724886460/001/positions.json",
		"C:/Users/runner/AppData/Local/Temp/TestCorpusConfigErrorsWsUpstreamWithUserinfo3141592653/002",
		"TestNATSSlowConsumerGivesNoFalseFinding1724886460",
		"getUserById2FactorAuthenticationHandlerFactory",
		"XMLHttpRequestFactoryProviderForTheWorld2024Instance",
		"BenchmarkLogdirIntoEngineWithRotationAndCompaction_42",
		"resp-authorization_other-places-8 req_01HZX3Q4K5M6N7P8R9S0T1V2W3 sess-base64_token",
		"aGVsbG8gd29ybGQ=", // "hello world"
		"k8s pod agent-server-7d4b9c8f6d-x2k9p on node ip-10-0-12-34.ec2.internal",
		"github.com/e2atap/e2atap/cmd/e2atap/corpus_test.go:842 +0x1a4",
	} {
		if m, ok := Find(s, 0); ok {
			t.Errorf("Find(%q) = %v %q", s, m.Kind, s[m.Start:m.End])
		}
	}
}

// TestRandomTokensAreNotIdentifiers: random tokens of the high-entropy
// rule's alphabet are masked, not taken for identifiers.
func TestRandomTokensAreNotIdentifiers(t *testing.T) {
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	r := rand.New(rand.NewSource(9))
	missed := 0
	const n = 2000
	for k := 0; k < n; k++ {
		b := make([]byte, 40)
		for i := range b {
			b[i] = alpha[r.Intn(len(alpha))]
		}
		if _, ok := Find("token "+string(b), 0); !ok {
			missed++
		}
	}
	if missed > n/200 {
		t.Errorf("%d of %d random 40-character tokens not masked", missed, n)
	}
	for _, id := range []string{"TestNATSSlowConsumerGivesNoFalseFinding1724886460", "getUserById2FactorAuthenticationHandler"} {
		if !identifier([]byte(id)) {
			t.Errorf("identifier(%q) = false", id)
		}
	}
	for _, tok := range []string{"AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "c2stcHJvai1DUlBTYjY0aW5uZXIw", "npm_9xQ2LmN8pQ4tokBRR7f3Kq9Zx2LmN8pQ4ab"} {
		if identifier([]byte(tok)) {
			t.Errorf("identifier(%q) = true", tok)
		}
	}
}

// TestMayHoldCredentialContract: whatever Find reports as a credential
// passes MayHoldCredential (the pre-check of rule e2a.secret), for every
// shape of TestFind and of TestFindBase64, and on random mixtures.
func TestMayHoldCredentialContract(t *testing.T) {
	var texts []string
	for tok := range tokenShapes {
		texts = append(texts, tok, "x "+tok, base64.StdEncoding.EncodeToString([]byte(tok)), base64.RawURLEncoding.EncodeToString([]byte("ab"+tok)))
	}
	texts = append(texts, "Authorization: Token abcdef0123", "Bearer: x", "password=hunter2", "nats://u:p@h", "Cookie: a=b",
		"use Basic "+basicCred, `{"k":"`+strings.ReplaceAll(pemKey, "\n", `\n`)+`"}`, "aws_secret_access_key="+awsSecret)
	r := rand.New(rand.NewSource(1))
	pieces := append([]string{" ", "=", ":", "-", "_", "/", "+", "sk", "AK", "ey", "J", "Bearer ", "token", "://", "@", "1", "Zz"}, texts...)
	for k := 0; k < 5000; k++ {
		var b strings.Builder
		for j := r.Intn(8); j >= 0; j-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	checked := 0
	for _, s := range texts {
		for from := 0; from < len(s); {
			m, ok := Find(s, from)
			if !ok {
				break
			}
			if m.Kind.Credential() {
				checked++
				if !MayHoldCredential(s) {
					t.Errorf("Find(%q) = %v %q, but MayHoldCredential is false", s, m.Kind, s[m.Start:m.End])
				}
				break
			}
			from = m.End
		}
	}
	if checked < len(tokenShapes)*4 {
		t.Errorf("only %d texts held a credential", checked)
	}
}

// TestMayStartCredential: a tail is kept exactly where a credential may
// straddle: every cut of every shape keeps its first part, and text that
// ends in nothing a needle starts with is not kept.
func TestMayStartCredential(t *testing.T) {
	shapes := []string{openai, ghp, glpat, awsID, slackBot, stripeSK, googleKey, jwtTok, pemKey, "Bearer abc123def456",
		"Authorization: Token CRPStok9f8e7d6c5b4a3", "password=hunter2xx", "nats://u:pw@host", "Cookie: sid=abc",
		base64.StdEncoding.EncodeToString([]byte(openai)),
		npmTok, hfTok, pypiTok, sendgrid, twilioSK, discordTok, "bot " + telegramTok, databricks, doToken, shopify, squareTok, mailgun, glrunner,
		"run1_" + ghp, "q=password%3Dhunter2xx", "bus:CRPSbrokerpw77@kafka-1:9092",
		"dsn=scott%2FO8HX4EPFAlF6yI%40%2F%2Fdb.example.com%3A1521%2FORCLPDB1", "db.example.com%3A5432%3Aorders%3Aapp%3AD48Q7o%23FpobB6l",
		"scott/Jd5fG7hK2mPq@//db.example.com:1521/ORCLPDB1", "db.internal.example:5432:orders:app:Nq7vR2xLp9Zt",
		"localhost:5432:orders:app:Nq7vR2xLp9Zt"}
	// Not seen (documented): a key word or scheme cut in its first two letters, a
	// base64 run cut before its twelfth character.
	skip := map[string]int{"Authorization: Token CRPStok9f8e7d6c5b4a3": 3, "password=hunter2xx": 3, "Cookie: sid=abc": 3, "Bearer abc123def456": 3,
		base64.StdEncoding.EncodeToString([]byte(openai)): 12,
		"q=password%3Dhunter2xx":                          5,
		// a shape found at a digit cut after its first byte, a bot id in its
		// first eight digits
		twilioSK: 2, discordTok: 2, "bot " + telegramTok: 12,
		// a broker's userinfo cut before its ':'
		"bus:CRPSbrokerpw77@kafka-1:9092": 4,
		// URL-encoded, cut before the first encoded separator
		"dsn=scott%2FO8HX4EPFAlF6yI%40%2F%2Fdb.example.com%3A1521%2FORCLPDB1": 12, "db.example.com%3A5432%3Aorders%3Aapp%3AD48Q7o%23FpobB6l": 17,
		// an Oracle user and password cut before three bytes of the password
		"scott/Jd5fG7hK2mPq@//db.example.com:1521/ORCLPDB1": 9,
		// a .pgpass line cut in its host (a name with a dot: every domain
		// and file name would keep its tail)
		"db.internal.example:5432:orders:app:Nq7vR2xLp9Zt": 20,
		// (in "localhost": cut after its first letter)
		"localhost:5432:orders:app:Nq7vR2xLp9Zt": 2}
	for _, sh := range shapes {
		for cut := max(1, skip[sh]); cut < len(sh); cut++ {
			tail, head := "text "+sh[:cut], sh[cut:]+" end"
			_, m, ok := Straddle(nil, []byte(tail), []byte(head))
			if ok && m.Kind.Credential() && !MayStartCredential(tail) {
				t.Errorf("%q|%q straddles (%v) but the tail is not kept", tail, head, m.Kind)
			}
		}
	}
	for _, s := range []string{"", "the weather is fine today. ", "seq 12 done\n", "你好，世界", "and then the", "answer", " is"} {
		if MayStartCredential(s) {
			t.Errorf("MayStartCredential(%q) = true", s)
		}
	}
	// Prose cut anywhere mostly keeps nothing.
	text := strings.Repeat("The agent answered the question about the weather in three short paragraphs, then asked whether the user wanted "+
		"a longer forecast for the week ahead. It said: to be sure, look at the map; a storm is coming from the south-west and passes by Tuesday. ", 3)
	kept, n := 0, 0
	for i := 1; i < len(text); i++ {
		n++
		if MayStartCredential(text[:i]) {
			kept++
		}
	}
	if kept*4 > n {
		t.Errorf("prose: %d of %d cuts keep a tail", kept, n)
	}
	if n := testing.AllocsPerRun(100, func() { MayStartCredential("the answer is s") }); n != 0 {
		t.Errorf("%v allocs", n)
	}
}
