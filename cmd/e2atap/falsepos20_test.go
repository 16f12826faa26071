package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestRealTextNoFalseFinding: the binary validates a capture of real text
// an agent relays (an OpenAPI document, a ChangeLog, Node's docs, a
// Debian licence, an HTML manual), as model deltas and as a tool's result
// in a request: no e2a.secret finding but on the one stream that carries
// a password; the record log (keep) still masks it.
func TestRealTextNoFalseFinding(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	texts := []string{
		"paths:\n  /status:\n    get:\n      responses:\n        '200':\n          content:\n            application/json:\n              schema:\n                $ref: '#/components/schemas/StatusConfigOutputBody'\n",
		`{"schema": {"$ref": "#/definitions/googleRpcStatus"}, "image": {"imageRef": "imageRefValue"}, "gmsaCredentialSpec": "gmsaCredentialSpecValue"}`,
		"2009-04-07  Nicolas François\n\n\t* src/passwd.c: Likewise when new password is encrypted.\n\t* man/chgpasswd.8.xml: Likewise.\n\t* man/hu/passwd.5: Fix formatting typo.\n",
		"For example: <code>'https://user:pass@sub.example.com:8080/p/a/t/h?query=string#hash'</code>\n* `passphrase`: {string | Buffer} The passphrase to use\n",
		"  2. Basic Permissions.\n\n  All rights granted under this License are granted for the term of copyright; a basic smoke-test command.\n",
		`<td width="20%" align="center"><a accesskey="u" href="QuickStart.html">Up</a></td>`,
		"* `privateKey`: {KeyObject}\nRemoves the directory identified by `path`.\n\n    cookie.secure = true\n\tauthorization := r.Header.Get(\"Authorization\")\n",
		"\treturn &HTTPConfig{\n\t\tAuthorization: &Authorization{Credentials: c.BearerToken},\n\t}\n\tfor _, ref := range refs {\n",
	}
	const pw = "Kq9zPm2xLw7v"
	ts := "2026-12-08T00:00:00Z"
	var b bytes.Buffer
	line := func(v map[string]any) {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	resp := func(rid string, seq int, final bool, delta string) {
		status, kind := "in_progress", "e2a.chunk"
		body := map[string]any{"delta_kind": "text", "delta": delta}
		if final {
			status, kind, body = "succeeded", "e2a.complete", map[string]any{"result": map[string]any{}}
		}
		line(map[string]any{"protocol_version": "1.0", "response_id": rid, "request_id": rid, "sequence": seq, "is_final": final,
			"status": status, "response_kind": kind, "timestamp": ts, "provenance": map[string]any{"source_protocol": "e2a"}, "body": body})
	}
	for i, s := range texts {
		rid := "doc-" + string(rune('a'+i))
		// Whole, then cut in two deltas (the split check joins them).
		resp(rid, 0, false, s)
		resp(rid, 1, false, s[:len(s)/2])
		resp(rid, 2, false, s[len(s)/2:])
		resp(rid, 3, true, "")
		res, err := json.Marshal(map[string]any{"tool": "read_file", "result": s})
		if err != nil {
			t.Fatal(err)
		}
		line(map[string]any{"protocol_version": "1.0", "request_id": rid + "-tool", "session_id": "s1", "channel": "web",
			"method": "chat.send", "timestamp": ts, "identity_origin": "agent", "params": map[string]any{"content": string(res)}})
	}
	resp("leak", 0, false, "\t* src/passwd.c: Likewise.\n\tpassword = "+pw+"\n")
	resp("leak", 1, true, "")
	capture := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(capture, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	records := filepath.Join(t.TempDir(), "records.jsonl")
	for _, args := range [][]string{
		{"validate", "--output", "json", capture},
		{"validate", "--output", "json", "--log", records, "--log-content", "keep", capture},
	} {
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
		if len(secrets) != 1 || secrets[0] != "leak" {
			t.Errorf("%v: e2a.secret on %v, want on leak alone\n%s", args, secrets, stdout)
		}
	}
	recs, err := os.ReadFile(records)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(recs, []byte(pw)) {
		t.Errorf("the record log prints the password")
	}
}
