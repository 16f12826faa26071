package validate

import "testing"

// BenchmarkValidateJSONFromLog is BenchmarkValidateJSON for records read
// from a log (a file source): rule e2a.secret looks at each, and at each
// chunk boundary (splitsecret.go).
func BenchmarkValidateJSONFromLog(b *testing.B) {
	lines := benchLines(64, 15)
	var size int
	for _, l := range lines {
		size += len(l)
	}
	cfg := DefaultConfig()
	cfg.IdleTimeout = 0
	e := NewEngine(cfg, nopSink{})
	in := Input{Pos: Position{Kind: PosLine, Name: "bench"}, FromLog: true}
	ep := newEpochs(lines)
	b.SetBytes(int64(size / len(lines)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(lines) == 0 && i > 0 {
			ep.renew(i / len(lines))
		}
		in.Data = lines[i%len(lines)]
		in.Index = uint64(i + 1)
		e.Observe(&in)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
