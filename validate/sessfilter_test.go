package validate

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSessFilterSameVerdicts: the session filter only skips partitions
// where a chat.interrupt would end nothing: every finding, record, stream
// start and end of the cache's random runs (interrupts of five sessions
// over four small partitions, evictions, closed connections, gaps, idle
// expiry) is the same with it and without it, and it did skip some.
func TestSessFilterSameVerdicts(t *testing.T) {
	skipped := 0
	for seed := uint64(1); seed <= 6; seed++ {
		with, ew := e2aCacheEngineRun(t, seed, false)
		sessFilterOff = true
		without, eo := e2aCacheEngineRun(t, seed, false)
		sessFilterOff = false
		if d := verdictsDiff(without, with, cmp.AllowUnexported(verdicts{})); d != "" {
			t.Fatalf("seed %d: verdicts differ with the session filter (-without +with):\n%s", seed, d)
		}
		if ew.cancelWalks > eo.cancelWalks {
			t.Fatalf("seed %d: %d partitions walked with the filter, %d without", seed, ew.cancelWalks, eo.cancelWalks)
		}
		skipped += eo.cancelWalks - ew.cancelWalks
	}
	if skipped == 0 {
		t.Fatal("the filter never skipped a partition")
	}
}

// TestSessFilterCounts: whatever happens to the streams (requests and
// responses that set, keep or change a session, finals, interrupts,
// evictions from full partitions, closed connections, gaps), each bucket
// of a table's filter counts exactly the streams the table holds whose
// session falls in it (a count that reached 255 stays): a count too low
// would skip a partition that holds the session, one too high would stop
// skipping.
func TestSessFilterCounts(t *testing.T) {
	defer func(was int) { partitionStreams = was }(partitionStreams)
	partitionStreams = 16
	cfg := DefaultConfig()
	cfg.MaxStreams = 64 // 4 partitions of 16: evictions
	cfg.Tombstones = 32
	e := NewEngine(cfg, &verdicts{})
	r := rand.New(rand.NewPCG(7, 8))
	check := func(step int) {
		t.Helper()
		for p := range e.parts {
			tab := e.parts[p].tab
			if tab == nil {
				continue
			}
			var want [1 << sessBits]int
			for i := int32(0); i < int32(tab.len()); i++ {
				if h := tab.at(i).sess; h != 0 {
					want[h&(1<<sessBits-1)]++
				}
			}
			for b, n := range want {
				got := 0
				if tab.sessF != nil {
					got = int(tab.sessF[b])
				}
				if got != n { // (16 streams a partition: no bucket reaches 255 here)
					t.Fatalf("step %d, partition %d, bucket %d: counts %d, the table holds %d", step, p, b, got, n)
				}
			}
		}
	}
	for k := 0; k < 30000; k++ {
		id := r.IntN(200)
		sess := fmt.Sprintf(`"s%d"`, r.IntN(40))
		if r.IntN(10) == 0 {
			sess = "null"
		}
		var line string
		switch x := r.IntN(100); {
		case x < 20:
			line = fmt.Sprintf(`{"request_id":"r%d","session_id":%s,"method":"chat.send","params":{}}`, id, sess)
		case x < 23:
			line = fmt.Sprintf(`{"request_id":"i%d","session_id":%s,"method":"chat.interrupt","params":{"intent":"cancel"}}`, k, sess)
		default:
			final := r.IntN(6) == 0
			line = fmt.Sprintf(`{"protocol_version":"1.0","response_id":"x%d","request_id":"r%d","sequence":%d,"is_final":%t,"status":"succeeded","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":{"delta_kind":"text","delta":"t"},"session_id":%s}`, k, id, r.IntN(3), final, sess)
		}
		in := Input{Index: uint64(k + 1), Tap: []string{"", "t"}[id&1], Data: []byte(line)}
		switch r.IntN(300) {
		case 0:
			e.ConnClosed(&in)
		case 1:
			e.Gap(&in)
		}
		e.Observe(&in)
		check(k)
	}
	e.Finish(ReasonEOF, &Input{})
	check(-1)
}

// TestSessFilterSaturates: a bucket that counted 255 streams keeps saying
// "may hold" for good, also once they are gone (a count that could wrap
// would say "none" of a table that holds the session).
func TestSessFilterSaturates(t *testing.T) {
	tab := newTable(16)
	const h = 5
	for k := range 300 {
		key := fmt.Appendf(nil, "k%d", k)
		i := tab.insert(key, tab.hash(key))
		if i < 0 {
			t.Fatalf("insert %d failed", k)
		}
		tab.setSess(tab.at(i), uint32(h+k%2<<sessBits)) // two sessions, one bucket
	}
	if got := tab.sessF[h]; got != 255 {
		t.Fatalf("bucket counts %d after 300 streams, want 255", got)
	}
	for tab.len() > 0 {
		tab.remove(int32(tab.len() - 1))
	}
	if !tab.maySess(h) || tab.maySess(h+1) {
		t.Fatalf("after the streams left: maySess(%d) %t, maySess(%d) %t; want true, false", h, tab.maySess(h), h+1, tab.maySess(h+1))
	}
	// An unsaturated bucket goes back to 0.
	key := []byte("one")
	i := tab.insert(key, tab.hash(key))
	tab.setSess(tab.at(i), h+1)
	tab.setSess(tab.at(i), h+2) // a session changed: counted once, where it is now
	if tab.maySess(h+1) || !tab.maySess(h+2) {
		t.Fatalf("after a change of session: maySess(%d) %t, maySess(%d) %t", h+1, tab.maySess(h+1), h+2, tab.maySess(h+2))
	}
	tab.remove(i)
	if tab.maySess(h + 2) {
		t.Fatal("the bucket of a removed stream still says it may hold the session")
	}
}

// TestCancelWalksPrune: an interrupt walks only the partitions that hold
// streams of its session (without the filter it walked all sixteen), and
// still cancels them.
func TestCancelWalksPrune(t *testing.T) {
	defer func(was int) { partitionStreams = was }(partitionStreams)
	partitionStreams = 16
	cfg := DefaultConfig()
	cfg.MaxStreams = 256 // 16 partitions
	v := &verdicts{}
	e := NewEngine(cfg, v)
	for k := range 100 {
		e.Observe(&Input{Data: fmt.Appendf(nil, `{"request_id":"r%d","session_id":"s%d","method":"chat.send","params":{}}`, k, k)})
		e.Observe(&Input{Data: fmt.Appendf(nil, `{"protocol_version":"1.0","response_id":"x%d","request_id":"r%d","sequence":0,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":{"delta_kind":"text","delta":"t"}}`, k, k)})
	}
	allocated := 0
	for p := range e.parts {
		if e.parts[p].tab != nil {
			allocated++
		}
	}
	if allocated < 12 {
		t.Fatalf("only %d partitions hold streams", allocated)
	}
	e.Observe(&Input{Data: []byte(`{"request_id":"i1","session_id":"s42","method":"chat.interrupt","params":{"intent":"cancel"}}`)})
	if e.cancelWalks > 2 { // its partition, and one whose bucket another session shares at most
		t.Fatalf("an interrupt of one stream's session walked %d of %d partitions", e.cancelWalks, allocated)
	}
	cancelled := 0
	for _, s := range v.ends {
		if s.Outcome == OutcomeCancelled {
			cancelled++
		}
	}
	if cancelled != 1 || v.ends[0].Key != "r42" {
		t.Fatalf("ends after the interrupt: %+v, want r42 cancelled", v.ends)
	}
	e.cancelWalks = 0
	e.Observe(&Input{Data: []byte(`{"request_id":"i2","session_id":"nobody","method":"chat.interrupt","params":{"intent":"cancel"}}`)})
	if e.cancelWalks > 1 {
		t.Fatalf("an interrupt of a session no stream has walked %d partitions", e.cancelWalks)
	}
}

// FuzzSessFilter: any run of JSON lines (interrupts among them, on the
// taps and connections their lengths pick, over eight small partitions)
// gets the same verdicts with the session filter and without it.
func FuzzSessFilter(f *testing.F) {
	fuzzSeeds(f)
	f.Add([]byte("{\"request_id\":\"a\",\"session_id\":\"s\",\"method\":\"m\"}\n{\"request_id\":\"a\",\"sequence\":0,\"is_final\":false,\"session_id\":\"s\"}\n{\"request_id\":\"i\",\"session_id\":\"s\",\"method\":\"chat.interrupt\",\"params\":{}}\n{\"request_id\":\"j\",\"session_id\":\"t\",\"method\":\"chat.interrupt\",\"params\":{}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer func(was int) { partitionStreams = was }(partitionStreams)
		partitionStreams = 2
		judge := func(off bool) *verdicts {
			defer func(was bool) { sessFilterOff = was }(sessFilterOff)
			sessFilterOff = off
			cfg := DefaultConfig()
			cfg.MaxStreams = 16 // 8 partitions of 2: evictions
			cfg.Tombstones = 4
			return judgeFuzzLines(cfg, data, false)
		}
		with, without := judge(false), judge(true)
		if d := verdictsDiff(without, with, cmp.AllowUnexported(verdicts{})); d != "" {
			t.Fatalf("verdicts differ with the session filter (-without +with):\n%s", d)
		}
	})
}
