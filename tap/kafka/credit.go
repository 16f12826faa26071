package kafkatap

import (
	"context"

	"github.com/e2atap/e2atap/tap"
)

// creditChunk is the most a credit charges ahead of the record it is
// taken for (and at most a sixteenth of the budget).
const creditChunk = 1 << 20

// credit charges the byte budget for polled records a chunk at a time:
// the budget's counter, which the engine's shards release record by
// record on another core, is then written by the tap once a chunk instead
// of once a record. It never charges ahead more than the records polled
// still hold, nor more than creditChunk; close returns what was not used.
// A credit is used by one goroutine.
type credit struct {
	b     *tap.Budget
	chunk int // what take charges ahead at most
	have  int // charged, not yet taken
}

func newCredit(b *tap.Budget) *credit {
	c := &credit{b: b, chunk: creditChunk}
	if l := b.Limit(); l > 0 {
		c.chunk = int(min(int64(c.chunk), l/16))
	}
	return c
}

// take charges n bytes for one record, waiting for the budget (ctx done:
// its error, nothing charged); rest is what the records polled after it
// hold, which may be charged with it.
func (c *credit) take(ctx context.Context, n, rest int) error {
	if c.b == nil {
		return nil
	}
	if c.have >= n {
		c.have -= n
		return nil
	}
	// What is left goes back first: waiting for more while holding it,
	// a record near the budget's size would wait for the tap itself.
	c.b.Release(c.have)
	c.have = 0
	ahead := min(rest, c.chunk)
	if l := c.b.Limit(); int64(n+ahead) > l {
		ahead = int(max(l-int64(n), 0))
	}
	if err := c.b.Acquire(ctx, n+ahead); err != nil {
		return err
	}
	c.have = ahead
	return nil
}

// close returns what was charged and not taken.
func (c *credit) close() {
	c.b.Release(c.have)
	c.have = 0
}
