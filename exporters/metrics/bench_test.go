package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/e2atap/e2atap/validate"
)

// A realistic mix: a handful of label combinations, revisited in turn.
var benchRecords = []*validate.RecordInfo{
	rec("agent-ws", "e2a", "e2a.chunk", "in_progress", false),
	rec("agent-ws", "e2a", "e2a.chunk", "in_progress", true),
	rec("agent-ws", "e2a", "e2a.complete", "succeeded", false),
	rec("agent-ws", "e2a", "request", "", false),
	rec("mesh", "eventmesh", "stream_chunk", "", false),
	rec("mesh", "eventmesh", "stream_req", "", false),
	rec("agent-logs", "e2a", "e2a.error", "failed", false),
	rec("agent-logs", "e2a", "acp.session_update", "in_progress", false),
}

// BenchmarkRecord compares the sink's cached children with the naive
// WithLabelValues lookup per record.
func BenchmarkRecord(b *testing.B) {
	b.Run("cached", func(b *testing.B) {
		m := New(prometheus.NewRegistry(), Options{})
		for _, ri := range benchRecords {
			m.Record(ri)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			m.Record(benchRecords[i%len(benchRecords)])
		}
	})
	b.Run("naive", func(b *testing.B) {
		m := New(prometheus.NewRegistry(), Options{})
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			ri := benchRecords[i%len(benchRecords)]
			m.records.WithLabelValues(ri.In.Tap, ri.Protocol, ri.Kind, ri.Status).Inc()
			if ri.Heartbeat {
				m.heartbeats.WithLabelValues(ri.In.Tap).Inc()
			}
		}
	})
	b.Run("cached-parallel", func(b *testing.B) {
		m := New(prometheus.NewRegistry(), Options{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				m.Record(benchRecords[i%len(benchRecords)])
				i++
			}
		})
	})
	b.Run("naive-parallel", func(b *testing.B) {
		m := New(prometheus.NewRegistry(), Options{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				ri := benchRecords[i%len(benchRecords)]
				m.records.WithLabelValues(ri.In.Tap, ri.Protocol, ri.Kind, ri.Status).Inc()
				if ri.Heartbeat {
					m.heartbeats.WithLabelValues(ri.In.Tap).Inc()
				}
				i++
			}
		})
	})
}

func BenchmarkStreamEnd(b *testing.B) {
	m := New(prometheus.NewRegistry(), Options{})
	s := &validate.StreamInfo{Tap: "agent-ws", Start: t0, FirstChunk: t0.Add(1e8), Request: true, End: t0.Add(3e9), Records: 40}
	b.ReportAllocs()
	for b.Loop() {
		m.StreamStart(s)
		m.StreamEnd(s)
	}
}
