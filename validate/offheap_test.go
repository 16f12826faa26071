//go:build linux

package validate

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cleanTraffic opens streams [from, from+n) and then ends each one with a
// final: clean traffic, n streams open at its peak. It returns the number
// of records fed.
func cleanTraffic(e *Engine, from, n int, id ...string) int {
	var in Input
	for s := from; s < from+n; s++ {
		in.Data = streamRecord(in.Data, s, 0, false, id...)
		e.Observe(&in)
	}
	for s := from; s < from+n; s++ {
		in.Data = streamRecord(in.Data, s, 1, true, id...)
		e.Observe(&in)
	}
	return 2 * n
}

// withPoison turns the poison mode on for a test.
func withPoison(t *testing.T) {
	poisonOn()
	was := poison.Swap(true)
	t.Cleanup(func() { poison.Store(was) })
}

// faults runs use and reports whether it faulted (a use of memory given
// back: with the poison mode on, always).
func faults(use func()) (faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			_, faulted = r.(interface{ Addr() uintptr })
		}
	}()
	use()
	return false
}

var sinkByte byte

// TestPoisonFaultsUseAfterReplace: in the poison mode, a slice or pointer
// into a piece of a table that was replaced (the slot array after growth,
// a state segment after shrinking, a key chunk after compaction) faults
// when used, instead of reading memory the process may have mapped again
// since; and what the table holds now reads as it should.
func TestPoisonFaultsUseAfterReplace(t *testing.T) {
	withPoison(t)
	key := func(i int) []byte { return fmt.Appendf(nil, "stream-key-%d-%s", i, strings.Repeat("k", 40)) }
	fill := func(tab *table, n int) {
		for i := tab.len(); i < n; i++ {
			k := key(i)
			if tab.insert(k, tab.hash(k)) < 0 {
				t.Fatalf("insert %d failed", i)
			}
		}
	}
	for _, c := range []struct {
		name  string
		stale func(tab *table) func() // takes a reference, then replaces its piece
	}{
		{"slots after grow", func(tab *table) func() {
			old := tab.slots
			fill(tab, len(old)) // past 3/4: grows
			return func() { sinkByte += byte(old[0]) }
		}},
		{"state after the segment is freed", func(tab *table) func() {
			fill(tab, 3*segSize+1)
			s := tab.at(int32(3*segSize - 1)) // in the third segment
			for tab.len() > segSize {
				tab.remove(int32(tab.len() - 1))
			}
			return func() { sinkByte += byte(s.flags) }
		}},
		{"key after compaction", func(tab *table) func() {
			fill(tab, 4000)
			k := tab.key(0)
			if !tab.compact() {
				t.Fatal("compaction failed")
			}
			return func() { sinkByte += k[0] }
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tab := newTable(0)
			use := c.stale(tab)
			if !faults(use) {
				t.Fatal("a use after its piece was replaced did not fault")
			}
			for i := 0; i < tab.len(); i++ {
				k := key(i)
				if j := tab.find(k, tab.hash(k)); j < 0 || !bytes.Equal(tab.key(j), k) {
					t.Fatalf("key %d not found after the replacement", i)
				}
			}
			runtime.KeepAlive(tab)
		})
	}
}

// TestTablesWithoutMemory: when no mapping can be had, the engine neither
// panics nor reports what did not happen: a stream that finds no room
// takes the place of the stalest one (evicted, counted) or is not tracked
// (counted); clean traffic gives no finding; once memory comes back, the
// streams are judged again (a planted gap is found).
func TestTablesWithoutMemory(t *testing.T) {
	col := &collector{}
	e := NewEngine(DefaultConfig(), col)
	n := cleanTraffic(e, 0, 2000, longID)
	var in Input
	for s := 2000; s < 2500; s++ { // left open: they hold memory
		in.Data = streamRecord(in.Data, s, 0, false, longID)
		e.Observe(&in)
	}
	failMaps.Store(true)
	defer failMaps.Store(false)
	fails := TableAllocFailures()
	more := 60_000
	if raceEnabled {
		more = 30_000 // still past what the tables hold once mapping stops: both checked below
	}
	n += cleanTraffic(e, 10_000, more, longID)
	if TableAllocFailures() == fails {
		t.Fatal("no mapping was refused: the test does not test anything")
	}
	st := e.Stats()
	if st.Evicted == 0 || st.Untracked == 0 {
		t.Fatalf("evicted %d, untracked %d: want both (the tables had no room)", st.Evicted, st.Untracked)
	}
	if st.Records != uint64(n+500) {
		t.Fatalf("%d records judged, want %d", st.Records, n+500)
	}
	if len(col.findings) != 0 {
		t.Fatalf("%d findings on clean traffic without memory, first %+v", len(col.findings), col.findings[0])
	}
	failMaps.Store(false)
	for _, seq := range []int{0, 2} {
		in.Data = streamRecord(in.Data, 1<<30, seq, false)
		e.Observe(&in)
	}
	if len(col.findings) != 1 || col.findings[0].Rule != "e2a.seq_gap" {
		t.Fatalf("findings %+v, want the planted e2a.seq_gap", col.findings)
	}
}

// TestCompactionWithoutMemory: a compaction that cannot map its new arena
// leaves the table as it was (every key found), and one that can frees
// the dead keys.
func TestCompactionWithoutMemory(t *testing.T) {
	tab := newTable(0)
	key := func(i int) []byte { return fmt.Appendf(nil, "key-%d-%s", i, strings.Repeat("z", 60)) }
	for i := 0; i < 40_000; i++ {
		k := key(i)
		tab.insert(k, tab.hash(k))
	}
	for tab.len() > 30_000 {
		tab.remove(0)
	}
	failMaps.Store(true)
	ok := tab.compact()
	failMaps.Store(false)
	if ok {
		t.Fatal("compaction succeeded with no memory")
	}
	check := func() {
		t.Helper()
		for i := 0; i < tab.len(); i++ {
			k := append([]byte(nil), tab.key(int32(i))...)
			if j := tab.find(k, tab.hash(k)); j != int32(i) {
				t.Fatalf("key %q at %d found at %d", k, i, j)
			}
		}
	}
	check()
	dead := tab.dead
	if dead == 0 || !tab.compact() || tab.dead != 0 {
		t.Fatalf("compaction with memory: dead %d before, %d after", dead, tab.dead)
	}
	check()
}

// TestTablesWithinMemoryLimit: with the tables charged to a Go memory
// limit, a million open streams (more than the limit holds) do not drive
// the limit below the heap's half of it, the tables stay within their
// half, and the streams past it evict (counted) instead of growing them.
func TestTablesWithinMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("a million streams")
	}
	runtime.GC() // tables of earlier tests
	limit, n, id := int64(96<<20), 1_000_000, []string(nil)
	if raceEnabled {
		limit, n, id = 48<<20, 150_000, []string{longID} // 30 MB of keys
	}
	old := debug.SetMemoryLimit(limit)
	defer debug.SetMemoryLimit(old)
	stop := ChargeTablesToMemoryLimit()
	defer stop()
	e := NewEngine(DefaultConfig(), nopSink{})
	lowest := limit
	var in Input
	for s := 0; s < n; s++ {
		in.Data = streamRecord(in.Data, s, 0, false, id...)
		e.Observe(&in)
		if s&1023 == 0 {
			lowest = min(lowest, debug.SetMemoryLimit(-1))
		}
	}
	held, got := TableBytes(), debug.SetMemoryLimit(-1)
	lowest = min(lowest, got)
	t.Logf("%d streams open, %d evicted, %d untracked; tables %d bytes; Go limit %d at the end, %d at its lowest",
		e.Open(), e.Stats().Evicted, e.Stats().Untracked, held, got, lowest)
	if lowest < limit/heapShare {
		t.Errorf("the Go limit fell to %d, below the heap's share %d", lowest, limit/heapShare)
	}
	if ceiling := limit - limit/heapShare; held > ceiling+arenaChunk*int64(MaxPartitions) {
		t.Errorf("the tables hold %d bytes, over their share %d", held, ceiling)
	}
	if e.Stats().Evicted == 0 {
		t.Error("no stream was evicted: the tables grew past their share")
	}
	runtime.KeepAlive(e)
	stop()
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("limit %d after stop, want %d", got, limit)
	}
}

// TestTablesUnderAddressLimit: a process whose address space is limited
// (ulimit -v: RLIMIT_AS, where mmap fails with ENOMEM) and that opens
// more streams than it has room for finishes: no panic, no fault, the
// refused mappings counted, no finding on clean traffic. It re-runs the
// test binary with the limit set.
func TestTablesUnderAddressLimit(t *testing.T) {
	if os.Getenv("E2ATAP_RLIMIT_CHILD") == "1" {
		addressLimitChild()
		return
	}
	if testing.Short() || raceEnabled {
		t.Skip("a child process with a million streams (the race detector's shadow memory would not fit its limit)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTablesUnderAddressLimit$", "-test.count=1")
	// Without the poison mode: it keeps what the tables give back mapped,
	// which would use up the address space it is about.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, PoisonEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "E2ATAP_RLIMIT_CHILD=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatalf("child failed: %v", err)
	}
	for _, bad := range []string{"panic", "SIGSEGV", "fatal error", "unexpected fault"} {
		if bytes.Contains(out, []byte(bad)) {
			t.Fatalf("child output has %q", bad)
		}
	}
	var failures, findings, records uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "result" {
			failures, _ = strconv.ParseUint(f[1], 10, 64)
			findings, _ = strconv.ParseUint(f[2], 10, 64)
			records, _ = strconv.ParseUint(f[3], 10, 64)
		}
	}
	if failures == 0 || records != 2_400_000 || findings != 0 {
		t.Fatalf("child: %d mappings refused (want some), %d findings (want 0), %d records (want 2400000)", failures, findings, records)
	}
}

// addressLimitChild limits its address space to what it uses now and 48
// MiB more (less than a million streams take), then feeds clean traffic
// with a million streams open at its peak.
func addressLimitChild() {
	// The heap reserves its address space first (the runtime keeps it
	// once reserved), so that what the limit leaves is the tables' to
	// run out of, not the heap's: a heap that cannot grow is fatal
	// whoever took the space.
	func() {
		b := make([]byte, 96<<20)
		b[len(b)-1] = 1
		sinkByte += b[0]
	}()
	runtime.GC()
	debug.FreeOSMemory()
	vm := vmSize()
	lim := uint64(vm + 48<<20)
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
		fmt.Println("setrlimit:", err)
		os.Exit(3)
	}
	fmt.Printf("address space limited to %d MiB (%d in use)\n", lim>>20, vm>>20)
	debug.SetGCPercent(20) // the heap must stay in what it has
	col := &countSink{}
	e := NewEngine(DefaultConfig(), col)
	start := time.Now()
	cleanTraffic(e, 0, 1_000_000)
	cleanTraffic(e, 2_000_000, 200_000)
	st := e.Stats()
	fmt.Printf("%s: evicted %d, untracked %d, tables %d bytes\n", time.Since(start).Round(time.Millisecond), st.Evicted, st.Untracked, TableBytes())
	for r, n := range st.Findings {
		if n > 0 {
			fmt.Printf("finding %s: %d\n", RuleIDs[r], n)
		}
	}
	fmt.Printf("result %d %d %d\n", TableAllocFailures(), col.findings, st.Records)
}

// countSink counts findings and keeps nothing (the heap must not grow).
type countSink struct {
	nopSink
	findings int
}

func (c *countSink) Finding(*Finding) { c.findings++ }

func vmSize() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmSize:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	return 0
}

// FuzzTable: any sequence of inserts, removes and compactions, with keys
// long enough that the slot array grows, state segments are freed as the
// table shrinks and key chunks are compacted, keeps the table equal to a
// map of its keys. Under E2ATAP_OFFHEAP_POISON=1 (make fuzz), any use of a
// piece after the table replaced it faults.
func FuzzTable(f *testing.F) {
	f.Add([]byte{0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 2, 255, 2, 255, 2, 255, 2, 200, 3, 0, 0, 10})
	f.Add([]byte{0, 50, 2, 49, 0, 50, 2, 50, 3, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		tab := newTable(0)
		model := map[string]bool{}
		next := 0
		for i := 0; i+1 < len(ops) && i < 64; i += 2 {
			op, arg := ops[i]%4, int(ops[i+1])
			switch op {
			case 0, 1:
				for k := 0; k < arg*8; k++ {
					key := fmt.Appendf(nil, "k%d-%s", next, strings.Repeat("p", 200+next%100))
					next++
					if tab.insert(key, tab.hash(key)) < 0 {
						t.Fatal("insert failed with memory")
					}
					model[string(key)] = true
				}
			case 2:
				for k := 0; k < arg*8 && tab.len() > 0; k++ {
					j := int32((k*7919 + arg) % tab.len())
					delete(model, string(tab.key(j)))
					tab.remove(j)
				}
			case 3:
				tab.compact()
			}
		}
		if tab.len() != len(model) {
			t.Fatalf("table holds %d keys, model %d", tab.len(), len(model))
		}
		for k := range model {
			if j := tab.find([]byte(k), tab.hash([]byte(k))); j < 0 || string(tab.key(j)) != k {
				t.Fatalf("key %.20q lost", k)
			}
		}
		runtime.KeepAlive(tab)
	})
}

// TestEngineChurnPoisoned drives one engine through every operation that
// grows, compacts, shrinks or evicts its tables (40000 streams with long
// ids over a bound of 10000, finals, requests reusing ids, gaps, closed
// connections, idle expiry, interrupts, a Finish and use after it) with
// the poison mode on: a pointer or key the engine kept across one of them
// would fault here.
func TestEngineChurnPoisoned(t *testing.T) {
	withPoison(t)
	cfg := DefaultConfig()
	cfg.MaxStreams = 10_000
	cfg.IdleTimeout = time.Hour
	steps, streams := 150_000, 40_000
	if raceEnabled {
		// A third of it under the race detector (ten times dearer): the
		// same 4 streams for each one the engine holds, over the same
		// 15 s, still churned (the checks below).
		steps, streams, cfg.MaxStreams = 50_000, 13_333, 3_333
	}
	col := &countSink{}
	e := NewEngine(cfg, col)
	id := "q" + strings.Repeat("y", 300) + "%08x"
	rnd := uint64(1)
	next := func(n int) int {
		rnd ^= rnd << 13
		rnd ^= rnd >> 7
		rnd ^= rnd << 17
		return int(rnd % uint64(n))
	}
	seq := map[int]int{}
	var in Input
	now := time.Unix(1_700_000_000, 0)
	quarantine.mu.Lock()
	poisoned := quarantine.total
	quarantine.mu.Unlock()
	finished := 0
	for step := 0; step < steps; step++ {
		s := next(streams)
		in = Input{Tap: "t", Conn: strconv.Itoa(s % 7), Time: now.Add(time.Duration(step) * 15 * time.Second / time.Duration(steps)), FromLog: true}
		switch r := next(10_000); {
		case r < 8000:
			in.Data = streamRecord(in.Data, s, seq[s], false, id)
			seq[s]++
		case r < 8800:
			in.Data = streamRecord(in.Data, s, seq[s], true, id)
			delete(seq, s)
		case r < 9900:
			in.Data = fmt.Appendf(nil, `{"request_id":"`+id+`","session_id":"sess%d","method":"chat.send","params":{}}`, s, s%50)
			delete(seq, s)
		case r < 9902:
			in.Data = fmt.Appendf(nil, `{"request_id":"i%d","session_id":"sess%d","method":"chat.interrupt","params":{}}`, step, s%50)
		case r < 9950:
			e.Gap(&in)
			continue
		case r < 9951:
			e.ConnClosed(&in)
			continue
		case r < 9953:
			// The streams idle for 10 s or more (of 15 s in all).
			e.Expire(in.Time.Add(time.Hour - 10*time.Second))
			continue
		default:
			if step > steps*2/3 && finished == 0 {
				e.Finish(ReasonEOF, &in) // and used after it
				finished++
			}
			continue
		}
		e.Observe(&in)
	}
	e.Finish(ReasonEOF, &Input{})
	st := e.Stats()
	if st.Evicted == 0 || st.Records == 0 {
		t.Fatalf("evicted %d of %d records: the tables were not churned", st.Evicted, st.Records)
	}
	quarantine.mu.Lock()
	poisoned = quarantine.total - poisoned
	quarantine.mu.Unlock()
	if poisoned < 10 {
		t.Fatalf("%d pieces given back: the tables were not churned", poisoned)
	}
	t.Logf("%d records, %d evicted, %d findings, %d pieces replaced", st.Records, st.Evicted, col.findings, poisoned)
	runtime.KeepAlive(e)
}

// TestForgottenEvictionNoSeqStart: when more streams are evicted than
// tombstones are kept, the next record of an evicted stream whose
// tombstone was forgotten is not a false e2a.seq_start (the table lost its
// start, the stream did not); a stream seen from sequence 0 after that is
// still judged (a gap in it is found).
func TestForgottenEvictionNoSeqStart(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxStreams, cfg.Tombstones = 100, 10
	col := &collector{}
	e := NewEngine(cfg, col)
	var in Input
	for s := 0; s < 1000; s++ {
		in.Data = streamRecord(in.Data, s, 0, false)
		e.Observe(&in)
	}
	for s := 0; s < 1000; s++ {
		in.Data = streamRecord(in.Data, s, 1, true)
		e.Observe(&in)
	}
	if e.Stats().Evicted < 800 {
		t.Fatalf("%d evicted: the test does not test anything", e.Stats().Evicted)
	}
	if len(col.findings) != 0 {
		t.Fatalf("%d findings after evictions, first %+v", len(col.findings), col.findings[0])
	}
	for _, seq := range []int{0, 2} {
		in.Data = streamRecord(in.Data, 5000, seq, false)
		e.Observe(&in)
	}
	if len(col.findings) != 1 || col.findings[0].Rule != "e2a.seq_gap" {
		t.Fatalf("findings %+v, want the planted e2a.seq_gap", col.findings)
	}
}
