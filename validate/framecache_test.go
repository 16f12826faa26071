package validate

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/e2atap/e2atap/frame"
)

// verdicts is everything an engine says, in order.
type verdicts struct {
	findings []Finding
	starts   []StreamInfo
	ends     []StreamInfo
	records  []string
	// noRecords: the sink ignores records (RecordsIgnored), as validate
	// --quiet's does: the engine's hot path for chunks (nextChunk).
	noRecords bool
}

func (v *verdicts) RecordsIgnored() bool { return v.noRecords }

func (v *verdicts) Record(r *RecordInfo) {
	v.records = append(v.records, fmt.Sprintf("%s/%s/%s", r.Kind, r.Status, r.Stream))
}
func (v *verdicts) Finding(f *Finding)        { v.findings = append(v.findings, *f) }
func (v *verdicts) StreamStart(s *StreamInfo) { v.starts = append(v.starts, *s) }
func (v *verdicts) StreamEnd(s *StreamInfo)   { v.ends = append(v.ends, *s) }

// cacheWalk is the random walk the cache tests share (frameCacheRun,
// e2aCacheRun): an engine whose table is small enough to evict, a clock,
// and streams of n ids interleaved over two taps and three connections.
type cacheWalk struct {
	e           *Engine
	r           *rand.Rand
	n           int
	now         time.Time
	taps, conns []string
	// steps: how many records a run judges.
	steps int
}

// newCacheWalk makes the engine (partitions of 16 streams while the test
// runs) and the random source of seed and stream.
func newCacheWalk(t *testing.T, v *verdicts, seed, stream uint64, n int) *cacheWalk {
	was := partitionStreams
	t.Cleanup(func() { partitionStreams = was })
	partitionStreams = 16
	cfg := DefaultConfig()
	cfg.MaxStreams = 64 // 4 partitions of 16
	cfg.Tombstones = 32
	cfg.IdleTimeout = time.Second
	steps := 20000
	if raceEnabled {
		// Ten times dearer under the race detector, and the suites run
		// it 12 times each: every step kind still comes dozens of times.
		steps = 7000
	}
	return &cacheWalk{e: NewEngine(cfg, v), r: rand.New(rand.NewPCG(seed, stream)), n: n, steps: steps,
		now: time.Unix(1_700_000_000, 0), taps: []string{"", "ws"}, conns: []string{"", "c1", strings.Repeat("c", 120)}}
}

// next moves the clock on and picks the stream of the next record: mostly
// one of a few (as a file interleaves them), its tap and connection, now
// and then the same id elsewhere (another stream). ok is false when the
// step was a connection closed, a gap or an idle expiry instead.
func (w *cacheWalk) next() (hot int, tap, conn string, ok bool) {
	r, e := w.r, w.e
	w.now = w.now.Add(time.Duration(r.IntN(20)) * time.Millisecond)
	hot = r.IntN(12)
	if r.IntN(8) == 0 {
		hot = r.IntN(w.n)
	}
	tap, conn = w.taps[hot%2], w.conns[hot%3]
	if r.IntN(20) == 0 {
		tap, conn = w.taps[r.IntN(2)], w.conns[r.IntN(3)]
	}
	switch r.IntN(400) {
	case 0:
		e.ConnClosed(&Input{Tap: tap, Conn: conn, Time: w.now})
		return hot, tap, conn, false
	case 1:
		e.Gap(&Input{Tap: tap, Conn: conn, Time: w.now})
		return hot, tap, conn, false
	case 2:
		w.now = w.now.Add(2 * time.Second)
		e.Expire(w.now)
		return hot, tap, conn, false
	}
	return hot, tap, conn, true
}

// frameCacheRun judges a random run of frames: streams interleaved over
// two taps and two connections, sids that collide in the cache (more than
// it has slots), long ones it does not keep, chunks out of order, after the
// done chunk, a table small enough to evict, connections closed, gaps and
// idle expiry in between.
func frameCacheRun(t *testing.T, seed uint64, off, noRecords bool) *verdicts {
	defer func(was bool) { frameCacheOff = was }(frameCacheOff)
	frameCacheOff = off
	v := &verdicts{noRecords: noRecords}
	w := newCacheWalk(t, v, seed, 1, 600)
	e, r := w.e, w.r
	const nsid = 600
	sids := make([]string, nsid)
	for i := range sids {
		switch i % 4 {
		case 0:
			sids[i] = fmt.Sprintf("agent-%d:%08x-0000-4000-8000-%012x", i%3, i, i*7)
		case 1:
			sids[i] = fmt.Sprintf("s%d", i)
		case 2:
			sids[i] = fmt.Sprintf("%s-%d", strings.Repeat("long", 20), i) // over fcMaxSid
		default:
			sids[i] = fmt.Sprintf("E%04d-agent:%d", i, i)
		}
	}
	seqs := make([]int32, nsid)
	var in Input
	for k := 0; k < w.steps; k++ {
		hot, tap, conn, ok := w.next()
		if !ok {
			continue
		}
		seq := seqs[hot]
		switch r.IntN(30) {
		case 0:
			seq += 2
		case 1:
			seq--
		}
		var flags uint8
		attrs := []frame.Attr{{Name: "sid", Value: sids[hot]}, {Name: "etype", Value: "text"}}
		switch r.IntN(40) {
		case 0:
			attrs[1].Value = "tool"
		case 1:
			attrs[1].Value = "bogus"
		case 2:
			attrs = append(attrs, frame.Attr{Name: "meta", Value: `{"k":1}`})
			flags |= frame.FlagHasMeta
		case 3:
			attrs = append(attrs, frame.Attr{Name: "meta", Value: `[1]`})
		case 4:
			attrs = append(attrs, frame.Attr{Name: "sid", Value: sids[(hot+1)%nsid]}) // repeated: the last wins
		case 5:
			attrs[1].Value = "te\xffxt" // not UTF-8
		case 6:
			attrs = attrs[1:] // no sid
		case 7:
			attrs = append(attrs, frame.Attr{Name: "note", Value: strings.Repeat("n", 100)}) // a section over fcMaxAttrs
		case 8:
			flags |= 0x10 // a reserved bit
		}
		typ := frame.TypeStreamChunk
		if r.IntN(50) == 0 {
			typ = frame.TypeEvent
			attrs = append(attrs, frame.Attr{Name: "id", Value: sids[hot]}, frame.Attr{Name: "type", Value: "t"}, frame.Attr{Name: "source", Value: "s"})
		}
		b, err := frame.AppendFrame(nil, typ, flags, seq, attrs, []byte("tok"))
		if err != nil {
			t.Fatal(err)
		}
		f, _, err := frame.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		seqs[hot] = seq + 1
		if flags&frame.FlagDone != 0 && r.IntN(4) != 0 {
			seqs[hot] = 0 // mostly a new stream; else chunks after done
		}
		in = Input{Pos: Position{Kind: PosByte, Name: "f", Offset: int64(k)}, Index: uint64(k + 1), Tap: tap, Conn: conn, Time: w.now, Data: b}
		if r.IntN(2) == 0 {
			in.Time = time.Time{}
		}
		e.ObserveFrame(&in, &f)
	}
	e.Finish(ReasonEOF, &Input{Time: w.now})
	return v
}

// TestFrameCacheSameVerdicts: the frame cache is a hint; every finding,
// stream start and end is the same with it and without it.
func TestFrameCacheSameVerdicts(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		// Without records (noRecords: seeds 4-6), most chunks of a
		// cached stream take nextChunk.
		noRecords := seed > 3
		with, without := frameCacheRun(t, seed, false, noRecords), frameCacheRun(t, seed, true, noRecords)
		if len(without.findings) == 0 || len(without.ends) == 0 {
			t.Fatalf("seed %d: the run judged nothing (%d findings, %d ends)", seed, len(without.findings), len(without.ends))
		}
		opt := cmp.AllowUnexported(verdicts{})
		if d := verdictsDiff(without, with, opt); d != "" {
			t.Fatalf("seed %d: verdicts differ with the cache (-without +with):\n%s", seed, d)
		}
	}
}

// TestFrameCacheHits: the cache is used (a chunk of a cached stream does
// not build its key again), and a hit after the stream moved in its table
// (a removal moved it; another stream now holds its old index) is refused.
func TestFrameCacheHits(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxStreams = 1000 // one partition: a and b in one table
	e := NewEngine(cfg, &verdicts{})
	chunk := func(sid string, seq int32, flags uint8) {
		b, err := frame.AppendFrame(nil, frame.TypeStreamChunk, flags, seq, []frame.Attr{{Name: "sid", Value: sid}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		f, _, _ := frame.Decode(b)
		e.ObserveFrame(&Input{Data: b}, &f)
	}
	chunk("a", 0, 0)
	chunk("x", 0, 0)
	chunk("b", 0, 0)
	e.key = append(e.key[:0], "poison"...)
	chunk("a", 1, 0)
	if string(e.key) != "poison" {
		t.Fatal("the second chunk of a stream built its key again: no cache hit")
	}
	en := e.fc.streamEntry([]byte("b"))
	if en == nil || en.keyLen == 0 {
		t.Fatal("stream b not cached")
	}
	// x ends and is removed (at the next lookup): b, the last dense entry,
	// moves into x's index, and the new c takes b's old one.
	chunk("x", 1, frame.FlagDone)
	was := en.idx
	removes := e.tab.removes
	chunk("c", 0, 0)
	if e.tab.removes == removes || e.tab.len() <= int(was) || string(e.tab.key(was)) == string(en.key[:en.keyLen]) {
		t.Fatalf("b did not move: removes %d -> %d, %d streams, b cached at %d", removes, e.tab.removes, e.tab.len(), was)
	}
	e.key = append(e.key[:0], "poison"...)
	chunk("b", 1, 0)
	if string(e.key) == "poison" {
		t.Fatal("a cache entry naming another stream's state was used")
	}
	if en.idx == was {
		t.Fatalf("b is still cached at its old index %d", was)
	}
	if en.state != e.tab.at(en.idx) || e.tab.at(en.idx).records != 2 {
		t.Fatal("b's cached state is not its state at its new index")
	}
	e.key = append(e.key[:0], "poison"...)
	chunk("b", 2, 0)
	if string(e.key) != "poison" {
		t.Fatal("b's next chunk built its key again: no cache hit at its new index")
	}
	if s := e.tab.at(en.idx); s.records != 3 || s.last != 2 {
		t.Fatalf("b's hit judged another state: %d records, last seq %d", s.records, s.last)
	}
	if n := e.Stats().Findings; n != [NumRules]uint64{} {
		t.Fatalf("findings on clean streams: %v", n)
	}
	// The done chunk ends a; the very next chunk of a, its entry cached,
	// is after it.
	chunk("a", 2, frame.FlagDone)
	chunk("a", 3, 0)
	if n := e.Stats().Findings[RuleFrameAfterDone]; n != 1 {
		t.Fatalf("%d frame.after_done for a chunk after the done one, want 1", n)
	}
	// The same sid on another connection is another stream.
	b, _ := frame.AppendFrame(nil, frame.TypeStreamChunk, 0, 5, []frame.Attr{{Name: "sid", Value: "b"}}, nil)
	f, _, _ := frame.Decode(b)
	e.ObserveFrame(&Input{Data: b, Conn: "other"}, &f)
	if n := e.Stats().Findings[RuleFrameSeqStart]; n != 1 {
		t.Fatalf("%d frame.seq_start for the first chunk (seq 5) of b on another connection, want 1", n)
	}
}

// FuzzFrameCache: any run of frames (a frame file's bytes, each frame
// judged on the tap and connection its first attribute byte picks) gets
// the same verdicts with the frame cache and without it.
func FuzzFrameCache(f *testing.F) {
	seed := fuzzFrameSeed(f)
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		with, without := fuzzJudge(t, data, false), fuzzJudge(t, data, true)
		if d := verdictsDiff(without, with, cmp.AllowUnexported(verdicts{})); d != "" {
			t.Fatalf("verdicts differ with the cache (-without +with):\n%s", d)
		}
	})
}

// fuzzFrameSeed is 40 chunks of three streams, some with an attribute of
// their own.
func fuzzFrameSeed(tb testing.TB) []byte {
	var seed []byte
	for i := 0; i < 40; i++ {
		var flags uint8
		if i%9 == 8 {
			flags = frame.FlagDone
		}
		attrs := []frame.Attr{{Name: "sid", Value: fmt.Sprintf("agent:%08d-0000-4000-8000-000000000000", i%3)}, {Name: "etype", Value: "text"}}
		if i%7 == 0 {
			attrs = append(attrs, frame.Attr{Name: "ts", Value: fmt.Sprint(i)})
		}
		b, err := frame.AppendFrame(nil, frame.TypeStreamChunk, flags, int32(i/3), attrs, []byte("x"))
		if err != nil {
			tb.Fatal(err)
		}
		seed = append(seed, b...)
	}
	return seed
}

// fuzzJudge judges the frames in data (skipping a byte where none
// decodes) with the cache on or off.

func fuzzJudge(t *testing.T, data []byte, off bool) *verdicts {
	defer func(was bool) { frameCacheOff = was }(frameCacheOff)
	frameCacheOff = off
	cfg := DefaultConfig()
	cfg.MaxStreams = 4 // exercise eviction
	cfg.Tombstones = 2
	// An input of odd length is judged without records: the chunks of a
	// cached stream then take nextChunk.
	v := &verdicts{noRecords: len(data)&1 == 1}
	e := NewEngine(cfg, v)
	for i := 0; len(data) > 0; i++ {
		fr, rest, err := frame.Decode(data)
		if err != nil {
			data = data[1:] // resynchronise on the next byte
			continue
		}
		in := Input{Data: data[:fr.Size], Index: uint64(i + 1)}
		if a := fr.AttrSection(); len(a) > 2 {
			in.Tap, in.Conn = []string{"", "t"}[a[2]&1], []string{"", "c"}[a[2]>>1&1]
		}
		e.ObserveFrame(&in, &fr)
		data = rest
	}
	e.Finish(ReasonEOF, &Input{})
	return v
}

// TestFrameCacheMutatedRuns is FuzzFrameCache on inputs mutated at random
// (bytes flipped, runs cut, chunks repeated), so that `go test` tries
// many: same verdicts with the cache as without.
func TestFrameCacheMutatedRuns(t *testing.T) {
	base := fuzzFrameSeed(t)
	r := rand.New(rand.NewPCG(7, 7))
	n := 1500
	if testing.Short() {
		n = 200
	}
	for k := 0; k < n; k++ {
		d := append([]byte(nil), base...)
		for j := 0; j < 1+r.IntN(6); j++ {
			switch r.IntN(3) {
			case 0:
				d[r.IntN(len(d))] = byte(r.IntN(256))
			case 1:
				a := r.IntN(len(d))
				d = append(d[:a:a], d[a+r.IntN(len(d)-a):]...)
			default:
				a := r.IntN(len(d))
				b := a + r.IntN(min(400, len(d)-a))
				d = append(d[:b:b], d[a:]...)
			}
			if len(d) == 0 {
				d = append(d, base...)
			}
		}
		with, without := fuzzJudge(t, d, false), fuzzJudge(t, d, true)
		if diff := verdictsDiff(without, with, cmp.AllowUnexported(verdicts{})); diff != "" {
			t.Fatalf("input %d (%x): verdicts differ with the cache (-without +with):\n%s", k, d, diff)
		}
	}
}

// TestFrameCacheSlotsSpread: the set hash tells apart strings that differ
// in any one byte (sids that differ in one digit, anywhere) often enough
// to spread them, at every length around a word's.
func TestFrameCacheSlotsSpread(t *testing.T) {
	fc := newFrameCache(fcMaxBits)
	for n := 1; n <= 70; n++ {
		used := map[int]bool{}
		b := []byte(strings.Repeat("a", n))
		for pos := 0; pos < n; pos++ {
			for c := byte('0'); c <= '9'; c++ {
				x := append([]byte(nil), b...)
				x[pos] = c
				used[fc.set(fcHash(x))] = true
			}
		}
		if want := min(len(fc.attrs)/fcWays/4, 10*n/2); len(used) < want {
			t.Errorf("length %d: %d one-byte variants hash to %d sets, want at least %d", n, 10*n, len(used), want)
		}
	}
}

// TestFrameCacheGrows: the cache grows when many streams interleaved miss
// in it, up to fcMaxBits, and stays small for a few streams; the verdicts
// are the same either way (TestFrameCacheSameVerdicts, FuzzFrameCache).
func TestFrameCacheGrows(t *testing.T) {
	for _, c := range []growCase{{8, fcMinBits}, {3000, fcMaxBits}} {
		v := c.run(t, false)
		if d := verdictsDiff(c.run(t, true), v, cmp.AllowUnexported(verdicts{})); d != "" {
			t.Fatalf("%d streams: verdicts differ with the cache (-without +with):\n%s", c.streams, d)
		}
	}
}

type growCase struct {
	streams int
	bits    uint8
}

// run judges 4×fcGrowEvery chunks of c.streams streams interleaved (off:
// without the frame cache) and checks the cache's size.
func (c growCase) run(t *testing.T, off bool) *verdicts {
	defer func(was bool) { frameCacheOff = was }(frameCacheOff)
	frameCacheOff = off
	v := &verdicts{}
	e := NewEngine(DefaultConfig(), v)
	frames := make([][]byte, c.streams)
	for s := range frames {
		b, err := frame.AppendFrame(nil, frame.TypeStreamChunk, 0, 0,
			[]frame.Attr{{Name: "sid", Value: fmt.Sprintf("agent:%08d-0000-4000-8000-000000000000", s)}, {Name: "etype", Value: "text"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		frames[s] = b
	}
	for i := 0; i < 4*fcGrowEvery; i++ {
		b := frames[i%c.streams]
		binary.BigEndian.PutUint32(b[4:8], uint32(i/c.streams)) // seq
		f, _, err := frame.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		e.ObserveFrame(&Input{Data: b}, &f)
	}
	if !off && e.fc.bits != c.bits {
		t.Errorf("%d streams: cache of 2^%d entries, want 2^%d", c.streams, e.fc.bits, c.bits)
	}
	if n := len(v.findings); n != 0 {
		t.Errorf("%d streams: %d findings", c.streams, n)
	}
	e.Finish(ReasonEOF, &Input{})
	return v
}

// TestFrameCacheSetsInRange: ways reads a set's tags in place, without a
// bounds check: every hash's set lies within the tags at every size the
// cache takes.
func TestFrameCacheSetsInRange(t *testing.T) {
	for b := uint8(fcMinBits); b <= fcMaxBits; b += 2 {
		fc := newFrameCache(b)
		for _, h := range []uint64{0, 1, 1 << 63, 1<<64 - 1, 0x9e3779b97f4a7c15} {
			at := fc.set(h)
			if at < 0 || at%fcWays != 0 || at+fcWays > len(fc.attrTags) || at+fcWays > len(fc.streamTags) {
				t.Fatalf("bits %d, hash %#x: set at %d of %d tags", b, h, at, len(fc.attrTags))
			}
			if w := ways(fc.attrTags, at); &w[0] != &fc.attrTags[at] || &w[fcWays-1] != &fc.attrTags[at+fcWays-1] {
				t.Fatalf("bits %d: ways at %d is not the set's tags", b, at)
			}
		}
	}
}

// TestFrameCacheEqualNames: a chunk whose tap and connection names are
// equal to its cached stream's but other strings (a reader that builds
// them for each message) still uses the entry; one of another tap does
// not.
func TestFrameCacheEqualNames(t *testing.T) {
	e := NewEngine(DefaultConfig(), &verdicts{noRecords: true})
	var f frame.Frame
	chunk := func(tap string, seq int32) {
		b, err := frame.AppendFrame(nil, frame.TypeStreamChunk, 0, seq, []frame.Attr{{Name: "sid", Value: "s-1"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		f, _, _ = frame.Decode(b)
		e.ObserveFrame(&Input{Tap: strings.Clone(tap), Conn: strings.Clone("conn"), Data: b}, &f)
	}
	chunk("tap", 0)
	chunk("tap", 1)
	// The entry names the stream (sectionStream: nextChunk's way).
	en, hit := e.frameEntry(&f)
	if st := e.sectionStream(&Input{Tap: strings.Clone("tap"), Conn: strings.Clone("conn")}, en); !hit || st == nil {
		t.Fatalf("the section's entry (hit %v) does not name its stream for equal names in other strings", hit)
	}
	if st := e.sectionStream(&Input{Tap: "tap", Conn: "conn2"}, en); st != nil {
		t.Fatal("the section's entry names its stream on another connection")
	}
	e.key = append(e.key[:0], "poison"...)
	chunk("tap", 2)
	if string(e.key) != "poison" {
		t.Fatal("a chunk of equal tap and connection names in other strings built its key again: no cache hit")
	}
	chunk("tap2", 0)
	if string(e.key) == "poison" {
		t.Fatal("a chunk of another tap used the entry of the sid's stream on the first")
	}
	st := e.fc.streamEntry([]byte("s-1"))
	if st == nil || st.tap != "tap2" {
		t.Fatalf("the sid's entry is not tap2's stream: %+v", st)
	}
	chunk("tap", 3)
	if got := e.Stats().Records; got != 5 {
		t.Fatalf("%d records judged, want 5", got)
	}
	if v := e.sink.(*verdicts); len(v.findings) != 0 {
		t.Fatalf("findings %+v, want none (each stream in sequence)", v.findings)
	}
}
