package validate

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/frame"
)

// benchFrameFile writes n frames shaped as make bench-system's corpus
// (200-byte STREAM_CHUNKs, sid agent:uuid, 8 streams interleaved, 50 chunks
// each, the last one done) and returns its path.
func benchFrameFile(b *testing.B, n int) string {
	p := filepath.Join(b.TempDir(), "bench.frames")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const perStream, lanes = 50, 8
	seqs, ids := make([]int, lanes), make([]int, lanes)
	for i := range ids {
		ids[i] = i
	}
	next := lanes
	data := []byte(strings.Repeat("model output text ", 7)[:120])
	var buf []byte
	for i := 0; i < n; i++ {
		l := i % lanes
		var flags uint8
		if seqs[l] == perStream-1 {
			flags = frame.FlagDone
		}
		sid := fmt.Sprintf("agent-7:%08d-0000-4000-8000-000000000000", ids[l])
		buf, err = frame.AppendFrame(buf[:0], frame.TypeStreamChunk, flags, int32(seqs[l]),
			[]frame.Attr{{Name: "sid", Value: sid}, {Name: "etype", Value: "text"}}, data)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = w.Write(buf)
		seqs[l]++
		if flags != 0 {
			seqs[l], ids[l] = 0, next
			next++
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkReadFramesMapped is what `e2atap validate --shards 1` does with a
// frame file, but for the printing: Read of the file (by read(2) into one
// reused buffer, readFramesFile: no longer through a mapping) into one
// inline shard, every frame rule on, the streams ended at the end. One op
// reads the whole file (benchFrames frames). It leaves out the process
// start and the page cache's misses (the file is cached).
func BenchmarkReadFramesMapped(b *testing.B) { benchReadFramesMapped(b) }

// BenchmarkReadFramesMappedNoCache is BenchmarkReadFramesMapped without the
// frame cache (framecache.go): what it saves.
func BenchmarkReadFramesMappedNoCache(b *testing.B) {
	defer func(was bool) { frameCacheOff = was }(frameCacheOff)
	frameCacheOff = true
	benchReadFramesMapped(b)
}

func benchReadFramesMapped(b *testing.B) {
	const n = 200_000
	p := benchFrameFile(b, n)
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.IdleTimeout = 0
	b.ReportAllocs()
	b.SetBytes(st.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run := NewSharded(1, cfg, nopSink{})
		run.Inline()
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Read(f, p, FormatFrames, ReadOptions{}, run); err != nil {
			b.Fatal(err)
		}
		run.Finish(ReasonEOF, &Input{})
		run.Close()
		_ = f.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/frame")
}
