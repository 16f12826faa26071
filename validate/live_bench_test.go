//go:build unix

package validate

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+sys time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLive is the live engine as `e2atap run` drives it: one tap
// goroutine submitting reference-shaped records (benchLines) one by one,
// Run routing them to two shards, a sink that does nothing. cpu-ns/record
// is the process's CPU time (every goroutine, the GC) per record: the
// figure that decides the highest rate a tap holds on a loaded machine.
// What it leaves out: the tap's own client, the sinks (metrics, logs,
// observe), the byte budget. Every 4096 records a Sync (as a Kafka commit
// does) lets the stream ids be renewed.
func BenchmarkLive(b *testing.B) {
	for _, shards := range []int{1, 2} {
		b.Run(map[int]string{1: "shards=1", 2: "shards=2"}[shards], func(b *testing.B) {
			lines := benchLines(256, 15)
			ep := newEpochs(lines)
			cfg := DefaultLiveConfig()
			cfg.Shards = shards
			cfg.Engine.IdleTimeout = 0
			l := NewLive(cfg, nopSink{})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan Stats, 1)
			go func() { done <- l.Run(ctx) }()
			t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
			b.ReportAllocs()
			cpu0 := cpuTime()
			i := 0
			for b.Loop() {
				if i%len(lines) == 0 && i > 0 {
					if err := l.Sync(ctx); err != nil {
						b.Fatal(err)
					}
					ep.renew(i / len(lines))
				}
				in := Input{Tap: "nats", Conn: "c", Time: t0.Add(time.Duration(i) * time.Microsecond), Data: lines[i%len(lines)]}
				if err := l.Submit(ctx, in); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if err := l.Sync(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(i), "cpu-ns/record")
			cancel()
			if st := <-done; st.Records != uint64(i) {
				b.Fatalf("judged %d records of %d", st.Records, i)
			}
		})
	}
}
