//go:build unix

package natstap

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/nats-io/nats.go"
)

// record920 is a 920-byte E2A chunk, the size of `e2atap gen` records.
func record920() []byte {
	head := `{"jsonrpc":"2.0","id":"req-000001-c419","result":{"response_id":"req-000001-c419","request_id":"req-000001-c419","sequence":7,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00.000000+00:00","body":{"delta_kind":"text","event_type":"chat.delta","delta":"`
	tail := `"}}}`
	return []byte(head + strings.Repeat("x", 920-len(head)-len(tail)) + tail)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// receiver is what the burst is sent to: a bare nats.go subscription or
// the tap. received counts what arrived; lost what its client dropped.
type receiver struct {
	received func() int64
	lost     func() int64
	stop     func()
}

func bareReceiver(b *testing.B, url, subject string) receiver {
	nc := connect(b, url)
	var n atomic.Int64
	sub, err := nc.Subscribe(subject, func(*nats.Msg) { n.Add(1) })
	if err != nil {
		b.Fatal(err)
	}
	// The bare client's defaults are 512 k messages / 64 MiB: give it the
	// tap's byte limit, so that both hold the same burst.
	if err := sub.SetPendingLimits(-1, 256<<20); err != nil {
		b.Fatal(err)
	}
	nc.Flush()
	return receiver{
		received: n.Load,
		lost:     func() int64 { d, _ := sub.Dropped(); return int64(d) },
		stop:     func() { sub.Unsubscribe() },
	}
}

func tapReceiver(b *testing.B, url, subject string, budget *tap.Budget) receiver {
	var n atomic.Int64
	emit := func(_ context.Context, m tap.Message) error {
		budget.Release(m.Charged)
		if !m.Lost && !m.Reconnected && !m.Progress {
			n.Add(1)
		}
		return nil
	}
	stats := new(tap.Stats)
	tp, err := New(Config{Name: "bench", URL: url, Subjects: []string{subject}, Budget: budget}, stats, discard)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tp.Run(ctx, emit) }()
	for !stats.UpstreamUp.Load() {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the subscription reaches the server
	return receiver{
		received: n.Load,
		lost: func() int64 {
			var d uint64
			for i := range stats.Drops {
				d += stats.Drops[i].Load()
			}
			return int64(d)
		},
		stop: func() {
			cancel()
			if err := <-done; err != nil {
				b.Error(err)
			}
		},
	}
}

// BenchmarkCoreBurst publishes bursts of 200 k 920-byte records as fast as
// the publisher can, to a bare nats.go subscriber and to the tap (no-op
// emit; a 256 MiB budget, so the client's pending buffer is 256 MiB), and
// waits until every record arrived or was reported lost. msgs/s is the
// burst's rate from the first publish to the last receipt; cpu-ms/burst
// is the whole process (server and publisher included, the same for both).
func BenchmarkCoreBurst(b *testing.B) {
	const burst = 200_000
	s := startServer(b, 0, "")
	pub := connect(b, s.ClientURL())
	payload := record920()
	for _, kind := range []string{"bare", "tap"} {
		b.Run(kind, func(b *testing.B) {
			subject := "burst." + kind
			var r receiver
			if kind == "bare" {
				r = bareReceiver(b, s.ClientURL(), subject)
			} else {
				r = tapReceiver(b, s.ClientURL(), subject, tap.NewBudget(256<<20))
			}
			defer r.stop()
			b.SetBytes(int64(len(payload)) * burst)
			var lost int64
			var wall, cpu time.Duration
			b.ResetTimer()
			for range b.N {
				base, baseLost := r.received(), r.lost()
				runtime.GC()
				c0, t0 := cpuTime(), time.Now()
				for range burst {
					if err := pub.Publish(subject, payload); err != nil {
						b.Fatal(err)
					}
				}
				if err := pub.Flush(); err != nil {
					b.Fatal(err)
				}
				deadline := time.Now().Add(60 * time.Second)
				for r.received()-base+r.lost()-baseLost < burst {
					if time.Now().After(deadline) {
						b.Fatalf("%d of %d received, %d lost", r.received()-base, burst, r.lost()-baseLost)
					}
					time.Sleep(time.Millisecond)
				}
				wall += time.Since(t0)
				cpu += cpuTime() - c0
				lost += r.lost() - baseLost
			}
			b.ReportMetric(float64(burst*b.N)/wall.Seconds(), "msgs/s")
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/burst")
			b.ReportMetric(float64(lost)/float64(b.N), "lost/burst")
		})
	}
}

// BenchmarkCoreSustained publishes 920-byte records at a fixed rate (a
// batch every millisecond) for one second per iteration, to a bare nats.go
// subscriber and to the tap, and reports the rate achieved, what was lost
// and the process's CPU per message (server and publisher included, the
// same for both). A rate is held when nothing is lost and the achieved
// rate is the target.
func BenchmarkCoreSustained(b *testing.B) {
	s := startServer(b, 0, "")
	pub := connect(b, s.ClientURL())
	payload := record920()
	for _, rate := range []int{150_000, 200_000} {
		for _, kind := range []string{"bare", "tap"} {
			b.Run(fmt.Sprintf("%dk/%s", rate/1000, kind), func(b *testing.B) {
				subject := fmt.Sprintf("sustained.%d.%s", rate, kind)
				var r receiver
				if kind == "bare" {
					r = bareReceiver(b, s.ClientURL(), subject)
				} else {
					r = tapReceiver(b, s.ClientURL(), subject, tap.NewBudget(256<<20))
				}
				defer r.stop()
				base, baseLost := r.received(), r.lost()
				perMs := rate / 1000
				total := int64(b.N) * int64(rate)
				c0, t0 := cpuTime(), time.Now()
				b.ResetTimer()
				for i := int64(0); i < total; i += int64(perMs) {
					for range perMs {
						if err := pub.Publish(subject, payload); err != nil {
							b.Fatal(err)
						}
					}
					// Pace by the clock, not by sleeps, so that a late
					// tick is made up.
					if ahead := time.Duration(i/int64(perMs))*time.Millisecond - time.Since(t0); ahead > 0 {
						time.Sleep(ahead)
					}
				}
				pub.Flush()
				deadline := time.Now().Add(60 * time.Second)
				for r.received()-base+r.lost()-baseLost < total && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				b.StopTimer()
				wall := time.Since(t0)
				b.ReportMetric(float64(r.received()-base)/wall.Seconds(), "msgs/s")
				b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(total), "cpu-ns/msg")
				b.ReportMetric(float64(r.lost()-baseLost), "lost")
			})
		}
	}
}
