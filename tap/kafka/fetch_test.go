package kafkatap

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/e2atap/e2atap/tap"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestNextFetchWhileTheEngineJudges: the client fetches (and decompresses)
// the next records while the engine is still busy with those of the last
// fetch. The client sends its next fetch only once everything it buffered
// is polled, so the tap polls the whole fetch at once (MaxPollRecords 0):
// with the emit of the first record held, a fetch from past the last
// record produced must reach the broker. With a poll of 1000 records out
// of a buffered 3000 it never does, and a catch-up alternates between
// fetching and judging on one core.
func TestNextFetchWhileTheEngineJudges(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "ev"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	const n = 3000
	var ahead atomic.Bool // a fetch from offset n (after every record) arrived
	c.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		for _, tp := range req.(*kmsg.FetchRequest).Topics {
			for _, p := range tp.Partitions {
				if p.FetchOffset >= n {
					ahead.Store(true)
				}
			}
		}
		return nil, nil, false // observed only: the cluster answers
	})
	brokers := c.ListenAddrs()
	produce(t, newClient(t, brokers), records("ev", n)...)

	held := make(chan struct{})
	var emitted atomic.Int64
	emit := func(ctx context.Context, m tap.Message) error {
		if m.Lost {
			return nil
		}
		if emitted.Add(1) == 1 {
			// The engine is busy: the first record waits.
			select {
			case <-held:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	tp, err := New(Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{"ev"}, Start: "earliest"}, new(tap.Stats), discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tp.Run(ctx, emit) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	waitFor(t, "the first record", func() bool { return emitted.Load() >= 1 })
	waitFor(t, "a fetch past the last record while the first is still being judged", ahead.Load)
	if got := emitted.Load(); got != 1 {
		t.Fatalf("%d records emitted while the first was held", got)
	}
	close(held)
	waitFor(t, "every record", func() bool { return emitted.Load() >= n })
}
