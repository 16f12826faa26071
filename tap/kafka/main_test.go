package kafkatap

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var discard = slog.New(slog.DiscardHandler)

// newCluster starts an in-process Kafka (kfake, on 127.0.0.1) with the
// topics seeded, partitions each.
func newCluster(t testing.TB, partitions int32, topics ...string) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func newClient(t testing.TB, brokers []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produce writes the records synchronously and returns them with their
// partitions and offsets filled in.
func produce(t testing.TB, cl *kgo.Client, recs ...*kgo.Record) []*kgo.Record {
	t.Helper()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// committed is a group's committed offsets, by topic and partition.
func committed(t testing.TB, cl *kgo.Client, group string) map[string]map[int32]int64 {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = group
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerrOf(resp.ErrorCode); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[int32]int64{}
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			if p.Offset < 0 {
				continue
			}
			if out[tp.Topic] == nil {
				out[tp.Topic] = map[int32]int64{}
			}
			out[tp.Topic][p.Partition] = p.Offset
		}
	}
	return out
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type collector struct {
	mu          sync.Mutex
	msgs        []tap.Message
	reconnected int
}

func (c *collector) emit(_ context.Context, m tap.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.Reconnected {
		c.reconnected++
		return nil
	}
	if m.Lost || m.Progress {
		return nil
	}
	c.msgs = append(c.msgs, m)
	return nil
}

func (c *collector) data() ([]tap.Message, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]tap.Message(nil), c.msgs...), c.reconnected
}

// startTap runs a tap until stop is called or the test ends; Run must
// return nil.
func startTap(t testing.TB, cfg Config, c *collector) (stats *tap.Stats, stop func()) {
	t.Helper()
	return startTapLog(t, cfg, discard, c)
}

func startTapLog(t testing.TB, cfg Config, logger *slog.Logger, c *collector) (stats *tap.Stats, stop func()) {
	t.Helper()
	stats = new(tap.Stats)
	tp, err := New(cfg, stats, logger)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tp.Run(ctx, c.emit) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run returned %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Error("Run did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stats, stop
}
