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
