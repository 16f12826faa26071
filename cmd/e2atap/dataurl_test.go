package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chanceImage is an image's base64 from make bench-system's py-b64 corpus
// (line 39419) with a Google API key's shape in it by chance ("yUAIza" and
// 40 word bytes before a '+'), where validate reported e2a.secret (google)
// for a model chunk whose delta was a PNG data: URL, and an AWS key id's
// shape ("AKIA" and 16 capitals and digits between two '/'), which is a
// credential in any other text.
const chanceImage = "U8mNLGYmymjthMqdN/OK/NpaKO/Wab1yRyKkVfayzonjCcyUAIza94Db4dPveiXaqEMz4X8WzU8w8TtFoeZhQ6XLLHva+qw0/AKIAIOSFODNN7EXAMPLE/AAAA"

// TestDataURLNoFalseFinding: images as data: URLs, streamed in a model's
// deltas and sent in a chat request's image_url (OpenAI's shape), and as
// a PNG's bare base64 in an image block (Anthropic's shape), are no
// e2a.secret finding through the real binary, with and without a record
// log; the same base64 outside a data: URL still is (the test's premise),
// and the record log masks it either way. A .env file with a GitHub token
// in a data: URL is a finding.
func TestDataURLNoFalseFinding(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	img := "data:image/png;base64," + strings.Repeat(chanceImage, 3)
	ts := "2026-12-07T00:00:00Z"
	var b bytes.Buffer
	line := func(v map[string]any) {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	resp := func(rid string, seq int, final bool, body map[string]any) {
		status, kind := "in_progress", "e2a.chunk"
		if final {
			status, kind = "succeeded", "e2a.complete"
		}
		line(map[string]any{"protocol_version": "1.0", "response_id": rid, "request_id": rid, "sequence": seq, "is_final": final,
			"status": status, "response_kind": kind, "timestamp": ts, "provenance": map[string]any{"source_protocol": "e2a"}, "body": body})
	}
	line(map[string]any{"protocol_version": "1.0", "request_id": "img-req", "session_id": "s1", "channel": "web",
		"method": "chat.send", "timestamp": ts, "identity_origin": "user",
		"params": map[string]any{"query": "what is in it?", "content": []any{map[string]any{"type": "image_url", "image_url": map[string]any{"url": img}}}}})
	// Anthropic's image block: the PNG's base64 with no data: header.
	line(map[string]any{"protocol_version": "1.0", "request_id": "img-req2", "session_id": "s1", "channel": "web",
		"method": "chat.send", "timestamp": ts, "identity_origin": "user",
		"params": map[string]any{"query": "and this?", "content": []any{map[string]any{"type": "image",
			"source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo" + chanceImage}}}}})
	for seq := range 4 {
		resp("img-out", seq, false, map[string]any{"delta_kind": "text", "delta": img})
	}
	resp("img-out", 4, true, map[string]any{"result": map[string]any{}})
	resp("raw-out", 0, false, map[string]any{"delta_kind": "text", "delta": chanceImage})
	resp("raw-out", 1, true, map[string]any{"result": map[string]any{}})
	// A file with a token in a data: URL is one: what decoding the payload
	// finds is no chance.
	env := base64.StdEncoding.EncodeToString([]byte("A=1\nGITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a\n"))
	resp("env-out", 0, false, map[string]any{"delta_kind": "text", "delta": "data:text/plain;base64," + env})
	resp("env-out", 1, true, map[string]any{"result": map[string]any{}})
	capture := filepath.Join(t.TempDir(), "images.jsonl")
	if err := os.WriteFile(capture, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, withLog := range []bool{false, true} {
		args := []string{"validate", "--output", "json", capture}
		records := filepath.Join(t.TempDir(), "records.jsonl")
		if withLog {
			args = append(args[:3:3], "--log", records, "--log-content", "keep", capture)
		}
		stdout, stderr, code := corpusProcess(t, nil, nil, args...)
		if code != exitFindings {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		var secrets []string
		for _, l := range bytes.Split(bytes.TrimSpace(stdout), []byte("\n")) {
			var f struct{ Rule, Stream string }
			if err := json.Unmarshal(l, &f); err != nil {
				t.Fatalf("not a JSON finding: %s", l)
			}
			if f.Rule == "e2a.secret" {
				secrets = append(secrets, f.Stream)
			}
		}
		if len(secrets) != 2 || secrets[0] != "raw-out" || secrets[1] != "env-out" {
			t.Errorf("%v: e2a.secret on %v, want on raw-out and env-out\n%s", args, secrets, stdout)
		}
		if withLog {
			recs, err := os.ReadFile(records)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(recs, []byte("AIza94Db4dPveiXaqEMz")) || bytes.Contains(recs, []byte("AKIAIOSFODNN7")) {
				t.Errorf("the record log prints the key's shape unmasked")
			}
			if bytes.Contains(recs, []byte(env[8:40])) {
				t.Errorf("the record log prints the encoded token")
			}
			if n := bytes.Count(recs, []byte(`"data:image/png;base64,`)); n != 5 {
				t.Errorf("the record log has %d data: URLs, want 5", n)
			}
		}
	}
}
