package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayKeepsRepeatedLines: a capture whose chunk is repeated as it
// was (the same bytes twice: e2a.seq_dup), validated with a record log,
// and that log validated again (the replay): the same finding both times.
// validate's record log gave every line of a file the same resume point
// (offset 0), so the replay took the repeated line for the live run's
// re-read of one after a crash and skipped it: no finding.
func TestReplayKeepsRepeatedLines(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	chunk := func(seq string) string {
		return `{"protocol_version":"1.0","response_id":"dup-1","request_id":"dup-1","sequence":` + seq +
			`,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-12-07T00:00:00Z","provenance":{"source_protocol":"e2a"},"body":{"delta_kind":"text","delta":"hi"}}`
	}
	final := `{"protocol_version":"1.0","response_id":"dup-1","request_id":"dup-1","sequence":2,"is_final":true,"status":"succeeded","response_kind":"e2a.complete","timestamp":"2026-12-07T00:00:00Z","provenance":{"source_protocol":"e2a"},"body":{"result":{}}}`
	dir := t.TempDir()
	capture, records := filepath.Join(dir, "dup.jsonl"), filepath.Join(dir, "records.jsonl")
	if err := os.WriteFile(capture, []byte(strings.Join([]string{chunk("0"), chunk("1"), chunk("1"), final}, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"validate", "--log", records, capture}, {"validate", records}} {
		stdout, stderr, code := corpusProcess(t, nil, nil, args...)
		if code != exitFindings || bytes.Count(stdout, []byte("e2a.seq_dup [dup-1]: sequence 1 repeated")) != 1 {
			t.Errorf("%v: exit %d, want one e2a.seq_dup\n%s%s", args, code, stdout, stderr)
		}
	}
}
