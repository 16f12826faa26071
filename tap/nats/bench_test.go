//go:build unix

package natstap

import (
	"context"
	"errors"
	"fmt"
	"github.com/nats-io/nats.go/jetstream"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/nats-io/nats.go"
)

// BenchmarkThroughput compares the tap (core subscription, queue, no-op
// emit) with a bare nats.go subscription on the same server, 200-byte
// payloads. The publisher keeps at most `window` messages in flight, so
// neither side is measured dropping.
func BenchmarkThroughput(b *testing.B) {
	s := startServer(b, 0, "")
	pub := connect(b, s.ClientURL())
	payload := make([]byte, 200)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	payload[0] = '{'
	const window = 2048

	run := func(b *testing.B, subject string, received *atomic.Int64) {
		b.Helper()
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		received.Store(0)
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			for int64(i)-received.Load() >= window {
				runtime.Gosched()
			}
			if err := pub.Publish(subject, payload); err != nil {
				b.Fatal(err)
			}
		}
		for received.Load() < int64(b.N) {
			runtime.Gosched()
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
	}

	b.Run("bare", func(b *testing.B) {
		sub := connect(b, s.ClientURL())
		var received atomic.Int64
		sb, err := sub.Subscribe("bench.bare.>", func(*nats.Msg) { received.Add(1) })
		if err != nil {
			b.Fatal(err)
		}
		defer sb.Unsubscribe()
		sub.Flush()
		run(b, "bench.bare.x", &received)
	})

	b.Run("tap", func(b *testing.B) {
		var received atomic.Int64
		emit := func(context.Context, tap.Message) error { received.Add(1); return nil }
		stats := new(tap.Stats)
		tp, err := New(Config{Name: "bench", URL: s.ClientURL(), Subjects: []string{"bench.tap.>"}}, stats, discard)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- tp.Run(ctx, emit) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				b.Error(err)
			}
		}()
		// Wait until the subscription is live.
		for received.Load() == 0 {
			pub.Publish("bench.tap.probe", payload)
			pub.Flush()
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		run(b, "bench.tap.x", &received)
		if d := stats.Drops[tap.DropQueueFull].Load(); d != 0 {
			b.Errorf("%d drops", d)
		}
	})
}

// BenchmarkJetStreamCatchUp reads b.N stored messages from a fresh
// consumer: the tap (explicit fetches, a byte budget charged and released,
// no-op emit) against the library's
// own Messages iterator, each with its defaults, on the same server.
func BenchmarkJetStreamCatchUp(b *testing.B) {
	s := startServer(b, 0, "")
	nc := connect(b, s.ClientURL())
	js := newJS(b, nc)
	payload := make([]byte, 200)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	fill := func(b *testing.B, name string) {
		b.Helper()
		createStream(b, js, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: jetstream.MemoryStorage})
		for i := range b.N {
			for {
				_, err := js.PublishAsync(name+".x", payload)
				if err == nil {
					break
				}
				if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
					b.Fatal(err)
				}
				<-js.PublishAsyncComplete() // a loaded machine: let the acks catch up
			}
			if i%1024 == 1023 {
				<-js.PublishAsyncComplete()
			}
		}
		<-js.PublishAsyncComplete()
	}
	var round atomic.Int64
	streamName := func(kind string) string { return fmt.Sprintf("%s%d", kind, round.Add(1)) }

	b.Run("library", func(b *testing.B) {
		name := streamName("LIB")
		fill(b, name)
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		b.ResetTimer()
		c0 := cpuTime()
		cons, err := js.CreateConsumer(context.Background(), name, jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true})
		if err != nil {
			b.Fatal(err)
		}
		it, err := cons.Messages() // the library's defaults
		if err != nil {
			b.Fatal(err)
		}
		defer it.Stop()
		for range b.N {
			if _, err := it.Next(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N), "cpu-ns/msg")
	})

	b.Run("tap", func(b *testing.B) {
		name := streamName("TAP")
		fill(b, name)
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		var received atomic.Int64
		all := make(chan struct{})
		budget := tap.NewBudget(64 << 20) // charged and released, as the engine does
		emit := func(_ context.Context, m tap.Message) error {
			budget.Release(m.Charged)
			if !m.Progress && received.Add(1) == int64(b.N) {
				close(all)
			}
			return nil
		}
		b.ResetTimer()
		c0 := cpuTime()
		tp, err := New(Config{Name: "bench", URL: s.ClientURL(), Budget: budget, Streams: []StreamConfig{{Stream: name, StartSeq: 1}}}, new(tap.Stats), discard)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- tp.Run(ctx, emit) }()
		<-all
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N), "cpu-ns/msg")
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
}
