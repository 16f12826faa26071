package validate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/redact"
)

// splitShapes: credentials, and the kind e2a.secret reports for each.
var splitShapes = []struct{ value, kind string }{
	{"sk-proj-CRPS7a8b9c0d1e2f3g4h", "sk"},
	{"ghp_CRPS0123456789abcdefghijKLMN", "ghp"},
	{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjb3JwdXMifQ.Q29ycHVzU2lnbmF0dXJl", "jwt"},
	{"xoxb-1234567890-1234567890123-CRPSabcdefghijklmnopqrst", "slack"},
	{"AKIACRPS7EXAMPLE4XYZ", "aws"},
	{"Authorization: Token CRPStok9f8e7d6c5b4a3", "authorization"},
	{"password=CRPSpass-hunter2-9876", "key_value"},
	{"AKIACRPS7EXAMPLE4XYZ1", "aws"},
	{"1private_key: CRPSdgtkeyhunterpw", "key_value"},
	{"bus:CRPSbrokerpw77@kafka-1:9092", "url_userinfo"},
	{base64.StdEncoding.EncodeToString([]byte("sk-proj-CRPSb64inner0123456789")), "sk"},
}

func splitLines(rid, first, second string) string {
	return strings.Join([]string{
		resp(0, "request_id", rid, "body.delta", "here: "+first),
		resp(1, "request_id", rid, "body.delta", second+" and more"),
		final(2, "request_id", rid),
	}, "\n") + "\n"
}

// TestSecretSplitAcrossChunks: a credential split across the deltas of two
// chunks of one stream read from a log is found: an e2a.secret finding on
// the second chunk, at body.delta, with the shape's kind, unless a chunk
// alone shows a credential (then that chunk's own finding); its value is
// in no finding; at every cut of every shape.
func TestSecretSplitAcrossChunks(t *testing.T) {
	checkSplitShapes(t, "here: ", nil)
}

// TestSecretSplitEscaped: the same with the deltas after non-Latin text,
// written as Python writes them (ensure_ascii: every non-ASCII character
// a \uXXXX escape), and with every character of them escaped: a delta
// with no printable ASCII byte once unescaped keeps no tail, and one with
// a credential start keeps it, escaped or not.
func TestSecretSplitEscaped(t *testing.T) {
	pyASCII := func(s string) string {
		b, _ := json.Marshal(s)
		var out strings.Builder
		for _, r := range string(b) {
			switch {
			case r > 0xffff:
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&out, "\\u%04x\\u%04x", r1, r2)
			case r >= 0x80:
				fmt.Fprintf(&out, "\\u%04x", r)
			default:
				out.WriteRune(r)
			}
		}
		return out.String()
	}
	escAll := func(s string) string {
		var out strings.Builder
		out.WriteByte('"')
		for _, r := range s {
			r1, r2 := utf16.EncodeRune(r)
			if r1 == utf8.RuneError {
				r1, r2 = r, -1
			}
			fmt.Fprintf(&out, "\\u%04X", r1)
			if r2 >= 0 {
				fmt.Fprintf(&out, "\\u%04X", r2)
			}
		}
		out.WriteByte('"')
		return out.String()
	}
	checkSplitShapes(t, "流式回答：", pyASCII)
	checkSplitShapes(t, "流式回答，😀 ", escAll)
	// Text with no printable ASCII byte, escaped, keeps nothing.
	e := NewEngine(DefaultConfig(), nil)
	e.sink = &collector{}
	line := resp(0, "request_id", "q9", "body.delta", "MARK")
	line = strings.Replace(line, `"MARK"`, pyASCII("一个流式回答的片段。\n\t 模型😀"), 1)
	e.Observe(&Input{Tap: "logs", Data: []byte(line), FromLog: true, Index: 1})
	if e.split != nil && len(e.split.m) != 0 {
		t.Errorf("%s: kept a tail", line)
	}
}

// checkSplitShapes runs TestSecretSplitAcrossChunks with its deltas after
// lead, written as enc writes a JSON string (nil: encoding/json).
func checkSplitShapes(t *testing.T, lead string, enc func(string) string) {
	t.Helper()
	capture := func(first, second string) []byte {
		lines := splitLines("q1", first, second)
		if enc == nil {
			return []byte(strings.ReplaceAll(lines, "here: ", lead))
		}
		for _, d := range []string{"here: " + first, second + " and more"} {
			b, _ := json.Marshal(d)
			lines = strings.Replace(lines, string(b), enc(strings.Replace(d, "here: ", lead, 1)), 1)
		}
		return []byte(lines)
	}
	for _, sh := range splitShapes {
		// Not seen (redact.MayStartCredential): a key word cut in its
		// first two letters, a base64 run before its twelfth character.
		first := 1
		switch {
		case strings.HasPrefix(sh.value, "1private"): // after the digit
			first = 4
		case sh.kind == "authorization" || sh.kind == "key_value":
			first = 3
		case strings.HasPrefix(sh.value, "c2st"):
			first = 12
		}
		for cut := first; cut < len(sh.value); cut++ {
			halves := [2]string{lead + sh.value[:cut], sh.value[cut:] + " and more"}
			col := runCapture(t, ProfileSpec, capture(sh.value[:cut], sh.value[cut:]), FormatJSONL)
			per := map[uint64]Finding{}
			for _, f := range col.findings {
				for _, part := range halves {
					if p := strings.TrimPrefix(strings.TrimSuffix(part, " and more"), lead); len(p) >= 4 && strings.Contains(f.Message+f.Stream, p) {
						t.Errorf("%q cut %d: finding quotes %q: %s", sh.value, cut, p, f.Message)
					}
				}
				if f.Rule != "e2a.secret" {
					continue
				}
				if _, dup := per[f.Index]; dup {
					t.Errorf("%q cut %d: two e2a.secret findings on record %d", sh.value, cut, f.Index)
				}
				per[f.Index] = f
			}
			if len(per) == 0 {
				t.Errorf("%q cut %d: no e2a.secret finding", sh.value, cut)
				continue
			}
			for idx, f := range per {
				_, _, _, alone := e2a.FindCredential([]byte(halves[idx-1]))
				split := strings.HasSuffix(f.Message, ", split across chunks of its stream, up to this one")
				switch {
				case idx == 2 && !alone && (!split || f.Message != "credential ("+sh.kind+") in a logged record at body.delta, split across chunks of its stream, up to this one"):
					t.Errorf("%q cut %d: on the second chunk %q", sh.value, cut, f.Message)
				case idx > 2 || alone == split:
					t.Errorf("%q cut %d: on record %d (alone %v): %q", sh.value, cut, idx, alone, f.Message)
				}
			}
			if _, ok := per[2]; !ok {
				// Only when the first chunk showed it alone (its own finding).
				if _, _, _, alone := e2a.FindCredential([]byte(halves[0])); !alone {
					t.Errorf("%q cut %d: no finding on the second chunk: %v", sh.value, cut, per)
				}
			}
		}
	}
}

// TestSecretSplitNotFromLog: live traffic (not read from a log) is not
// e2a.secret's business, split or not; nor is a boundary across a loss.
func TestSecretSplitNotFromLog(t *testing.T) {
	e, col := NewEngine(DefaultConfig(), nil), &collector{}
	e.sink = col
	for n, l := range strings.Split(strings.TrimSpace(splitLines("q1", "sk-pr", "oj-CRPS7a8b9c0d1e2f3g4h")), "\n") {
		e.Observe(&Input{Tap: "ws", Conn: "c1", Data: []byte(l), Index: uint64(n + 1)})
	}
	lines := strings.Split(strings.TrimSpace(splitLines("q2", "sk-pr", "oj-CRPS7a8b9c0d1e2f3g4h")), "\n")
	for n, l := range lines {
		in := &Input{Tap: "logs", Data: []byte(l), FromLog: true, Index: uint64(n + 10)}
		if n == 1 {
			e.Gap(&Input{Tap: "logs"}) // messages lost between the two chunks
		}
		e.Observe(in)
	}
	for _, f := range col.findings {
		if f.Rule == "e2a.secret" {
			t.Errorf("unexpected %s on %d: %s", f.Rule, f.Index, f.Message)
		}
	}
}

// TestSecretSplitMemory: streams whose deltas end in prose keep nothing
// (no table at all); a kept tail goes when its stream ends; the table is
// bounded in bytes, and what it cannot keep is counted.
func TestSecretSplitMemory(t *testing.T) {
	e := NewEngine(DefaultConfig(), &collector{})
	obs := func(rid string, seq int, delta string, fin bool) {
		l := resp(seq, "request_id", rid, "body.delta", delta)
		if fin {
			l = final(seq, "request_id", rid)
		}
		e.Observe(&Input{Tap: "logs", Data: []byte(l), FromLog: true, Time: time.Unix(100, 0)})
	}
	for n := 0; n < 200; n++ {
		obs("p"+strconv.Itoa(n), 0, "The weather is fine today.", false)
		obs("p"+strconv.Itoa(n), 1, "More tomorrow!", false)
	}
	if e.split != nil && (e.split.m != nil || e.split.bytes != 0) {
		t.Fatalf("prose streams keep %d tails", len(e.split.m))
	}
	obs("s1", 0, "the key is sk-proj-", false)
	if e.split == nil || len(e.split.m) != 1 {
		t.Fatalf("no tail kept for a delta ending in a token prefix")
	}
	obs("s1", 1, "AbCdEfGhIjKl ok", false)
	// The token's prefix is still in the last 64 bytes of the text: kept
	// (a short delta goes on from the kept tail) until prose pushes it out.
	obs("s1", 2, " and the weather is fine today, more tomorrow and after that!", false)
	if len(e.split.m) != 0 {
		t.Errorf("a tail kept after a delta ending in prose")
	}
	obs("s1", 3, "and a Bearer ", false)
	obs("s1", 4, "", true)
	if len(e.split.m) != 0 || e.split.bytes != 0 {
		t.Errorf("the ended stream's tail is still kept: %d tails, %d bytes", len(e.split.m), e.split.bytes)
	}
	long := strings.Repeat("x", 200) + " token sk-"
	for n := 0; e.stats.SplitUnchecked == 0; n++ {
		if n > 2*maxSplitBytes/len(long) {
			t.Fatal("the tail table never filled")
		}
		obs("b"+strconv.Itoa(n), 0, long, false)
		if e.split.bytes > maxSplitBytes {
			t.Fatalf("%d bytes of tails, bound %d", e.split.bytes, maxSplitBytes)
		}
	}
	e.Finish(ReasonEOF, &Input{})
	if len(e.split.m) != 0 || e.split.bytes != 0 {
		t.Errorf("after Finish: %d tails, %d bytes", len(e.split.m), e.split.bytes)
	}
}

// TestSecretSplitSharded: the sharded engine of the live run finds it as
// the single engine does.
func TestSecretSplitSharded(t *testing.T) {
	col := &collector{}
	sh := NewSharded(3, DefaultConfig(), col)
	for n, l := range strings.Split(strings.TrimSpace(splitLines("q1", "ghp_CRPS01234", "56789abcdefghijKLMN")), "\n") {
		sh.Observe(&Input{Tap: "logs", Data: bytes.Clone([]byte(l)), FromLog: true, Index: uint64(n + 1)})
	}
	sh.Finish(ReasonEOF, &Input{})
	n := 0
	for _, f := range col.findings {
		if f.Rule == "e2a.secret" && f.Index == 2 && strings.Contains(f.Message, "(ghp)") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d split findings: %+v", n, col.findings)
	}
}

// FuzzBodyDelta: on every valid UTF-8 record Scan accepts whose body.delta is a
// string, bodyDelta finds that string as encoding/json reads it (keys
// spelled plainly, no duplicates).
func FuzzBodyDelta(f *testing.F) {
	for _, s := range []string{splitLines("q1", "sk-pr", "oj-x"), `{"body":{"x":[1,{"delta":2}],"delta":"a\"b\\u0041"}}`, `{"a":"}","body" : { "delta" : "x" } }`} {
		for _, l := range strings.Split(s, "\n") {
			f.Add([]byte(l))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r e2a.Record
		if !utf8.Valid(data) || e2a.Scan(data, &r) != nil || r.Sub(e2a.SBodyDelta).Type != e2a.String {
			return
		}
		var v struct {
			Body map[string]json.RawMessage `json:"body"`
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		if dec.Decode(&v) != nil || strings.Count(string(data), `"body"`) != 1 || strings.Count(string(data), `"delta"`) != 1 {
			return
		}
		var want string
		if json.Unmarshal(v.Body["delta"], &want) != nil {
			return
		}
		raw, esc, ok := bodyDelta(data)
		got := string(raw)
		if esc {
			got = string(e2a.AppendUnquoted(nil, raw))
		}
		if !ok || got != want {
			t.Fatalf("bodyDelta(%s) = %q %v, want %q", data, got, ok, want)
		}
		// Scan's own span of it, which the engine reads first.
		sraw, sesc, sok := r.RawDelta()
		if !sok || string(sraw) != string(raw) || sesc != esc {
			t.Fatalf("Scan's RawDelta of %s = %q %v %v, bodyDelta %q %v", data, sraw, sesc, sok, raw, esc)
		}
	})
}

// TestSecretSplitHeap: the tail table's bound is what it holds on the
// heap, bookkeeping included, when every stream keeps a short tail (a
// delta ending in "tok", which may start "token"): not a multiple of it.
func TestSecretSplitHeap(t *testing.T) {
	cfg := DefaultConfig()
	cfg.IdleTimeout = 0
	e := NewEngine(cfg, nopSink{})
	in := &Input{Tap: "logs", FromLog: true, Time: time.Unix(100, 0)}
	for n := range 10000 { // every partition's fixed parts
		in.Data = []byte(resp(0, "request_id", "warm_"+strconv.Itoa(n), "body.delta", "abc"))
		e.Observe(in)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	for ; e.stats.SplitUnchecked < 1000; n++ {
		in.Data = []byte(resp(0, "request_id", "req_"+strconv.Itoa(n), "body.delta", "tok"))
		e.Observe(in)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d tails kept in %d bytes of heap (bound %d)", len(e.split.m), held, maxSplitBytes)
	if held > maxSplitBytes*3/2 {
		t.Errorf("the tail table holds %d bytes of heap, bound %d", held, maxSplitBytes)
	}
	runtime.KeepAlive(e)
}

// checkStartMemo fails when the memo of splitTails answers a tail
// differently from redact.MayStartCredential, over tails in turn (each
// twice, then all again: hits, misses and evictions).
func checkStartMemo(t *testing.T, tails []string) {
	t.Helper()
	var m startMemo
	for pass := 0; pass < 2; pass++ {
		for _, s := range tails {
			for k := 0; k < 2; k++ {
				if got, want := m.mayStart([]byte(s)), redact.MayStartCredential(s); got != want {
					t.Fatalf("mayStart(%q) = %v, MayStartCredential %v", s, got, want)
				}
			}
		}
	}
}

// TestStartMemo: the memo of short tails that start no credential is
// exact: on every cut of every split shape, on tails of one length that
// differ in one byte ("token 1 " and "token s"), and on more tails than
// it has slots.
func TestStartMemo(t *testing.T) {
	var tails []string
	for _, sh := range splitShapes {
		for cut := 0; cut <= len(sh.value); cut++ {
			tails = append(tails, sh.value[:cut], "x "+sh.value[:cut], sh.value[cut:])
		}
	}
	for i := 0; i < 300; i++ {
		tails = append(tails, "token "+strconv.Itoa(i)+" ", "token "+strconv.Itoa(i)+"s", " the", "a b", "流式", strings.Repeat("y", i%40))
	}
	for _, c := range "sgAbtpx:-/ " {
		tails = append(tails, "token 1"+string(c), "an "+string(c), string(c))
	}
	checkStartMemo(t, tails)
	var m startMemo
	m.mayStart([]byte("token 0 "))
	if n := testing.AllocsPerRun(100, func() { m.mayStart([]byte("token 0 ")) }); n != 0 {
		t.Errorf("%v allocs", n)
	}
}

func FuzzStartMemo(f *testing.F) {
	f.Add("token 0 |token 1 |sk-|the tok|token 0 |ghp_")
	f.Fuzz(func(t *testing.T, s string) {
		checkStartMemo(t, strings.Split(s, "|"))
	})
}

// TestUnquoteTail: the end of a delta unescaped from a few times its
// length of raw bytes is the end of the whole delta unescaped, for deltas
// of every escape (2-byte escapes, \u of every width, surrogate pairs,
// raw UTF-8, invalid UTF-8), and the part unescaped is shorter than the
// whole where the delta is long.
func TestUnquoteTail(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{`\n`, `\"`, `\\`, `\/`, `\t`, `\u0041`, `\u00e9`, `\u4f60`, `\ud83d\ude00`, `\ud83d`, "a", "Z", "0", "f", "u",
		" ", "é", "你", "\xff", `{\"k\": \"v\"}`, "path", `C:\\tmp`}
	var tl splitTails
	shorter := 0
	for i := 0; i < 5000; i++ {
		var b strings.Builder
		for n := rng.IntN(400); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		raw := []byte(b.String())
		whole := e2a.AppendUnquoted(nil, raw)
		want := whole[max(0, len(whole)-splitTail):]
		for _, n := range []int{splitTail, 16} {
			got := tl.unquoteTail(raw, true, n)
			if w := whole[max(0, len(whole)-n):]; string(got) != string(w) {
				t.Fatalf("unquoteTail(%q, %d) = %q, want %q", raw, n, got, w)
			}
		}
		if q := escBoundary(raw, len(raw)-3*splitTail); q > 0 && len(e2a.AppendUnquoted(nil, raw[q:])) >= len(want) {
			shorter++
		}
	}
	if shorter == 0 {
		t.Fatal("no delta was unescaped from a part of its end")
	}
}

// TestSecretSplitNotAValue: code and marks that are no credential in one
// chunk (e2a.FindCredential) are none split across two at any cut either:
// the split check judges the joined match as one chunk's is judged.
func TestSecretSplitNotAValue(t *testing.T) {
	for _, text := range []string{"password: None", "password = settings.DB_PASSWORD", "Authorization: Bearer ***",
		"token: undefined", "api_key: sk-...", "password: Optional[str]", "password: REDACTED"} {
		if _, _, kind, ok := e2a.FindCredential([]byte(text + " and more")); ok {
			t.Fatalf("%q whole: %s", text, kind)
		}
		for cut := 1; cut < len(text); cut++ {
			if _, _, _, ok := e2a.FindCredential([]byte("here: " + text[:cut])); ok {
				continue // a chunk alone that reads as one ("password = settings."): its own finding
			}
			col := runCapture(t, ProfileSpec, []byte(splitLines("q1", text[:cut], text[cut:])), FormatJSONL)
			for _, f := range col.findings {
				if f.Rule == "e2a.secret" {
					t.Errorf("%q cut %d: %s on %d: %s", text, cut, f.Rule, f.Index, f.Message)
				}
			}
		}
	}
}

// streamLines is a stream of one chunk a piece of text, then its final.
func streamLines(rid string, pieces []string) []byte {
	var b strings.Builder
	for i, p := range pieces {
		b.WriteString(resp(i, "request_id", rid, "body.delta", p) + "\n")
	}
	b.WriteString(final(len(pieces), "request_id", rid) + "\n")
	return []byte(b.String())
}

// TestSecretSplitAcrossManyChunks: a credential a model streams a few
// characters a chunk (its tokens) is found once, whatever the size of the
// pieces after its first (which must show how it starts: a key word or
// prefix of three letters or more, the twelfth character of a base64
// run); no finding quotes it.
func TestSecretSplitAcrossManyChunks(t *testing.T) {
	for _, sh := range splitShapes {
		first := 4
		switch {
		case strings.HasPrefix(sh.value, "1private"):
			first = 5
		case strings.HasPrefix(sh.value, "c2st"):
			first = 12
		case strings.HasPrefix(sh.value, "sk-") || strings.HasPrefix(sh.value, "ghp_") || strings.HasPrefix(sh.value, "xoxb-"):
			first = 2
		}
		for size := 1; size <= 5; size++ {
			pieces := []string{"here: " + sh.value[:first]}
			for i := first; i < len(sh.value); i += size {
				pieces = append(pieces, sh.value[i:min(i+size, len(sh.value))])
			}
			pieces = append(pieces, " and", " more.")
			col := runCapture(t, ProfileSpec, streamLines("q1", pieces), FormatJSONL)
			n := 0
			for _, f := range col.findings {
				for i := len(sh.value) - 12; i+6 <= len(sh.value); i++ { // its secret part's end
					if strings.Contains(f.Message, sh.value[i:i+6]) {
						t.Fatalf("%q size %d: a finding quotes it: %s", sh.value, size, f.Message)
					}
				}
				if f.Rule == "e2a.secret" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%q in pieces of %d: %d e2a.secret findings, want 1", sh.value, size, n)
			}
		}
	}
}

// TestSecretSplitCodeTokens: code about credentials streamed a token a
// chunk (as a model writes it) is no finding: a value is judged once a
// later chunk ends it, not while it may go on ("password=settings" |
// ".DB_PASSWORD"); a real one is found once, when it ends.
func TestSecretSplitCodeTokens(t *testing.T) {
	tok := regexp.MustCompile(`\s*\w+|\s*[^\w\s]+|\s+`)
	for _, c := range []struct {
		text string
		want int
	}{
		{"def login(user: str, password: str) -> None:\n    db = connect(password=settings.DB_PASSWORD)\n", 0},
		{"const apiKey = process.env.OPENAI_API_KEY;\nconst token = await getToken();\n", 0},
		{"password = None\nif password is None:\n    password = os.environ[\"PW\"]\n", 0},
		{"interface Creds { password: string; token?: string }\n", 0},
		{"Set password: hunter2-real-pass in the config\n", 1},
		{"Set password: hunter2-real-pass", 1}, // judged at the final record
		{"the token is ghp_CRPS0123456789abcdefghijKLMN now", 1},
	} {
		col := runCapture(t, ProfileSpec, streamLines("q1", tok.FindAllString(c.text, -1)), FormatJSONL)
		n := 0
		for _, f := range col.findings {
			if f.Rule == "e2a.secret" {
				n++
			}
		}
		if n != c.want {
			t.Errorf("%q: %d e2a.secret findings, want %d", c.text, n, c.want)
		}
	}
}
