package logdir

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
)

const (
	benchLineLen = 300      // bytes per line, newline included
	benchSize    = 50 << 20 // about 50 MB
)

// benchFile writes ~50 MB of 300-byte JSON lines once per benchmark.
func benchFile(b *testing.B) (path string, lines int) {
	b.Helper()
	path = filepath.Join(b.TempDir(), "bench.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	head := `{"jsonrpc":"2.0","method":"chat.send","params":{"request_id":"req-`
	for lines = 0; lines*benchLineLen < benchSize; lines++ {
		n := len(head) + 8 + len(`","text":"`) + len(`"}}`) + 1
		w.WriteString(head)
		w.WriteString(strings.Repeat("0", 8))
		w.WriteString(`","text":"`)
		w.WriteString(strings.Repeat("x", benchLineLen-n))
		w.WriteString("\"}}\n")
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path, lines
}

// BenchmarkTailer: lines per second from a pre-written file into a no-op
// emit. Each line handed over is owned by the receiver (no copy is needed:
// lines are sub-slices of read chunks that are never reused).
func BenchmarkTailer(b *testing.B) {
	path, lines := benchFile(b)
	cfg := DefaultConfig()
	cfg.Name, cfg.Paths = "bench", []string{path}
	cfg.SaveInterval = time.Hour
	b.SetBytes(int64(lines * benchLineLen))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tl, err := New(cfg, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		err = tl.Run(ctx, func(_ context.Context, m tap.Message) error {
			if n++; n == lines {
				cancel()
			}
			return nil
		})
		cancel()
		if err != nil || n != lines {
			b.Fatalf("%d of %d lines: %v", n, lines, err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkScannerBaseline: the same file through bufio.Scanner, once
// handing out the scanner's (reused) bytes, once copying each line as the
// tap contract requires (the receiver owns Data).
func BenchmarkScannerBaseline(b *testing.B) {
	path, lines := benchFile(b)
	for _, copyLine := range []bool{false, true} {
		name := "noCopy"
		if copyLine {
			name = "copy"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(lines * benchLineLen))
			b.ReportAllocs()
			var sink []byte
			for range b.N {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				sc := bufio.NewScanner(f)
				sc.Buffer(make([]byte, readSize), 1<<20)
				n := 0
				for sc.Scan() {
					if copyLine {
						sink = append([]byte(nil), sc.Bytes()...)
					} else {
						sink = sc.Bytes()
					}
					n++
				}
				f.Close()
				if n != lines {
					b.Fatalf("%d of %d lines", n, lines)
				}
			}
			_ = sink
			b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

// record920 is a 920-byte E2A chunk record, newline included, as issue 10
// measures with.
func record920(i int) []byte {
	head := fmt.Sprintf(`{"protocol_version":"1.0","response_id":"req-%08d","request_id":"req-%08d","sequence":%d,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00.000000+00:00","body":{"delta_kind":"text","delta":"`, i%1000, i%1000, i/1000)
	tail := `"}}` + "\n"
	return []byte(head + strings.Repeat("x", 920-len(head)-len(tail)) + tail)
}

// BenchmarkTailerLiveWriter: lines/s the tailer hands over while a writer
// appends 920-byte records to the file it tails, paced at 150 k lines/s
// (issue 10's goal) or as fast as it can write. It reports the writer's
// rate, the tailer's rate over the same run (from the first line written to
// the last line handed over) and the largest lag seen, in lines. The emit
// is a counter: this measures the tap, not the engine.
func BenchmarkTailerLiveWriter(b *testing.B) {
	const lines = 300_000 // 276 MB per run
	for _, tc := range []struct {
		name string
		rate int // lines/s; 0 = unpaced
	}{{"paced150k", 150_000}, {"unpaced", 0}} {
		b.Run(tc.name, func(b *testing.B) {
			recs := make([][]byte, 1000)
			for i := range recs {
				recs[i] = record920(i)
			}
			var writeSecs, tapSecs float64
			maxLag := int64(0)
			for range b.N {
				dir := b.TempDir()
				path := filepath.Join(dir, "agent.jsonl")
				if err := os.WriteFile(path, nil, 0o644); err != nil {
					b.Fatal(err)
				}
				cfg := DefaultConfig()
				cfg.Name, cfg.Paths, cfg.Positions = "bench", []string{path}, filepath.Join(dir, "positions.json")
				tl, err := New(cfg, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				var got atomic.Int64
				var last atomic.Int64 // unix nanos of the last line handed over
				done := make(chan error, 1)
				go func() {
					done <- tl.Run(ctx, func(_ context.Context, m tap.Message) error {
						if m.Data != nil {
							if got.Add(1) == lines {
								last.Store(time.Now().UnixNano())
							}
						}
						return nil
					})
				}()
				time.Sleep(50 * time.Millisecond) // the tailer found the file
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					b.Fatal(err)
				}
				const batch = 150 // lines per write: 1 ms at 150 k/s
				buf := make([]byte, 0, batch*920)
				start := time.Now()
				for i := 0; i < lines; i += batch {
					buf = buf[:0]
					for j := i; j < i+batch && j < lines; j++ {
						buf = append(buf, recs[j%len(recs)]...)
					}
					if _, err := f.Write(buf); err != nil {
						b.Fatal(err)
					}
					if lag := int64(i+batch) - got.Load(); lag > maxLag {
						maxLag = lag
					}
					if tc.rate > 0 {
						if ahead := time.Until(start.Add(time.Duration(i+batch) * time.Second / time.Duration(tc.rate))); ahead > 0 {
							time.Sleep(ahead)
						}
					}
				}
				writeSecs += time.Since(start).Seconds()
				f.Close()
				deadline := time.Now().Add(60 * time.Second)
				for got.Load() < lines && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				cancel()
				if err := <-done; err != nil || got.Load() != lines {
					b.Fatalf("%d of %d lines: %v", got.Load(), lines, err)
				}
				tapSecs += time.Duration(last.Load() - start.UnixNano()).Seconds()
			}
			b.ReportMetric(float64(lines*b.N)/writeSecs, "written_lines/s")
			b.ReportMetric(float64(lines*b.N)/tapSecs, "tap_lines/s")
			b.ReportMetric(float64(maxLag), "max_lag_lines")
		})
	}
}
