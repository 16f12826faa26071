//go:build unix

package kafkatap

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkCatchUp reads b.N stored 920-byte records of a 4-partition
// topic from the start: a bare franz-go group consumer (PollRecords loop)
// against the tap (a byte budget charged and released, no-op emit), on the
// same kfake cluster. Each sub-benchmark has its own topic.
func BenchmarkCatchUp(b *testing.B) {
	value := []byte(`{"jsonrpc":"2.0","result":{"request_id":"r","sequence":1,"body":"` + strings.Repeat("x", 850) + `"}}`)
	var round atomic.Int64
	fill := func(b *testing.B, brokers []string) string {
		b.Helper()
		topic := fmt.Sprintf("catchup-%d", round.Add(1))
		prod := newClient(b, brokers, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
		const batch = 4096
		for i := 0; i < b.N; i += batch {
			recs := make([]*kgo.Record, 0, batch)
			for j := i; j < min(i+batch, b.N); j++ {
				recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprintf("s%d", j%64)), Value: value})
			}
			if err := prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
				b.Fatal(err)
			}
		}
		return topic
	}
	var topics []string
	for i := 1; i <= 64; i++ {
		topics = append(topics, fmt.Sprintf("catchup-%d", i))
	}
	brokers := newCluster(b, 4, topics...)

	b.Run("bare", func(b *testing.B) {
		topic := fill(b, brokers)
		b.SetBytes(int64(len(value)))
		b.ResetTimer()
		c0 := cpuTime()
		cl := newClient(b, brokers, kgo.ConsumerGroup("bare-"+topic), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		n := 0
		for n < b.N {
			fs := cl.PollRecords(context.Background(), 1000)
			n += fs.NumRecords()
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N), "cpu-ns/msg")
	})

	b.Run("tap", func(b *testing.B) {
		topic := fill(b, brokers)
		b.SetBytes(int64(len(value)))
		budget := tap.NewBudget(64 << 20)
		var received atomic.Int64
		all := make(chan struct{})
		emit := func(_ context.Context, m tap.Message) error {
			budget.Release(m.Charged)
			if !m.Lost && !m.Reconnected && received.Add(1) == int64(b.N) {
				close(all)
			}
			return nil
		}
		b.ResetTimer()
		c0 := cpuTime()
		tp, err := New(Config{Name: "bench", Brokers: brokers, Topics: []string{topic}, Group: "tap-" + topic, Start: "earliest", Budget: budget}, new(tap.Stats), discard)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- tp.Run(ctx, emit) }()
		select {
		case <-all:
		case <-time.After(2 * time.Minute):
			b.Fatalf("%d of %d records", received.Load(), b.N)
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N), "cpu-ns/msg")
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
