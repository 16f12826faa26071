package natstap

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/e2atap/e2atap/tap"
)

// The cursors file: a corrupt one is counted and the stream read from
// StartSeq as without one; the cursor saved is where the engine says its
// oldest open stream began (BeforeSave), never past it; the next run reads
// on from there, wins over StartSeq, and a run that ends hands its stream
// over (a Lost on the stream's Partition, not counted).
func TestJetStreamCursorsFile(t *testing.T) {
	srv := startServer(t, 0, "")
	js := newJS(t, connect(t, srv.ClientURL()))
	createStream(t, js, jetstream.StreamConfig{Name: "MESH", Subjects: []string{"mesh.>"}})
	publishJS(t, js, "mesh.agent.a", 10, 0)
	path := filepath.Join(t.TempDir(), "cursors.json")
	if err := os.WriteFile(path, []byte(`{"version":1,"str`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The engine holds a stream open since sequence 7.
	open := func(p int32) (int64, bool) { return 7, p == 1 }
	cfg := Config{Name: "mesh", URL: srv.ClientURL(), Streams: []StreamConfig{{Stream: "MESH", StartSeq: 1}},
		Positions: path, SaveInterval: 20 * time.Millisecond,
		BeforeSave: func(context.Context) (OpenFirst, error) { return open, nil }}

	run := func(last int64) (*collector, *tap.Stats) {
		t.Helper()
		c, stats := &collector{}, new(tap.Stats)
		tp, err := New(cfg, stats, discard)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- tp.Run(ctx, c.emit) }()
		waitFor(t, "the stream read to its end", func() bool {
			msgs, _ := c.data()
			return len(msgs) > 0 && msgs[len(msgs)-1].Pos.Offset == last
		})
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		return c, stats
	}
	c, stats := run(10)
	if msgs, _ := c.data(); len(msgs) != 10 || msgs[0].Pos.Offset != 1 || msgs[0].Pos.Partition != 1 {
		t.Fatalf("first run: %d messages from %+v, want 10 from sequence 1 of partition 1", len(msgs), msgs[0].Pos)
	}
	if n := stats.Errors[tap.ErrPositions].Load(); n != 1 {
		t.Errorf("a corrupt cursors file counted %d times, want 1", n)
	}
	got, err := loadCursors(path)
	if err != nil || got.next["MESH"] != 7 {
		t.Fatalf("cursors %v (%v), want MESH at 7, the oldest open stream's first record", got.next, err)
	}
	if got.judged["MESH"] != 11 {
		t.Fatalf("judged marks %v, want MESH at 11: every message up to 10 was judged", got.judged)
	}
	if msgs, _ := c.data(); len(msgs) > 0 && msgs[0].Reread {
		t.Error("the first run marked a message read again")
	}
	c.mu.Lock()
	var handover []tap.Message
	for _, m := range c.msgs {
		if m.Lost {
			handover = append(handover, m)
		}
	}
	c.mu.Unlock()
	if len(handover) != 1 || handover[0].Pos.Kind != tap.PosSubject || handover[0].Pos.Partition != 1 || handover[0].Pos.Name != "" {
		t.Errorf("handed over %+v, want one Lost for partition 1", handover)
	}
	if n := stats.Drops[tap.DropRebalance].Load(); n != 0 {
		t.Errorf("the handover counted as %d losses", n)
	}

	// Nothing open any more: the next run reads on from 7 (not StartSeq),
	// and the 4 messages from there were judged by the first run: read
	// again for their streams' state only (Reread).
	open = func(int32) (int64, bool) { return 0, false }
	publishJS(t, js, "mesh.agent.a", 1, 10) // sequence 11, new
	c, _ = run(11)
	msgs, _ := c.data()
	if len(msgs) != 5 || msgs[0].Pos.Offset != 7 {
		t.Fatalf("second run: %d messages, want the 5 from the cursor (7)", len(msgs))
	}
	for _, m := range msgs {
		if want := m.Pos.Offset < 11; m.Reread != want {
			t.Errorf("sequence %d: Reread %v, want %v (judged up to 10 by the first run)", m.Pos.Offset, m.Reread, want)
		}
	}
	if got, _ := loadCursors(path); got.next["MESH"] != 12 || len(got.judged) != 0 {
		t.Errorf("cursors %v judged %v, want MESH at 12 and no judged mark", got.next, got.judged)
	}
}
