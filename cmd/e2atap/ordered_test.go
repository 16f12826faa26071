package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReloadRecordLogKeepsInterruptsInOrder: without a record log a live
// run's interrupts wait for no shard (validate.LiveConfig.Unordered); a
// record log opened at a reload turns the barriers on first, so that the
// log, replayed in its own order, has every record read before an
// interrupt ahead of it and every record read after it behind it, over
// streams on every shard. Closing the log at the next reload turns them
// off again without stopping anything.
func TestReloadRecordLogKeepsInterruptsInOrder(t *testing.T) {
	for _, atStart := range []bool{false, true} {
		t.Run(fmt.Sprintf("log_at_start=%v", atStart), func(t *testing.T) { recordLogOrder(t, atStart) })
	}
}

// recordLogOrder runs TestReloadRecordLogKeepsInterruptsInOrder with the
// record log configured from the start (atStart) or opened by a reload.
func recordLogOrder(t *testing.T, atStart bool) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	os.MkdirAll(logs, 0o755)
	src := filepath.Join(logs, "a.jsonl")
	os.WriteFile(src, nil, 0o644)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	records := filepath.Join(dir, "records.jsonl")
	write := func(withLog bool) {
		log := ""
		if withLog {
			log = fmt.Sprintf("\n  log: {path: %q}", records)
		}
		os.WriteFile(cfgPath, []byte(fmt.Sprintf(`listen: 127.0.0.1:0
streams: {shards: 2}
taps:
  - {name: logs, type: logdir, paths: [%q], positions: %q}
outputs:
  findings: {path: %q}%s
`, filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "positions.json"), filepath.Join(dir, "findings.jsonl"), log)), 0o644)
	}
	write(atStart)
	cfg, err := LoadConfig(cfgPath, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Streams.Shards < 2 {
		t.Fatalf("streams.shards %d: the test needs several", cfg.Streams.Shards)
	}
	sc, err := newSidecar(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(cfgPath)
	sc.watchConfig(cfgPath, configHash(raw), nil, 0) // reloaded by hand
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sc.Run(ctx) }()
	pollUntil(t, "the tap to start", 20*time.Second, func() bool { _, ok := sc.ready.Load("logs"); return ok })

	if !atStart {
		write(true)
		sc.reload(context.Background(), "test", nil)
		if sc.badHash != "" {
			t.Fatal("reload to a record log rejected")
		}
	}
	// Many streams (so, every shard), an interrupt, many more.
	const streams, per = 64, 24
	var b strings.Builder
	line := func(phase string, s, seq int) {
		fmt.Fprintf(&b, `{"protocol_version":"1.0","response_id":"%s-%d-%d","request_id":"%s-%d","sequence":%d,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":{"delta_kind":"text","delta":"x"}}`+"\n",
			phase, s, seq, phase, s, seq)
	}
	for seq := range per {
		for s := range streams {
			line("pre", s, seq)
		}
	}
	b.WriteString(`{"request_id":"stop-1","session_id":"sess-1","method":"chat.interrupt","params":{}}` + "\n")
	for seq := range per {
		for s := range streams {
			line("post", s, seq)
		}
	}
	f, _ := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(b.String())
	f.Close()
	const want = 2*streams*per + 1
	pollUntil(t, "every record in the record log", 60*time.Second, func() bool { return fileLines(records) >= want })

	rf, err := os.Open(records)
	if err != nil {
		t.Fatal(err)
	}
	sc2 := bufio.NewScanner(rf)
	sc2.Buffer(make([]byte, 1<<20), 1<<20)
	seenInterrupt, n := false, 0
	for sc2.Scan() {
		l := sc2.Text()
		n++
		switch {
		case strings.Contains(l, "chat.interrupt"):
			seenInterrupt = true
		case strings.Contains(l, `"pre-`) && seenInterrupt:
			t.Fatalf("record log line %d: a record read before the interrupt is logged after it: %.120s", n, l)
		case strings.Contains(l, `"post-`) && !seenInterrupt:
			t.Fatalf("record log line %d: a record read after the interrupt is logged before it: %.120s", n, l)
		}
	}
	rf.Close()
	if !seenInterrupt || n != want {
		t.Fatalf("record log: %d lines, interrupt seen %v; want %d lines with it", n, seenInterrupt, want)
	}

	write(false)
	sc.reload(context.Background(), "test", nil)
	if sc.badHash != "" {
		t.Fatal("reload without the record log rejected")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("sidecar stopped with: %v", err)
	}
}
