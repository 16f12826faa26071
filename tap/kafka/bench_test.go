//go:build unix

package kafkatap

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/e2atap/e2atap/internal/gen"
	"github.com/e2atap/e2atap/tap"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkCatchUp reads b.N stored 920-byte records of a 4-partition
// topic from the start: a bare franz-go group consumer (PollRecords loop)
// against the tap (a byte budget charged and released, each record recycled
// at once), on the same kfake cluster. Each sub-benchmark has its own
// topic.
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
			if m.Recycle != nil {
				m.Recycle.Recycle() // done with it, as the engine is once judged
			}
			if !m.Lost && !m.Reconnected && !m.Progress && received.Add(1) == int64(b.N) {
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

// BenchmarkCatchUpBehindAnEngine reads a stored backlog of e2atap gen's
// records (~920 bytes, snappy-compressed as a producer sends them) through
// the tap into an engine stand-in on its own goroutine: a queue of 4096
// messages (validate.LiveConfig.Queue's default) and ~1 µs of work a
// record (FNV-1a over its bytes), the budget released and the record
// recycled once it is done.
// poll=1000 is the bounded poll of before, poll=fetch the whole buffered
// fetch: whether the client's fetch and decompression overlap the
// engine's work shows in msgs/s, from the first record judged to the last
// (joining the group left out; every run reads the same topic in a group
// of its own).
func BenchmarkCatchUpBehindAnEngine(b *testing.B) {
	const n = 200_000
	cfg := gen.DefaultConfig()
	cfg.Seed, cfg.FaultRate = 7, 0
	g := gen.New(cfg)
	values := make([][]byte, n)
	for i := range values {
		values[i] = g.Next().Data
	}
	const topic = "engine"
	brokers := newCluster(b, 4, topic)
	prod := newClient(b, brokers, kgo.DefaultProduceTopic(topic))
	recs := make([]*kgo.Record, 0, n)
	for _, v := range values {
		recs = append(recs, &kgo.Record{Key: streamKeyOf(v), Value: v})
	}
	if err := prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		b.Fatal(err)
	}
	var round atomic.Int64
	for _, poll := range []struct {
		name string
		max  int
	}{{"poll=1000", 1000}, {"poll=fetch", 0}} {
		b.Run(poll.name, func(b *testing.B) {
			var judgedFor time.Duration
			var cpu time.Duration
			for range b.N {
				budget := tap.NewBudget(256 << 20)
				q := make(chan tap.Message, 4096)
				all := make(chan struct{})
				var sink uint64
				var first time.Time
				var c0 time.Duration
				go func() {
					judged := 0
					for m := range q {
						if judged == 0 {
							first, c0 = time.Now(), cpuTime()
						}
						h := uint64(14695981039346656037)
						for _, c := range m.Data {
							h = (h ^ uint64(c)) * 1099511628211
						}
						sink += h
						budget.Release(m.Charged)
						if m.Recycle != nil {
							m.Recycle.Recycle()
						}
						if judged++; judged == n {
							judgedFor += time.Since(first)
							cpu += cpuTime() - c0
							close(all)
						}
					}
				}()
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
				tp, err := New(Config{Name: "bench", Brokers: brokers, Topics: []string{topic}, Group: fmt.Sprintf("tap-%d", round.Add(1)), Start: "earliest",
					Budget: budget, MaxPollRecords: poll.max}, new(tap.Stats), discard)
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- tp.Run(ctx, emit) }()
				select {
				case <-all:
				case <-time.After(2 * time.Minute):
					b.Fatal("the backlog was not read in 2 minutes")
				}
				cancel()
				if err := <-done; err != nil {
					b.Error(err)
				}
				close(q)
				_ = sink
			}
			b.ReportMetric(float64(n*b.N)/judgedFor.Seconds(), "msgs/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(n*b.N), "cpu-ns/msg")
		})
	}
}

// streamKeyOf is a gen record's request_id, the stream key producers
// partition by (nil when there is none).
func streamKeyOf(v []byte) []byte {
	const k = `"request_id": "`
	i := bytes.Index(v, []byte(k))
	if i < 0 {
		return nil
	}
	v = v[i+len(k):]
	if j := bytes.IndexByte(v, '"'); j >= 0 {
		return v[:j]
	}
	return nil
}
