package jsonlog

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/e2atap/e2atap/redact"
	"github.com/e2atap/e2atap/validate"
)

// TestMemoSameLines: the memos a state keeps across records (the strings
// found clean, each key's mode) and the ASCII note str leaves for copyString
// change no line. Every record of the sweep corpora, the conformance
// vectors and the test records is redacted by one Redactor, in order and
// then again (every short string and key now remembered), and each time by
// a new Redactor: the lines are the same.
func TestMemoSameLines(t *testing.T) {
	var recs [][]byte
	files, _ := filepath.Glob("../../cmd/e2atap/testdata/sweep*/*.jsonl")
	more, _ := filepath.Glob("../../e2a/testdata/vectors/*.jsonl")
	files = append(files, more...)
	files = append(files, "../../validate/testdata/vectors/e2a_streams.jsonl", "../../cmd/e2atap/testdata/generated-clean.jsonl")
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
				recs = append(recs, bytes.Clone(line))
			}
		}
		f.Close()
	}
	for _, r := range secretRecords() {
		recs = append(recs, []byte(r))
	}
	for _, r := range benchRecords {
		recs = append(recs, []byte(r))
	}
	if len(recs) < 1000 {
		t.Fatalf("only %d records", len(recs))
	}
	for _, content := range []Content{ContentMask, ContentKeep} {
		warm := NewRedactor(content, 65536, testKey)
		for round := range 2 {
			for n, rec := range recs {
				got, gp, gerr := warm.Redact(nil, rec)
				fresh := NewRedactor(content, 65536, testKey)
				want, wp, werr := fresh.Redact(nil, rec)
				if !bytes.Equal(got, want) || strings.Join(gp, ",") != strings.Join(wp, ",") || (gerr == nil) != (werr == nil) {
					t.Fatalf("%v, round %d, record %d %.200s:\nwarm  %s %v\nfresh %s %v", content, round, n, rec, got, gp, want, wp)
				}
				// And the same redactions counted, rule by rule (the
				// metric e2atap_redactions_total).
				if gc, wc := ruleCounts(warm, rec), ruleCounts(fresh, rec); gc != wc {
					t.Fatalf("%v, round %d, record %d %.200s: counts %v warm, %v fresh", content, round, n, rec, gc, wc)
				}
			}
		}
		// The memos were there to be used: one state (not one from the
		// pool, which may drop it, under -race at random) fills both.
		st := &state{r: warm}
		for _, rec := range recs {
			st.reset()
			st.out = st.out[:0]
			st.record(rec, false)
		}
		if st.clean == nil || st.modes == nil {
			t.Fatalf("%v: a state made no memo", content)
		}
	}
}

// TestMemoNeverHidesASecret: a string found to hold something to mask is
// never remembered as clean, nor is a string that differs from a clean one
// only past its first and last words (the memo compares whole strings).
func TestMemoNeverHidesASecret(t *testing.T) {
	r := NewRedactor(ContentKeep, 65536, testKey)
	clean := `{"request_id":"q","metadata":{"note":"the build on main is green again"}}`
	dirty := `{"request_id":"q","metadata":{"note":"password=hunter2xyz and main is green again"}}`
	same := `{"request_id":"q","metadata":{"note":"the build ghp_16C7e42F292c6912E7710c838347Ae178B4a green again"}}`
	for range 3 {
		for _, rec := range []string{clean, dirty, same} {
			out, _, err := r.Redact(nil, []byte(rec))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(out, []byte("hunter2xyz")) || bytes.Contains(out, []byte("ghp_16C7e42F")) {
				t.Fatalf("a secret survived after the memo saw its neighbours: %s", out)
			}
			if rec == clean && !bytes.Contains(out, []byte("the build on main is green again")) {
				t.Fatalf("clean text changed: %s", out)
			}
		}
	}
}

// TestWriterSecretFree: the record log's "secret" (what a replay reports
// as e2a.secret) follows the engine's own test: a record the engine's scan
// found free of anything e2a.secret reports (RecordInfo.SecretFree) is not
// walked again, and one it did not is.
func TestWriterSecretFree(t *testing.T) {
	rec := []byte(`{"request_id":"q","metadata":{"note":"password=hunter2xyz"}}`)
	for _, free := range []bool{false, true} {
		var buf bytes.Buffer
		w := NewWriterTo(&buf, NewRedactor(ContentMask, 65536, testKey))
		ri := jsonInfo(rec)
		ri.In.FromLog = true
		ri.SecretFree = free
		w.Record(ri)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := bytes.Contains(buf.Bytes(), []byte(`"secret":{"kind":`)); got == free {
			t.Fatalf("SecretFree %v: secret in the line %v: %s", free, got, buf.Bytes())
		}
	}
}

// TestStrASCIINote: str notes a string of ASCII only, and copyString then
// copies it without looking for invalid UTF-8; a string with a byte of
// 0x80 or more, before, inside or after a run of eight plain bytes, is
// still written with each invalid byte as U+FFFD, and valid UTF-8 as it is.
func TestStrASCIINote(t *testing.T) {
	r := NewRedactor(ContentKeep, 65536, testKey)
	for _, v := range []string{"\xff", "ab\xff", "abcdefgh\xff", "\xffabcdefghijklmnop", "abcdefghijklmno\xfe", "abcdefgh\xc3", "é中文 abcdefghij"} {
		rec := `{"request_id":"q","metadata":{"plain":"abcdefghijklmnop","v":"` + v + `","` + v + `":1}}`
		out, _, err := r.Redact(nil, []byte(rec))
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(out) {
			t.Fatalf("%q: invalid UTF-8 written: %q", v, out)
		}
		var want string // each invalid byte as the escape \ufffd
		for i := 0; i < len(v); {
			r, n := utf8.DecodeRuneInString(v[i:])
			if r == utf8.RuneError && n == 1 {
				want += `\ufffd`
			} else {
				want += v[i : i+n]
			}
			i += n
		}
		if !bytes.Contains(out, []byte(`"v":"`+want+`"`)) {
			t.Fatalf("%q: want the value as %q in %s", v, want, out)
		}
	}
}

// TestDateTimeNothingToMask: mayMask takes a date-time (redact.IsDateTime) as
// clean without searching it; every detector must agree. Random digits in
// every place, fractions of 0 to 9 digits, "Z" and offsets; and what is
// not a date-time (a letter, a missing part, ten fraction digits) is not
// taken for one.
func TestDateTimeNothingToMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	d := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		return string(b)
	}
	st := NewRedactor(ContentMask, 65536, testKey).get()
	for range 200000 {
		s := d(4) + "-" + d(2) + "-" + d(2) + "T" + d(2) + ":" + d(2) + ":" + d(2)
		if f := rng.IntN(10); f > 0 {
			s += "." + d(f)
		}
		switch rng.IntN(3) {
		case 0:
			s += "Z"
		case 1:
			s += "+" + d(2) + ":" + d(2)
		default:
			s += "-" + d(2) + ":" + d(2)
		}
		if !redact.IsDateTime([]byte(s)) {
			t.Fatalf("%q: not a date-time", s)
		}
		if m, ok := st.find([]byte(s), 0); ok {
			t.Fatalf("%q: Find masks %q (%v)", s, s[m.start:m.end], m.rule)
		}
		if _, ok := findDataURL([]byte(s), 0); ok {
			t.Fatalf("%q: a data: URL", s)
		}
	}
	for _, s := range []string{"2026-03-29T12:00:00", "2026-03-29T12:00:00.0123456789Z", "2026-03-29T12:00:00+0800", "2026-03-29 12:00:00Z",
		"2026-03-29T12:00:00.Z", "2026-03-29T12:00:0aZ", "13912345678-29T12:00:00Z", "2026-03-29T12:00:00Z password=hunter2"} {
		if redact.IsDateTime([]byte(s)) {
			t.Errorf("%q taken for a date-time", s)
		}
	}
}

// TestPackMode: a mode survives the memo's packing, every field of it.
func TestPackMode(t *testing.T) {
	if n := reflect.TypeOf(mode{}).NumField(); n != 7 {
		t.Fatalf("mode has %d fields: pack the new ones (packMode, unpackMode) and update this count", n)
	}
	for _, m := range []mode{{}, {act: actCred, rule: RuleAuth, child: ctxCred}, {keep: true}, {ident: true}, {delta: true}, {pwd: true},
		{act: 255, rule: 255, child: 255, keep: true, ident: true, delta: true, pwd: true}} {
		if got := unpackMode(packMode(m)); got != m {
			t.Errorf("%+v -> %+v", m, got)
		}
	}
}

// ruleCounts is what redacting rec counts, rule by rule.
func ruleCounts(r *Redactor, rec []byte) [NumRules]uint32 {
	st := r.get()
	defer r.put(st)
	st.out = nil
	st.record(rec, false)
	return st.counts
}

// TestMemoKeepsRules: under a credential, an auth object or an unknown
// tool's key a member's mode carries its parent's rule, so the same key
// there is counted under different rules by its parents; the modes memo
// must not answer for it from another parent.
func TestMemoKeepsRules(t *testing.T) {
	recs := []string{
		`{"request_id":"q","auth":{"headers":{"x":"v1-secret"}}}`,
		`{"request_id":"q","metadata":{"password":{"x":"v2-secret"}}}`,
		`{"request_id":"q","metadata":{"acmeKey":{"x":"0123456789abcdef0123456789abcdef01234567"}}}`,
	}
	for _, order := range [][]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}} {
		warm := NewRedactor(ContentMask, 65536, testKey)
		for _, i := range order {
			rec := []byte(recs[i])
			if gc, wc := ruleCounts(warm, rec), ruleCounts(NewRedactor(ContentMask, 65536, testKey), rec); gc != wc {
				t.Fatalf("order %v, %s: counts %v after the others, %v alone", order, rec, gc, wc)
			}
		}
	}
}

// TestSourceMemo: the text of a source before its number (all of it for
// a core NATS subject) that needed no mask is remembered and written as
// it is; one with a credential or an e-mail address in it is masked every
// time, never remembered; the number is written as it is (an 11-digit
// line number is not a phone number). Each output is the one a state with
// no memo writes.
func TestSourceMemo(t *testing.T) {
	r := NewRedactor(ContentMask, 65536, testKey)
	secret := "agent.sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789.out"
	ins := []struct {
		in       *validate.Input
		text     string // what is redacted and remembered
		number   string
		remember bool
	}{
		{&validate.Input{Tap: "mesh", Pos: validate.Position{Kind: validate.PosSubject, Name: "agent.a1.out"}}, "mesh:agent.a1.out", "", true},
		{&validate.Input{Tap: "mesh", Pos: validate.Position{Kind: validate.PosSubject, Name: secret}}, "mesh:" + secret, "", false},
		{&validate.Input{Tap: "mesh", Pos: validate.Position{Kind: validate.PosSubject, Name: "agent.a1.out", Offset: 12}}, "mesh:agent.a1.out#", "12", true},
		{&validate.Input{Tap: "logs", Pos: validate.Position{Kind: validate.PosLine, Name: "/var/log/a.jsonl", Line: 13800138000}}, "logs:/var/log/a.jsonl:", "13800138000", true},
		{&validate.Input{Tap: "k", Pos: validate.Position{Kind: validate.PosKafka, Name: "t", Partition: 3, Offset: 99}}, "k:t/3/", "99", true},
		{&validate.Input{Tap: "mesh", Pos: validate.Position{Kind: validate.PosSubject, Name: "user.alice@example.com"}}, "mesh:user.alice@example.com", "", false},
		{&validate.Input{Tap: "logs", Pos: validate.Position{Kind: validate.PosLine, Name: "/home/bob@example.com/a.log", Line: 7}}, "logs:/home/bob@example.com/a.log:", "7", false},
	}
	warm := r.get()
	defer r.put(warm)
	for round := 0; round < 3; round++ {
		for i, c := range ins {
			if got := string(c.in.AppendSource(nil)); got != c.text+c.number {
				t.Fatalf("source %d: %q, want %q", i, got, c.text+c.number)
			}
			fresh := r.get()
			fresh.sources = nil
			fresh.out = fresh.out[:0]
			fresh.source(c.in)
			want := string(fresh.out)
			r.put(fresh)

			hit := false
			if warm.sources != nil {
				_, hit = warm.sources.get([]byte(c.text))
			}
			warm.out = warm.out[:0]
			warm.source(c.in)
			got := string(warm.out)
			if got != want {
				t.Errorf("round %d, source %d: %q, a state with no memo wrote %q", round, i, got, want)
			}
			if strings.Contains(got, "sk-proj-") || strings.Contains(got, "@example.com") {
				t.Errorf("round %d, source %d: written unmasked: %q", round, i, got)
			}
			if !strings.HasSuffix(got, c.number) {
				t.Errorf("round %d, source %d: %q does not end with its number %q", round, i, got, c.number)
			}
			if wantHit := round > 0 && c.remember; hit != wantHit {
				t.Errorf("round %d, source %d: remembered %v, want %v", round, i, hit, wantHit)
			}
		}
	}
}
