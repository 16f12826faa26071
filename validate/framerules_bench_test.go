package validate

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/frame"
)

// benchShapeFile writes n STREAM_CHUNKs of a shape and returns its path:
// "bench" (make bench-system's corpus: 200-byte chunks, sid agent:uuid, 8
// streams interleaved, 50 chunks each, the last one done), "attrs" (six
// attributes more, one of them new in every chunk: the attribute section
// is never the same twice), "big" (4 KiB of data), "streams" (2000
// streams interleaved) or "json" (an E2A JSON response of 290 bytes as
// data).
func benchShapeFile(b *testing.B, n int, shape string) string {
	p := filepath.Join(b.TempDir(), shape+".frames")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const perStream = 50
	lanes := 8
	data := []byte(strings.Repeat("model output text ", 7)[:120])
	switch shape {
	case "big":
		data = []byte(strings.Repeat("model output text ", 300)[:4096])
	case "streams":
		lanes = 2000
	case "json":
		data = []byte(`{"request_id":"req-00000000-0000-4000-8000-000000000000","sequence":12,"is_final":false,` +
			`"response_kind":"delta","status":"in_progress","delta":{"text":"The quick brown fox jumps over the lazy dog, ` +
			`and then some more model output text follows here."},"ts":"2026-12-01T16:00:00.000Z"}`)
	}
	seqs, ids := make([]int, lanes), make([]int, lanes)
	for i := range ids {
		ids[i] = i
	}
	next := lanes
	var buf []byte
	for i := 0; i < n; i++ {
		l := i % lanes
		var flags uint8
		if seqs[l] == perStream-1 {
			flags = frame.FlagDone
		}
		sid := fmt.Sprintf("agent-7:%08d-0000-4000-8000-000000000000", ids[l])
		attrs := []frame.Attr{{Name: "sid", Value: sid}, {Name: "etype", Value: "text"}}
		if shape == "attrs" {
			attrs = append(attrs, frame.Attr{Name: "ts", Value: strconv.Itoa(1700000000000 + i)},
				frame.Attr{Name: "source", Value: "agent-7"}, frame.Attr{Name: "model", Value: "gpt-x"},
				frame.Attr{Name: "tenant", Value: "acme-prod"}, frame.Attr{Name: "trace", Value: fmt.Sprintf("%032x", i*7919)},
				frame.Attr{Name: "span", Value: fmt.Sprintf("%016x", i)})
		}
		buf, err = frame.AppendFrame(buf[:0], frame.TypeStreamChunk, flags, int32(seqs[l]), attrs, data)
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

// BenchmarkReadFrameShapes is BenchmarkReadFramesMapped on each frame
// shape of benchShapeFile: the frame path's speed is not that of one
// corpus.
func BenchmarkReadFrameShapes(b *testing.B) {
	for _, shape := range []string{"bench", "attrs", "big", "streams", "json"} {
		b.Run(shape, func(b *testing.B) { benchReadShape(b, shape) })
	}
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

func benchReadFramesMapped(b *testing.B) { benchReadShape(b, "bench") }

func benchReadShape(b *testing.B, shape string) {
	const n = 200_000
	p := benchShapeFile(b, n, shape)
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
