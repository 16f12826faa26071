package validate

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/e2atap/e2atap/frame"
	"github.com/e2atap/e2atap/internal/gen"
)

// TestShardedMatchesEngine: a sharded run gives exactly the findings of a
// single engine on generated traffic with every fault, interrupts
// included (they must reach every shard).
func TestShardedMatchesEngine(t *testing.T) {
	t.Parallel() // sets no package state, reads none that a parallel test sets: main_test.go
	cfg := gen.DefaultConfig()
	cfg.Seed, cfg.FaultRate, cfg.InterruptRate = 3, 0.2, 0.1
	g := gen.New(cfg)
	var buf bytes.Buffer
	records := 20000
	if raceEnabled {
		records = 7000 // 14 runs, each ten times dearer under the race detector
	}
	for i := 0; i < records; i++ {
		buf.Write(g.Next().Data)
		buf.WriteByte('\n')
	}
	run := func(h Handler, finish func()) {
		if _, err := Read(bytes.NewReader(buf.Bytes()), "cap", FormatJSONL, ReadOptions{FromLog: true}, h); err != nil {
			t.Fatal(err)
		}
		finish()
	}
	vc := DefaultConfig()
	vc.IdleTimeout = 0
	one := &collector{}
	e := NewEngine(vc, one)
	run(e, func() { e.Finish(ReasonEOF, &Input{}) })
	inline := &collector{}
	s := NewSharded(1, vc, inline)
	s.Inline() // the offline one-shard run: on the reader's goroutine
	run(s, func() { s.Finish(ReasonEOF, &Input{}) })
	if a, b := summarize(one.findings), summarize(inline.findings); a != b {
		t.Errorf("one inline shard: findings differ\n one: %s\nmany: %s", a, b)
	}
	for _, shards := range []int{1, 2, 5} {
		for _, unordered := range []bool{false, true} {
			for _, inline := range []bool{false, true} {
				many := &collector{}
				s := NewSharded(shards, vc, many)
				if unordered {
					s.Unordered() // no barrier at interrupts: the same verdicts
				}
				if inline {
					s.Inline() // the reader judges shard 0's partitions itself
				}
				run(s, func() { s.Finish(ReasonEOF, &Input{}) })
				a, b := summarize(one.findings), summarize(many.findings)
				if a != b {
					t.Errorf("%d shards (unordered %t, inline %t): findings differ\n one: %s\nmany: %s", shards, unordered, inline, a, b)
				}
			}
		}
	}
	if len(one.findings) == 0 {
		t.Fatal("generated traffic with faults gave no finding")
	}
}

// TestShardedFramesMatchEngine: on frames with every kind of fault the
// frame rules look for (and a corrupt tail), any number of shards, inline
// or queued, gives exactly one engine's findings, messages included, and
// the same records and outcomes: the frame the reader decoded is the one
// the shard judges.
func TestShardedFramesMatchEngine(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 9))
	var capture []byte
	seqs := make([]int32, 40)
	for i := 0; i < 20000; i++ {
		l := rnd.IntN(len(seqs))
		sid := fmt.Sprintf("agent:%04d-%d", l, seqs[l]>>6)
		attrs := []frame.Attr{{Name: "sid", Value: sid}, {Name: "etype", Value: "text"}}
		typ, flags, seq := frame.TypeStreamChunk, uint8(0), seqs[l]&63
		switch rnd.IntN(60) {
		case 0:
			seq += 2 // a gap
		case 1:
			attrs = append(attrs, frame.Attr{Name: "sid", Value: sid + "x"}) // duplicate: the last wins
		case 2:
			attrs[1].Value = "movie" // bad etype
		case 3:
			flags |= frame.FlagHasError // no err attribute
		case 4:
			attrs = append(attrs, frame.Attr{Name: "meta", Value: "[1]"}) // no hasMeta, not an object
		case 5:
			attrs[0].Value = sid + "\xff" // malformed UTF-8 (the key too)
		case 6:
			typ, attrs = frame.TypeEvent, []frame.Attr{{Name: "id", Value: sid}, {Name: "type", Value: "t"}}
		case 7:
			typ, attrs = frame.TypeStreamReq, []frame.Attr{{Name: "sid", Value: sid}}
		case 8:
			typ = 9
		case 9:
			flags |= 0x10 // reserved
		case 10:
			attrs = attrs[1:] // no sid: judged, no stream
		}
		if seq == 63 || rnd.IntN(40) == 0 {
			flags |= frame.FlagDone
			if rnd.IntN(3) == 0 {
				flags |= frame.FlagHasError
				attrs = append(attrs, frame.Attr{Name: "err", Value: "boom"})
			}
		}
		b, err := frame.AppendFrame(nil, typ, flags, seq, attrs, []byte("tok"))
		if err != nil {
			t.Fatal(err)
		}
		capture = append(capture, b...)
		if typ == frame.TypeStreamChunk && flags&frame.FlagDone != 0 {
			seqs[l] = (seqs[l]>>6 + 1) << 6
		} else {
			seqs[l]++
		}
	}
	capture = append(capture, frame.Magic, frame.Version, 2) // cut short
	vc := DefaultConfig()
	vc.IdleTimeout = 0
	render := func(c *collector, st *Stats) string {
		fs := append([]Finding(nil), c.findings...)
		sort.SliceStable(fs, func(i, j int) bool { return FindingBefore(&fs[i], &fs[j]) })
		var b strings.Builder
		for _, f := range fs {
			fmt.Fprintf(&b, "%d %s %q %s %s\n", f.Index, f.Rule, f.Stream, f.Source, f.Message)
		}
		recs := append([]string(nil), c.records...)
		sort.Strings(recs)
		fmt.Fprintf(&b, "records %d %v outcomes %v\n", st.Records, recs, st.Outcomes)
		return b.String()
	}
	one := &collector{}
	e := NewEngine(vc, one)
	if _, err := Read(bytes.NewReader(capture), "cap", FormatFrames, ReadOptions{}, e); err != nil {
		t.Fatal(err)
	}
	e.Finish(ReasonEOF, &Input{})
	want := render(one, e.Stats())
	rules := map[string]bool{}
	for _, f := range one.findings {
		rules[f.Rule] = true
	}
	if len(rules) < 8 {
		t.Fatalf("the capture fires only %d frame rules: %v", len(rules), rules)
	}
	for _, c := range []struct {
		shards int
		inline bool
	}{{1, true}, {1, false}, {2, false}, {5, false}, {2, true}, {5, true}} {
		col := &collector{}
		s := NewSharded(c.shards, vc, col)
		if c.inline {
			s.Inline()
		}
		if _, err := Read(bytes.NewReader(capture), "cap", FormatFrames, ReadOptions{}, s); err != nil {
			t.Fatal(err)
		}
		s.Finish(ReasonEOF, &Input{})
		st := s.Stats()
		if got := render(col, &st); got != want {
			t.Errorf("%d shards (inline %t): findings, records or outcomes differ from one engine's", c.shards, c.inline)
		}
	}
	// The same read through the file's mapping, in windows small enough
	// that the shards judge the frames of many windows in place, each
	// window kept until they are done with it (SetWindow).
	if len(capture) < 1<<20 {
		t.Fatalf("a capture of %d bytes is not mapped", len(capture))
	}
	path := filepath.Join(t.TempDir(), "cap.frames")
	if err := os.WriteFile(path, capture, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(w int) { mapWindow = w }(mapWindow)
	mapWindow = 64 << 10
	for _, c := range []struct {
		shards int
		inline bool
	}{{1, true}, {2, false}, {2, true}, {5, true}} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		col := &collector{}
		s := NewSharded(c.shards, vc, col)
		if c.inline {
			s.Inline()
		}
		_, err = Read(f, "cap", FormatFrames, ReadOptions{}, s)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		s.Finish(ReasonEOF, &Input{})
		st := s.Stats()
		if got := render(col, &st); got != want {
			t.Errorf("mapped, %d shards (inline %t): findings, records or outcomes differ from one engine's", c.shards, c.inline)
		}
	}
}

// shrinkSink truncates a file at the first record a shard judges.
type shrinkSink struct {
	collector
	path string
	once sync.Once
}

func (s *shrinkSink) Record(*RecordInfo) {
	s.once.Do(func() {
		if err := os.Truncate(s.path, 2*int64(os.Getpagesize())); err != nil {
			panic(err)
		}
	})
}

// TestShardedMappedFileShrinks: shards judging frames in place in the
// reader's mapping survive the file being cut shorter under them: the read
// fails with the file shrank (as a one-shard read does), the process does
// not crash, and the run can still be finished.
func TestShardedMappedFileShrinks(t *testing.T) {
	defer func(w int) { mapWindow = w }(mapWindow)
	mapWindow = 256 << 10
	for _, inline := range []bool{false, true} {
		p, _ := bigFrameFile(t, nil, 40000, nil)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sink := &shrinkSink{path: p}
		s := NewSharded(2, DefaultConfig(), sink)
		if inline {
			s.Inline()
		}
		_, err = Read(f, "cap", FormatFrames, ReadOptions{}, s)
		f.Close()
		if err == nil || !strings.Contains(err.Error(), "shrank") {
			t.Fatalf("inline %t: Read = %v, want the file shrank", inline, err)
		}
		s.Finish(ReasonEOF, &Input{})
	}
}

func summarize(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule+"@"+f.Stream+"@"+jsonNum(int(f.Index)))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// TestShardsBounded: a run never starts more shards than MaxShards (4 per
// CPU, at most 256) or than its stream bound has partitions; the bounds of
// the partitions add up to MaxStreams.
func TestShardsBounded(t *testing.T) {
	for _, c := range []struct{ req, maxStreams, want int }{
		{100000, 1_000_000, MaxShards()},
		{0, 1_000_000, 1},
		{-3, 1000, 1},
		{8, 16000, 1}, // one partition: one shard
		{8, 32768, min(2, MaxShards())},
	} {
		got, capped := ShardsFor(c.req, c.maxStreams)
		if got != c.want || capped != (c.req > c.want) {
			t.Errorf("ShardsFor(%d, %d) = %d, %t; want %d", c.req, c.maxStreams, got, capped, c.want)
		}
	}
	if MaxShards() > MaxPartitions {
		t.Errorf("MaxShards %d over %d", MaxShards(), MaxPartitions)
	}
	s := NewSharded(100000, DefaultConfig(), &collector{})
	n := len(s.shards)
	s.Close()
	if n != MaxShards() {
		t.Errorf("NewSharded(100000) started %d shards, want %d", n, MaxShards())
	}
	for _, m := range []int{1, 16383, 16384, 50000, 1_000_000, 1_000_003} {
		p, sum := partitions(m), 0
		for i := 0; i < p; i++ {
			sum += partShare(m, p, i)
		}
		if sum != m {
			t.Errorf("max %d over %d partitions: shares add up to %d", m, p, sum)
		}
	}
}

// TestEvictedStreamResumesGapped: a stream evicted from a full table is
// not judged across what the table forgot: its next record is neither
// after_final nor a sequence finding, and it is not missing_final.
func TestEvictedStreamResumesGapped(t *testing.T) {
	cfg := DefaultConfig()
	cfg.IdleTimeout, cfg.MaxStreams = 0, 2
	col := &collector{}
	e := NewEngine(cfg, col)
	var idx uint64
	feed := func(line string) {
		idx++
		e.Observe(&Input{Data: []byte(line), Index: idx})
	}
	feed(resp(0, "request_id", "a"))
	feed(resp(0, "request_id", "b"))
	feed(resp(0, "request_id", "c")) // evicts a or b
	feed(resp(5, "request_id", "a"))
	feed(resp(6, "request_id", "b"))
	feed(final(6, "request_id", "a"))
	feed(final(7, "request_id", "b"))
	feed(final(1, "request_id", "c"))
	e.Finish(ReasonEOF, &Input{})
	if e.Stats().Evicted == 0 {
		t.Fatal("nothing was evicted")
	}
	// A stream held across its jump is a seq_gap; one evicted before it
	// resumes gapped and says nothing. Nothing else may be reported.
	for _, f := range col.findings {
		if f.Rule != "e2a.seq_gap" {
			t.Errorf("finding %s on %s at %d: an evicted stream was judged across the eviction", f.Rule, f.Stream, f.Index)
		}
	}
	if o := e.Stats().Outcomes; o[OutcomeEvicted] == 0 || o[OutcomeMissingFinal] != 0 {
		t.Errorf("outcomes %v", o)
	}
}

// TestShardedEvictionSameForAnyShards: with more open streams than the
// bound, the findings and outcomes (evictions included) are the same for
// 1, 2, 4 and 8 shards, and the same as one Engine's.
func TestShardedEvictionSameForAnyShards(t *testing.T) {
	defer func(n int) { partitionStreams = n }(partitionStreams)
	partitionStreams = 64 // 8 partitions of 64 streams
	var buf bytes.Buffer
	const streams = 2000
	for round, seqs := range [][]int{{0}, {1}, {2}} {
		for i := 0; i < streams; i++ {
			id := (i*(7+2*round) + round) % streams
			if round == 2 && id%3 == 0 {
				buf.WriteString(final(seqs[0], "request_id", fmt.Sprintf("q%05d", id)))
			} else {
				buf.WriteString(resp(seqs[0], "request_id", fmt.Sprintf("q%05d", id)))
			}
			buf.WriteByte('\n')
		}
	}
	cfg := DefaultConfig()
	cfg.IdleTimeout, cfg.MaxStreams = 0, 512
	render := func(c *collector, st Stats) string {
		fs := append([]Finding(nil), c.findings...)
		sort.SliceStable(fs, func(i, j int) bool { return FindingBefore(&fs[i], &fs[j]) })
		var b strings.Builder
		for _, f := range fs {
			fmt.Fprintf(&b, "%d %s %s %s\n", f.Index, f.Rule, f.Stream, f.Message)
		}
		fmt.Fprintf(&b, "evicted %d outcomes %v\n", st.Evicted, st.Outcomes)
		return b.String()
	}
	one := &collector{}
	e := NewEngine(cfg, one)
	if _, err := Read(bytes.NewReader(buf.Bytes()), "cap", FormatJSONL, ReadOptions{}, e); err != nil {
		t.Fatal(err)
	}
	e.Finish(ReasonEOF, &Input{})
	want := render(one, *e.Stats())
	if e.Stats().Evicted == 0 {
		t.Fatal("nothing evicted")
	}
	for _, n := range []int{1, 2, 4, 8} {
		if got, _ := ShardsFor(n, cfg.MaxStreams); got != min(n, MaxShards()) {
			t.Fatalf("%d shards capped to %d", n, got)
		}
		c := &collector{}
		s := NewSharded(n, cfg, c)
		if _, err := Read(bytes.NewReader(buf.Bytes()), "cap", FormatJSONL, ReadOptions{}, s); err != nil {
			t.Fatal(err)
		}
		s.Finish(ReasonEOF, &Input{})
		if got := render(c, s.Stats()); got != want {
			t.Errorf("%d shards: findings or outcomes differ from one engine's", n)
		}
	}
}

// TestRecordInfoFields: ObserveFrame sets RecordInfo field by field (no
// literal copied per frame); a field added to RecordInfo must be set there
// too, or a frame would carry the previous JSON record's value.
func TestRecordInfoFields(t *testing.T) {
	if n := reflect.TypeOf(RecordInfo{}).NumField(); n != 12 {
		t.Fatalf("RecordInfo has %d fields; set the new ones in ObserveFrame (framerules.go) and update this count", n)
	}
}

// watermarkSink checks, at every finding a shard reports, that the run's
// watermark is still below the finding's record: the printer of validate
// would otherwise have printed later findings before it.
type watermarkSink struct {
	collector
	run  *Sharded
	max  atomic.Uint64 // the highest watermark a poller saw, as the printer polls it
	mu   sync.Mutex
	bad  []string
	seen int
}

func (w *watermarkSink) Finding(f *Finding) {
	m := max(w.max.Load(), w.run.Watermark())
	w.collector.Finding(f)
	if f.Index == 0 {
		return
	}
	w.mu.Lock()
	w.seen++
	if m >= f.Index {
		w.bad = append(w.bad, fmt.Sprintf("finding of record %d reported with the watermark at %d", f.Index, m))
	}
	w.mu.Unlock()
}

// TestWatermarkBelowUnjudged: whatever the number of shards, inline or
// queued, the watermark never passes a record whose findings are still to
// come (it moves once a batch, not once a record), and it reaches the last
// record at the end.
func TestWatermarkBelowUnjudged(t *testing.T) {
	t.Parallel() // sets no package state, reads none that a parallel test sets: main_test.go
	cfg := gen.DefaultConfig()
	cfg.Seed, cfg.FaultRate, cfg.InterruptRate = 5, 0.3, 0.05
	g := gen.New(cfg)
	var buf bytes.Buffer
	records := 20000
	if raceEnabled {
		records = 7000 // six runs, each ten times dearer under the race detector
	}
	for i := 0; i < records; i++ {
		buf.Write(g.Next().Data)
		buf.WriteByte('\n')
	}
	vc := DefaultConfig()
	vc.IdleTimeout = 0
	for _, c := range []struct {
		shards int
		inline bool
	}{{1, true}, {1, false}, {2, false}, {5, false}, {2, true}, {5, true}} {
		w := &watermarkSink{}
		s := NewSharded(c.shards, vc, w)
		w.run = s
		if c.inline {
			s.Inline()
		}
		s.Unordered()
		stop := make(chan struct{})
		var polled sync.WaitGroup
		polled.Add(1)
		go func() {
			defer polled.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if m := s.Watermark(); m > w.max.Load() {
					w.max.Store(m)
				}
				runtime.Gosched()
			}
		}()
		last, err := Read(bytes.NewReader(buf.Bytes()), "cap", FormatJSONL, ReadOptions{FromLog: true}, s)
		if err != nil {
			t.Fatal(err)
		}
		close(stop)
		polled.Wait()
		s.Finish(ReasonEOF, &Input{})
		if w.seen < 100 {
			t.Fatalf("only %d findings", w.seen)
		}
		if len(w.bad) > 0 {
			t.Errorf("%d shards (inline %t): %d of %d findings after the watermark passed them, first: %s", c.shards, c.inline, len(w.bad), w.seen, w.bad[0])
		}
		if m := s.Watermark(); m != last {
			t.Errorf("%d shards (inline %t): watermark %d at the end, want %d", c.shards, c.inline, m, last)
		}
	}
}

// TestCopyInput: copyInput copies every field of an Input (one added to
// Input must be added there).
func TestCopyInput(t *testing.T) {
	var src Input
	v := reflect.ValueOf(&src).Elem()
	var fill func(v reflect.Value, n int)
	fill = func(v reflect.Value, n int) {
		switch v.Kind() {
		case reflect.Struct:
			if v.Type() == reflect.TypeOf(time.Time{}) {
				v.Set(reflect.ValueOf(time.Unix(int64(n), 7)))
				return
			}
			for i := 0; i < v.NumField(); i++ {
				fill(v.Field(i), n*31+i+1)
			}
		case reflect.String:
			v.SetString(fmt.Sprint("s", n))
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int32, reflect.Int64:
			v.SetInt(int64(n))
		case reflect.Uint8, reflect.Uint64:
			v.SetUint(uint64(n))
		case reflect.Slice:
			v.Set(reflect.ValueOf([]byte{byte(n)}))
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), n)
		default:
			t.Fatalf("fill: field kind %s: add it here", v.Kind())
		}
	}
	fill(v, 1)
	var dst Input
	copyInput(&dst, &src)
	if !reflect.DeepEqual(dst, src) {
		t.Fatalf("copyInput misses a field:\n got %+v\nwant %+v", dst, src)
	}
}

// TestSameBase: two inputs share a batch entry only when they differ in
// nothing but the fields an item carries (position offset and line,
// index, charge, data): a field added to Input must be compared in
// sameBase or carried by the item.
func TestSameBase(t *testing.T) {
	carried := map[string]bool{"Pos.Offset": true, "Pos.Line": true, "Index": true, "Charged": true, "Data": true}
	base := Input{Tap: "t", Conn: "c", Pos: Position{Kind: PosByte, Name: "n", Offset: 1, Line: 2}, Time: time.Unix(5, 0), Data: []byte("x"), Index: 3, Charged: 4, Logged: &Logged{}}
	changed := base
	var walk func(v reflect.Value, path string)
	checked := 0
	walk = func(v reflect.Value, path string) {
		for i := 0; i < v.NumField(); i++ {
			name := v.Type().Field(i).Name
			if path != "" {
				name = path + "." + name
			}
			fv := v.Field(i)
			if fv.Kind() == reflect.Struct && fv.Type() != reflect.TypeOf(time.Time{}) {
				walk(fv, name)
				continue
			}
			old := reflect.ValueOf(fv.Interface())
			switch fv.Kind() {
			case reflect.String:
				fv.SetString(fv.String() + "!")
			case reflect.Bool:
				fv.SetBool(!fv.Bool())
			case reflect.Int, reflect.Int32, reflect.Int64:
				fv.SetInt(fv.Int() + 1)
			case reflect.Uint8, reflect.Uint64:
				fv.SetUint(fv.Uint() + 1)
			case reflect.Slice:
				fv.Set(reflect.ValueOf([]byte("y")))
			case reflect.Pointer:
				fv.Set(reflect.New(fv.Type().Elem()))
			case reflect.Struct: // time.Time
				fv.Set(reflect.ValueOf(time.Unix(6, 0)))
			default:
				t.Fatalf("%s: kind %s, add it here", name, fv.Kind())
			}
			checked++
			orig := base
			if got := sameBase(&orig, &changed); got != carried[name] {
				t.Errorf("inputs differing in %s: sameBase %t", name, got)
			}
			fv.Set(old)
		}
	}
	walk(reflect.ValueOf(&changed).Elem(), "")
	if checked < 15 {
		t.Fatalf("only %d fields checked", checked)
	}
}

// TestReaderShardShare: with the reader as shard 0 (Inline), every
// partition has one owner, shard 0 owns its share (readerShare) of them
// for the kind of the first record (or of the read: JSON lines handed
// over in place from a mapping), and the others split the rest evenly;
// without Inline the partitions go round robin.
func TestReaderShardShare(t *testing.T) {
	vc := DefaultConfig()
	for _, c := range []struct {
		shards         int
		inline         bool
		frames, mapped bool
	}{{2, true, false, false}, {2, true, true, false}, {3, true, false, false}, {2, false, false, false}, {2, false, true, false},
		{2, true, false, true}, {3, true, false, true}} {
		s := NewSharded(c.shards, vc, &collector{})
		if c.inline {
			s.Inline()
		}
		if c.mapped {
			s.assignShare(readerShare[2]) // as readLinesMapped does
		}
		s.shardOf(nil, c.frames)
		owned := make([]int, c.shards)
		for p, sh := range s.owner {
			k := -1
			for i := range s.shards {
				if s.shards[i] == sh {
					k = i
				}
			}
			if k < 0 {
				t.Fatalf("%+v: partition %d has no shard", c, p)
			}
			owned[k]++
		}
		s.Close()
		w := 1.0
		if c.inline {
			w = readerShare[0]
			if c.frames {
				w = readerShare[1]
			}
			if c.mapped {
				w = readerShare[2]
			}
		}
		want0 := int(float64(s.parts)*w/(w+float64(c.shards-1)) + 0.5)
		if owned[0] != want0 {
			t.Errorf("%+v: shard 0 owns %d of %d partitions, want %d", c, owned[0], s.parts, want0)
		}
		for i := 2; i < c.shards; i++ {
			if d := owned[i] - owned[1]; d < -1 || d > 1 {
				t.Errorf("%+v: shards own %v partitions", c, owned)
			}
		}
	}
}

// TestPartHint: composite takes the reader's partition only for the very
// bytes the reader routed by (the same place in Input.Data); any other key,
// even one equal to it, is hashed.
func TestPartHint(t *testing.T) {
	vc := DefaultConfig()
	e := NewEngine(vc, &collector{})
	data := []byte("xx agent:0001 yy")
	key := data[3:13]
	right := partitionOf(key, len(e.parts))
	wrong := (right + 1) % len(e.parts)
	in := &Input{Data: data}
	if h := hintFor(key, data, wrong); h.off != 3 || h.n != 10 || int(h.part) != wrong {
		t.Fatalf("hintFor = %+v", h)
	}
	if h := hintFor([]byte("agent:0001"), data, wrong); h.n != 0 {
		t.Fatalf("hintFor a key outside the data = %+v, want none", h)
	}
	e.hint = hintFor(key, data, wrong) // a wrong partition, to see which is used
	e.composite(in, protoFrame, key)
	if e.cur != &e.parts[wrong] {
		t.Errorf("the hinted key: partition %d, want the hint's %d", e.cur.id, wrong)
	}
	e.composite(in, protoFrame, []byte("agent:0001"))
	if e.cur != &e.parts[right] {
		t.Errorf("an equal key elsewhere: partition %d, want its hash's %d", e.cur.id, right)
	}
	e.composite(in, protoFrame, data[4:14])
	if e.cur != &e.parts[partitionOf(data[4:14], len(e.parts))] {
		t.Errorf("another part of the data: partition %d, want its hash's", e.cur.id)
	}
}
