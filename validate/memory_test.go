package validate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"testing"
	"time"
)

// openStreams feeds e n streams left open (36-byte ids, as the reference
// sends them).
func openStreams(e *Engine, n int) {
	in := Input{}
	for s := 0; s < n; s++ {
		in.Data = fmt.Appendf(in.Data[:0], `{"protocol_version":"1.0","response_id":"r","request_id":"%08x-0000-4000-8000-000000000000","sequence":0,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":{"delta_kind":"text","delta":""}}`, s)
		e.Observe(&in)
	}
}

// usedBytes is what the tables of e use for their streams: states, keys
// with their lengths, slots (not what is mapped and not yet touched).
func (e *Engine) usedBytes() int {
	n := 0
	for p := range e.parts {
		t := e.parts[p].tab
		if t == nil {
			continue
		}
		n += t.n*stateSize + 4*len(t.slots)
		for _, c := range t.arena {
			n += len(c)
		}
	}
	return n
}

// TestOpenStreamBytes pins the cost of an open stream in-process, over
// 100 k streams with 36-byte ids of each shape (and a few other lengths) opened after the first 10 k
// (which allocate every partition's fixed parts: tombstones, first
// pieces). Per stream the tables use 40 bytes of state, a 4-byte slot at a
// load of 3/5 to 3/4, the key's length byte and its 3-byte tap/connection/
// mode prefix, and the id as streamkey.go keeps it: 16 bytes for a UUID
// (either case), 20 for "req_" and 32 hex digits, 27 for base64url's
// alphabet, 30 for printable ASCII, 36 for any other bytes (some slack on
// each); the Go heap grows by at most 8 bytes a stream (the tables are off
// it: the collector's headroom does not double them). Sizes, not times.
func TestOpenStreamBytes(t *testing.T) {
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	digits := func(s int, alphabet string, n int) string { // n characters of s in alphabet, then padding
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[s%len(alphabet)]
			s /= len(alphabet)
		}
		return string(b)
	}
	for _, c := range []struct {
		name string
		id   func(s int) string
		max  float64
	}{
		{"uuid", func(s int) string { return fmt.Sprintf("%08x-0000-4000-8000-000000000000", s) }, 70},
		{"uuid-upper", func(s int) string { return fmt.Sprintf("%08X-0000-4000-8000-00000000000A", s) }, 70},
		{"req-hex", func(s int) string { return fmt.Sprintf("req_%08x9a4d4e6f8b7a0c1d2e3f4a5b", s) }, 74},
		{"other", func(s int) string { return fmt.Sprintf("req_%08x_0000_4000_8000_00000000", s) }, 80},
		{"base64url", func(s int) string { return "msg_01XFDUDYJgAACzvnptvV-Z" + digits(s, b64, 10) }, 81},
		{"printable", func(s int) string {
			return "a b c d e f g h i j k l m n " + digits(s, "!#$%&()*+,./:;<=>?@[]^`{|}~", 8)
		}, 82},
		{"utf-8", func(s int) string { return strings.Repeat("ñ", 10) + fmt.Sprintf("%016x", s) }, 90},
		// Other lengths: a sha256, a long base64url token, a short id.
		{"hex-64", func(s int) string { return fmt.Sprintf("%08x", s) + strings.Repeat("9a4d4e6f", 7) }, 86},
		{"base64url-128", func(s int) string { return "tok_" + digits(s, b64, 10) + strings.Repeat("Zz-_", 28) + "Zz" }, 150},
		{"short", func(s int) string { return fmt.Sprintf("r%07x", s) }, 58},
	} {
		t.Run(c.name, func(t *testing.T) {
			// quarter: the tables grow past their doubling phase into
			// the quarter steps (checked below).
			n, first, quarter := 100_000, 10_000, true
			if raceEnabled {
				// Ten times dearer under the race detector (the full
				// counts run without it): 70 k streams for the first
				// case, enough for the quarter steps; 30 k for the other
				// shapes, whose tables only double. The figures match
				// the full run's within 0.5 bytes.
				n = 60_000
				if c.name != "uuid" {
					n, first, quarter = 25_000, 5_000, false
				}
			}
			cfg := DefaultConfig()
			cfg.IdleTimeout = 0
			cfg.MaxStreams = 2 * n // partitions fill unevenly: room for all n
			e := NewEngine(cfg, nopSink{})
			in := Input{}
			open := func(from, to int) {
				for s := from; s < to; s++ {
					id := c.id(s)
					want := 36
					if w, ok := map[string]int{"hex-64": 64, "base64url-128": 128, "short": 8}[c.name]; ok {
						want = w
					}
					if len(id) != want {
						t.Fatalf("id %q is %d bytes, want %d", id, len(id), want)
					}
					in.Data = fmt.Appendf(in.Data[:0], `{"protocol_version":"1.0","response_id":"r","request_id":"%s","sequence":0,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":{"delta_kind":"text","delta":""}}`, id)
					e.Observe(&in)
				}
			}
			open(0, first)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			used0, mapped0 := e.usedBytes(), TableBytes()
			open(first, first+n)
			runtime.GC()
			runtime.ReadMemStats(&after)
			if e.Open() != first+n {
				t.Fatalf("%d streams open, want %d", e.Open(), first+n)
			}
			used := float64(e.usedBytes()-used0) / float64(n)
			heap := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
			t.Logf("per open stream: %.1f bytes in the tables, %.1f on the Go heap, %.1f mapped", used, heap, float64(TableBytes()-mapped0)/float64(n))
			if used > c.max {
				t.Errorf("the tables use %.1f bytes per open stream, want at most %.0f", used, c.max)
			}
			if heap > 8 {
				t.Errorf("the Go heap grew by %.1f bytes per open stream, want at most 8 (the tables belong off the heap)", heap)
			}
			for p := range e.parts {
				if tb := e.parts[p].tab; quarter && len(tb.slots) <= tb.hintSlots {
					t.Fatalf("partition %d: %d streams in %d slots, not past the doubling phase (%d): the figure would miss the quarter steps", p, tb.n, len(tb.slots), tb.hintSlots)
				}
			}
			runtime.KeepAlive(e)
		})
	}
}

// TestUUIDKeys: a stream key ending in a canonical UUID is kept packed and
// reported as it was sent; an uppercase one is another stream, kept as it
// is; a frame sid agent:uuid keeps its prefix.
func TestUUIDKeys(t *testing.T) {
	const id = "3f2b8c1e-9a4d-4e6f-8b7a-0c1d2e3f4a5b"
	up := strings.ToUpper(id)
	lines := []string{
		resp(0, "request_id", id), resp(1, "request_id", id),
		resp(0, "request_id", up), // another stream: no seq_dup
		resp(3, "request_id", id), // seq_gap names the id
	}
	col := runCapture(t, ProfileSpec, []byte(strings.Join(lines, "\n")+"\n"), FormatJSONL)
	var got []string
	for _, f := range col.findings {
		got = append(got, f.Rule+" "+f.Stream)
	}
	sort.Strings(got)
	want := []string{"e2a.missing_final " + up, "e2a.missing_final " + id, "e2a.seq_gap " + id}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("findings %q, want %q", got, want)
	}
	for _, s := range []string{id, "agent-7:" + id, "x" + id} {
		var k []byte
		packed, ok := packUUID(k, []byte(s[len(s)-uuidLen:]))
		if !ok || len(packed) != 16 {
			t.Fatalf("%q: not packed (%v) or %d bytes", s, ok, len(packed))
		}
		k = appendUUIDText(nil, packed)
		if string(k) != s[len(s)-uuidLen:] {
			t.Errorf("%q packs and unpacks to %q", s, k)
		}
		e := NewEngine(DefaultConfig(), nopSink{})
		ck := e.composite(&Input{Tap: "t", Conn: "c"}, protoFrame, []byte(s))
		tap, conn, stream := streamOf(ck)
		if tap != "t" || conn != "c" || string(stream) != s || len(ck) != len("t\x00c\x00F")+len(s)-uuidLen+16 {
			t.Errorf("%q: key %q splits into %q %q %q", s, ck, tap, conn, stream)
		}
	}
	// Every 16 bytes round-trip through their text.
	rnd := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 1000; i++ {
		var b [16]byte
		for j := range b {
			b[j] = byte(rnd.IntN(256))
		}
		text := appendUUIDText(nil, b[:])
		back, ok := packUUID(nil, text)
		if !ok || string(back) != string(b[:]) {
			t.Fatalf("%x → %s → %x (%v)", b, text, back, ok)
		}
	}
	for _, s := range []string{up, id[:35] + "g", id[:35] + "A", "\x00" + id[1:], strings.Replace(id, "-", "_", 1), id[1:], strings.Replace(id, "3", "-", 1)} {
		if isUUID([]byte(s)) {
			t.Errorf("%q taken for a canonical UUID", s)
		}
	}
}

// TestTablesUnmappedWhenDropped: an engine that is dropped gives its
// tables' memory back (the cleanup unmaps it), so that tests and runs that
// make engines do not leak mappings.
func TestTablesUnmappedWhenDropped(t *testing.T) {
	var mems []*tableMem
	func() {
		e := NewEngine(DefaultConfig(), nopSink{})
		openStreams(e, 20_000)
		for p := range e.parts {
			if tab := e.parts[p].tab; tab != nil {
				mems = append(mems, tab.mem)
			}
		}
	}()
	held := func() (n int64) {
		for _, m := range mems {
			n += m.held.Load()
		}
		return n
	}
	if len(mems) == 0 || held() == 0 {
		t.Fatalf("%d tables holding %d bytes after 20000 streams", len(mems), held())
	}
	deadline := time.Now().Add(30 * time.Second)
	for held() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still mapped long after the engine was dropped", held())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFinishBulkHoldsNoKeys: ending every open stream at once (end of
// input) queues no copy of their keys, and an engine used after Finish
// sees none of the ended streams as open.
func TestFinishBulkHoldsNoKeys(t *testing.T) {
	col := &collector{}
	e := NewEngine(DefaultConfig(), col)
	openStreams(e, 5000)
	e.Finish(ReasonEOF, &Input{})
	if len(e.forget) != 0 {
		t.Fatalf("Finish queued %d bytes of keys", len(e.forget))
	}
	if len(col.ends) != 5000 {
		t.Fatalf("%d stream ends, want 5000", len(col.ends))
	}
	// The same ids again: each is after_final, none is open.
	col.findings = nil
	openStreams(e, 10)
	if e.Open() != 0 {
		t.Fatalf("%d streams open after Finish and records of ended streams", e.Open())
	}
	for _, f := range col.findings {
		if f.Rule != "e2a.after_final" && f.Rule != "e2a.required" {
			t.Errorf("unexpected finding %s: %s", f.Rule, f.Message)
		}
	}
}

// TestSequencesPast32Bits: RULES.md puts no bound on a sequence; the state
// keeps 32 bits and the rest in a side map, with the same verdicts.
func TestSequencesPast32Bits(t *testing.T) {
	const big = 1 << 40
	cases := []ruleCase{
		{name: "big/in-order", lines: []string{resp(0), resp(big - 1), resp(big), resp(big + 1), final(big + 2)},
			want: []string{"e2a.seq_gap@2"}},
		{name: "big/gap", lines: []string{resp(0), resp(big), resp(big + 5), final(big + 6)},
			want: []string{"e2a.seq_gap@2", "e2a.seq_gap@3"}},
		{name: "big/dup-and-regress", lines: []string{resp(0), resp(big), resp(big), resp(5), final(big + 1)},
			want: []string{"e2a.seq_dup@3", "e2a.seq_gap@2", "e2a.seq_regress@4"}},
		{name: "boundary", lines: []string{resp(0), resp(1<<32 - 2), resp(1<<32 - 1), resp(1 << 32), final(1<<32 + 1)},
			want: []string{"e2a.seq_gap@2"}},
		// The largest sequence has no next: repeated, it is a dup (its
		// last+1 overflowed and made it a gap of -1).
		{name: "max", lines: []string{resp(0), resp(math.MaxInt64), resp(math.MaxInt64), final(math.MaxInt64)},
			want: []string{"e2a.seq_dup@3", "e2a.seq_dup@4", "e2a.seq_gap@2"}},
	}
	checkRuleCases(t, cases)
	// The messages name the sequences exactly (a regress named the
	// 32-bit marker, 4294967295, as the last).
	// A sequence past int64 is named so, not "not a non-negative integer"
	// (it is one: the reference's Python takes any int).
	past := func(lit string) string {
		return strings.Replace(resp(0), `"sequence":0`, `"sequence":`+lit, 1)
	}
	col := runCapture(t, ProfileSpec, []byte(strings.Join([]string{resp(0), resp(big), resp(big + 3), resp(5), final(big + 4),
		past("9223372036854775808"), past("18446744073709551616"), past(strings.Repeat("9", 50)), past("1e3")}, "\n")+"\n"), FormatJSONL)
	for _, want := range []string{
		fmt.Sprintf("sequence %d after %d: 2 missing", big+3, big),
		fmt.Sprintf("sequence 5 after %d: goes back", big+3),
		"sequence 9223372036854775808 is past 9223372036854775807, the largest e2atap tracks",
		"sequence 18446744073709551616 is past 9223372036854775807, the largest e2atap tracks",
		"sequence 99999999999999999999… (50 digits) is past 9223372036854775807, the largest e2atap tracks",
		"sequence is not a non-negative integer",
	} {
		found := false
		for _, f := range col.findings {
			found = found || f.Message == want
		}
		if !found {
			t.Errorf("no finding says %q: %+v", want, col.findings)
		}
	}
}

// TestTableBigSequencesSurviveMoves: a sequence in the side map follows
// its stream through swap-removal and arena compaction.
func TestTableBigSequencesSurviveMoves(t *testing.T) {
	tab := newTable(0)
	const n = 40000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "stream-%06d-%s", i, strings.Repeat("x", 40))
		j := tab.insert(keys[i], tab.hash(keys[i]))
		tab.setLastSeq(tab.at(j), int64(i)<<33|int64(i))
	}
	// Remove most of them (the last entries move into the holes; the dead
	// keys pass the compaction threshold).
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			continue
		}
		tab.remove(tab.find(keys[i], tab.hash(keys[i])))
	}
	for i := 0; i < n; i += 10 {
		j := tab.find(keys[i], tab.hash(keys[i]))
		if j < 0 {
			t.Fatalf("%s lost", keys[i])
		}
		if got, want := tab.lastSeq(tab.at(j)), int64(i)<<33|int64(i); got != want {
			t.Fatalf("%s: last %d, want %d", keys[i], got, want)
		}
	}
	if len(tab.big) != n/10-1 { // stream 0's sequence is 0
		t.Fatalf("side map holds %d sequences, want %d", len(tab.big), n/10-1)
	}
}

// TestTablesChargedToMemoryLimit: with a Go memory limit set, what the
// tables map is taken off it (the collector does not see them), and given
// back when they are unmapped; a limit set by someone else is the new base.
func TestTablesChargedToMemoryLimit(t *testing.T) {
	const limit = 1 << 40
	old := debug.SetMemoryLimit(limit)
	defer debug.SetMemoryLimit(old)
	stop := ChargeTablesToMemoryLimit()
	defer stop()
	e := NewEngine(DefaultConfig(), nopSink{})
	openStreams(e, 50_000)
	held := TableBytes()
	if got := debug.SetMemoryLimit(-1); got > limit-held+limitStep || got < limit-held-limitStep {
		t.Errorf("memory limit %d with %d bytes of tables, want %d ± %d", got, held, limit-held, limitStep)
	}
	runtime.KeepAlive(e)
	debug.SetMemoryLimit(limit / 2)
	openStreams(NewEngine(DefaultConfig(), nopSink{}), 50_000) // maps more: recharges from the new base
	if got := debug.SetMemoryLimit(-1); got > limit/2 || got < limit/2-TableBytes()-limitStep {
		t.Errorf("memory limit %d after it was set to %d elsewhere, want that less the tables (%d)", got, int64(limit/2), TableBytes())
	}
	stop()
	if got := debug.SetMemoryLimit(-1); got != limit/2 {
		t.Errorf("memory limit %d after stop, want %d", got, int64(limit/2))
	}
}

// TestLongScopeNames: a tap or connection name past maxScopeName is kept
// as a prefix and a hash in the key, so that the key's length fits, and
// the connection's streams are still found by name (ConnClosed).
func TestLongScopeNames(t *testing.T) {
	col := &collector{}
	e := NewEngine(DefaultConfig(), col)
	tap, conn := strings.Repeat("t", 20000), strings.Repeat("c", 20000)
	for _, c := range []string{conn, conn + "x"} {
		e.Observe(&Input{Tap: tap, Conn: c, Time: time.Unix(1, 0), Data: []byte(resp(0))})
		e.Observe(&Input{Tap: tap, Conn: c, Time: time.Unix(2, 0), Data: []byte(resp(1))})
	}
	if e.Open() != 2 {
		t.Fatalf("%d streams open, want 2 (one per connection)", e.Open())
	}
	e.ConnClosed(&Input{Tap: tap, Conn: conn, Time: time.Unix(3, 0)})
	if e.Open() != 1 || len(col.ends) != 1 || col.ends[0].Reason != ReasonDisconnect {
		t.Fatalf("after ConnClosed: %d open, ends %+v", e.Open(), col.ends)
	}
	for _, f := range col.findings {
		if f.Rule != "e2a.missing_final" {
			t.Errorf("unexpected finding %s: %s", f.Rule, f.Message)
		}
	}
}
