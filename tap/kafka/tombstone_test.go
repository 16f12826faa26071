package kafkatap

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/e2atap/e2atap/tap"
)

// A record with no value (a tombstone: a compacted topic's delete of its
// key, or an empty value) carries nothing to judge: it is counted and read
// past, not emitted. Before, each was an e2a.decode error finding (with
// the real binary and kfake: 2 findings for a tombstone and an empty
// value, 2 "invalid" records in the record log).
func TestRecordWithoutValueIsNoRecord(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "ev"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	produce(t, newClient(t, brokers),
		&kgo.Record{Topic: "ev", Key: []byte("k"), Value: nil},
		&kgo.Record{Topic: "ev", Key: []byte("k"), Value: []byte{}},
		&kgo.Record{Topic: "ev", Key: []byte("k"), Value: []byte(`{"i":2}`)},
		&kgo.Record{Topic: "ev", Key: []byte("k"), Value: nil},
		&kgo.Record{Topic: "ev", Key: []byte("k"), Value: []byte(`{"i":4}`)},
	)
	var mu sync.Mutex
	var got []tap.Message
	emit := func(_ context.Context, m tap.Message) error {
		if m.Lost || m.Progress || m.Reconnected {
			return nil
		}
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
		return nil
	}
	stats := new(tap.Stats)
	tp, err := New(Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{"ev"}, Start: "earliest"}, stats, discard)
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
	waitFor(t, "every record read", func() bool { return stats.Messages[tap.DirNone].Load() == 5 })
	waitFor(t, "the last record", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0 && got[len(got)-1].Pos.Offset == 4
	})
	type rec struct {
		Offset int64
		Data   string
	}
	var recs []rec
	mu.Lock()
	for _, m := range got {
		recs = append(recs, rec{m.Pos.Offset, string(m.Data)})
	}
	mu.Unlock()
	if diff := cmp.Diff([]rec{{2, `{"i":2}`}, {4, `{"i":4}`}}, recs); diff != "" {
		t.Errorf("emitted (-want +got):\n%s", diff)
	}
}
