package validate

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/e2atap/e2atap/frame"
)

// splitCorpus is walkFrameCorpus with frames mixed in that a split must
// not be fooled by: payloads that are themselves runs of frames (a guess
// at a chunk's first frame may land in them and skim cleanly on), frames
// longer than a chunk (chunks that hold no frame start, frames read
// further than a chunk and its slack), and an undecodable tail when tail.
func splitCorpus(t *testing.T, seed uint64, n int, tail bool) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 3))
	base := walkFrameCorpus(seed, n, 300, false)
	var out []byte
	for len(base) > 0 {
		// Cut base at its frame boundaries (it is all frames).
		var f frame.Frame
		if _, err := frame.DecodeTo(&f, base); err != nil {
			t.Fatal(err)
		}
		out = append(out, base[:f.Size]...)
		base = base[f.Size:]
		switch x := r.Float64(); {
		case x < 0.01:
			inner := walkFrameCorpus(seed+uint64(len(out)), 5+r.IntN(40), 3, false)
			b, err := frame.AppendFrame(nil, frame.TypeStreamChunk, 0, 0,
				[]frame.Attr{{Name: "sid", Value: fmt.Sprintf("nest-%d", r.IntN(5))}}, inner)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b...)
		case x < 0.0115:
			b, err := frame.AppendFrame(nil, frame.TypeStreamChunk, frame.FlagDone, 0,
				[]frame.Attr{{Name: "sid", Value: fmt.Sprintf("big-%d", len(out))}}, bytes.Repeat([]byte{'z'}, 3000+r.IntN(150000)))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b...)
		}
	}
	if tail {
		out = append(out, frame.Magic, frame.Version, 2, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 9)
	}
	return out
}

// TestShardedSplitFramesSameAsOneShard: frames read by a split (small
// chunks, so that the chunks' slots are used over and over, guesses land
// in payloads of frames, frames span chunks, an undecodable tail) give
// byte for byte what one shard reading them through read(2) gives, with
// 2, 3 and 4 shards, inline or not, in order or not.
func TestShardedSplitFramesSameAsOneShard(t *testing.T) {
	defer func(c int) { splitChunk = c }(splitChunk)
	defer func(m int64) { splitMinBytes = m }(splitMinBytes)
	vc := smallPartitions(t, 512)
	frames := 40000
	if raceEnabled {
		// The race detector makes each of the 24 runs ten times dearer:
		// fewer frames, still many chunks of every size but the largest.
		frames, splitMinBytes = 8000, 64<<10
	}
	for _, tail := range []bool{false, true} {
		data := splitCorpus(t, 71, frames, tail)
		if int64(len(data)) < splitMinBytes {
			t.Fatalf("corpus of %d bytes: not split", len(data))
		}
		p := writeTemp(t, "split.frames", data)
		want := runCaptures(t, vc, FormatAuto, ReadOptions{Index: 5}, oneShard, p)
		for _, rule := range []string{"frame.seq_gap", "frame.after_done"} {
			if !strings.Contains(want, " "+rule+" ") {
				t.Fatalf("the corpus has no %s finding", rule)
			}
		}
		if tail != strings.Contains(want, " frame.decode ") {
			t.Fatalf("tail %t: frame.decode finding %t", tail, !tail)
		}
		for _, chunk := range []int{4 << 10, 64 << 10, 1 << 20} {
			splitChunk = chunk
			for _, v := range walkVariants() {
				if v.noWalk {
					continue
				}
				if got := runCaptures(t, vc, FormatAuto, ReadOptions{Index: 5}, v, p); got != want {
					t.Errorf("tail %t, chunk %d, %s differs from one shard: %s", tail, chunk, v, firstDiff(want, got))
				}
			}
		}
	}
}

// TestShardedSplitFileOffset: a split leaves the file's offset where the
// frames stopped (the undecodable frame, or the end), as a reader does,
// and starts where the offset was; it reads the cached file by raw reads
// where the kernel has them.
func TestShardedSplitFileOffset(t *testing.T) {
	defer func(c int) { splitChunk = c }(splitChunk)
	splitChunk = 16 << 10
	data := splitCorpus(t, 72, 30000, true)
	bad := int64(len(data) - 16)
	p := writeTemp(t, "off.frames", data)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var fr frame.Frame
	if _, err := frame.DecodeTo(&fr, data); err != nil {
		t.Fatal(err)
	}
	skip := fr.Size
	if _, err := f.Seek(int64(skip), 0); err != nil {
		t.Fatal(err)
	}
	s := NewSharded(2, DefaultConfig(), &collector{})
	s.Inline()
	last, err := Read(f, "cap", FormatFrames, ReadOptions{}, s)
	s.Finish(ReasonEOF, &Input{})
	if err != nil {
		t.Fatal(err)
	}
	if s.mappedReads != 1 {
		t.Fatalf("%d files split", s.mappedReads)
	}
	if s.splitRaws == 0 && rawReadable(t, f) {
		t.Error("no read of the split was made raw (fileReader)")
	}
	at, _ := f.Seek(0, 1)
	if at != bad {
		t.Errorf("offset %d after the read, want %d (the undecodable frame)", at, bad)
	}
	one := NewSharded(1, DefaultConfig(), &collector{})
	one.Inline()
	want, err := Read(bytes.NewReader(data[skip:]), "cap", FormatFrames, ReadOptions{}, one)
	one.Finish(ReasonEOF, &Input{})
	if err != nil || last != want {
		t.Errorf("last index %d, want %d (%v)", last, want, err)
	}
}

// FuzzFrameSplit: any bytes after a first frame, read by a split of 2 or
// 3 shards into chunks of a few hundred bytes, give what one shard
// reading them through read(2) gives: frames spanning chunks, guesses
// landing in payloads or garbage, undecodable frames anywhere.
func FuzzFrameSplit(f *testing.F) {
	defer func(c int, m int64) { splitChunk, splitMinBytes = c, m }(splitChunk, splitMinBytes)
	splitMinBytes = 1
	corpus := walkFrameCorpus(5, 60, 7, false)
	f.Add(corpus, uint16(300), false)
	f.Add(append(bytes.Clone(corpus[:500]), corpus[700:]...), uint16(64), true)
	inner, _ := frame.AppendFrame(nil, frame.TypeStreamChunk, 0, 0, []frame.Attr{{Name: "sid", Value: "n"}}, corpus[:900])
	f.Add(append(bytes.Clone(corpus[:400]), inner...), uint16(100), false)
	first, _ := frame.AppendFrame(nil, frame.TypeStreamReq, 0, 0, []frame.Attr{{Name: "sid", Value: "first"}}, []byte("go"))
	defer func(n int) { partitionStreams = n }(partitionStreams)
	partitionStreams = 64
	vc := DefaultConfig()
	vc.IdleTimeout = 0
	vc.MaxStreams = 512 // 8 partitions: cheap to set up, spread over the shards
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16, three bool) {
		splitChunk = 16 + int(chunk)%2048
		p := writeTemp(t, "fz.frames", append(bytes.Clone(first), data...))
		want := runCaptures(t, vc, FormatAuto, ReadOptions{}, oneShard, p)
		v := walkVariant{shards: 2, wantWalk: true, inline: true}
		if three {
			v.shards = 3
		}
		if got := runCaptures(t, vc, FormatAuto, ReadOptions{}, v, p); got != want {
			t.Errorf("chunk %d, %s differs from one shard: %s", splitChunk, v, firstDiff(want, got))
		}
	})
}

// TestShardedSplitFileShrinks: a frame file cut shorter while a split
// reads it (by a real truncate, from a shard judging its first frame) is
// an I/O error naming it, for a split as for a walk; what was judged
// before stays judged, and the run can still be finished.
func TestShardedSplitFileShrinks(t *testing.T) {
	defer func(c, m int) { splitChunk, maxSplitShards = c, m }(splitChunk, maxSplitShards)
	splitChunk = 64 << 10
	for _, most := range []int{maxSplitShards, 1} {
		maxSplitShards = most
		p, data := bigFrameFile(t, nil, 40000, nil)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sink := &shrinkSink{path: p}
		s := NewSharded(2, DefaultConfig(), sink)
		s.Inline()
		last, err := Read(f, "cap", FormatFrames, ReadOptions{}, s)
		f.Close()
		if err == nil || !strings.Contains(err.Error(), "shrank") {
			t.Fatalf("split up to %d shards: Read = %v, want the file shrank", most, err)
		}
		if last == 0 || last >= 40000 || len(data) < 1<<20 {
			t.Fatalf("split up to %d shards: last index %d of 40000 frames", most, last)
		}
		s.Finish(ReasonEOF, &Input{})
		if st := s.Stats(); st.Records == 0 || st.Records > last {
			t.Errorf("split up to %d shards: %d records judged, the read stopped at %d", most, st.Records, last)
		}
	}
}

// growSink appends a frame to the file at path at each record judged, for
// the first 2000.
type growSink struct {
	collector
	path  string
	frame []byte
	mu    sync.Mutex
	n     int
}

func (g *growSink) Record(*RecordInfo) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n++; g.n > 2000 {
		return
	}
	w, err := os.OpenFile(g.path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		panic(err)
	}
	defer w.Close()
	if _, err := w.Write(g.frame); err != nil {
		panic(err)
	}
}

// TestShardedSplitFileGrows: a frame file appended to while a split reads
// it is read up to the size it had when the read started, as one shard
// reads it, and its offset is left there.
func TestShardedSplitFileGrows(t *testing.T) {
	defer func(c int) { splitChunk = c }(splitChunk)
	splitChunk = 32 << 10
	p, data := bigFrameFile(t, nil, 20000, nil)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g := &growSink{path: p, frame: data[:len(data)/20000]}
	s := NewSharded(2, DefaultConfig(), g)
	s.Inline()
	last, err := Read(f, "cap", FormatFrames, ReadOptions{}, s)
	s.Finish(ReasonEOF, &Input{})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); last != 20000 || st.Records != 20000 || s.mappedReads != 1 {
		t.Fatalf("last index %d, %d records judged, %d split: want the 20000 there when the read started", last, st.Records, s.mappedReads)
	}
	if at, _ := f.Seek(0, 1); at != int64(len(data)) {
		t.Errorf("offset %d after the read, want %d", at, len(data))
	}
	if st, _ := os.Stat(p); st.Size() <= int64(len(data)) {
		t.Fatalf("the file did not grow while it was read (%d bytes)", st.Size())
	}
}
