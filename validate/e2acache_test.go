package validate

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/e2atap/e2atap/e2a"
)

// e2aCacheRun judges a random run of E2A records: streams interleaved
// over two taps and three connections, request_ids that collide in the
// cache (more than it has slots), long ones it does not keep, requests
// that reuse a finished id or repeat one in flight, keepalives, records out
// of order and after the final, interrupts, a table small enough to evict,
// connections closed, gaps and idle expiry in between.
func e2aCacheRun(t *testing.T, seed uint64, off bool) *verdicts {
	v, _ := e2aCacheEngineRun(t, seed, off)
	return v
}

// e2aCacheEngineRun is e2aCacheRun, returning the engine too.
func e2aCacheEngineRun(t *testing.T, seed uint64, off bool) (*verdicts, *Engine) {
	defer func(was bool) { e2aCacheOff = was }(e2aCacheOff)
	e2aCacheOff = off
	v := &verdicts{}
	w := newCacheWalk(t, v, seed, 2, 600)
	e, r := w.e, w.r
	const nid = 600
	ids := make([]string, nid)
	for i := range ids {
		switch i % 4 {
		case 0:
			ids[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i*7)
		case 1:
			ids[i] = fmt.Sprintf("r%d", i)
		case 2:
			ids[i] = fmt.Sprintf("%s-%d", strings.Repeat("long", 20), i) // over fcMaxSid
		default:
			ids[i] = fmt.Sprintf("req-%06d-%04x", i, i*31)
		}
	}
	seqs := make([]int, nid)
	for k := 0; k < w.steps; k++ {
		hot, tap, conn, ok := w.next()
		if !ok {
			continue
		}
		id, sess := ids[hot], hot%5
		var line string
		switch x := r.IntN(100); {
		case x < 6 || seqs[hot] == 0 && x < 40:
			line = fmt.Sprintf(`{"request_id":%q,"session_id":"s%d","method":"chat.send","params":{},"timestamp":"2026-03-29T12:00:00Z"}`, id, sess)
			seqs[hot] = 0
		case x < 8:
			line = fmt.Sprintf(`{"request_id":"i%d","session_id":"s%d","method":"chat.interrupt","params":{"intent":"cancel"}}`, k, sess)
		case x < 12:
			line = fmt.Sprintf(`{"protocol_version":"1.0","response_id":"k%d","request_id":%q,"sequence":-1,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":{"delta_kind":"custom","delta":{"event_type":"keepalive"},"event_type":"keepalive"}}`, k, id)
		default:
			seq := seqs[hot]
			switch r.IntN(30) {
			case 0:
				seq += 2
			case 1:
				seq--
			}
			final := r.IntN(8) == 0
			kind, status, body := "e2a.chunk", "in_progress", `{"delta_kind":"text","delta":"tok"}`
			if final {
				kind, status, body = "e2a.complete", "succeeded", `{"result":{}}`
			}
			line = fmt.Sprintf(`{"protocol_version":"1.0","response_id":"x%d","request_id":%q,"sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00.5+00:00","provenance":{},"body":%s,"session_id":"s%d"}`, k, id, seq, final, status, kind, body, sess)
			seqs[hot] = seq + 1
			if final && r.IntN(4) != 0 {
				seqs[hot] = 0 // mostly a new request next; else records after the final
			}
		}
		in := Input{Pos: Position{Kind: PosLine, Name: "f", Line: int64(k + 1)}, Index: uint64(k + 1), Tap: tap, Conn: conn, Time: w.now, Data: []byte(line)}
		if r.IntN(2) == 0 {
			in.Time = time.Time{}
		}
		e.Observe(&in)
	}
	e.Finish(ReasonEOF, &Input{Time: w.now})
	return v, e
}

// TestE2ACacheSameVerdicts: the request_id cache is a hint; every finding,
// record, stream start and end is the same with it and without it.
func TestE2ACacheSameVerdicts(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		with, without := e2aCacheRun(t, seed, false), e2aCacheRun(t, seed, true)
		if len(without.findings) == 0 || len(without.ends) == 0 {
			t.Fatalf("seed %d: the run judged nothing (%d findings, %d ends)", seed, len(without.findings), len(without.ends))
		}
		if d := verdictsDiff(without, with, cmp.AllowUnexported(verdicts{})); d != "" {
			t.Fatalf("seed %d: verdicts differ with the cache (-without +with):\n%s", seed, d)
		}
	}
}

// TestE2ACacheHits: a record of a cached stream does not build its key
// again; one whose entry names an index another stream now holds does.
func TestE2ACacheHits(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxStreams = 1000 // one partition
	e := NewEngine(cfg, &verdicts{})
	rec := func(id string, seq int, final bool) {
		kind, status, body := "e2a.chunk", "in_progress", `{"delta_kind":"text","delta":"t"}`
		if final {
			kind, status, body = "e2a.complete", "succeeded", `{"result":{}}`
		}
		line := fmt.Sprintf(`{"protocol_version":"1.0","response_id":"x","request_id":%q,"sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":%s}`, id, seq, final, status, kind, body)
		e.Observe(&Input{Data: []byte(line)})
	}
	poisoned := func() bool { return string(e.key) == "poison" }
	rec("a", 0, false)
	rec("x", 0, false)
	rec("b", 0, false)
	e.key = append(e.key[:0], "poison"...)
	rec("a", 1, false)
	if !poisoned() {
		t.Fatal("the second record of a stream built its key again: no cache hit")
	}
	en := &e.ec[e2aSlot([]byte("b"))]
	if en.keyLen == 0 {
		t.Fatal("stream b not cached")
	}
	// x ends and is removed at the next lookup: b, the last dense entry,
	// moves into x's index, and the new c takes b's old one.
	rec("x", 1, true)
	was := en.idx
	rec("c", 0, false)
	if e.tab.len() <= int(was) || string(e.tab.key(was)) == string(en.key[:en.keyLen]) {
		t.Fatalf("b did not move: %d streams, b cached at %d", e.tab.len(), was)
	}
	e.key = append(e.key[:0], "poison"...)
	rec("b", 1, false)
	if poisoned() || en.idx == was {
		t.Fatal("a cache entry naming another stream's state was used")
	}
	e.key = append(e.key[:0], "poison"...)
	rec("b", 2, false)
	if !poisoned() {
		t.Fatal("b's next record built its key again: no cache hit at its new index")
	}
	if n := e.Stats().Findings; n != [NumRules]uint64{} {
		t.Fatalf("findings on clean streams: %v", n)
	}
	rec("a", 2, true)
	rec("a", 3, false)
	if n := e.Stats().Findings[RuleE2AAfterFinal]; n != 1 {
		t.Fatalf("%d e2a.after_final for a record after the final one, want 1", n)
	}
	// A sid of the same bytes is another stream (frames keep their own
	// entries).
	if n := e.Stats().Findings[RuleE2ASeqStart]; n != 0 {
		t.Fatalf("%d e2a.seq_start", n)
	}
}

// judgeFuzzLines judges each line of data on one engine of cfg, on the
// tap and connection its length picks, with a gap or a closed connection
// before some (by length too), and returns the verdicts: the walk of the
// fuzzers that compare a mechanism on and off.
func judgeFuzzLines(cfg Config, data []byte, fromLog bool) *verdicts {
	v := &verdicts{}
	e := NewEngine(cfg, v)
	for i, line := range bytes.Split(data, []byte("\n")) {
		in := Input{Data: line, Index: uint64(i + 1), FromLog: fromLog}
		in.Tap, in.Conn = []string{"", "t"}[len(line)&1], []string{"", "c"}[len(line)>>1&1]
		switch len(line) % 29 {
		case 0:
			e.Gap(&in)
		case 1:
			e.ConnClosed(&in)
		}
		e.Observe(&in)
	}
	e.Finish(ReasonEOF, &Input{})
	return v
}

// FuzzE2ACache: any run of JSON lines (each judged on the tap and
// connection its length picks) gets the same verdicts with the request_id
// cache and without it.
func FuzzE2ACache(f *testing.F) {
	fuzzSeeds(f)
	f.Add([]byte("{\"request_id\":\"a\",\"sequence\":0,\"is_final\":false}\n{\"request_id\":\"a\",\"sequence\":1,\"is_final\":true}\n{\"request_id\":\"a\",\"sequence\":2,\"is_final\":false}\n{\"request_id\":\"a\",\"method\":\"m\"}\n{\"request_id\":\"a\",\"sequence\":0,\"is_final\":false}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		judge := func(off bool) *verdicts {
			defer func(was bool) { e2aCacheOff = was }(e2aCacheOff)
			e2aCacheOff = off
			cfg := DefaultConfig()
			cfg.MaxStreams = 4 // exercise eviction
			cfg.Tombstones = 2
			return judgeFuzzLines(cfg, data, true)
		}
		with, without := judge(false), judge(true)
		if d := verdictsDiff(without, with, cmp.AllowUnexported(verdicts{})); d != "" {
			t.Fatalf("verdicts differ with the cache (-without +with):\n%s", d)
		}
	})
}

// TestEchoHashTellsApart: the echo hash of a value is its own (the same
// for the same value, never 0), and values of one text that differ in type
// or boolean hash apart.
func TestEchoHashTellsApart(t *testing.T) {
	e := NewEngine(DefaultConfig(), &verdicts{})
	vals := []e2a.Value{
		{Type: e2a.String, Str: []byte("1")}, {Type: e2a.Number, Str: []byte("1")},
		{Type: e2a.String, Str: []byte("true")}, {Type: e2a.Bool, Str: []byte("true"), Bool: true},
		{Type: e2a.Bool, Bool: true}, {Type: e2a.Bool}, {Type: e2a.String}, {Type: e2a.Object, Str: []byte("{}")},
	}
	seen := map[uint32]int{}
	for i := range vals {
		h := e.echoHash(&vals[i])
		if h == 0 || h != e.echoHash(&e2a.Value{Type: vals[i].Type, Str: append([]byte(nil), vals[i].Str...), Bool: vals[i].Bool}) {
			t.Fatalf("value %d: hash %x, not its own", i, h)
		}
		if j, dup := seen[h]; dup {
			t.Fatalf("values %d and %d hash alike (%x)", j, i, h)
		}
		seen[h] = i
	}
	for _, v := range []e2a.Value{{}, {Type: e2a.Null}} {
		if h := e.echoHash(&v); h != 0 {
			t.Fatalf("no value (%v) hashes to %x, want 0", v.Type, h)
		}
	}
}
