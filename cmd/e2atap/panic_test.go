package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// panicMark is the text that makes the test binary's engine panic
// (validate.TestingPanicOn, set from E2ATAP_TEST_PANIC_ON in TestMain).
const panicMark = "PLANTED-ENGINE-PANIC"

// TestEnginePanicCostsOneRecord: a record that makes the engine panic (a
// defect of e2atap, planted here) costs that record alone. The real
// binary relays a Gateway↔AgentServer connection whose stream carries it:
// the process stays up, the Gateway gets every message byte for byte, the
// panic is counted (e2atap_engine_panics_total) and logged once with its
// stack and never the record, its stream is not judged across the skipped
// record (no false seq_gap), and another connection's planted violation is
// still found. Before OnPanic the panic ended the process and every relayed
// connection with it.
func TestEnginePanicCostsOneRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	upstream := requestServer(t, func(c *websocket.Conn, id string, _ []byte) bool {
		var msgs []string
		switch id {
		case "boom":
			msgs = e2aStream(id, 0, 4, false, true)
			msgs[1] = strings.Replace(msgs[1], `"delta":"x"`, `"delta":"`+panicMark+`"`, 1)
		case "gap":
			msgs = e2aStream(id, 0, 4, false, true, 2) // sequence 2 lost: a seq_gap
		}
		for _, m := range msgs {
			if c.WriteMessage(websocket.TextMessage, []byte(m)) != nil {
				return false
			}
		}
		return true
	})
	dir := t.TempDir()
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	findings := filepath.Join(dir, "findings.jsonl")
	records := filepath.Join(dir, "records.jsonl")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {join_window: 0s}
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q}
outputs:
  findings: {path: %q}
  log: {path: %q}
`, listen, wsListen, upstream, findings, records)), 0o644)
	cmd, stderr := startE2atap(t, []string{"E2ATAP_TEST_PANIC_ON=" + panicMark}, "run", "--config", cfgPath)
	waitReady(t, listen)

	// stream sends a request on a new connection and reads the stream.
	stream := func(id string, n int) []string {
		c := dialWS(t, wsListen)
		req := fmt.Sprintf(`{"protocol_version":"1.0","request_id":%q,"session_id":"sess","method":"chat.send","params":{"query":"hi"},"timestamp":"2026-03-29T12:00:00Z","identity_origin":"user","is_stream":true}`, id)
		if err := c.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		var got []string
		for range n {
			_, b, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("stream %s: message %d: %v", id, len(got), err)
			}
			got = append(got, string(b))
		}
		c.Close() // the Gateway goes: no close handshake held at the stop
		return got
	}
	boom := stream("boom", 5)
	if !strings.Contains(boom[1], panicMark) || !strings.Contains(boom[4], `"is_final":true`) {
		t.Fatalf("the relay changed the stream: %q", boom)
	}
	pollUntil(t, "the panic to be counted", 20*time.Second, func() bool {
		return sumMetric(scrapeQuiet(listen), "e2atap_engine_panics_total", "") == 1
	})
	// The process goes on: another connection relays, and its planted
	// violation is found.
	stream("gap", 4)
	pollUntil(t, "the seq_gap of the other stream", 20*time.Second, func() bool {
		b, _ := os.ReadFile(findings)
		return strings.Contains(string(b), `"stream":"gap"`)
	})
	stopProcess(t, cmd)

	var got []string
	for _, f := range readFindings(t, findings) {
		got = append(got, f.Rule+" "+f.Stream)
	}
	if len(got) != 1 || got[0] != "e2a.seq_gap gap" {
		t.Errorf("findings %q, want only the planted seq_gap of stream gap: the stream of the skipped record is not judged across it", got)
	}
	logged := stderr.lines(enginePanicMsg)
	if len(logged) != 1 {
		t.Fatalf("%d log lines of the panic, want 1:\n%s", len(logged), tail([]byte(stderr.String()), 3000))
	}
	if st, _ := logged[0]["stack"].(string); !strings.Contains(st, "validate.(*Engine).Observe") {
		t.Errorf("the panic's log line has no stack of the engine: %q", st)
	}
	if strings.Contains(stderr.String(), panicMark) {
		t.Error("the process log holds the record's text")
	}
	if b, _ := os.ReadFile(records); strings.Contains(string(b), panicMark) {
		t.Error("the record log holds the skipped record: it was not judged, nor logged")
	}
}

// TestValidatePanicSkipsTheRecord: `e2atap validate` (the real process)
// on a capture whose second stream holds a record that makes the engine
// panic: the panic is said on standard error (where, never the record's
// text), the other stream's planted violation is still printed, and the
// status is 3 (the verdicts are incomplete), on one shard (the reader
// judges the record and stops there) and two (its shard skips it alone).
// Before, the panic ended validate (status 2 and a Go trace) with nothing
// printed of what came before it.
func TestValidatePanicSkipsTheRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	var lines []string
	lines = append(lines, e2aStream("fine", 0, 4, true, true, 2)...) // a seq_gap
	boom := e2aStream("boom", 0, 3, true, true)
	boom[2] = strings.Replace(boom[2], `"delta":"x"`, `"delta":"`+panicMark+`"`, 1)
	lines = append(lines, boom...)
	path := filepath.Join(t.TempDir(), "capture.jsonl")
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	// Over 1 MiB, two shards split the file and each judges what it
	// scans (splitwalk.go): the record is skipped there alone too.
	big := filepath.Join(t.TempDir(), "big.jsonl")
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		for _, l := range e2aStream(fmt.Sprintf("pad-%d", i), 0, 4, true, true) {
			b.WriteString(l + "\n")
		}
		if i == 2000 {
			for _, l := range lines {
				b.WriteString(l + "\n")
			}
		}
	}
	os.WriteFile(big, []byte(b.String()), 0o644)
	for _, c := range []struct{ shards, path, where string }{
		{"1", path, path + " "},
		{"2", path, path + ":8 "},
		{"2", big, big + ":"},
	} {
		shards, path := c.shards, c.path
		cmd := exec.Command(os.Args[0], "validate", "--output", "json", "--shards", shards, path)
		cmd.Env = append(os.Environ(), "E2ATAP_BE_MAIN=1", "E2ATAP_TEST_PANIC_ON="+panicMark)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if code != exitInternal {
			t.Errorf("--shards %s: exit %d (%v), want %d\n%s", shards, code, err, exitInternal, stderr.String())
		}
		if !strings.Contains(stdout.String(), `"rule":"e2a.seq_gap","severity":"error","stream":"fine"`) {
			t.Errorf("--shards %s: the other stream's seq_gap is not printed: %s", shards, stdout.String())
		}
		if strings.Contains(stdout.String(), `"stream":"boom"`) {
			t.Errorf("--shards %s: a finding for the stream of the skipped record: %s", shards, stdout.String())
		}
		// One shard: the reader judges the record itself and stops there
		// (it names the file); on two, the record's shard skips it alone
		// (it names the line: boom's sequence 1).
		want := "internal error judging " + c.where
		if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "1 records skipped for an internal error") {
			t.Errorf("--shards %s: standard error does not name the skipped record (%q):\n%s", shards, want, stderr.String())
		}
		if strings.Contains(stderr.String(), panicMark) || strings.Contains(stdout.String(), panicMark) {
			t.Errorf("--shards %s: the record's text was printed", shards)
		}
	}
}
