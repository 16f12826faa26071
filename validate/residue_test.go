package validate

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// residueRecord is record seq of stream id (its final if final).
func residueRecord(id string, seq int, final bool) string {
	kind, status, body := "e2a.chunk", "in_progress", `{"delta_kind":"text","delta":"x"}`
	if final {
		kind, status, body = "e2a.complete", "succeeded", `{"result":{}}`
	}
	return fmt.Sprintf(`{"protocol_version":"1.0","response_id":"%s-%d","request_id":%q,"sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":%s}`,
		id, seq, id, seq, final, status, kind, body)
}

// TestCrashResidueIsALoss: NUL bytes in a line of a log (a writer that
// crashed left its lost writes as NULs, and appended after them on its
// restart) are read by validate as the logdir tap reads them live: the
// line up to its last NUL is a loss of every open stream (no sequence
// finding across it, no missing_final), the rest is the line and judged;
// a line of NULs alone is the loss alone, and so is one longer than a read
// buffer (the tap reads only its head); the limit applies to the rest of
// a shorter one. No e2a.decode: JSON holds no raw NUL, so they are never
// a record a producer wrote. The same on every way a file is read (one
// shard by read(2), in place, the split walk, the hand-off, a plain
// reader). Before, validate reported each as an e2a.decode, and the
// records the crash cut as sequence findings (seq_gap) or missing_final,
// where the live sidecar reported a loss and no finding.
func TestCrashResidueIsALoss(t *testing.T) {
	defer func(w, d int) { mapWindow, dropChunk = w, d }(mapWindow, dropChunk)
	defer func(c, l, r int) { splitChunkBytes, splitChunkLines, splitRing = c, l, r }(splitChunkBytes, splitChunkLines, splitRing)
	mapWindow, dropChunk = 256<<10, 64<<10
	splitChunkBytes, splitChunkLines, splitRing = 4<<10, 5, 3
	vc := smallPartitions(t, 4096)
	const maxLine = 4096
	clean := func(seed uint64) []byte {
		return walkJSONCorpusX(seed, 2500, 100, maxLine, walkOdds{crlf: 0.05}, 0, 0)
	}
	var b bytes.Buffer
	b.Write(clean(71))
	lines := []string{
		// Two streams open when the writer crashed: a's chunk 1 and b's
		// chunk 1 and final were lost (NULs in their place), and its
		// restart appended a's chunk 2 after them. c starts after it.
		residueRecord("crash-a", 0, false), residueRecord("crash-b", 0, false),
		"\x00\x00\x00\x00" + residueRecord("crash-a", 2, false),
		residueRecord("crash-a", 3, true),
		residueRecord("crash-c", 0, false),
		// A run of NULs alone; one longer than the limit before c's
		// chunk 1, on a line read whole (the limit applies to what
		// follows the NULs); and one longer than a read buffer before
		// d's chunk 1, dropped with it as the tap drops a line it
		// cannot hold (it reads only its head).
		strings.Repeat("\x00", 100),
		strings.Repeat("\x00", maxLine+100) + residueRecord("crash-c", 1, false),
		residueRecord("crash-c", 2, false), residueRecord("crash-c", 3, true),
		residueRecord("crash-d", 0, false),
		strings.Repeat("\x00", 300<<10) + residueRecord("crash-d", 1, false),
		residueRecord("crash-d", 2, false), residueRecord("crash-d", 3, true),
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	b.Write(clean(72))
	p := writeTemp(t, "crash.jsonl", b.Bytes())
	opts := ReadOptions{MaxLineBytes: maxLine, FromLog: true}
	want := runCaptures(t, vc, FormatAuto, opts, oneShard, p)
	for _, l := range strings.Split(want, "\n") {
		if strings.Contains(l, "e2a.decode") || strings.Contains(l, "[crash-") {
			t.Errorf("one shard: %s", l)
		}
	}
	if i := strings.Index(want, "\nrecords "); i < 0 || !strings.HasPrefix(want[i+1:], "records 5011 ") {
		t.Errorf("want the 5000 records of the clean traffic and the 11 of the crashed streams that no NUL cut judged: %.60s", want[i+1:])
	}
	splitWalks = 0
	for _, v := range append(jsonVariants(), walkVariant{shards: 1, inline: true, anyWalk: true}) {
		if got := runCaptures(t, vc, FormatAuto, opts, v, p); got != want {
			t.Errorf("%s differs from one shard: %s", v, firstDiff(want, got))
		}
	}
	if splitWalks == 0 {
		t.Fatal("no variant read the lines by a split walk")
	}
}
