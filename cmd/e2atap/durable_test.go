package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/validate"
)

// TestResumeMarks: what the sidecar learns from its record log's tail
// recognises exactly the records a tap reads again after a crash (same
// source, offset and length), once each, and stops recognising anything of
// a source once the tap is past the marks or says the source changed (a
// gap, a loss), so that new content at the same name is judged.
func TestResumeMarks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "records.jsonl")
	cfg := jsonlog.DefaultConfig()
	cfg.Path = path
	w, err := jsonlog.NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ecfg := validate.DefaultConfig()
	e := validate.NewEngine(ecfg, w)
	line := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"request_id":"r%d","response_id":"x%d","sequence":0,"is_final":true,"status":"succeeded","response_kind":"complete","timestamp":"2026-03-29T12:00:00Z","body":{}}`, i, i))
	}
	in := func(tapName, file string, i int) validate.Input {
		return validate.Input{Tap: tapName, FromLog: true, Data: line(i),
			Pos: validate.Position{Kind: validate.PosLine, Name: file, Line: int64(i + 1), Offset: int64(i * 1000)}}
	}
	for _, f := range []string{"/logs/a.jsonl", "/logs/b.jsonl", "/logs/c.jsonl"} {
		for i := 0; i < 10; i++ {
			x := in("logs", f, i)
			e.Observe(&x)
		}
	}
	ws := validate.Input{Tap: "agent-ws", Conn: "c1", Data: line(0), Pos: validate.Position{Kind: validate.PosConn, Name: "c1", Offset: 0}}
	e.Observe(&ws)
	w.Close()
	// A torn last line (a crash in a write) is no mark.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"request_id":"r99","_e2atap":{"tap":"logs","at":{"src":"/logs/a.jsonl","off":99000,"len":`)
	f.Close()

	r, err := loadResumeMarks(path, w.ResumeSource)
	if err != nil {
		t.Fatal(err)
	}
	seen := func(x validate.Input) bool { return r.seen(&x) }

	// a: read again from line 5: recognised once each, then past the end.
	for i := 5; i < 10; i++ {
		if !seen(in("logs", "/logs/a.jsonl", i)) {
			t.Fatalf("a line %d read again is not recognised", i)
		}
	}
	if seen(in("logs", "/logs/a.jsonl", 5)) {
		t.Fatal("a record is recognised twice")
	}
	if seen(in("logs", "/logs/a.jsonl", 10)) {
		t.Fatal("a new line is recognised")
	}
	// b: a different line at a logged offset (a new file at the name).
	other := in("logs", "/logs/b.jsonl", 3)
	other.Data = append(other.Data, ' ')
	if seen(other) {
		t.Fatal("a line of another length at a logged offset is recognised")
	}
	// b: a gap (a truncation) drops its marks.
	g := in("logs", "/logs/b.jsonl", 0)
	g.Gap = true
	if seen(g) || seen(in("logs", "/logs/b.jsonl", 1)) {
		t.Fatal("marks survive a gap of their source")
	}
	// c: a loss of the tap drops every mark of the tap.
	r.lost("logs", "")
	if seen(in("logs", "/logs/c.jsonl", 2)) {
		t.Fatal("marks survive a loss of their tap")
	}
	// A WebSocket connection id means nothing after a restart.
	if seen(ws) {
		t.Fatal("a ws message is recognised")
	}
	if r.active.Load() != 0 {
		t.Fatalf("%d taps with marks left", r.active.Load())
	}
	if r.skippedCount() != 5 {
		t.Fatalf("skipped %d, want 5", r.skippedCount())
	}
}
