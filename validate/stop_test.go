package validate

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"sync/atomic"
	"testing"
)

// TestReadStops: a read whose Stop says true ends at its next refill
// (a buffer, a window, a chunk) with ErrStopped, on every way a file is
// read: by read(2) into one buffer (an Engine, one inline shard: JSON
// lines and frames), in place in a mapping (one inline shard on a long
// first line, the hand-off, a walk of frames), by a split (JSON lines and
// frames), and through a plain reader (a pipe, gzip). What was read before
// it is judged, the rest is not: fewer records than the file holds, and
// some. Before, only standard input could be cut (validate's interruptible
// reader): a regular file was read to its end whatever the signal.
func TestReadStops(t *testing.T) {
	defer func(w, d int) { mapWindow, dropChunk = w, d }(mapWindow, dropChunk)
	defer func(c, l, r int) { splitChunkBytes, splitChunkLines, splitRing = c, l, r }(splitChunkBytes, splitChunkLines, splitRing)
	defer func(m int) { maxSplitShards = m }(maxSplitShards)
	splitChunkBytes, splitChunkLines, splitRing = 4<<10, 5, 3
	vc := smallPartitions(t, 512)
	lines, frames := 6000, 20000 // 5 MB and 4 MB: many buffers, windows, chunks
	if raceEnabled {
		lines, frames = 3000, 10000
	}
	jsonData := walkJSONCorpus(61, lines, 300, 4096, walkOdds{crlf: 0.05, blank: 0.02})
	// A first line longer than a read(2) buffer and within the limit:
	// one inline shard reads in place (readLinesInline), in one window.
	long := append([]byte(`{"request_id":"long","sequence":0,"pad":"`), bytes.Repeat([]byte("l"), 300<<10)...)
	long = append(long, "\"}\n"...)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(jsonData)
	zw.Close()
	type input struct {
		path   string
		frames bool
		window int // mapWindow
		limit  int // MaxLineBytes
	}
	inputs := map[string]input{
		"jsonl":      {writeTemp(t, "cap.jsonl", jsonData), false, 256 << 10, 4096},
		"long-first": {writeTemp(t, "long.jsonl", append(long, jsonData...)), false, 64 << 20, 400 << 10},
		"gzip":       {writeTemp(t, "cap.jsonl.gz", z.Bytes()), false, 256 << 10, 4096},
		"frames":     {writeTemp(t, "cap.frames", walkFrameCorpus(62, frames, 300, false)), true, 256 << 10, 4096},
	}

	type reader struct {
		name  string
		file  string
		v     walkVariant
		split int // maxSplitShards: 1 has frames walked
	}
	var cases []reader
	for _, file := range []string{"jsonl", "long-first", "gzip"} {
		cases = append(cases, reader{"engine", file, walkVariant{}, 16})
		for _, v := range append(jsonVariants(), oneShard) {
			cases = append(cases, reader{v.String(), file, v, 16})
		}
	}
	cases = append(cases, reader{"engine", "frames", walkVariant{}, 16})
	for _, v := range append(walkVariants(), oneShard, walkVariant{shards: 1, inline: true}) {
		cases = append(cases, reader{v.String(), "frames", v, 16})
		if v.shards > 1 && !v.noWalk {
			cases = append(cases, reader{v.String() + " by a walk", "frames", v, 1})
		}
	}
	for _, c := range cases {
		t.Run(c.file+"/"+c.name, func(t *testing.T) {
			in := inputs[c.file]
			maxSplitShards, mapWindow, dropChunk = c.split, in.window, 64<<10
			opts := ReadOptions{MaxLineBytes: in.limit, FromLog: true}
			// How often the whole read asks, and then a read whose Stop
			// says true from half as many questions on: at a refill in
			// the middle of the file.
			var asked atomic.Int64
			opts.Stop = func() bool { asked.Add(1); return false }
			all, err := readStopping(vc, c.v, in.frames, in.path, opts)
			if err != nil {
				t.Fatalf("read to the end: %v", err)
			}
			q := asked.Load()
			if q < 4 {
				t.Fatalf("Stop asked %d times in a read of the whole file: too few to stop in its middle", q)
			}
			asked.Store(0)
			opts.Stop = func() bool { return asked.Add(1) > q/2 }
			got, err := readStopping(vc, c.v, in.frames, in.path, opts)
			if !errors.Is(err, ErrStopped) {
				t.Errorf("err %v, want ErrStopped (Stop asked %d times)", err, asked.Load())
			}
			if got == 0 || got >= all {
				t.Errorf("%d of the file's %d records judged, want some and fewer", got, all)
			}
		})
	}
}

// readStopping reads file with one of runCaptures' variants (or an Engine:
// v.shards 0) and returns how many records were judged.
func readStopping(vc Config, v walkVariant, frames bool, file string, opts ReadOptions) (uint64, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var r io.Reader = f
	if v.plain {
		r = struct{ io.Reader }{f}
	}
	format := FormatJSONL
	if frames {
		format = FormatFrames
	}
	if v.shards == 0 {
		e := NewEngine(vc, &collector{})
		_, err = Read(r, "cap", format, opts, e)
		return e.Stats().Records, err
	}
	s := NewSharded(v.shards, vc, &collector{})
	s.noWalk, s.noSplit = v.noWalk, v.noSplit
	if !v.ordered {
		s.Unordered()
	}
	if v.inline {
		s.Inline()
	}
	_, err = Read(r, "cap", format, opts, s)
	s.Close() // as validate interrupted: what was handed over is judged, no stream ended
	return s.Stats().Records, err
}
