package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestDeltaStartingWithStarPasswordIsJudged: a model's markdown that opens
// a delta with "*password*" (italics) made the secret pre-check's expect
// glob look one byte before the text (redact.expectGlob, s[-1]): validate
// stopped with an internal error and incomplete verdicts, and a live tap
// skipped the record. It is judged now, with no finding.
func TestDeltaStartingWithStarPasswordIsJudged(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	var b bytes.Buffer
	for _, d := range []string{"*password* is required", "*Password*: see the vault", "*password"} {
		b.WriteString(`{"protocol_version": "1.0", "response_id": "r-` + d[:3] + `", "request_id": "r-` + d[:3] + `", "sequence": 0, "is_final": false, "status": "in_progress", "response_kind": "e2a.chunk", "timestamp": "2026-12-07T00:00:00Z", "provenance": {"source_protocol": "e2a"}, "body": {"delta_kind": "text", "delta": "` + d + `"}}` + "\n")
	}
	capture := filepath.Join(t.TempDir(), "star.jsonl")
	if err := os.WriteFile(capture, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := binaryProcess(t, os.Args[0], nil, nil, "validate", "--fail-on", "never", "--output", "json", capture)
	if code != 0 || bytes.Contains(stderr, []byte("internal error")) || bytes.Contains(stderr, []byte("skipped")) {
		t.Fatalf("validate: exit %d\n%s", code, stderr)
	}
}
