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
		if m.Lost || m.Progress {
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

// A fetch is bounded in proportion to the byte budget: the client buffers
// one and a poll holds another, both outside the budget (a 128th of it
// each, from 1 MiB to 16 MiB; 16 MiB with no budget), where franz-go's
// own default is 50 MB.
func TestFetchSizeFollowsTheBudget(t *testing.T) {
	for _, tc := range []struct {
		budget *tap.Budget
		want   int32
	}{
		{tap.NewBudget(256 << 20), 2 << 20},
		{tap.NewBudget(16 << 20), 1 << 20},
		{tap.NewBudget(8 << 30), 16 << 20},
		{nil, 16 << 20},
	} {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "ev"))
		if err != nil {
			t.Fatal(err)
		}
		var maxBytes, partBytes atomic.Int32
		c.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
			// The fetches that ask for records (not the one that ends
			// the fetch session as the client closes).
			r := req.(*kmsg.FetchRequest)
			for _, tp := range r.Topics {
				for _, p := range tp.Partitions {
					maxBytes.Store(r.MaxBytes)
					partBytes.Store(p.PartitionMaxBytes)
				}
			}
			return nil, nil, false
		})
		brokers := c.ListenAddrs()
		produce(t, newClient(t, brokers), records("ev", 10)...)
		col := &collector{}
		_, stop := startTap(t, Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{"ev"}, Start: "earliest", Budget: tc.budget}, col)
		waitFor(t, "10 records", func() bool { msgs, _ := col.data(); return len(msgs) >= 10 })
		stop()
		c.Close()
		if got := maxBytes.Load(); got != tc.want {
			t.Errorf("budget %d: fetch max bytes %d, want %d", tc.budget.Limit(), got, tc.want)
		}
		if got := partBytes.Load(); got != 1<<20 {
			t.Errorf("budget %d: partition max bytes %d, want 1 MiB", tc.budget.Limit(), got)
		}
	}
}
