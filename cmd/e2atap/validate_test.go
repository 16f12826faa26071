package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestValidateGolden pins the output of validate (text and json) on small
// captures. Valid reference-style traffic gives no finding under its
// profile; the faulty captures give exactly the listed findings.
func TestValidateGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"clean-jiuwenswarm", []string{"validate", "../../testdata/clean.jsonl"}, exitOK},
		{"clean-spec-json", []string{"validate", "--profile", "spec", "--output", "json", "../../testdata/clean.jsonl"}, exitFindings},
		{"faulty", []string{"validate", "../../testdata/faulty.jsonl"}, exitFindings},
		{"faulty-json", []string{"validate", "--output", "json", "../../testdata/faulty.jsonl"}, exitFindings},
		{"faulty-never", []string{"validate", "--fail-on", "never", "--quiet", "../../testdata/faulty.jsonl"}, exitOK},
		{"frames", []string{"validate", "../../testdata/stream.frames"}, exitFindings},
		{"generated-clean", []string{"validate", "testdata/generated-clean.jsonl"}, exitOK},
		{"decode-frames", []string{"decode", "../../testdata/stream.frames"}, exitOK},
		{"decode-frames-show-content", []string{"decode", "--show-content", "../../testdata/stream.frames"}, exitOK},
		{"decode-jsonl", []string{"decode", "../../testdata/faulty.jsonl"}, exitOK},
		{"usage-no-file", []string{"validate"}, exitUsage},
		{"usage-bad-flags", []string{"validate", "--profile", "nope", "--output", "xml", "x"}, exitUsage},
		{"missing-file", []string{"validate", "testdata/does-not-exist.jsonl"}, exitUsage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), c.args, strings.NewReader(""), &out, &errb)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, c.code, errb.String())
			}
			got := timing.ReplaceAllString(out.String()+"--- stderr\n"+errb.String(), "in T (R records/s)")
			golden := filepath.Join("testdata", "golden", c.name+".txt")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s (run with -update after checking):\n%s", golden, got)
			}
		})
	}
}

// TestValidateJSONShape: every json line has the RULES.md keys.
func TestValidateJSONShape(t *testing.T) {
	var out, errb bytes.Buffer
	run(context.Background(), []string{"validate", "--output", "json", "../../testdata/faulty.jsonl"}, nil, &out, &errb)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d findings, want 5:\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"rule", "severity", "stream", "source", "message"} {
			if _, ok := m[k]; !ok {
				t.Errorf("finding without %q: %s", k, l)
			}
		}
	}
}

// TestValidateStdinAndLongLine: "-" reads standard input; a line over the
// limit is one e2a.decode finding and the next line is still read.
func TestValidateStdinAndLongLine(t *testing.T) {
	good := `{"protocol_version":"1.0","response_id":"r","request_id":"q","sequence":0,"is_final":true,"status":"succeeded","response_kind":"e2a.complete","timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":{"result":{}}}`
	in := `{"x":"` + strings.Repeat("a", 5000) + `"}` + "\n" + good + "\n"
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"validate", "--max-line-bytes", "1000", "--output", "json", "-"}, strings.NewReader(in), &out, &errb)
	if code != exitFindings {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"e2a.decode"`) || !strings.Contains(lines[0], `stdin:1`) {
		t.Fatalf("want one e2a.decode finding at stdin:1, got:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), "2 records") {
		t.Fatalf("the line after the long one was not read: %s", errb.String())
	}
}
