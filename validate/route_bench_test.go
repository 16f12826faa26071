package validate

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/internal/gen"
)

// BenchmarkRoute: what a sharded run's reader spends per record to find
// its shard, on lines of a capture named by E2ATAP_BENCH_CAPTURE (skipped
// without one).
func BenchmarkRoute(b *testing.B) {
	name := os.Getenv("E2ATAP_BENCH_CAPTURE")
	if name == "" {
		b.Skip("set E2ATAP_BENCH_CAPTURE to a JSON-lines capture")
	}
	f, err := os.Open(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() && len(lines) < 4000 {
		lines = append(lines, bytes.Clone(sc.Bytes()))
		n += len(sc.Bytes())
	}
	b.Run("route", func(b *testing.B) {
		var r router
		b.SetBytes(int64(n / len(lines)))
		for i := 0; i < b.N; i++ {
			r.routeJSON(lines[i%len(lines)])
		}
	})
	b.Run("scanhead", func(b *testing.B) {
		var h e2a.Head
		var buf []byte
		b.SetBytes(int64(n / len(lines)))
		for i := 0; i < b.N; i++ {
			buf = e2a.ScanHead(lines[i%len(lines)], buf[:0], &h)
		}
	})
	b.Run("scan", func(b *testing.B) {
		var r e2a.Record
		b.SetBytes(int64(n / len(lines)))
		for i := 0; i < b.N; i++ {
			_ = e2a.Scan(lines[i%len(lines)], &r)
		}
	})
}

// BenchmarkQuickRoute: quickRoute on generated records, by the vector
// marks and by byte searches (what a reader of several shards spends on
// each record before handing it over; the top-level walk to the key
// comes after it and is left out).
func BenchmarkQuickRoute(b *testing.B) {
	g := gen.New(gen.DefaultConfig())
	var lines [][]byte
	size := 0
	for i := 0; i < 1000; i++ {
		l := g.Next().Data
		lines = append(lines, l)
		size += len(l)
	}
	for _, v := range []struct {
		name string
		fn   func([]byte) (int, bool)
	}{{"marks", quickRouteMarks}, {"scalar", quickRouteScalar}} {
		if v.name == "marks" && !haveRouteMarks {
			continue
		}
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(size / len(lines)))
			for i := 0; b.Loop(); i++ {
				v.fn(lines[i%len(lines)])
			}
		})
	}
}
