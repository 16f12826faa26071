package validate

import (
	"strconv"
	"testing"
)

// BenchmarkStreamChurn is what a stream that starts and ends costs the
// engine, apart from its records: the lookup that creates it (key hash,
// table miss, tombstone miss, insert), its end (tombstone, queue) and its
// removal at the next lookup, with open streams held in one partition (a
// frames corpus holds a few hundred, a busy live tap thousands). The
// composite key is built once per stream; the rules are left out.
func BenchmarkStreamChurn(b *testing.B) {
	for _, open := range []int{256, 4096, 16000} {
		b.Run("open="+strconv.Itoa(open), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.IdleTimeout = 0
			e := NewEngine(cfg, quietSink{})
			in := &Input{Tap: "tap", Conn: "conn"}
			id := func(k int) []byte {
				return e.composite(in, protoE2A, strconv.AppendInt([]byte("E0000-agent-1:"), int64(k), 10))
			}
			create := func(k int) {
				i, created, _ := e.lookup(id(k), true, false, in)
				if !created {
					b.Fatalf("%d: not created", k)
				}
				e.tab.at(i).flags |= fResponded
			}
			for k := 0; k < open; k++ {
				create(k)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for k := open; k < open+b.N; k++ {
				create(k)
				j, _, _ := e.lookup(id(k-open), false, false, in)
				if j < 0 {
					b.Fatalf("%d: lost", k-open)
				}
				e.end(j, OutcomeSucceeded, ReasonFinal, nil, false)
			}
		})
	}
}
