package validate

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestIdleDue: an engine knows when its next stream goes idle: a lower
// bound as streams are created, exact after each Expire.
func TestIdleDue(t *testing.T) {
	t0 := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	cfg := DefaultConfig()
	cfg.IdleTimeout = 10 * time.Second
	e := NewEngine(cfg, nopSink{})
	if _, none, _ := e.IdleDue(); !none {
		t.Fatal("an empty engine has a stream due")
	}
	at := func(d time.Duration, line string) {
		e.Observe(&Input{Tap: "t", Time: t0.Add(d), Data: []byte(line)})
	}
	want := func(d time.Duration) {
		t.Helper()
		due, none, _ := e.IdleDue()
		if none || !due.Equal(t0.Add(d)) {
			t.Fatalf("next idle at %v (none: %v), want t0+%v", due.Sub(t0), none, d)
		}
	}
	at(0, resp(0, "request_id", "a"))
	at(3*time.Second, resp(0, "request_id", "b"))
	want(10 * time.Second) // a's
	e.Expire(t0.Add(10*time.Second + time.Millisecond))
	want(13 * time.Second) // a ended: b's
	at(5*time.Second, resp(1, "request_id", "b"))
	want(13 * time.Second) // a lower bound until the next Expire
	e.Expire(t0.Add(14 * time.Second))
	want(15 * time.Second) // b's last record moved it
	e.Expire(t0.Add(16 * time.Second))
	if _, none, n := e.IdleDue(); !none || n != 3 {
		t.Fatalf("after every stream expired: none %v, %d expires counted, want true, 3", none, n)
	}
}

// TestLiveSweepsWhenDue: a stream is judged idle as soon as it is due, not
// at the next ExpireEvery (an hour here: the old fixed sweep period would
// never come during the test). Nothing here depends on how fast the test
// runs: the clock is the test's, and the test only waits for the outcome.
func TestLiveSweepsWhenDue(t *testing.T) {
	base := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := base
	cfg := DefaultLiveConfig()
	cfg.Engine.IdleTimeout = time.Minute
	cfg.JoinWindow = 0
	cfg.ExpireEvery = time.Hour
	cfg.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	col := &collector{}
	l := NewLive(cfg, col)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Stats)
	go func() { done <- l.Run(ctx) }()
	if err := l.Submit(ctx, Input{Tap: "ws", Time: base, Data: []byte(resp(0, "request_id", "a"))}); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = base.Add(time.Minute + time.Millisecond)
	mu.Unlock()
	waitFor(t, func() bool { col.mu.Lock(); defer col.mu.Unlock(); return len(col.ends) == 1 })
	cancel()
	<-done
	if e := col.ends[0]; e.Key != "a" || e.Reason != ReasonIdle {
		t.Errorf("stream %q ended with reason %q, want a, %q", e.Key, e.Reason, ReasonIdle)
	}
}
