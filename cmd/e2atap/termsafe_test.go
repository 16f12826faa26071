package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/e2atap/e2atap/exporters/observe"
)

func TestTermSafe(t *testing.T) {
	cases := []struct{ in, want string }{
		{"req-6f1c2a4e", "req-6f1c2a4e"},
		{"qé-中文-😀", "qé-中文-😀"},
		{"a\nb", `a\nb`},
		{"x\x1b[31mRED\x07", `x\x1b[31mRED\a`},
		{"tab\there", `tab\there`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085", `c1\u0085`},
		{"bidi\u202eevil", `bidi\u202eevil`},
		{"iso\u2066x\u2069", `iso\u2066x\u2069`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
		{"ls\u2028ps\u2029", `ls\u2028ps\u2029`},
		{`quote " and \ stay`, `quote " and \ stay`},
	}
	for _, c := range cases {
		if got := termSafe(c.in); got != c.want {
			t.Errorf("termSafe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// A value with nothing to escape is returned as is (no copy).
	s := strings.Repeat("req-", 10)
	if got := termSafe(s); got != s {
		t.Errorf("changed %q", s)
	}
}

func FuzzTermSafe(f *testing.F) {
	for _, s := range []string{"a\nb", "\x1b[2J", "\u202e", "\xff", "中"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := termSafe(s)
		if !utf8.ValidString(out) {
			t.Fatalf("termSafe(%q) = %q: not UTF-8", s, out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || unsafeRune(r, utf8.RuneLen(r)) {
				t.Fatalf("termSafe(%q) = %q holds %U", s, out, r)
			}
		}
	})
}

// TestTextOutputsKeepOneLineAFinding: request_ids and response kinds that
// hold a newline, ESC sequences or a right-to-left override (values from
// traffic e2atap does not control) give validate's text output one line a
// finding, with no control character: a request_id with a newline wrote a
// second line, which a script reading one finding a line took for a finding
// of its own. observe's table alike.
func TestTextOutputsKeepOneLineAFinding(t *testing.T) {
	rec := func(rid string, seq int, final bool, kind string) string {
		status, body := "in_progress", `{"delta_kind":"text","delta":"x"}`
		if final {
			status, body = "failed", `{"result":{}}`
		}
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		return fmt.Sprintf(`{"protocol_version":"1.0","response_id":%s,"request_id":%s,"sequence":%d,"is_final":%t,"status":%q,"response_kind":%s,"timestamp":"2026-03-29T12:00:00+00:00","provenance":{},"body":%s}`,
			q(rid+fmt.Sprint(seq)), q(rid), seq, final, status, q(kind), body)
	}
	evil := []string{"a\nfake.jsonl:1: error e2a.secret [x]: injected", "b\x1b]0;owned\x07\x1b[2J", "c\u202eevil", "d\r\x85"}
	var in strings.Builder
	for _, rid := range evil {
		in.WriteString(rec(rid, 0, false, "e2a.chunk") + "\n")
		in.WriteString(rec(rid, 2, true, "e2a.complete\n\x1b[1mkind") + "\n") // a gap, a wrong kind, a failed status
	}
	path := filepath.Join(t.TempDir(), "evil.jsonl")
	if err := os.WriteFile(path, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runCLI(t, "validate", "--fail-on", "never", path)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	findings := 0
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "fake.jsonl") {
			t.Errorf("a line of its own from a request_id: %q", line)
		}
		if strings.HasPrefix(line, path+":") {
			findings++
		}
		for _, r := range line {
			if r < 0x20 && r != '\t' || r == 0x7f || unsafeRune(r, utf8.RuneLen(r)) {
				t.Errorf("line %q holds %U", line, r)
			}
		}
	}
	if findings < 2*len(evil) {
		t.Errorf("%d finding lines, want at least %d (a gap and a kind a stream):\n%s", findings, 2*len(evil), stdout)
	}
	var b strings.Builder
	for _, rid := range evil {
		writeEventRow(&b, &observe.Event{Type: observe.TypeFinding, Tap: "t", Rule: "e2a.seq_gap", Severity: "error", Stream: rid, Message: "m " + rid, Source: "t:f:1"})
		writeEventRow(&b, &observe.Event{Type: observe.TypeRecord, Tap: "t", Stream: rid, Kind: "k\n", Status: "s\x1b", Record: json.RawMessage(`{"x":"` + "\u202e" + `"}`)})
	}
	if n := strings.Count(b.String(), "\n"); n != 2*len(evil) {
		t.Errorf("observe's table: %d lines for %d events:\n%s", n, 2*len(evil), b.String())
	}
	for _, r := range strings.ReplaceAll(b.String(), "\n", "") {
		if r < 0x20 || r == 0x7f || unsafeRune(r, utf8.RuneLen(r)) {
			t.Errorf("observe's table holds %U", r)
		}
	}
}
