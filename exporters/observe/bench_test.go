package observe

import (
	"strconv"
	"testing"
	"time"

	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/validate"
)

// The hub's cost per event with the Redactor `e2atap run` gives it (the
// record log's), as the engine's shards call it. What it leaves out: the
// engine's own StreamInfo, and lock contention beyond RunParallel's.

func benchStreams(n int) []validate.StreamInfo {
	out := make([]validate.StreamInfo, n)
	for i := range out {
		out[i] = validate.StreamInfo{Tap: "nats", Protocol: validate.ProtoE2A,
			Key:     "6f1c2a4e-" + strconv.Itoa(100000+i) + "-4b1e-9c3d-2f5a6b7c8d9e",
			Outcome: validate.OutcomeSucceeded, Reason: validate.ReasonFinal,
			Start: t0.Add(time.Duration(i) * time.Millisecond), End: t0.Add(time.Duration(i)*time.Millisecond + 1234567*time.Microsecond),
			Records: 12}
	}
	return out
}

func benchHub() *Hub {
	return NewHub(jsonlog.NewRedactor(jsonlog.ContentKeep, 1<<20, []byte("k")), DefaultOptions())
}

// BenchmarkHubStreamEnd: the bulk of the events (one per stream), nobody
// watching.
func BenchmarkHubStreamEnd(b *testing.B) {
	h, ss := benchHub(), benchStreams(1024)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.StreamEnd(&ss[i&1023])
	}
}

// BenchmarkHubStreamEndParallel: two shards publishing at once.
func BenchmarkHubStreamEndParallel(b *testing.B) {
	h, ss := benchHub(), benchStreams(1024)
	b.ReportAllocs()
	b.SetParallelism(1)
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			h.StreamEnd(&ss[i&1023])
		}
	})
}

// BenchmarkHubFinding: a finding, nobody watching.
func BenchmarkHubFinding(b *testing.B) {
	h := benchHub()
	f := &validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "6f1c2a4e-1000-4b1e-9c3d-2f5a6b7c8d9e",
		Source: "nats:agent.events", Message: "sequence 7 after 5: 1 missing", Tap: "nats", Time: t0}
	b.ReportAllocs()
	for b.Loop() {
		h.Finding(f)
	}
}

// BenchmarkHubStreamEndWatched: one follow watcher of the default types
// (its queue drained by a goroutine).
func BenchmarkHubStreamEndWatched(b *testing.B) {
	h, ss := benchHub(), benchStreams(1024)
	w, _ := h.subscribe(Filter{}, 0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range w.ch {
		}
	}()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.StreamEnd(&ss[i&1023])
	}
	b.StopTimer()
	h.unsubscribe(w)
	close(w.ch)
	<-done
}
