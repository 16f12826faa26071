package validate

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestLiveSyncIsABarrier: when Sync returns, every record submitted
// before it has reached the sink, on every shard.
func TestLiveSyncIsABarrier(t *testing.T) {
	cfg := DefaultLiveConfig()
	cfg.Shards = 4
	col := &collector{}
	l := NewLive(cfg, col)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Stats)
	go func() { done <- l.Run(ctx) }()
	base := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	total := 0
	for round := 0; round < 20; round++ {
		for i := 0; i < 97; i++ { // not a whole batch: Sync must flush
			id := fmt.Sprintf("r%d-%d", round, i)
			if err := l.Submit(ctx, Input{Tap: "logs", Time: base, Data: []byte(resp(0, "request_id", id)), Pos: Position{Kind: PosLine, Name: "f", Line: int64(total)}}); err != nil {
				t.Fatal(err)
			}
			total++
		}
		if err := l.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		col.mu.Lock()
		n := len(col.records)
		col.mu.Unlock()
		if n != total {
			t.Fatalf("after Sync: %d of %d records reached the sink", n, total)
		}
	}
	cancel()
	<-done
	// After Run returned, Sync honours its context.
	sctx, scancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer scancel()
	if err := l.Sync(sctx); err == nil {
		t.Fatal("Sync after Run returned did not fail")
	}
}

// TestLiveSetProfile: a new profile applies to what is submitted after it,
// on every shard, and open streams keep their state: a rule turned off
// reports nothing more, one turned to another severity reports at it, and
// a rule turned on (response_id uniqueness, which needs its set) works.
func TestLiveSetProfile(t *testing.T) {
	cfg := DefaultLiveConfig()
	cfg.Shards = 3
	cfg.JoinWindow = 0
	prof := SpecProfile()
	prof.Severity[RuleE2AResponseIDDup] = Off
	cfg.Engine.Profile = prof
	col := &collector{}
	l := NewLive(cfg, col)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Stats, 1)
	go func() { done <- l.Run(ctx) }()
	base := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	submit := func(line string) {
		t.Helper()
		if err := l.Submit(ctx, Input{Tap: "logs", Time: base, Data: []byte(line), Pos: Position{Kind: PosLine, Name: "f"}}); err != nil {
			t.Fatal(err)
		}
	}
	findings := func() map[string]Severity {
		t.Helper()
		if err := l.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		col.mu.Lock()
		defer col.mu.Unlock()
		out := map[string]Severity{}
		for _, f := range col.findings {
			out[f.Rule+" "+f.Stream] = f.Severity
		}
		col.findings = nil
		return out
	}
	// Before: a sequence gap is an error; the same response_id twice is
	// not checked.
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		submit(resp(1, "request_id", id)) // seq_start on each
	}
	before := findings()
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		if sev, ok := before["e2a.seq_start "+id]; !ok || sev != Error {
			t.Fatalf("before: e2a.seq_start %s = %v (%v), want error; all: %v", id, sev, ok, before)
		}
	}
	next := prof
	next.Severity[RuleE2ASeqStart] = Warning
	next.Severity[RuleE2AResponseIDDup] = Error
	if err := l.SetProfile(ctx, next); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"g", "h", "i", "j", "k", "l"} {
		submit(resp(1, "request_id", id))
	}
	after := findings()
	for _, id := range []string{"g", "h", "i", "j", "k", "l"} {
		if sev := after["e2a.seq_start "+id]; sev != Warning {
			t.Fatalf("after SetProfile: e2a.seq_start %s = %v, want warning; all: %v", id, sev, after)
		}
	}
	// The rule turned on works across shards: one response_id on two
	// streams.
	submit(`{"request_id":"m","response_id":"dup-1","sequence":0,"is_final":true,"status":"succeeded","response_kind":"complete","timestamp":"2026-03-29T12:00:00Z","body":{}}`)
	submit(`{"request_id":"n","response_id":"dup-1","sequence":0,"is_final":true,"status":"succeeded","response_kind":"complete","timestamp":"2026-03-29T12:00:00Z","body":{}}`)
	dup := findings()
	found := false
	for k, sev := range dup {
		found = found || (len(k) > len("e2a.response_id_dup") && k[:len("e2a.response_id_dup")] == "e2a.response_id_dup" && sev == Error)
	}
	if !found {
		t.Fatalf("a rule turned on by SetProfile reports nothing: %v", dup)
	}
	cancel()
	<-done
}
