package kafkatap

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
)

// A credit charges the records polled a chunk at a time, never more ahead
// than they hold, nor more than a sixteenth of the budget, and gives back
// what it did not use.
func TestCreditChargesAheadWithinBounds(t *testing.T) {
	ctx := context.Background()
	b := tap.NewBudget(64 << 20)
	c := newCredit(b)
	if err := c.take(ctx, 1000, 10<<20); err != nil {
		t.Fatal(err)
	}
	if got, want := b.Used(), int64(1000+creditChunk); got != want {
		t.Fatalf("after the first record: %d charged, want %d (the record and one chunk ahead)", got, want)
	}
	for range 100 {
		if err := c.take(ctx, 1000, 10<<20); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := b.Used(), int64(1000+creditChunk); got != want {
		t.Fatalf("after 101 records: %d charged, want %d (taken from the chunk)", got, want)
	}
	c.close()
	if got := b.Used(); got != 101*1000 {
		t.Fatalf("after close: %d charged, want the records' %d", got, 101*1000)
	}

	// Ahead: no more than what the records after it hold, nor a sixteenth
	// of a small budget.
	small := tap.NewBudget(16 << 10)
	c = newCredit(small)
	if err := c.take(ctx, 100, 300); err != nil {
		t.Fatal(err)
	}
	if got := small.Used(); got != 400 {
		t.Fatalf("small budget: %d charged, want 400 (the record and the 300 after it)", got)
	}
	c.close()
	c = newCredit(small)
	if err := c.take(ctx, 100, 1<<20); err != nil {
		t.Fatal(err)
	}
	if got, want := small.Used(), int64(100+100+(16<<10)/16); got != want {
		t.Fatalf("small budget: %d charged, want %d (the first record, this one and a sixteenth of the budget ahead)", got, want)
	}
	c.close()

	// No budget: nothing to charge.
	c = newCredit(nil)
	if err := c.take(ctx, 100, 1000); err != nil {
		t.Fatal(err)
	}
	c.close()
}

// A record near the budget's size, after a chunk was charged ahead, waits
// only for the engine's charges, never for the credit the tap holds
// itself: the credit goes back before the tap waits for more.
func TestCreditNeverWaitsForItself(t *testing.T) {
	const limit = 16 << 10
	b := tap.NewBudget(limit)
	c := newCredit(b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.take(ctx, 100, 1<<20); err != nil { // and a chunk ahead
		t.Fatal(err)
	}
	// The engine judges the first record a little later.
	go func() {
		time.Sleep(50 * time.Millisecond)
		b.Release(100)
	}()
	if err := c.take(ctx, limit-10, 1<<20); err != nil {
		t.Fatalf("a record of %d bytes in a budget of %d: %v (waiting for the tap's own credit)", limit-10, limit, err)
	}
	if got := b.Used(); got > limit {
		t.Fatalf("%d charged, budget %d", got, limit)
	}
	c.close()
	if got := b.Used(); got != limit-10 {
		t.Fatalf("after close: %d charged, want the record's %d", got, limit-10)
	}
}

// An emit that fails part way through a poll leaves charged only what the
// engine holds: the failed record's charge and the credit taken ahead for
// the records after it go back.
func TestEmitErrorReturnsTheCredit(t *testing.T) {
	brokers := newCluster(t, 1, "ev")
	recs := records("ev", 200)
	produce(t, newClient(t, brokers), recs...)
	budget := tap.NewBudget(64 << 20)
	var held atomic.Int64 // charged to what was emitted
	var emitted atomic.Int64
	fail := errors.New("engine gone")
	emit := func(_ context.Context, m tap.Message) error {
		if m.Lost || m.Reconnected || m.Progress {
			return nil
		}
		if emitted.Add(1) == 50 {
			return fail
		}
		held.Add(int64(m.Charged))
		return nil
	}
	tp, err := New(Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{"ev"}, Start: "earliest", Budget: budget}, new(tap.Stats), discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.Run(context.Background(), emit); !errors.Is(err, fail) {
		t.Fatalf("Run = %v, want the emit error", err)
	}
	if got, want := budget.Used(), held.Load(); got != want {
		t.Fatalf("after the failed emit: %d bytes charged, want the %d of the 49 records emitted", got, want)
	}
}

// A tap stopped in the middle of a catch-up (shutdown, a reload) while the
// engine is behind leaves nothing charged once the engine has judged what
// it was handed: the record whose emit was cut and the credit charged
// ahead for the rest of the poll go back.
func TestStopMidCatchUpLeavesNothingCharged(t *testing.T) {
	brokers := newCluster(t, 2, "ev")
	produce(t, newClient(t, brokers), records("ev", 3000)...)
	budget := tap.NewBudget(4 << 20)
	q := make(chan tap.Message, 64) // the engine's queue: full soon
	emit := func(ctx context.Context, m tap.Message) error {
		if m.Lost || m.Reconnected || m.Progress {
			return nil
		}
		select {
		case q <- m:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	tp, err := New(Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{"ev"}, Start: "earliest", Budget: budget}, new(tap.Stats), discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tp.Run(ctx, emit) }()
	// The engine judges a few hundred records, then the tap is stopped
	// while its emit waits on the full queue.
	for range 300 {
		m := <-q
		budget.Release(m.Charged)
	}
	waitFor(t, "the engine's queue to fill", func() bool { return len(q) == cap(q) })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	close(q)
	for m := range q { // the engine judges what it holds
		budget.Release(m.Charged)
	}
	if got := budget.Used(); got != 0 {
		t.Fatalf("%d bytes still charged after the engine judged everything it was handed", got)
	}
}
