package redact

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkMayProbe fails when MayStartCredential with the gate of probed
// differs from it without: the ungated result is the gated one or the
// probes' own (every other check is the same and side-effect free).
func checkMayProbe(t *testing.T, s string) {
	t.Helper()
	for _, tail := range []string{s, s + " ", s + "  ", s + "\t", s + "\n", s + " x ", s + "5 ",
		s + "}", s + "]", s + "\"}", s + "\"]", s + " }", s + "}]", s + "\"}\n", s + "5}", s + "\\\"}"} {
		win := []byte(tail[max(0, len(tail)-tailWindow):])
		gated := MayStartCredential(tail)
		ungated := gated || anyWord(keyTable, win) && probedWith(win, false)
		if gated != ungated {
			t.Fatalf("MayStartCredential(%q) = %v with the gate, %v without", tail, gated, ungated)
		}
	}
}

// gateShapes are the texts whose every cut TestMayProbeExact looks at:
// every credential example, every token shape, keys and schemes followed
// by white space, and prose.
func gateShapes() []string {
	var ss []string
	for _, ex := range credentialExamples {
		ss = append(ss, ex...)
	}
	for s := range tokenShapes {
		ss = append(ss, s)
	}
	for _, w := range append(append([]string(nil), credWords...), keyWordsWhole...) {
		ss = append(ss, w, w+" ", strings.ToUpper(w[:1])+w[1:]+"  ", "my_"+w+"   ", w+" 5 ", "the "+w+" is ", w+"\t")
	}
	return append(ss, "Authorization: Token CRPStok9f8e7d6c5b4a3", "Bearer abc123def456 ", "header Bearer  ", "token 0 token 1 ",
		"-----BEGIN RSA ", "nats://u:pw@host ", "api key ", "the access token ", "x-api-key ", "Set-Cookie ",
		benchProse, "sk-proj- ", "ghp_ ", "eyJhbGciOi ", "AKIA ", "xoxb- ")
}

// TestMayProbeExact: the gate of probed never skips a window where a
// probe completes a credential, over every cut of every shape, alone and
// after prose; and it does skip the stream of "token N " deltas, whose
// key word has a number, not a value, after it.
func TestMayProbeExact(t *testing.T) {
	for _, sh := range gateShapes() {
		for cut := 0; cut <= len(sh); cut++ {
			checkMayProbe(t, sh[:cut])
			checkMayProbe(t, "the answer, then "+sh[:cut])
			checkMayProbe(t, sh[cut:])
		}
	}
	for _, s := range []string{"token 0 ", "token 17 ", "Bearer abc ", "a key fact \n",
		// a code block: separators after plain keys that hold a key word
		"return {\"k\": \"v\", \"path\": \"C:\\\\tmp\"}\n\treturn None\n", "pattern = re.compile(x)\n", "max_tokens=1024 ",
		// a tool's JSON result, ending in a plain key's value and a closer
		`"modified": "2026-03-29T12:00:02+00:00"}], "total_tokens": 1234, "status": "ok"}`, `{"max_tokens": 5}`, `{"paths": ["a", "b"]}`, `[1, 2]`} {
		if mayProbe([]byte(s)) {
			t.Errorf("mayProbe(%q) = true", s)
		}
	}
	for _, s := range []string{"token ", "Bearer ", "password", "password = ", `"secret": "a b `, "api_key: x ", "token\t", "token 5",
		"BeArer: ", `"token" `, `\"token\" `, "name: DB_PASSWORD\n  value: a b ", "nats://u:pw ", "h:5432:db:u:p w ",
		`{"token": "x"}`, "token}", `["token"]`, `{"password": "a b"}`, `{"url": "nats://u:pw"}`} {
		if !mayProbe([]byte(s)) {
			t.Errorf("mayProbe(%q) = false", s)
		}
	}
}

func FuzzMayProbe(f *testing.F) {
	for _, s := range gateShapes() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkMayProbe(t, s)
	})
}

// TestMayStartCredentialGlued: tails cut inside a broker address with
// credentials past its user, and inside a key word glued after a digit,
// are kept; the same bytes of personal data or prose are not. (A last
// word of one letter that starts a token prefix is kept wherever it is:
// "a@b" may go on "a@bkua_<hex>", a Buildkite token after the '@'; the
// e-mail ends in a letter that starts none.)
func TestMayStartCredentialGlued(t *testing.T) {
	for _, s := range []string{"bus:CRPSbrokerpw77", "bus:CRPSbrokerpw77@", "here: bus:pw@kafka-1", "bus:pw@kafka-1:", "bus:pw@kafka-1:90",
		"x :pw@h", "here: 1pri", "id 7passw", "cfg 2api_k"} {
		if !MayStartCredential(s) {
			t.Errorf("MayStartCredential(%q) = false", s)
		}
	}
	for _, s := range []string{"mail bob@example.com", "at 12:00 bob@host", "see a@m", "v1.2.3", "req-000007", "page 12", "build 42 done"} {
		if MayStartCredential(s) {
			t.Errorf("MayStartCredential(%q) = true", s)
		}
	}
	// And what the two halves make is reported once, across the boundary.
	for _, c := range [][2]string{{"bus:pw77", "@kafka-1:9092"}, {"bus:pw77@", "kafka-1:9092"}, {"bus:pw77@kafka", "-1:9092"}, {"bus:pw77@kafka-1:", "9092"}} {
		if _, m, ok := Straddle(nil, []byte(c[0]), []byte(c[1])); !ok || m.Kind != KindURLUserinfo || m.Start != 0 {
			t.Errorf("Straddle(%q, %q) = %v %v", c[0], c[1], m, ok)
		}
	}
	if _, m, ok := Straddle(nil, []byte("bus:pw@kafka-1:9092"), []byte(" and more")); ok {
		t.Errorf("a userinfo whole in the tail straddles: %v", m)
	}
}

// TestPairTableFirst: anyWord skips a byte by pairTable.first only where
// no word starts with it (no pair of that row is set), in every table.
func TestPairTableFirst(t *testing.T) {
	for name, pt := range map[string]*pairTable{"b64": b64Table, "special": specialTable, "needle": needleTable, "token": tokenTable, "key": keyTable} {
		for a := range pt.pair {
			set := false
			for b := range pt.pair[a] {
				set = set || pt.pair[a][b] != 0
			}
			if set != pt.first[a] {
				t.Errorf("%s: first[%q] = %v, a pair of that row set: %v", name, rune(a), pt.first[a], set)
			}
		}
	}
}

// TestAnyWordSkips holds anyWord (which skips runs of bytes >= 0x80 eight
// at a time) and hasPEMDash (which jumps to each '-') to their byte-loop
// definitions on text mixing every table's words, '-' runs, ASCII and
// multi-byte characters at every alignment.
func TestAnyWordSkips(t *testing.T) {
	tables := []*pairTable{tokenTable, keyTable, b64Table, specialTable, needleTable}
	pieces := []string{"这是", "一个", "，", "é", "\xff", " ", "a", "-", "--", "---", "sk-", "ghp_", "AKIA", "token", "Pass", "eyJ", "x", "1", ":", "\x80\x80"}
	rng := rand.New(rand.NewPCG(10, 10))
	for range 20000 {
		var b []byte
		for n := rng.IntN(24); n > 0; n-- {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		for _, tb := range tables {
			if got, want := anyWord(tb, b), anyWordBytes(tb, b); got != want {
				t.Fatalf("anyWord(%q) = %v, byte by byte %v", b, got, want)
			}
		}
		if got, want := HasPEMDash(b), bytes.Contains(b, []byte("-----")); got != want {
			t.Fatalf("HasPEMDash(%q) = %v, want %v", b, got, want)
		}
	}
}

// anyWordBytes is anyWord's definition: a word of t at some byte of s.
func anyWordBytes(t *pairTable, s []byte) bool {
	for i := 0; i+1 < len(s); i++ {
		if g := t.pair[s[i]][s[i+1]]; t.first[s[i]] && g != 0 {
			for _, w := range t.groups[g-1] {
				if w.exact && at(s, i, w.w) || !w.exact && atFold(s, i, w.w) {
					return true
				}
			}
		}
	}
	return false
}

// noPrintable maps every printable ASCII byte (0x21-0x7E) of s to a byte
// >= 0x80 or to white space, keeping the rest.
func noPrintable(s string) []byte {
	b := []byte(s)
	for i, c := range b {
		if c-0x21 < 0x7f-0x21 {
			b[i] = []byte{0x80, 0xe4, 0xbd, 0xa0, ' ', '\n', 0xff, 0x7f, 0}[int(c)%9]
		}
	}
	return b
}

// TestMayStartNoPrintable: the pre-check of MayStartCredential is exact.
// Every word its tables look for has a printable ASCII byte, and without
// one no case of it holds (checked on the shapes' cuts with their ASCII
// mapped away, and fuzzed: FuzzMayStartNoPrintable); text with one goes
// on to the checks.
func TestMayStartNoPrintable(t *testing.T) {
	for _, tbl := range []*pairTable{tokenTable, keyTable} {
		for _, g := range tbl.groups {
			for _, w := range g {
				if !hasPrintableASCII([]byte(w.w)) {
					t.Errorf("needle %q has no printable ASCII byte", w.w)
				}
			}
		}
	}
	for _, m := range []map[string]bool{tokenPrefixStarts, keyPrefixes, b64Prefixes} {
		for w := range m {
			if !hasPrintableASCII([]byte(w)) {
				t.Errorf("prefix %q has no printable ASCII byte", w)
			}
		}
	}
	for _, sh := range gateShapes() {
		for cut := 0; cut <= len(sh); cut++ {
			for _, s := range []string{sh[:cut], "你好，" + sh[:cut], sh[cut:]} {
				if b := noPrintable(s); mayStartCredential(b) || MayStartCredential(b) && !cjkTailStart(b) {
					t.Fatalf("MayStartCredential(%q) = true without printable ASCII", b)
				}
			}
		}
	}
	for _, s := range []string{"你好，世界。", "   \n\t", "\x00\x7f\x80\xff", strings.Repeat("流式回答", 20) + " \n", ""} {
		if hasPrintableASCII([]byte(s)) || MayStartCredential(s) {
			t.Errorf("%q: printable ASCII or a credential start", s)
		}
	}
	for _, s := range []string{"你好，世界。tok", "!", "~", strings.Repeat("流", 11) + "s", "流式回答 Bearer "} {
		if !hasPrintableASCII([]byte(s)) {
			t.Errorf("hasPrintableASCII(%q) = false", s)
		}
		if s != "!" && s != "~" && !MayStartCredential(s) {
			t.Errorf("MayStartCredential(%q) = false", s)
		}
	}
}

func FuzzMayStartNoPrintable(f *testing.F) {
	for _, s := range gateShapes() {
		f.Add(s)
	}
	for _, s := range []string{"пароль — ", "Ваш пароль", "a senha é ", "CONTRASEÑA E", "пароль -"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if b := noPrintable(s); mayStartCredential(b) {
			t.Fatalf("mayStartCredential(%q) = true without printable ASCII", b)
		}
		if b := []byte(s); MayStartCredential(s) != (mayStartCredential(b) || cjkTailStart(b) || escCJKTailStart(b) || labelTailStart(b) || foreignSepTailStart(b) || derTail(b)) {
			t.Fatalf("MayStartCredential(%q) differs from its checks", s)
		}
	})
}

// TestNamesEntrySkips holds namesEntry (which goes to each ':' and '='
// with IndexByte) to its byte-loop definition on texts of name and key
// pairs, separators, quotes and spaces.
func TestNamesEntrySkips(t *testing.T) {
	pieces := []string{"name", "Key", "KEY", "nam", "ey", ":", "=", "\"", "'", " ", "  ", "x", "\n", "value", "token"}
	rng := rand.New(rand.NewPCG(11, 11))
	for range 20000 {
		var b []byte
		for n := rng.IntN(12); n > 0; n-- {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		if got, want := namesEntry(b), namesEntryBytes(b); got != want {
			t.Fatalf("namesEntry(%q) = %v, byte by byte %v", b, got, want)
		}
	}
}

// namesEntryBytes is namesEntry's definition: a ':' or '=' at index 3 or
// later after "name" or "key" and at most three quotes or spaces.
func namesEntryBytes(win []byte) bool {
	for i := 3; i < len(win); i++ {
		if c := win[i]; c != ':' && c != '=' {
			continue
		}
		j := i
		for j > 0 && i-j < 3 && (win[j-1] == '"' || win[j-1] == '\'' || win[j-1] == ' ') {
			j--
		}
		if j >= 4 && eqFold(win[j-4:j], "name") || j >= 3 && eqFold(win[j-3:j], "key") {
			return true
		}
	}
	return false
}
