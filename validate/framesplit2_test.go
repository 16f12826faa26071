package validate

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/e2atap/e2atap/frame"
)

// TestShardedSplitFramesPastSlack: frames longer than the slack a split
// reads past its chunk (so that most chunks end in a frame cut by the end
// of what was read) are skimmed from the guess at each chunk's first
// frame, reading more for the cut one, not skimmed again by the judge
// (verify); the verdicts are one shard's.
func TestShardedSplitFramesPastSlack(t *testing.T) {
	defer func(c, sl int, m int64) { splitChunk, splitSlack, splitMinBytes = c, sl, m }(splitChunk, splitSlack, splitMinBytes)
	splitChunk, splitSlack, splitMinBytes = 64<<10, 4<<10, 1
	var data []byte
	for i := range 300 {
		b, err := frame.AppendFrame(nil, frame.TypeStreamChunk, 0, 0,
			[]frame.Attr{{Name: "sid", Value: fmt.Sprintf("s-%d", i%17)}, {Name: "etype", Value: "text"}},
			bytes.Repeat([]byte{'a' + byte(i%26)}, 5000+i*37%9000))
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b...)
	}
	p := writeTemp(t, "past-slack.frames", data)
	vc := DefaultConfig()
	vc.IdleTimeout = 0
	want := runCaptures(t, vc, FormatAuto, ReadOptions{}, oneShard, p)

	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	col := &collector{}
	s := NewSharded(2, vc, col)
	s.Unordered()
	s.Inline()
	last, err, ok := s.readFramesSplit(f, p, FormatFrames, ReadOptions{})
	if err != nil || !ok {
		t.Fatalf("split: %v, ok %t", err, ok)
	}
	if last != 300 {
		t.Fatalf("split read %d frames, want 300", last)
	}
	if s.splitFixes != 0 {
		t.Errorf("%d chunks of %d skimmed again: a guess failed at a frame cut by the slack", s.splitFixes, len(data)/splitChunk)
	}
	s.Close()
	if got := runCaptures(t, vc, FormatAuto, ReadOptions{}, walkVariant{shards: 2, wantWalk: true, inline: true}, p); got != want {
		t.Errorf("2 shards differ from one: %s", firstDiff(want, got))
	}
}

// TestShardedSplitFakeLargeFrames: payloads that start like a frame far
// longer than the file (a guess at a chunk's first frame lands there
// whenever the chunk starts in the header or attributes before them, 1
// chunk in 20 here) cost a split at most syncGrowMax (4 chunks) of
// reading more for such a guess, not a read to the end of the file (which
// read 7x the file); the verdicts are one shard's.
func TestShardedSplitFakeLargeFrames(t *testing.T) {
	defer func(c, sl int, m int64) { splitChunk, splitSlack, splitMinBytes = c, sl, m }(splitChunk, splitSlack, splitMinBytes)
	splitChunk, splitSlack, splitMinBytes = 16<<10, 1<<10, 1
	fake := []byte{frame.Magic, frame.Version, frame.TypeStreamChunk, 0, 0, 0, 0, 1, 0, 0, 0, 0x70, 0, 0} // 7 MiB of data
	var data []byte
	for i := range 6000 {
		b, err := frame.AppendFrame(nil, frame.TypeStreamChunk, 0, 0,
			[]frame.Attr{{Name: "sid", Value: fmt.Sprintf("s-%d", i%29)}}, append(bytes.Clone(fake), bytes.Repeat([]byte{'x'}, 600)...))
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b...)
	}
	p := writeTemp(t, "fake-large.frames", data)
	vc := DefaultConfig()
	vc.IdleTimeout = 0
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := NewSharded(2, vc, &collector{})
	s.Unordered()
	s.Inline()
	if last, err, ok := s.readFramesSplit(f, p, FormatFrames, ReadOptions{}); err != nil || !ok || last != 6000 {
		t.Fatalf("split: %d frames, %v, ok %t", last, err, ok)
	}
	s.Close()
	if s.splitBytes > 2*int64(len(data)) {
		t.Errorf("the split read %d bytes of a %d-byte file", s.splitBytes, len(data))
	}
	want := runCaptures(t, vc, FormatAuto, ReadOptions{}, oneShard, p)
	if got := runCaptures(t, vc, FormatAuto, ReadOptions{}, walkVariant{shards: 2, wantWalk: true, inline: true}, p); got != want {
		t.Errorf("2 shards differ from one: %s", firstDiff(want, got))
	}
}
