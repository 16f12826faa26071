package e2a

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite the FuzzScan and FuzzScanSecrets seed corpora under testdata/fuzz")

// outcome is what the fuzz targets compare: ok, not an object, or invalid.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrNotObject):
		return "not-object"
	default:
		return "invalid"
	}
}

func fmtValue(v *Value) string {
	if v.Type == Absent {
		return "absent"
	}
	return fmt.Sprintf("%v/%v/%q", v.Type, v.Bool, v.Str)
}

// diffRecords lists every Field, Sub and flag on which a and b differ.
func diffRecords(a, b *Record) []string {
	var d []string
	same := func(x, y *Value) bool {
		return x.Type == y.Type && x.Bool == y.Bool && bytes.Equal(x.Str, y.Str)
	}
	for i := range a.Fields {
		if !same(&a.Fields[i], &b.Fields[i]) {
			d = append(d, fmt.Sprintf("%s: %s vs %s", FieldKeys[i], fmtValue(&a.Fields[i]), fmtValue(&b.Fields[i])))
		}
	}
	for i := range a.Subs {
		if !same(&a.Subs[i], &b.Subs[i]) {
			d = append(d, fmt.Sprintf("%s: %s vs %s", SubPaths[i], fmtValue(&a.Subs[i]), fmtValue(&b.Subs[i])))
		}
	}
	if a.FileWithoutURI != b.FileWithoutURI {
		d = append(d, fmt.Sprintf("FileWithoutURI: %v vs %v", a.FileWithoutURI, b.FileWithoutURI))
	}
	return d
}

// checkScan compares Scan with ScanStd on data, with a fresh Record and
// with one that held another message before (stale state must not leak).
func checkScan(t testing.TB, data []byte, reused *Record) {
	t.Helper()
	var want Record
	wantErr := ScanStd(data, &want)
	for _, r := range []*Record{new(Record), reused} {
		err := Scan(data, r)
		if outcome(err) != outcome(wantErr) {
			t.Fatalf("Scan(%q): %v (%s), ScanStd: %v (%s)", data, err, outcome(err), wantErr, outcome(wantErr))
		}
		checkMayHoldSecret(t, data, r, err)
		if outcome(err) == "invalid" {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Scan(%q): error %T, want *SyntaxError", data, err)
			}
			if se.Offset < 0 || se.Offset > int64(len(data)) {
				t.Fatalf("Scan(%q): offset %d out of range", data, se.Offset)
			}
		}
		if d := diffRecords(r, &want); len(d) > 0 {
			t.Fatalf("Scan(%q) differs from ScanStd (Scan vs ScanStd):\n%s", data, strings.Join(d, "\n"))
		}
	}
}

func deep(open, close string, n int) string {
	return strings.Repeat(open, n) + strings.Repeat(close, n)
}

// scanCases are the table cases and the seeds of FuzzScan.
var scanCases = []string{
	// realistic records
	`{"protocol_version": "1.0", "response_id": "q1-r0", "request_id": "q1", "sequence": 0, "is_final": false, "status": "in_progress", "response_kind": "e2a.chunk", "timestamp": "2026-03-29T12:00:00+00:00", "provenance": {"source_protocol": "e2a"}, "body": {"delta_kind": "text", "delta": "tok0"}}`,
	`{"protocol_version":"1.0","response_id":"q1","request_id":"q1","sequence":-1,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00+00:00","provenance":{},"body":{"event_type":"keepalive"}}`,
	`{"protocol_version":"1.0","response_id":"p","request_id":"","sequence":0,"is_final":true,"status":"succeeded","response_kind":"e2a.complete","metadata":{"_jiuwenswarm_server_push":true},"body":{"result":{"content":"ok"}}}`,
	`{"protocol_version":"1.0","request_id":"r1","session_id":"s1","method":"chat.send","jsonrpc_id":7,"params":{"intent":"cancel","_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},"files":[{"uri":"file:///a"},{"name":"x"}]},"acp_meta":{"traceparent":"x"},"channel_context":{"traceparent":"y"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request"}}`,
	`{"jsonrpc":"2.0","id":"a","result":{"sessionId":"s"}}`,
	`{"type":"event","event":"connection.ack","payload":{"ok":true}}`,
	`{"specversion":"1.0","type":"t","source":"s","id":"1","data":{}}`,
	`{"request_id":"r","channel_id":"c","ok":true,"payload":{"x":1},"is_complete":false}`,
	`{"body":{"delta_kind":"text","delta":"a","result":null,"code":"E","message":"m","branch":"task","payload":{},"sessionUpdate":"agent_message_chunk","ext_method":"x/y","event_type":"e"}}`,
	// not objects, empty and whitespace
	``, ` `, `null`, `true`, `false`, `0`, `-0`, `1e400`, `"str"`, `[]`, `[{}]`, ` [1, 2] `, `{}`, ` {} `, "\t\r\n{}\t\r\n", "\v{}", "\f{}", "{}\u00a0", "\xef\xbb\xbf{}", "{}\x00", "\x00",
	`{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{"a":1 "b":2}`, `{"a" 1}`, `[1,]`, `[,1]`, `{}}`, `{}{}`, `{} x`, `{"a":1}]`, `{'a':1}`, `{a:1}`,
	// strings that look like keys
	`{"x":"\"sequence\": 5","body":"{\"delta\":1}"}`,
	`{"nested":{"sequence":1,"body":{"delta":"no"}},"arr":[{"sequence":2}],"sequence":3}`,
	`{"metadata":{"x":{"_jiuwenswarm_server_push":true}},"params":{"x":{"intent":"no"}}}`,
	// escaped keys and values
	`{"sequ\u0065nce":1,"b\u006fdy":{"d\u0065lta":"\u0041\n\t\"\\\/\b\f\r"}}`,
	`{"Sequence":1,"SEQUENCE":2,"sequence ":3," sequence":4}`,
	`{"se\quence":1}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12G4"}`, `{"a":"\U0041"}`, `{"a":"\'"}`,
	// surrogates
	`{"status":"\ud83d\ude00"}`, `{"status":"\uD83D\uDE00"}`, `{"status":"\ud83d"}`, `{"status":"\ude00"}`, `{"status":"\ude00\ud83d"}`,
	`{"status":"\ud83d\ud83d\ude00"}`, `{"status":"\ud83dx"}`, `{"status":"\ud83d\n"}`, `{"status":"\ud83d\u0041"}`, `{"st\ud800atus":1}`,
	`{"status":"\u0000"}`, `{"status":"\uFFFD\uffff\u0080"}`,
	// duplicate keys, top level and nested
	`{"sequence":1,"sequence":"x"}`, `{"is_final":true,"is_final":false}`,
	`{"body":{"delta":"a","code":1},"body":{"delta":"b"}}`, `{"body":{"delta":"a"},"body":"x"}`, `{"body":{"delta":"a","delta":null}}`,
	`{"metadata":{"_jiuwenswarm_server_push":true},"metadata":{}}`, `{"metadata":{"_jiuwenswarm_server_push":true,"_jiuwenswarm_server_push":"true"}}`,
	`{"params":{"intent":"cancel","_meta":{"traceparent":"a"}},"params":{"files":[1]}}`,
	`{"params":{"_meta":{"traceparent":"a"},"_meta":5},"acp_meta":{"traceparent":"b"}}`,
	`{"params":{"_meta":{"traceparent":"a","traceparent":null}},"channel_context":{"traceparent":"c"}}`,
	`{"acp_meta":{"traceparent":"b"},"acp_meta":[],"channel_context":{"traceparent":"c"}}`,
	`{"channel_context":{"traceparent":"c"},"acp_meta":{"x":1},"params":{"_meta":"no"}}`,
	`{"error":{"code":1,"message":"m"},"error":null}`, `{"error":{"code":1,"code":"x"}}`,
	// files and attachments
	`{"params":{"files":[{"uri":"a"},{"uri":"b"}]}}`, `{"params":{"files":[{"uri":1}]}}`, `{"params":{"files":[{"uri":"a","uri":null}]}}`,
	`{"params":{"files":[{"uri":null,"uri":"a"}]}}`, `{"params":{"attachments":["x"]}}`, `{"params":{"files":[],"attachments":[{}]}}`,
	`{"params":{"files":[{"uri":"a"}],"files":[{}]}}`, `{"params":{"files":[{}],"files":[]}}`, `{"params":{"files":{"uri":"a"}}}`,
	`{"params":{"files":[{"u\u0072i":"a"}, [ ], null]}}`, `{"files":[{}],"params":{"x":[{}]}}`,
	// numbers
	`{"sequence":-0}`, `{"sequence":1e400}`, `{"sequence":123456789012345678901234567890}`, `{"sequence":1.0}`, `{"sequence":1E+2}`, `{"sequence":2e-3}`,
	`{"sequence":01}`, `{"sequence":-}`, `{"sequence":1.}`, `{"sequence":.1}`, `{"sequence":1e}`, `{"sequence":1e+}`, `{"sequence":+1}`, `{"sequence":0x1}`, `{"sequence":- 1}`, `{"sequence":NaN}`, `{"sequence":Infinity}`,
	`1`, `-`, `01`, `1 `, ` 1`, `1.5e+3`, `-`, `-a`, `0.e1`,
	// literals
	`{"is_final":tru}`, `{"is_final":truee}`, `{"is_final":nul}`, `{"is_final":fals}`, `{"is_final":True}`, `tru`, `n`,
	// control characters, NUL, invalid UTF-8
	"{\"status\":\"a\x00b\"}", "{\"status\":\"a\nb\"}", "{\"status\":\"a\x1fb\"}", "{\"status\":\"a\x7fb\"}",
	"{\"status\":\"\xff\"}", "{\"status\":\"a\xc3\"}", "{\"status\":\"\xe2\x82\"}", "{\"status\":\"\xed\xa0\x80\"}", "{\"status\":\"\xf4\x90\x80\x80\"}",
	"{\"status\":\"\xc0\xaf\\n\"}", "{\"status\":\"\xe2\x82\xac\"}", "{\"stat\xffus\":1}", "{\"status\xff\":1}", "{\"status\":1}\xff", "{\xff:1}",
	"{\"body\":{\"delta\":\"\xf0\x9f\x98\x80 long enough to use the word loop \xff\xfe and more\"}}",
	// deep nesting
	deep("[", "]", 100), `{"body":` + deep("[", "]", 200) + `}`, `{"a":` + deep(`{"b":`, "}", 70)[:70*5] + "1" + strings.Repeat("}", 70) + `}`,
	deep("[", "", 20),
}

// deepCases are kept out of the fuzz seeds: at 20 KB each they make the
// fuzzer's minimisation crawl.
var deepCases = []string{
	deep("[", "]", MaxDepth), deep("[", "]", MaxDepth+1), `{"a":` + deep("[", "]", MaxDepth-1) + `}`, `{"a":` + deep("[", "]", MaxDepth) + `}`,
	`{"params":{"files":[{"uri":` + deep("[", "]", MaxDepth-4) + `}]}}`, `{"params":{"files":[{"uri":` + deep("[", "]", MaxDepth-3) + `}]}}`,
}

func TestScanTable(t *testing.T) {
	reused := new(Record)
	for _, c := range append(scanCases, deepCases...) {
		checkScan(t, []byte(c), reused)
	}
}

// TestScanFacts pins down a few results by hand, in case Scan and ScanStd
// ever shared a mistake.
func TestScanFacts(t *testing.T) {
	var r Record
	mustScan := func(s string) {
		t.Helper()
		if err := Scan([]byte(s), &r); err != nil {
			t.Fatalf("Scan(%q): %v", s, err)
		}
	}
	mustScan(`{"sequ\u0065nce": 5, "body": {"code": "a\u00e9\ud83d\ude00\ud83d", "delta": "\u4f60"}, "body2": {"code": "no"}}`)
	if n, ok := r.Sequence(); !ok || n != 5 {
		t.Errorf("escaped key: sequence %d %v", n, ok)
	}
	if got := string(r.Sub(SBodyCode).Str); got != "a\u00e9\U0001F600\uFFFD" {
		t.Errorf("code %q", got)
	}
	// body.delta is presence-only: a validated string, not decoded.
	if d := r.Sub(SBodyDelta); d.Type != String || d.Str != nil {
		t.Errorf("delta %s %q, want a string with no Str", d.Type, d.Str)
	}
	mustScan(`{"body":{"delta":"a"},"body":{"code":"E"}}`)
	if r.Sub(SBodyDelta).Type != Absent || !r.Sub(SBodyCode).Is("E") {
		t.Errorf("duplicate body: delta %s code %s", fmtValue(r.Sub(SBodyDelta)), fmtValue(r.Sub(SBodyCode)))
	}
	mustScan(`{"params":{"_meta":{"traceparent":null}},"acp_meta":{"traceparent":"b"}}`)
	if r.Sub(STraceparent).Type != Null {
		t.Errorf("traceparent %s, want null from params._meta", fmtValue(r.Sub(STraceparent)))
	}
	mustScan(`{"sequence": 1e400, "is_final": -0}`)
	if got := string(r.Get(FSequence).Str); got != "1e400" {
		t.Errorf("number kept as %q", got)
	}
	if err := Scan([]byte(`[1]`), &r); !errors.Is(err, ErrNotObject) {
		t.Errorf("array: %v", err)
	}
	err := Scan([]byte(`{"a": tru}`), &r)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Offset != 9 {
		t.Errorf("syntax error %#v, want offset 9", err)
	}
	if r.Get(FSequence).Type != Absent {
		t.Errorf("record not reset after an error")
	}
}

// TestScanDepth checks the nesting limit against json.Valid itself.
func TestScanDepth(t *testing.T) {
	var r Record
	for _, n := range []int{MaxDepth - 1, MaxDepth, MaxDepth + 1} {
		for _, in := range []string{deep("[", "]", n), deep(`{"a":`, "}", n)[:5*n] + "0" + strings.Repeat("}", n)} {
			err := Scan([]byte(in), &r)
			valid := json.Valid([]byte(in))
			if (err == nil || errors.Is(err, ErrNotObject)) != valid {
				t.Errorf("depth %d (%.2s...): Scan %v, json.Valid %v", n, in, err, valid)
			}
			if want := n <= MaxDepth; valid != want {
				t.Errorf("depth %d: json.Valid %v: encoding/json's limit changed", n, valid)
			}
		}
	}
}

// vectorLines returns every JSON record of the shared conformance vectors:
// the stream captures' lines and the e2a cases' inputs.
func vectorLines(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	files, _ := filepath.Glob("testdata/vectors/*.jsonl")
	files = append(files, "../validate/testdata/vectors/e2a_streams.jsonl")
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatalf("vectors: %v", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var c struct {
				Lines []string        `json:"lines"`
				Input json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, l := range c.Lines {
				out = append(out, []byte(l))
			}
			if len(c.Input) > 0 {
				out = append(out, c.Input)
				var s string
				if json.Unmarshal(c.Input, &s) == nil {
					out = append(out, []byte(s))
				}
			}
		}
		f.Close()
	}
	if len(out) == 0 {
		t.Fatal("no vector lines found")
	}
	return out
}

func TestScanVectors(t *testing.T) {
	reused := new(Record)
	for _, l := range vectorLines(t) {
		checkScan(t, l, reused)
	}
}

func TestScanAllocs(t *testing.T) {
	recs := benchRecords()
	var r Record
	for _, rec := range recs {
		if err := Scan(rec.data, &r); err != nil {
			t.Fatal(err)
		}
	}
	for _, rec := range recs {
		if n := testing.AllocsPerRun(100, func() { _ = Scan(rec.data, &r) }); n != 0 {
			t.Errorf("%s: %v allocs per Scan", rec.name, n)
		}
	}
}

func FuzzScan(f *testing.F) {
	for _, c := range scanCases {
		f.Add([]byte(c))
	}
	for _, rec := range benchRecords() {
		f.Add(rec.data)
	}
	reused := new(Record)
	f.Fuzz(func(t *testing.T, data []byte) {
		// leave something in reused that a wrong reset would leak
		_ = Scan([]byte(`{"sequence":9,"body":{"delta":"\u0041"},"params":{"files":[1],"_meta":{"traceparent":"t"}}}`), reused)
		checkScan(t, data, reused)
	})
}

// TestWriteSeeds writes the table cases to the native fuzz corpus with
// -update-seeds, so that `go test -fuzz` starts from them too.
func TestWriteSeeds(t *testing.T) {
	if !*updateSeeds {
		t.Skip("use -update-seeds to rewrite testdata/fuzz seeds")
	}
	write := func(target string, cases []string) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, c := range cases {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", c)
			name := filepath.Join(dir, fmt.Sprintf("seed-%03d", i))
			if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("FuzzScan", scanCases)
	write("FuzzScanSecrets", secretCases())
}
