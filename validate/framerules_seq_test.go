package validate

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/frame"
)

// TestChunkSequence: the sequence rules of STREAM_CHUNKs whose attribute
// sections are cached (chunkStream judges the next in sequence itself,
// sequence the rest), on a stream in sequence, with a gap, a repeat and a
// step back, and on one that starts below 0 (its last sequence is kept
// aside until it reaches 0), interleaved, each ending done.
func TestChunkSequence(t *testing.T) {
	var frames [][]byte
	s := []int32{0, 1, 2, 4, 4, 3, 5, 6}
	n := []int32{-2, -1, 0, 1, 2, 2, 5, 6}
	for i := range s {
		var done uint8
		if i == len(s)-1 {
			done = 1
		}
		frames = append(frames, chunk(t, done, s[i], "sid", "s", "etype", "text"), chunk(t, done, n[i], "sid", "n", "etype", "text"))
	}
	for _, off := range []bool{false, true} {
		frameCacheOff = off
		col := runCapture(t, ProfileJiuwenswarm, bytes.Join(frames, nil), FormatFrames)
		frameCacheOff = false
		var got []string
		for _, f := range col.findings {
			got = append(got, f.Rule+"@"+itoa(int(f.Index))+":"+f.Stream)
		}
		sort.Strings(got)
		want := "frame.seq_dup@12:n,frame.seq_dup@9:s,frame.seq_gap@14:n,frame.seq_gap@7:s,frame.seq_regress@11:s"
		if strings.Join(got, ",") != want {
			t.Errorf("cache off %t: got %v, want %s", off, got, want)
		}
	}
}

// TestChunkSequenceWrap: a frame's seq is a signed int32 the reference
// writes as it is, so a producer's int counter wraps from 2147483647 to
// -2147483648: the next chunk, no finding (each chunk after the wrap was
// a seq_regress); a jump across the wrap is a seq_gap, a repeat a
// seq_dup, and a far jump down (5 to -2147483645) or back to 0 still a
// seq_regress. The messages name the sequences.
func TestChunkSequenceWrap(t *testing.T) {
	const max, min = 1<<31 - 1, -1 << 31
	streams := map[string][]int32{
		"wrap":    {max - 1, max, min, min + 1, min + 2},
		"gap":     {max - 1, min + 2, min + 3},
		"dup":     {max, min, min},
		"far":     {5, min + 3},
		"restart": {max, 0},
	}
	var frames [][]byte
	for _, sid := range []string{"wrap", "gap", "dup", "far", "restart"} {
		for i, seq := range streams[sid] {
			var done uint8
			if i == len(streams[sid])-1 {
				done = 1
			}
			frames = append(frames, chunk(t, done, seq, "sid", sid, "etype", "text"))
		}
	}
	for _, off := range []bool{false, true} {
		frameCacheOff = off
		col := runCapture(t, ProfileJiuwenswarm, bytes.Join(frames, nil), FormatFrames)
		frameCacheOff = false
		var got []string
		for _, f := range col.findings {
			if f.Rule != "frame.seq_start" {
				got = append(got, f.Rule+":"+f.Stream+": "+f.Message)
			}
		}
		want := []string{
			"frame.seq_gap:gap: sequence -2147483646 after 2147483646 (int32 wrapped): 3 missing",
			"frame.seq_dup:dup: sequence -2147483648 repeated",
			"frame.seq_regress:far: sequence -2147483645 after 5: goes back",
			"frame.seq_regress:restart: sequence 0 after 2147483647: goes back",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("cache off %t:\n got %q\nwant %q", off, got, want)
		}
	}
}

// TestChunkSequenceAfterGap: a chunk next in sequence after its
// connection lost messages re-bases the stream (no finding) and ends the
// re-basing, so that a gap after it is a finding again.
func TestChunkSequenceAfterGap(t *testing.T) {
	col := &collector{}
	cfg := DefaultConfig()
	cfg.IdleTimeout = 0
	e := NewEngine(cfg, col)
	in := &Input{Pos: Position{Kind: PosByte, Name: "gap"}, Tap: "t", Conn: "c1"}
	observe := func(seq int32) {
		t.Helper()
		in.Index++
		in.Data = chunk(t, 0, seq, "sid", "s", "etype", "text")
		var f frame.Frame
		if !frame.TryDecodeTo(&f, in.Data) {
			t.Fatal("no frame")
		}
		e.ObserveFrame(in, &f)
	}
	observe(0)
	observe(1)
	e.Gap(in)
	observe(2) // re-based: nothing lost is judged
	observe(4)
	var got []string
	for _, f := range col.findings {
		got = append(got, f.Rule+"@"+itoa(int(f.Index)))
	}
	if want := "frame.seq_gap@4"; strings.Join(got, ",") != want {
		t.Errorf("got %v, want %s", got, want)
	}
}
