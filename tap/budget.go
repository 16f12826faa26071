package tap

import (
	"context"
	"sync"
	"sync/atomic"
)

// Budget is the one byte budget for everything the taps hold for the
// engine: mirror copies in a queue, messages waiting for the engine, the
// partial fragments of an unfinished WebSocket message. A copy is charged
// when it is made and released when the engine has judged it (or when it
// is dropped). Taps that must never block (the WebSocket relay, core NATS)
// use TryAcquire and drop the copy as a loss when it fails; taps that can
// read slower (logdir, JetStream, Kafka) use Acquire and wait.
//
// A nil *Budget is unlimited. Budget is safe for concurrent use.
type Budget struct {
	limit int64
	used  atomic.Int64

	mu      sync.Mutex
	waiters chan struct{} // closed on every Release while someone waits
	// waiting: waiters is set. Release, called for every record judged,
	// takes mu only then (set under mu before a waiter's last try, so
	// that a Release after that try sees it).
	waiting atomic.Bool
}

// NewBudget returns a budget of limit bytes; limit <= 0 is unlimited.
func NewBudget(limit int64) *Budget {
	if limit <= 0 {
		return nil
	}
	return &Budget{limit: limit}
}

// Limit is the budget's size in bytes (0: unlimited).
func (b *Budget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit
}

// Used is the number of bytes charged now.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// TryAcquire charges n bytes if they fit, and never waits. A single charge
// larger than the whole budget never fits.
func (b *Budget) TryAcquire(n int) bool {
	if b == nil || n <= 0 {
		return true
	}
	for {
		u := b.used.Load()
		if u+int64(n) > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+int64(n)) {
			return true
		}
	}
}

// Acquire charges n bytes, waiting until they fit or ctx is done. A charge
// larger than the whole budget waits until nothing else is charged and
// then goes through alone, so that one huge message slows a reader down
// but never stops it for good.
func (b *Budget) Acquire(ctx context.Context, n int) error {
	if b == nil || n <= 0 {
		return nil
	}
	for {
		if b.TryAcquire(n) {
			return nil
		}
		if int64(n) > b.limit && b.used.CompareAndSwap(0, int64(n)) {
			return nil
		}
		b.mu.Lock()
		if b.waiters == nil {
			b.waiters = make(chan struct{})
			b.waiting.Store(true)
		}
		w := b.waiters
		b.mu.Unlock()
		// Re-check after registering, so that a Release between the failed
		// try and the registration is not missed.
		if b.TryAcquire(n) {
			return nil
		}
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Release returns n bytes charged earlier.
func (b *Budget) Release(n int) {
	if b == nil || n <= 0 {
		return
	}
	b.used.Add(-int64(n))
	if !b.waiting.Load() {
		return
	}
	b.mu.Lock()
	if b.waiters != nil {
		close(b.waiters)
		b.waiters = nil
		b.waiting.Store(false)
	}
	b.mu.Unlock()
}
