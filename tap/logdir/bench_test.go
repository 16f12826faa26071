package logdir

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
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
