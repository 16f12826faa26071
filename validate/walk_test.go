package validate

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/e2atap/e2atap/frame"
	"github.com/e2atap/e2atap/internal/gen"
)

// walkOdds are the shares of odd lines walkJSONCorpus mixes into
// generated traffic.
type walkOdds struct {
	blank, spaces, crlf, invalid, oversize, keyless, nested, escaped, dup, frameLine, badMagic float64
}

var allOdds = walkOdds{blank: 0.02, spaces: 0.01, crlf: 0.03, invalid: 0.01, oversize: 0.01, keyless: 0.01,
	nested: 0.01, escaped: 0.02, dup: 0.005, frameLine: 0.005, badMagic: 0.003}

// walkJSONCorpus is n generated records (faults, interrupts, many streams
// at once) with odd lines mixed in: blank and whitespace-only lines, CRLF
// endings, invalid JSON, lines over maxLine, records without a request_id,
// with a nested request_id before the top-level one, with an escaped key,
// with a repeated key, binary frames and a bad frame magic on a line.
func walkJSONCorpus(seed uint64, n, concurrent, maxLine int, odds walkOdds) []byte {
	return walkJSONCorpusX(seed, n, concurrent, maxLine, odds, 0.08, 0.2)
}

func walkJSONCorpusX(seed uint64, n, concurrent, maxLine int, odds walkOdds, interrupts, faults float64) []byte {
	cfg := gen.DefaultConfig()
	cfg.Seed, cfg.FaultRate, cfg.InterruptRate, cfg.Concurrent, cfg.Sessions = seed, faults, interrupts, concurrent, 12
	g := gen.New(cfg)
	r := rand.New(rand.NewPCG(seed, 7))
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		rec := g.Next().Data
		eol := "\n"
		if r.Float64() < odds.crlf {
			eol = "\r\n"
		}
		switch x := r.Float64(); {
		case x < odds.blank:
			b.WriteString(eol)
		case x < odds.blank+odds.spaces:
			b.WriteString(" \t " + eol)
		}
		switch x := r.Float64(); {
		case x < odds.invalid:
			rec = rec[:len(rec)/2]
		case x < odds.invalid+odds.oversize:
			rec = append(append(bytes.Clone(rec[:len(rec)-1]), `,"pad":"`...), bytes.Repeat([]byte("p"), maxLine)...)
			rec = append(rec, `"}`...)
		case x < odds.invalid+odds.oversize+odds.keyless:
			rec = []byte(`{"protocol_version":"1.0","status":"in_progress","sequence":3}`)
		case x < odds.invalid+odds.oversize+odds.keyless+odds.nested:
			rec = append([]byte(`{"params_x":{"request_id":"nested-1","method":"chat.interrupt"},`), rec[1:]...)
		case x < odds.invalid+odds.oversize+odds.keyless+odds.nested+odds.escaped:
			rec = bytes.Replace(rec, []byte(`"request_id"`), []byte(`"request\u005fid"`), 1)
		case x < odds.invalid+odds.oversize+odds.keyless+odds.nested+odds.escaped+odds.dup:
			rec = append(bytes.Clone(rec[:len(rec)-1]), fmt.Sprintf(`,"request_id":"dup-%d"}`, r.IntN(5))...)
		case x < odds.invalid+odds.oversize+odds.keyless+odds.nested+odds.escaped+odds.dup+odds.frameLine:
			f, _ := frame.AppendFrame(nil, frame.TypeStreamChunk, uint8(r.IntN(2)), int32(r.IntN(3)),
				[]frame.Attr{{Name: "sid", Value: fmt.Sprintf("fs-%d", r.IntN(4))}}, []byte("tok"))
			rec = bytes.ReplaceAll(f, []byte("\n"), []byte("."))
		case x < odds.invalid+odds.oversize+odds.keyless+odds.nested+odds.escaped+odds.dup+odds.frameLine+odds.badMagic:
			rec = []byte{frame.Magic, 9, 9}
		}
		b.Write(rec)
		b.WriteString(eol)
	}
	return b.Bytes()
}

// walkFrameCorpus is n frames over many streams with sequence gaps,
// repeats, chunks after done, events, duplicate and missing sids, and,
// when tail is set, a corrupt frame at the end.
func walkFrameCorpus(seed uint64, n, streams int, tail bool) []byte {
	r := rand.New(rand.NewPCG(seed, 9))
	next := make([]int32, streams)
	var b []byte
	for i := 0; i < n; i++ {
		s := r.IntN(streams)
		sid := fmt.Sprintf("agent-%d:%08d-0000-4000-8000-000000000000", s%7, s)
		seq := next[s]
		next[s]++
		switch x := r.Float64(); {
		case x < 0.01:
			seq++ // a gap
		case x < 0.02:
			seq-- // a repeat
		}
		typ, flags := frame.TypeStreamChunk, uint8(0)
		attrs := []frame.Attr{{Name: "sid", Value: sid}, {Name: "etype", Value: "text"}}
		switch x := r.Float64(); {
		case x < 0.05:
			flags = frame.FlagDone
			next[s] = 0
		case x < 0.07:
			typ, attrs = frame.TypeEvent, []frame.Attr{{Name: "id", Value: sid}, {Name: "type", Value: "t"}}
		case x < 0.08:
			attrs = attrs[1:] // no sid
		case x < 0.09:
			attrs = append(attrs, frame.Attr{Name: "sid", Value: sid + "x"}) // the last wins
		case x < 0.10:
			typ, attrs = frame.TypeStreamReq, []frame.Attr{{Name: "sid", Value: sid}}
		}
		f, err := frame.AppendFrame(nil, typ, flags, seq, attrs, bytes.Repeat([]byte("x"), 20+r.IntN(200)))
		if err != nil {
			panic(err)
		}
		b = append(b, f...)
	}
	if tail {
		b = append(b, frame.Magic, frame.Version, 2, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 9)
	}
	return b
}

type walkVariant struct {
	shards           int
	noWalk, ordered  bool
	wantWalk, inline bool
	// noSplit: mapped JSON lines by the hand-off where a split walk could
	// read them (splitwalk.go).
	noSplit bool
	// plain: the files are read through read(2), never mapped (the
	// reference); anyWalk: whether some were read in place is not checked.
	plain, anyWalk bool
}

func (v walkVariant) String() string {
	return fmt.Sprintf("%d shards (walk %t, ordered %t, inline %t, plain %t, split %t)", v.shards, !v.noWalk, v.ordered, v.inline, v.plain, !v.noSplit)
}

// oneShard is the reference the variants are compared with: one inline
// shard reading through read(2).
var oneShard = walkVariant{shards: 1, inline: true, plain: true}

// runCaptures reads files as validate does (one run, several files in
// order) and renders what validate prints: the findings in its order (by
// index, stably), the counters, the stream ends, the last index and the
// read errors.
func runCaptures(t *testing.T, vc Config, format Format, opts ReadOptions, v walkVariant, files ...string) string {
	t.Helper()
	col := &collector{}
	s := NewSharded(v.shards, vc, col)
	s.noWalk, s.noSplit = v.noWalk, v.noSplit
	if !v.ordered {
		s.Unordered()
	}
	if v.inline {
		s.Inline()
	}
	var out strings.Builder
	idx := opts.Index
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		o := opts
		o.Index = idx
		var r io.Reader = f
		if v.plain {
			r = struct{ io.Reader }{f} // not an *os.File: never mapped
		}
		idx, err = Read(r, filepath.Base(p), format, o, s)
		f.Close()
		fmt.Fprintf(&out, "read %s: last %d, err %v\n", filepath.Base(p), idx, err)
	}
	s.Finish(ReasonEOF, &Input{Pos: Position{Name: "cap"}})
	if got := s.mappedReads; (got > 0) != v.wantWalk && !v.anyWalk {
		t.Fatalf("%s: %d files read in place", v, got)
	}
	if s.splitReads > 0 && (v.noSplit || v.ordered || v.shards < 2) {
		t.Fatalf("%s: %d files read by a split walk", v, s.splitReads)
	}
	splitWalks += s.splitReads
	fs := append([]Finding(nil), col.findings...)
	sort.SliceStable(fs, func(i, j int) bool { return FindingBefore(&fs[i], &fs[j]) })
	for _, f := range fs {
		fmt.Fprintf(&out, "%d %s %s [%s] %s: %s\n", f.Index, f.Source, f.Rule, f.Stream, f.Severity, f.Message)
	}
	st := s.Stats()
	fmt.Fprintf(&out, "records %d joined %d evicted %d untracked %d\nfindings %v\noutcomes %v\n",
		st.Records, st.Joined, st.Evicted, st.Untracked, st.Findings, st.Outcomes)
	var ends []string
	for _, e := range col.ends {
		ends = append(ends, fmt.Sprintf("%s %s %s %d %d %t", e.Key, e.Outcome, e.Reason, e.Records, e.Index, e.Gap))
	}
	sort.Strings(ends)
	fmt.Fprintf(&out, "ends:\n%s\n", strings.Join(ends, "\n"))
	return out.String()
}

// firstDiff names the first line where a and b differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < min(len(al), len(bl)); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n one: %s\nmany: %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(al), len(bl))
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// smallPartitions gives a stream bound of maxStreams many partitions (8
// for 512), so that small corpora evict and 4 shards each own some.
func smallPartitions(t *testing.T, maxStreams int) Config {
	t.Helper()
	old := partitionStreams
	partitionStreams = 64
	t.Cleanup(func() { partitionStreams = old })
	vc := DefaultConfig()
	vc.IdleTimeout = 0
	vc.MaxStreams = maxStreams
	return vc
}

func walkVariants() []walkVariant {
	var vs []walkVariant
	for _, n := range []int{2, 3, 4} {
		vs = append(vs,
			walkVariant{shards: n, wantWalk: true, inline: true},
			walkVariant{shards: n, wantWalk: true, ordered: true, inline: true},
			walkVariant{shards: n, wantWalk: true},
			walkVariant{shards: n, noWalk: true, inline: true})
	}
	return vs
}

// jsonVariants are walkVariants and one inline shard reading JSON lines
// in place (readLinesInline).
func jsonVariants() []walkVariant {
	vs := append(walkVariants(), walkVariant{shards: 1, wantWalk: true, inline: true})
	for _, n := range []int{2, 3} {
		vs = append(vs, walkVariant{shards: n, wantWalk: true, inline: true, noSplit: true})
	}
	return vs
}

// splitWalks counts the files runCaptures read by a split walk, so that a
// test of JSON lines can check that it took that way.
var splitWalks int

// TestShardedWalkJSONSameAsOneShard: JSON lines judged in place in the
// mapping (windows crossed) give byte for byte what one shard gives
// reading them through read(2): findings in order,
// counters, stream ends, on a corpus with interrupts across partitions,
// evictions (a small --max-streams), decode errors, keyless and oddly
// keyed records, blank lines, CRLF, embedded frames and a line longer
// than a window; and so does the hand-off with copies.
func TestShardedWalkJSONSameAsOneShard(t *testing.T) {
	defer func(w, d int, tb int64) { mapWindow, dropChunk, tailBytes = w, d, tb }(mapWindow, dropChunk, tailBytes)
	defer func(c, l, r int) { splitChunkBytes, splitChunkLines, splitRing = c, l, r }(splitChunkBytes, splitChunkLines, splitRing)
	mapWindow, dropChunk = 256<<10, 64<<10 // windows given back as the shards pass them
	// A split walk's chunks of a few lines, in a ring that wraps often
	// (scans wait for the slower judge).
	splitChunkBytes, splitChunkLines, splitRing = 4<<10, 5, 3
	tailBytes = 1 << 20 // the last part in smaller batches (nearEnd)
	vc := smallPartitions(t, 512)
	const maxLine = 4096
	lines := 9000 // 8 MB
	if raceEnabled {
		lines = 3000 // 16 runs ten times dearer: still past the 2 MiB checked below
	}
	data := walkJSONCorpus(11, lines, 700, maxLine, allOdds)
	giant := append([]byte(`{"request_id":"giant","sequence":0,"pad":"`), bytes.Repeat([]byte("g"), 300<<10)...)
	data = append(append(data, giant...), "\"}\n"...)
	data = append(data, walkJSONCorpus(12, lines*2/9, 50, maxLine, allOdds)...)
	data = append(data, `{"request_id":"no-newline-at-end","sequence":0}`...)
	if len(data) < 2<<20 {
		t.Fatalf("corpus of %d bytes: too small to cross windows", len(data))
	}
	p := writeTemp(t, "cap.jsonl", data)
	opts := ReadOptions{MaxLineBytes: maxLine, FromLog: true}
	want := runCaptures(t, vc, FormatAuto, opts, oneShard, p)
	for _, rule := range []string{"e2a.decode", "e2a.missing_final", "e2a.seq_gap"} {
		if !strings.Contains(want, " "+rule+" ") {
			t.Fatalf("the corpus has no %s finding:\n%.3000s", rule, want)
		}
	}
	if !strings.Contains(want, "evicted") || strings.Contains(want, "evicted 0 ") {
		t.Fatalf("the corpus evicts nothing")
	}
	splitWalks = 0
	for _, v := range jsonVariants() {
		if got := runCaptures(t, vc, FormatAuto, opts, v, p); got != want {
			t.Errorf("%s differs from one shard: %s", v, firstDiff(want, got))
		}
	}
	if splitWalks == 0 {
		t.Fatal("no variant read the lines by a split walk")
	}
}

// TestShardedWalkLongLines: lines past the reader's buffer (256 KiB) that
// are within --max-line-bytes are judged whole, those past it are one
// e2a.decode each, counted as the reader counts them, with CRLF or not,
// and a UTF-8 byte order mark is skipped, in place as through read(2).
func TestShardedWalkLongLines(t *testing.T) {
	vc := smallPartitions(t, 512)
	const maxLine = 400 << 10
	var data []byte
	data = append(data, utf8BOM...)
	data = append(data, walkJSONCorpus(21, 3000, 40, 1000, walkOdds{crlf: 0.2, blank: 0.05})...)
	for i, n := range []int{300 << 10, maxLine - 60, maxLine - 30, maxLine + 10, 262100, 262200} {
		eol := "\n"
		if i%2 == 1 {
			eol = "\r\n"
		}
		data = append(data, fmt.Sprintf(`{"request_id":"long-%d","sequence":0,"is_final":true,"status":"succeeded","response_kind":"e2a.complete","pad":"`, i)...)
		data = append(data, bytes.Repeat([]byte("l"), n-len(`{"request_id":"long-0","sequence":0,"is_final":true,"status":"succeeded","response_kind":"e2a.complete","pad":""}`))...)
		data = append(data, `"}`+eol...)
	}
	data = append(data, walkJSONCorpus(22, 2000, 40, 1000, walkOdds{crlf: 0.2})...)
	p := writeTemp(t, "long.jsonl", data)
	opts := ReadOptions{MaxLineBytes: maxLine, FromLog: true}
	want := runCaptures(t, vc, FormatAuto, opts, oneShard, p)
	if !strings.Contains(want, "over the 409600-byte limit") {
		t.Fatalf("no line over the limit:\n%.2000s", want)
	}
	splitWalks = 0
	for _, v := range jsonVariants() {
		if got := runCaptures(t, vc, FormatAuto, opts, v, p); got != want {
			t.Errorf("%s differs from one shard: %s", v, firstDiff(want, got))
		}
	}
	if splitWalks == 0 {
		t.Fatal("no variant read the lines by a split walk")
	}
}

// TestShardedWalkFramesSameAsOneShard: frames read by a split, and by a
// walk (a run of more than maxSplitShards shards: windows crossed and
// given back behind the walk, a corrupt tail) give what one shard gives,
// and what the reader's hand-off gives.
func TestShardedWalkFramesSameAsOneShard(t *testing.T) {
	for _, most := range []int{maxSplitShards, 1} {
		t.Run(fmt.Sprintf("split up to %d shards", most), func(t *testing.T) {
			defer func(m int) { maxSplitShards = m }(maxSplitShards)
			maxSplitShards = most
			testShardedWalkFramesSameAsOneShard(t)
		})
	}
}

func testShardedWalkFramesSameAsOneShard(t *testing.T) {
	defer func(w, d int) { mapWindow, dropChunk = w, d }(mapWindow, dropChunk)
	mapWindow, dropChunk = 256<<10, 64<<10 // windows given back as walks go
	vc := smallPartitions(t, 512)
	frames := 30000 // 6 MB
	if raceEnabled {
		// 26 runs, each ten times dearer under the race detector: 2 MB,
		// still split (1 MiB or more) and eight windows.
		frames = 10000
	}
	p := writeTemp(t, "cap.frames", walkFrameCorpus(31, frames, 900, true))
	opts := ReadOptions{}
	want := runCaptures(t, vc, FormatAuto, opts, oneShard, p)
	for _, rule := range []string{"frame.decode", "frame.seq_gap", "frame.after_done"} {
		if !strings.Contains(want, " "+rule+" ") {
			t.Fatalf("the corpus has no %s finding:\n%.3000s", rule, want)
		}
	}
	for _, v := range walkVariants() {
		if got := runCaptures(t, vc, FormatAuto, opts, v, p); got != want {
			t.Errorf("%s differs from one shard: %s", v, firstDiff(want, got))
		}
	}
}

// TestShardedWalkSeveralFiles: one run over several files (validate's
// one capture), some walked and some not (gzip, small, frames after JSON),
// numbers records on across them and gives one shard's output.
func TestShardedWalkSeveralFiles(t *testing.T) {
	vc := smallPartitions(t, 512)
	lines, frames := 6000, 12000 // 5.5 MB of JSON lines, 2.4 MB of frames
	if raceEnabled {
		// Ten times dearer under the race detector, 16 runs: files still
		// past the 1 MiB below which none is mapped (runCaptures checks
		// that some are read in place).
		lines, frames = 2000, 6000
	}
	a := writeTemp(t, "a.jsonl", walkJSONCorpus(41, lines, 300, 4096, allOdds))
	small := writeTemp(t, "small.jsonl", walkJSONCorpus(42, 300, 30, 4096, allOdds))
	fr := writeTemp(t, "c.frames", walkFrameCorpus(43, frames, 300, false))
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(walkJSONCorpus(44, lines, 300, 4096, allOdds))
	zw.Close()
	gz := writeTemp(t, "d.jsonl.gz", z.Bytes())
	b := writeTemp(t, "b.jsonl", walkJSONCorpus(45, lines, 300, 4096, allOdds))
	opts := ReadOptions{MaxLineBytes: 4096, FromLog: true}
	files := []string{a, small, fr, gz, b}
	want := runCaptures(t, vc, FormatAuto, opts, oneShard, files...)
	splitWalks = 0
	for _, v := range jsonVariants() {
		if got := runCaptures(t, vc, FormatAuto, opts, v, files...); got != want {
			t.Errorf("%s differs from one shard: %s", v, firstDiff(want, got))
		}
	}
	if splitWalks == 0 {
		t.Fatal("no variant read the lines by a split walk")
	}
}

// TestShardedWalkRandomized compares one shard with 2, 3 and 4 on random
// corpora: random shares of every odd line, stream counts around the
// bound, JSON or frames, random windows.
func TestShardedWalkRandomized(t *testing.T) {
	defer func(w int) { mapWindow = w }(mapWindow)
	defer func(c, l, r int) { splitChunkBytes, splitChunkLines, splitRing = c, l, r }(splitChunkBytes, splitChunkLines, splitRing)
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
	for seed := uint64(100); seed < 100+uint64(rounds); seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		vc := smallPartitions(t, 256+r.IntN(1024))
		mapWindow = (128 + r.IntN(512)) << 10
		splitChunkBytes, splitChunkLines, splitRing = 1<<(9+r.IntN(8)), 1+r.IntN(100), 1+r.IntN(20)
		maxLine := 1000 + r.IntN(3000)
		var data []byte
		format := FormatAuto
		if r.IntN(3) == 0 {
			frames := 8000 + r.IntN(8000)
			if raceEnabled {
				frames /= 3 // doubled up to 1 MiB below
			}
			data = walkFrameCorpus(seed, frames, 50+r.IntN(1500), r.IntN(2) == 0)
		} else {
			odds := walkOdds{}
			for _, o := range []*float64{&odds.blank, &odds.spaces, &odds.crlf, &odds.invalid, &odds.oversize, &odds.keyless,
				&odds.nested, &odds.escaped, &odds.dup, &odds.frameLine, &odds.badMagic} {
				*o = r.Float64() * 0.03
			}
			lines := 4000 + r.IntN(6000)
			if raceEnabled {
				lines /= 3 // ten times dearer under the race detector; still at least 1 MiB
			}
			data = walkJSONCorpus(seed, lines, 20+r.IntN(1200), maxLine, odds)
			if r.IntN(2) == 0 {
				format = FormatJSONL
			}
		}
		for len(data) < 1<<20 {
			data = append(data, data...) // streams repeat: after-final and restarted streams
		}
		p := writeTemp(t, fmt.Sprintf("r%d", seed), data)
		opts := ReadOptions{MaxLineBytes: maxLine, FromLog: true}
		want := runCaptures(t, vc, format, opts, oneShard, p)
		v := walkVariant{shards: 2 + r.IntN(3), wantWalk: true, ordered: r.IntN(2) == 0, inline: r.IntN(4) != 0}
		if got := runCaptures(t, vc, format, opts, v, p); got != want {
			t.Errorf("seed %d, %s: differs from one shard: %s", seed, v, firstDiff(want, got))
		}
		// One shard in place (mapped JSON or frames) as through read(2).
		one := walkVariant{shards: 1, inline: true, anyWalk: true}
		if got := runCaptures(t, vc, format, opts, one, p); got != want {
			t.Errorf("seed %d, %s: differs from read(2): %s", seed, one, firstDiff(want, got))
		}
	}
}

// TestShardedWalkJSONFileShrinks: a JSON file cut shorter while shards
// judge it in place is an I/O error (the file shrank), not a crash, and the run can
// still be finished.
func TestShardedWalkJSONFileShrinks(t *testing.T) {
	defer func(w int) { mapWindow = w }(mapWindow)
	mapWindow = 256 << 10
	vc := smallPartitions(t, 512)
	// Ordered: the hand-off in place; unordered: a split walk, whose
	// shards fault scanning or judging.
	for _, c := range []struct{ inline, unordered bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		inline := c.inline
		p := writeTemp(t, "shrink.jsonl", walkJSONCorpus(51, 12000, 100, 4096, walkOdds{}))
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sink := &shrinkSink{path: p}
		s := NewSharded(3, vc, sink)
		if inline {
			s.Inline()
		}
		if c.unordered {
			s.Unordered()
		}
		last, err := Read(f, "cap", FormatAuto, ReadOptions{MaxLineBytes: 4096}, s)
		f.Close()
		if err == nil || !strings.Contains(err.Error(), "shrank") {
			st, _ := os.Stat(p)
			t.Fatalf("%+v: Read = %d, %v, want the file shrank (size now %d, walked %d, records %d)", c, last, err, st.Size(), s.mappedReads, len(sink.records))
		}
		if s.mappedReads != 1 || (s.splitReads == 1) != c.unordered {
			t.Fatalf("%+v: not read in place (%d), or not by a split walk (%d)", c, s.mappedReads, s.splitReads)
		}
		s.Finish(ReasonEOF, &Input{})
	}
	// One inline shard, and an Engine, judging each line in place.
	for _, engine := range []bool{false, true} {
		p := writeTemp(t, "shrink1.jsonl", walkJSONCorpus(52, 12000, 100, 4096, walkOdds{}))
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sink := &shrinkSink{path: p}
		s := NewSharded(1, vc, sink)
		s.Inline()
		var h Handler = s
		if engine {
			h = NewEngine(vc, sink)
		}
		last, err := Read(f, "cap", FormatAuto, ReadOptions{MaxLineBytes: 4096}, h)
		off, _ := f.Seek(0, io.SeekCurrent)
		f.Close()
		if err == nil || !strings.Contains(err.Error(), "shrank") {
			t.Fatalf("engine %t: Read = %d, %v, want the file shrank (records %d)", engine, last, err, len(sink.records))
		}
		if !engine && s.mappedReads != 1 {
			t.Fatalf("one shard: not read in place")
		}
		if last == 0 || off == 0 {
			t.Fatalf("engine %t: Read = %d at offset %d, want the records read before the fault", engine, last, off)
		}
		if engine {
			h.(*Engine).Finish(ReasonEOF, &Input{})
		} else {
			s.Finish(ReasonEOF, &Input{})
		}
	}
}

// TestShardedWalkWatermark: reading in place, the watermark never passes a
// record whose findings are still to come, and reaches the last record at
// the end.
func TestShardedWalkWatermark(t *testing.T) {
	for _, win := range []int{mapWindow, 128 << 10} {
		t.Run(fmt.Sprintf("window %d", win), func(t *testing.T) {
			defer func(w, d int) { mapWindow, dropChunk = w, d }(mapWindow, dropChunk)
			// Small windows: a hand-off holds the one before while its
			// shards judge it, a walk crosses them together.
			mapWindow, dropChunk = win, min(dropChunk, win/4)
			testShardedWalkWatermark(t)
		})
	}
}

func testShardedWalkWatermark(t *testing.T) {
	vc := smallPartitions(t, 512)
	lines, frames := 12000, 40000 // 11 MB, 8 MB
	if raceEnabled {
		// A third under the race detector: still mapped (1 MiB or more),
		// still many 128 KiB windows.
		lines, frames = 4000, 13000
	}
	files := []string{
		writeTemp(t, "wm.jsonl", walkJSONCorpus(61, lines, 300, 4096, allOdds)),
		writeTemp(t, "wm.frames", walkFrameCorpus(62, frames, 900, true)),
	}
	for _, p := range files {
		for _, shards := range []int{2, 4} {
			w := &watermarkSink{}
			s := NewSharded(shards, vc, w)
			w.run = s
			s.Inline()
			s.Unordered()
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			last, err := Read(f, "cap", FormatAuto, ReadOptions{MaxLineBytes: 4096}, s)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			s.Finish(ReasonEOF, &Input{})
			if s.mappedReads != 1 || w.seen < 100 {
				t.Fatalf("%s, %d shards: %d files read in place, %d findings", p, shards, s.mappedReads, w.seen)
			}
			if len(w.bad) > 0 {
				t.Errorf("%s, %d shards: %d of %d findings after the watermark passed them, first: %s", p, shards, len(w.bad), w.seen, w.bad[0])
			}
			if m := s.Watermark(); m != last {
				t.Errorf("%s, %d shards: watermark %d at the end, want %d", p, shards, m, last)
			}
		}
	}
}

// TestSkimFrame: skimFrame accepts exactly the frames DecodeTo accepts,
// with the same size and routeFrame's key, on valid frames and on every
// prefix and single-byte corruption of them.
func TestSkimFrame(t *testing.T) {
	data := walkFrameCorpus(71, 200, 20, false)
	r := rand.New(rand.NewPCG(71, 2))
	check := func(b []byte) {
		var f frame.Frame
		_, err := frame.DecodeTo(&f, b)
		size, attrs, key, ok := skimFrame(b)
		if ok != (err == nil) {
			t.Fatalf("skimFrame ok %t, DecodeTo %v on % x", ok, err, b[:min(len(b), 40)])
		}
		if ok && (size != f.Size || !bytes.Equal(key, routeFrame(&f)) || (key == nil) != (routeFrame(&f) == nil)) {
			t.Fatalf("skimFrame size %d key %q, DecodeTo size %d key %q", size, key, f.Size, routeFrame(&f))
		}
		if ok {
			// Set as skimmed over a frame left from before, as a walk does.
			g := frame.Frame{MsgType: 9, Data: []byte("old"), Size: 3}
			g.SetSkimmed(b, attrs, size)
			if g.Layout() != f.Layout() || !bytes.Equal(g.Data, f.Data) || unsafe.SliceData(g.Data) != unsafe.SliceData(f.Data) ||
				cap(g.Data) != cap(f.Data) || !bytes.Equal(g.AttrSection(), f.AttrSection()) || cap(g.AttrSection()) != cap(f.AttrSection()) {
				t.Fatalf("SetSkimmed %+v, DecodeTo %+v", g, f)
			}
		}
	}
	for off := 0; off < len(data); {
		var f frame.Frame
		if _, err := frame.DecodeTo(&f, data[off:]); err != nil {
			t.Fatal(err)
		}
		one := data[off : off+f.Size]
		check(data[off:])
		for n := 0; n <= len(one); n++ {
			check(one[:n])
		}
		for k := 0; k < 20; k++ {
			c := bytes.Clone(one)
			c[r.IntN(min(len(c), 80))] = byte(r.IntN(256))
			check(c)
		}
		off += f.Size
	}
}

// TestWalkMapShared: the walkers of a walk share one mapping, the first
// to reach a window's end mapping the next, at most a window ahead of the
// slowest; a walker that leaves (a fault) is waited for no more, and a
// chunk is given back only once every walker still walking has passed it.
func TestWalkMapShared(t *testing.T) {
	defer func(w, d int) { mapWindow, dropChunk = w, d }(mapWindow, dropChunk)
	mapWindow, dropChunk = 256<<10, 64<<10
	data := make([]byte, 3<<20+12345)
	for i := range data {
		data[i] = byte(i * 7)
	}
	p := writeTemp(t, "walkmap", data)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := openMapped(f)
	if m == nil {
		t.Fatal("not mapped")
	}
	defer m.close(0)
	const walkers, quitter, quitAt = 4, 2, 3 // walker 2 leaves in window 3
	wm := newWalkMap(m, walkers)
	defer wm.close()
	sums := make([]uint64, walkers)
	errs := make(chan error, walkers)
	var wg sync.WaitGroup
	for k := 0; k < walkers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer wm.leave(k)
			ww := wm.window(k)
			pos, window := int64(0), 0
			for {
				win, at := ww.m.win, ww.m.at
				if int64(len(data)) < at+int64(len(win)) || !bytes.Equal(win, data[at:at+int64(len(win))]) {
					errs <- fmt.Errorf("walker %d: window at %d is not the file's bytes", k, at)
					return
				}
				passed := 0
				for off := int(pos - at); off < len(win); off += 4096 {
					if k == quitter && window == quitAt && off > len(win)/2 {
						// A fault, say, once the others wait for it.
						for {
							wm.mu.Lock()
							n := wm.waiting
							wm.mu.Unlock()
							if n == walkers-1 {
								return
							}
							time.Sleep(time.Millisecond)
						}
					}
					ww.ahead(off)
					sums[k] += uint64(win[off])
					if off-passed >= dropChunk {
						passed += dropChunk
						ww.dropPassed(k, passed)
					}
				}
				if ww.dropped.Load() > int64(len(win)) {
					errs <- fmt.Errorf("walker %d: %d of a %d-byte window given back", k, ww.dropped.Load(), len(win))
					return
				}
				pos = at + int64(len(win))
				if pos >= int64(len(data)) {
					return
				}
				var err error
				if ww, _, err = wm.remap(k, pos); err != nil {
					errs <- err
					return
				}
				window++
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the walkers are stuck at a window's end")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var want uint64
	for off := 0; off < len(data); off += 4096 {
		want += uint64(data[off])
	}
	for k, s := range sums {
		if k != quitter && s != want {
			t.Errorf("walker %d read sum %d, want %d", k, s, want)
		}
	}
	if wantTop := (len(data)+mapWindow-1)/mapWindow - 1; wm.top != wantTop {
		t.Errorf("%d windows mapped after the first, want %d (one a window, for all walkers)", wm.top, wantTop)
	}
}

// TestShardedNearEnd: a hand-off's batches shrink once the reader is within
// tailBytes of the end of the file, not before, and are back to their
// size for the next input.
func TestShardedNearEnd(t *testing.T) {
	s := NewSharded(2, DefaultConfig(), &collector{})
	defer s.Close()
	w := &walker{hand: s, m: &mappedFile{size: 10 * tailBytes}}
	for _, c := range []struct {
		pos  int64
		want uint
	}{{0, 0}, {9*tailBytes - 1, 0}, {9 * tailBytes, tailShift}, {10 * tailBytes, tailShift}} {
		s.tail = 0
		w.pos = c.pos
		w.nearEnd()
		if s.tail != c.want {
			t.Errorf("at %d of %d: tail %d, want %d", c.pos, w.m.size, s.tail, c.want)
		}
	}
	s.tail = 0
	p := writeTemp(t, "near.jsonl", walkJSONCorpus(21, 4000, 50, 4096, walkOdds{}))
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s2 := NewSharded(2, smallPartitions(t, 512), &collector{})
	s2.Inline()
	if _, err := Read(f, "near", FormatAuto, ReadOptions{MaxLineBytes: 4096}, s2); err != nil {
		t.Fatal(err)
	}
	if s2.mappedReads != 1 {
		t.Fatal("not read in place")
	}
	if s2.tail != 0 {
		t.Errorf("tail %d after the read, want 0", s2.tail)
	}
	s2.Finish(ReasonEOF, &Input{})
}

// TestShardedInterruptShapes: a chat.interrupt cancels the streams of its
// session on every shard only where one shard would cancel them: as a
// request (not a JSON-RPC message, not an event, not with an intent that
// does not cancel), at its place among each shard's records, by the
// hand-off and by a split walk alike.
func TestShardedInterruptShapes(t *testing.T) {
	vc := smallPartitions(t, 4096)
	var b bytes.Buffer
	b.Write(walkJSONCorpus(81, 1500, 60, 4096, walkOdds{}))
	open := func(i int) {
		fmt.Fprintf(&b, `{"request_id":"irq-%d","method":"chat.send","session_id":"isess-%d","params":{"text":"hi"}}`+"\n", i, i%6)
		fmt.Fprintf(&b, `{"protocol_version":"1.0","response_id":"irq-%d-r0","request_id":"irq-%d","sequence":0,"is_final":false,"status":"in_progress","response_kind":"e2a.delta","timestamp":"2025-01-01T00:00:00Z","provenance":{},"body":{"delta":"x"}}`+"\n", i, i)
	}
	for i := 0; i < 300; i++ {
		open(i)
	}
	b.WriteString(`{"jsonrpc":"2.0","id":7,"method":"chat.interrupt","session_id":"isess-1","request_id":"irq-x1"}` + "\n")
	b.WriteString(`{"type":"event","method":"chat.interrupt","session_id":"isess-2","request_id":"irq-x2"}` + "\n")
	b.WriteString(`{"request_id":"irq-x3","method":"chat.interrupt","session_id":"isess-3","params":{"intent":"pause"}}` + "\n")
	b.WriteString(`{"request_id":"irq-x4","method":"chat.interrupt","session_id":"isess-4"}` + "\n")
	b.WriteString(`{"request_id":"irq-x5","method":"chat.interrupt","session_id":"isess-5","params":{"intent":"supplement"}}` + "\n")
	for i := 300; i < 330; i++ {
		open(i) // after the interrupts: not cancelled
	}
	b.Write(walkJSONCorpus(82, 1500, 60, 4096, walkOdds{}))
	p := writeTemp(t, "irq.jsonl", b.Bytes())
	opts := ReadOptions{MaxLineBytes: 4096}
	want := runCaptures(t, vc, FormatAuto, opts, oneShard, p)
	for _, s := range []string{"irq-4 cancelled", "irq-5 cancelled", "irq-1 missing_final", "irq-2 missing_final", "irq-3 missing_final", "irq-304 missing_final"} {
		if !strings.Contains(want, s) {
			t.Fatalf("one shard: no %q in the ends:\n%s", s, want[strings.Index(want, "ends:"):])
		}
	}
	splitWalks = 0
	for _, v := range jsonVariants() {
		if got := runCaptures(t, vc, FormatAuto, opts, v, p); got != want {
			t.Errorf("%s differs from one shard: %s", v, firstDiff(want, got))
		}
	}
	if splitWalks == 0 {
		t.Fatal("no variant read the lines by a split walk")
	}
}

// FuzzSplitWalk: any lines, put among a generated capture of more than a
// mapping's minimum (so that it is read in place), give what one shard
// reading through read(2) gives when 2 and 3 shards read them by a split
// walk of small chunks in a small ring.
func FuzzSplitWalk(f *testing.F) {
	// A few seeds of its own (fuzzSeeds' are FuzzRoute's and FuzzEngine's:
	// each run here reads a capture of a MiB three times).
	for _, l := range []string{
		`{"request_id":"x","method":"chat.interrupt","session_id":"s1"}`,
		`{"jsonrpc":"2.0","id":1,"method":"chat.interrupt","session_id":"s1"}`,
		`{"req\u0075est_id":"x","sequence":1}` + "\n" + `{"request_id":"cut`,
		`{"request_id":"a\"b","sequence":0,"is_final":true,"status":"succeeded","response_kind":"e2a.complete"}`,
		"\xef\x01\x02" + "\n\n  \r\n{}",
	} {
		f.Add([]byte(l))
	}
	base := walkJSONCorpusX(91, 1300, 40, 4096, walkOdds{}, 0.1, 0.2)
	cut := [2]int{len(base) / 3, 2 * len(base) / 3}
	for i := range cut {
		cut[i] += bytes.IndexByte(base[cut[i]:], '\n') + 1
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer func(w, c, l, r int) {
			mapWindow, splitChunkBytes, splitChunkLines, splitRing = w, c, l, r
		}(mapWindow, splitChunkBytes, splitChunkLines, splitRing)
		mapWindow, splitChunkBytes, splitChunkLines, splitRing = 256<<10, 2<<10, 4, 3
		vc := smallPartitions(t, 512)
		var b bytes.Buffer
		b.Write(data)
		b.WriteByte('\n')
		b.Write(base[:cut[0]])
		b.Write(data)
		b.WriteByte('\n')
		b.Write(base[cut[0]:cut[1]])
		b.Write(data)
		b.WriteByte('\n')
		b.Write(base[cut[1]:])
		b.Write(data)
		p := writeTemp(t, "fuzz.jsonl", b.Bytes())
		opts := ReadOptions{MaxLineBytes: 4096, FromLog: true}
		want := runCaptures(t, vc, FormatJSONL, opts, oneShard, p)
		splitWalks = 0
		for _, v := range []walkVariant{{shards: 2, wantWalk: true, inline: true}, {shards: 3, wantWalk: true}} {
			if got := runCaptures(t, vc, FormatJSONL, opts, v, p); got != want {
				t.Errorf("%s differs from one shard: %s", v, firstDiff(want, got))
			}
		}
		if splitWalks != 2 {
			t.Fatalf("%d of 2 runs by a split walk", splitWalks)
		}
	})
}

// TestSplitWalkHoldsFewRecords: a split walk keeps at most splitChunkLines
// scanned records a chunk, however short the lines (a chunk of 32 kB of
// lines of 30 bytes would keep a thousand records of 1.7 kB each), and
// judges them as one shard does; it reads the cached file by raw reads
// where the kernel has them (fileReader).
func TestSplitWalkHoldsFewRecords(t *testing.T) {
	vc := smallPartitions(t, 512)
	var b bytes.Buffer
	for i := 0; b.Len() < 1<<20+64<<10; i++ {
		fmt.Fprintf(&b, `{"request_id":"s%d","sequence":%d}`+"\n", i%300, i/300)
		if i%7 == 0 {
			b.WriteString("{}\n")
		}
	}
	p := writeTemp(t, "short.jsonl", b.Bytes())
	opts := ReadOptions{MaxLineBytes: 4096}
	want := runCaptures(t, vc, FormatAuto, opts, oneShard, p)
	for _, n := range []int{2, 3} {
		col := &collector{}
		s := NewSharded(n, vc, col)
		s.Unordered()
		s.Inline()
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Read(f, "short.jsonl", FormatAuto, opts, s)
		raw := rawReadable(t, f)
		f.Close()
		s.Finish(ReasonEOF, &Input{})
		if err != nil || s.splitReads != 1 {
			t.Fatalf("%d shards: %v, %d split walks", n, err, s.splitReads)
		}
		if s.splitRaws == 0 && raw {
			t.Errorf("%d shards: no read of the split walk was made raw (fileReader)", n)
		}
		if max := splitRing * splitChunkLines; s.splitHeld == 0 || s.splitHeld > max {
			t.Errorf("%d shards: %d records held at once, want 1 to %d", n, s.splitHeld, max)
		}
		if got := runCaptures(t, vc, FormatAuto, opts, walkVariant{shards: n, wantWalk: true, inline: true}, p); got != want {
			t.Errorf("%d shards differ from one: %s", n, firstDiff(want, got))
		}
	}
}

// TestSplitWalkChunkEdges: chunks that start right after a line's '\n' (a
// file of 64-byte lines cut into chunks of 1 KiB: every chunk starts a
// line), chunks inside a line longer than several chunks (they own no
// line), a line longer than what a chunk reads past its end, one past the
// bound of a line read whole (skipped, its head judged) and a last line
// without '\n' give what one shard gives.
func TestSplitWalkChunkEdges(t *testing.T) {
	defer func(c, l int) { splitChunkBytes, splitChunkLines = c, l }(splitChunkBytes, splitChunkLines)
	splitChunkBytes, splitChunkLines = 1<<10, 32 // 24 lines of 64 bytes are more than 1 KiB
	vc := smallPartitions(t, 512)
	line := func(b *bytes.Buffer, i, n int) {
		head := fmt.Sprintf(`{"request_id":"e-%d","sequence":%d,"pad":"`, i%97, i/97)
		b.WriteString(head)
		b.Write(bytes.Repeat([]byte("p"), n-len(head)-3))
		b.WriteString("\"}\n")
	}
	var b bytes.Buffer
	for i := 0; b.Len() < 1<<20; i++ {
		switch {
		case i%500 == 250:
			line(&b, i, 3000+i%2000) // several chunks, read on past the slack
		case i == 9000:
			line(&b, i, 300<<10) // past lineMax: skipped unbuffered
		default:
			line(&b, i, 64)
		}
	}
	b.WriteString(`{"request_id":"last","sequence":0}`)
	p := writeTemp(t, "edges.jsonl", b.Bytes())
	opts := ReadOptions{MaxLineBytes: 8 << 10}
	want := runCaptures(t, vc, FormatAuto, opts, oneShard, p)
	if !strings.Contains(want, "over the 8192-byte limit") {
		t.Fatalf("no line over the limit:\n%.2000s", want)
	}
	splitWalks = 0
	for _, n := range []int{2, 3} {
		v := walkVariant{shards: n, wantWalk: true, inline: true}
		if got := runCaptures(t, vc, FormatAuto, opts, v, p); got != want {
			t.Errorf("%s differs from one shard: %s", v, firstDiff(want, got))
		}
	}
	if splitWalks != 2 {
		t.Fatalf("%d of 2 runs by a split walk", splitWalks)
	}
}

// TestByteOrderMarkOnEveryLine: a producer that writes a UTF-8 byte order
// mark before each record (.NET and PowerShell loggers do) gets the
// verdicts of the same lines without the marks, from every reader (read(2),
// in place, hand-off, split walk; one shard or several), as a mark that
// opens the file does; it got a frame.decode a line (0xEF is the frame
// magic) and the streams' other verdicts went wrong with them. A line of a
// mark alone is one e2a.decode, wherever it is read.
func TestByteOrderMarkOnEveryLine(t *testing.T) {
	defer func(w, d int, tb int64) { mapWindow, dropChunk, tailBytes = w, d, tb }(mapWindow, dropChunk, tailBytes)
	defer func(c, l, r int) { splitChunkBytes, splitChunkLines, splitRing = c, l, r }(splitChunkBytes, splitChunkLines, splitRing)
	mapWindow, dropChunk, tailBytes = 256<<10, 64<<10, 1<<20
	splitChunkBytes, splitChunkLines, splitRing = 4<<10, 5, 3
	vc := smallPartitions(t, 512)
	lines := 3000
	if raceEnabled {
		lines = 1500
	}
	plain := walkJSONCorpus(31, lines, 60, 4096, walkOdds{crlf: 0.1, invalid: 0.01, keyless: 0.01})
	if len(plain) < 1<<20 {
		t.Fatalf("a corpus of %d bytes is not mapped (openMapped: 1 MiB)", len(plain))
	}
	var marked []byte
	for i, l := range bytes.SplitAfter(plain, []byte("\n")) {
		if i%3 != 2 && len(l) > 0 {
			marked = append(marked, utf8BOM...)
		}
		marked = append(marked, l...)
	}
	opts := ReadOptions{MaxLineBytes: 4096, FromLog: true}
	want := runCaptures(t, vc, FormatAuto, opts, oneShard, writeTemp(t, "cap.jsonl", plain))
	if !strings.Contains(want, " e2a.seq_gap ") {
		t.Fatalf("the corpus has no seq_gap:\n%.2000s", want)
	}
	p := writeTemp(t, "cap.jsonl", marked)
	splitWalks = 0
	for _, v := range append(jsonVariants(), oneShard) {
		if got := runCaptures(t, vc, FormatAuto, opts, v, p); got != want {
			t.Errorf("%s with a mark on each line: %s", v, firstDiff(want, got))
		}
	}
	if splitWalks == 0 {
		t.Fatal("no variant read the lines by a split walk")
	}
	alone := writeTemp(t, "alone.jsonl", []byte(`{"request_id":"a","sequence":0}`+"\n"+utf8BOM+"\n"))
	for _, v := range append(jsonVariants(), oneShard) {
		v.anyWalk = true // too small to map
		if got := runCaptures(t, vc, FormatAuto, opts, v, alone); !strings.Contains(got, "alone.jsonl:2 e2a.decode") || strings.Contains(got, "frame.decode") {
			t.Errorf("%s: a line of a mark alone:\n%s", v, got)
		}
	}
}
