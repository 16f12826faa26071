package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/frame"
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

// TestValidateShardsSameVerdicts: --max-streams is one bound over all
// shards and eviction does not depend on them: a capture with far more
// open streams than the bound gives byte-identical findings and outcomes
// (which streams were evicted included: an evicted stream is gapped, so
// it is never missing_final, while the others are) for --shards 1, 2, 4
// and 8.
func TestValidateShardsSameVerdicts(t *testing.T) {
	var b strings.Builder
	line := func(id string, seq int, final bool) {
		kind, status, body := "e2a.chunk", "in_progress", `{"delta_kind":"text","delta":"x"}`
		if final {
			kind, status, body = "e2a.complete", "succeeded", `{"result":{}}`
		}
		fmt.Fprintf(&b, `{"protocol_version":"1.0","response_id":"%s-%d","request_id":"%s","sequence":%d,"is_final":%t,"status":"%s","response_kind":"%s","timestamp":"2026-03-29T12:00:00Z","provenance":{"source_protocol":"e2a"},"body":%s}`+"\n",
			id, seq, id, seq, final, status, kind, body)
	}
	// 40000 streams open at once against a bound of 32768 (2 partitions),
	// then each gets a second chunk (in another order) and a final.
	const streams = 40000
	for i := 0; i < streams; i++ {
		line(fmt.Sprintf("q%05d", i), 0, false)
	}
	for i := 0; i < streams; i++ {
		line(fmt.Sprintf("q%05d", (i*7)%streams), 1, false)
	}
	for i := streams - 1; i >= 0; i-- {
		line(fmt.Sprintf("q%05d", i), 2, i%3 == 0)
	}
	capture := filepath.Join(t.TempDir(), "many.jsonl")
	if err := os.WriteFile(capture, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var first string
	// (--shards 4 would be capped at 2 here, one per 16384 streams: the
	// same run as 2; the cap is validate's TestShardsBounded and
	// TestValidateShardsSameOnFaultyTraffic's.)
	for _, shards := range []string{"1", "2"} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"validate", "--output", "json", "--fail-on", "warning", "--max-streams", "32768", "--shards", shards, capture}, strings.NewReader(""), &out, &errb)
		if code != exitFindings {
			t.Fatalf("--shards %s: exit %d\n%s", shards, code, errb.String())
		}
		if !strings.Contains(out.String(), `"e2a.missing_final"`) || strings.Contains(errb.String(), "evicted: 0") {
			t.Fatalf("--shards %s: no eviction seen\n%s", shards, errb.String())
		}
		var summary []string
		for _, l := range strings.Split(timing.ReplaceAllString(errb.String(), "in T (R records/s)"), "\n") {
			if strings.Contains(l, "capped at") {
				t.Logf("--shards %s: %s", shards, l) // fewer CPUs (or partitions) than asked for
				continue
			}
			summary = append(summary, l)
		}
		got := out.String() + "--- summary\n" + strings.Join(summary, "\n")
		if first == "" {
			first = got
			continue
		}
		if got != first {
			t.Errorf("--shards %s: findings differ from --shards 1", shards)
		}
	}
}

// TestValidateFramesShardsSameVerdicts: a frame file (big enough to be
// read through its mapping) with gaps, chunks after done, streams without
// a done chunk, bad attributes and a corrupt tail gives byte-identical
// findings and summary for --shards 1 (judged on the reader's goroutine),
// 2 and 4.
func TestValidateFramesShardsSameVerdicts(t *testing.T) {
	var capture []byte
	for i := 0; i < 24000; i++ {
		s := i % 97
		seq := int32(i / 97)
		attrs := []frame.Attr{{Name: "sid", Value: fmt.Sprintf("agent:%03d", s)}, {Name: "etype", Value: "text"}}
		var flags uint8
		switch {
		case i%1013 == 5:
			seq += 3 // a gap
		case i%777 == 1:
			attrs[1].Value = "poem"
		case i%501 == 2:
			attrs = append(attrs, frame.Attr{Name: "sid", Value: "other"})
		}
		if s%5 == 0 && seq == 100 {
			flags = frame.FlagDone // later chunks of the stream: after done
		}
		b, err := frame.AppendFrame(nil, frame.TypeStreamChunk, flags, seq, attrs, bytes.Repeat([]byte("t"), 80))
		if err != nil {
			t.Fatal(err)
		}
		capture = append(capture, b...)
	}
	capture = append(capture, frame.Magic, frame.Version, 2, 0, 0)
	path := filepath.Join(t.TempDir(), "mesh.frames")
	if err := os.WriteFile(path, capture, 0o644); err != nil {
		t.Fatal(err)
	}
	var first string
	for _, shards := range []string{"1", "2", "4"} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"validate", "--output", "json", "--fail-on", "warning", "--shards", shards, path}, strings.NewReader(""), &out, &errb)
		if code != exitFindings {
			t.Fatalf("--shards %s: exit %d\n%s", shards, code, errb.String())
		}
		for _, rule := range []string{"frame.seq_gap", "frame.after_done", "frame.missing_done", "frame.etype", "frame.attr", "frame.decode"} {
			if !strings.Contains(out.String(), `"`+rule+`"`) {
				t.Fatalf("--shards %s: no %s finding\n%s", shards, rule, errb.String())
			}
		}
		var summary []string
		for _, l := range strings.Split(timing.ReplaceAllString(errb.String(), "in T (R records/s)"), "\n") {
			if !strings.Contains(l, "capped at") {
				summary = append(summary, l)
			}
		}
		got := out.String() + "--- summary\n" + strings.Join(summary, "\n")
		if first == "" {
			first = got
			continue
		}
		if got != first {
			t.Errorf("--shards %s: findings differ from --shards 1", shards)
		}
	}
}

// TestValidateTextEndingAtAToolFlag: a delta that ends where a tool
// flag's value would start (" -pAss pass:", an openssl command cut by
// the chunk) made the credential search index past the text: validate
// (and run's engine) died with a panic on the first such record. Each is
// read and judged now.
func TestValidateTextEndingAtAToolFlag(t *testing.T) {
	var in strings.Builder
	for i, d := range []string{" -pAss pass:", "openssl rsa -passin pass:", "x -passout pass:", "keytool -storepass", "zip -P", "ldapsearch -w", "sqlcmd -P"} {
		fmt.Fprintf(&in, `{"protocol_version":"1.0","response_id":"r%d","request_id":"r%d","sequence":0,"is_final":true,"status":"succeeded","response_kind":"e2a.chunk","body":{"delta":%q}}`+"\n", i, i, d)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"validate", "--output", "json", "-"}, strings.NewReader(in.String()), &out, &errb)
	if code != exitOK && code != exitFindings {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "7 records") {
		t.Fatalf("not every record was read: %s", errb.String())
	}
}

// TestValidateCodeAboutCredentialsIsNoSecret: the real binary on a log an
// agent platform writes: a stream of code deltas that declare and test
// credentials, other redactors' marks, and the same E2A records as
// Docker's json-file driver wraps them (`{"log":"<the record as a
// string>",...}`: every `"auth": null` of the request was a finding). One
// planted password is the only e2a.secret finding.
func TestValidateCodeAboutCredentialsIsNoSecret(t *testing.T) {
	deltas := []string{
		"def login(user: str, password: str) -> None:\n",
		"    password: Optional[str] = None\n    if password == None:\n",
		"interface Creds { password: string; token?: string }\n",
		"pub struct Db { password: String, api_key: SecretStr }\n",
		"if password == nil {\n\treturn errNoPassword\n}\n",
		"config: password: ***, api_key: sk-..., token: [REDACTED], secret: ****1234\n",
		"Authorization: Bearer ***\n",
		"db = connect(password=settings.DB_PASSWORD, api_key=self.api_key)\n",
		"const apiKey = process.env.OPENAI_API_KEY;\nheaders = {\"Authorization\": f\"Bearer {token}\"}\n",
	}
	rec := func(seq int, final bool, delta string) string {
		b, _ := json.Marshal(map[string]any{"protocol_version": "1.0", "response_id": "code-1", "request_id": "code-1",
			"sequence": seq, "is_final": final, "status": map[bool]string{false: "in_progress", true: "succeeded"}[final],
			"response_kind": "e2a.chunk", "timestamp": "2026-12-06T10:00:00+00:00", "provenance": map[string]any{"source_protocol": "e2a"},
			"body": map[string]any{"delta_kind": "text", "delta": delta}})
		return string(b)
	}
	var lines []string
	for i, d := range deltas {
		lines = append(lines, rec(i, i == len(deltas)-1, d))
	}
	request := `{"protocol_version": "1.0", "request_id": "req-7", "session_id": "s", "user_id": "u-1", "agent_ref": null, "method": "chat.send", "params": {"query": "hi"}, "is_stream": true, "auth": null, "channel_context": {}}`
	for _, l := range append([]string{request}, lines...) {
		b, _ := json.Marshal(map[string]string{"log": l + "\n", "stream": "stdout", "time": "2026-12-06T10:00:00.000000001Z"})
		lines = append(lines, string(b))
	}
	lines = append(lines, `{"msg":"connecting","password":"q8Jz2LmX-hunter"}`)
	path := filepath.Join(t.TempDir(), "agent.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := corpusProcess(t, nil, nil, "validate", "--output", "json", path)
	if code != exitFindings {
		t.Fatalf("exit %d, want %d: %s", code, exitFindings, stderr)
	}
	var secrets []string
	for _, l := range strings.Split(strings.TrimSpace(string(stdout)), "\n") {
		var f struct{ Rule, Source, Message string }
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatalf("finding %q: %v", l, err)
		}
		if f.Rule == "e2a.secret" {
			secrets = append(secrets, f.Source+": "+f.Message)
		}
	}
	want := fmt.Sprintf("%s:%d", path, len(lines))
	if len(secrets) != 1 || !strings.HasPrefix(secrets[0], want+":") {
		t.Errorf("e2a.secret findings %q, want one, at %s", secrets, want)
	}
}
